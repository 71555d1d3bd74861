// TTL decrement of forwarded packets, see lb/xmit/ttl.h.
#include "lb/xmit/ttl.h"

#include <rte_mbuf.h>

#include <algorithm>

#include "lb/worker_ctx.h"
#include "net/icmp_related.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// Time exceeded back to the sender, from the address it sent to when that is ours (a VIP, a
// WAN address), else from the receiving port's own address, as a router answers. ICMPv4: the
// IPv6 issue adds ICMPv6's (type 3) beside it.
void send_time_exceeded(WorkerCtx& w, const LbPacket<net::Af4>& lp) {
    if (lp.related) return;  // RFC 1122 3.2.2: no error about an ICMP error
    const net::InetAddr saddr =
        lp.local ? net::Af4::dst(*lp.ip) : w.stack.view->port_source[lp.port];
    if (saddr.is_unspecified()) return;
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) return;
    uint8_t* out = reinterpret_cast<uint8_t*>(
        rte_pktmbuf_append(m, sizeof(net::EtherHdr) + net::kIcmpErrorMaxLen));
    const size_t orig_len = std::min<size_t>(
        net::Af4::packet_len(*lp.ip),
        rte_pktmbuf_data_len(lp.pkt) -
            (reinterpret_cast<const uint8_t*>(lp.ip) - rte_pktmbuf_mtod(lp.pkt, uint8_t*)));
    const size_t n =
        out ? net::build_time_exceeded(out + sizeof(net::EtherHdr), net::kIcmpErrorMaxLen,
                                       reinterpret_cast<const uint8_t*>(lp.ip), orig_len, saddr,
                                       net::hton16(w.ip_id++))
            : 0;
    if (n == 0) {  // no room, or RFC 1122/1812 forbid an error for this packet
        w.stack.counters.inc(Counter::drop_icmp_not_sent);
        rte_pktmbuf_free(m);
        return;
    }
    rte_pktmbuf_trim(m, static_cast<uint16_t>(net::kIcmpErrorMaxLen - n));
    w.stack.counters.inc(Counter::icmp_time_exceeded_sent);
    stack::ip_output<net::Af4>(w.stack, m, net::Af4::src(*lp.ip));
}

}  // namespace

template <class Af>
bool ttl_decrement(WorkerCtx& w, LbPacket<Af>& lp) {
    if (Af::ttl_decrement(*lp.ip)) return true;
    send_time_exceeded(w, lp);
    w.stack.counters.inc(Counter::drop_ttl_expired);
    rte_pktmbuf_free(lp.pkt);
    return false;
}

template bool ttl_decrement<net::Af4>(WorkerCtx&, LbPacket4&);

}  // namespace xvs::lb
