// TTL decrement of forwarded packets, see lb/xmit/ttl.h.
#include "lb/xmit/ttl.h"

#include <rte_mbuf.h>

#include <algorithm>

#include "lb/worker_ctx.h"
#include "net/icmp6.h"
#include "net/icmp_related.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// Time exceeded back to the sender, from the address it sent to when that is ours (a VIP, a
// WAN address), else from the receiving port's own address of its family, as a router answers.
template <class Af>
void send_time_exceeded(WorkerCtx& w, const LbPacket<Af>& lp) {
    if (lp.related) return;  // RFC 1122 3.2.2, RFC 4443 2.4(e): no error about an error
    const net::InetAddr saddr =
        lp.local ? Af::dst(*lp.ip) : w.stack.view->source_of(lp.port, Af::src(*lp.ip));
    if (saddr.is_unspecified()) return;
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) return;
    constexpr size_t kMax = Af::family == 4 ? net::kIcmpErrorMaxLen : net::kIcmp6ErrorMaxLen;
    uint8_t* out = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, sizeof(net::EtherHdr) + kMax));
    const size_t orig_len = std::min<size_t>(
        Af::packet_len(*lp.ip),
        rte_pktmbuf_data_len(lp.pkt) -
            (reinterpret_cast<const uint8_t*>(lp.ip) - rte_pktmbuf_mtod(lp.pkt, uint8_t*)));
    const auto* orig = reinterpret_cast<const uint8_t*>(lp.ip);
    size_t n = 0;
    if (out) {
        if constexpr (Af::family == 4)
            n = net::build_time_exceeded(out + sizeof(net::EtherHdr), kMax, orig, orig_len, saddr,
                                         net::hton16(w.ip_id++));
        else
            n = net::build_time_exceeded6(out + sizeof(net::EtherHdr), kMax, orig, orig_len, saddr);
    }
    if (n == 0) {  // no room, or RFC 1122/1812/4443 forbid an error for this packet
        w.stack.counters.inc(Counter::drop_icmp_not_sent);
        rte_pktmbuf_free(m);
        return;
    }
    rte_pktmbuf_trim(m, static_cast<uint16_t>(kMax - n));
    w.stack.counters.inc(Counter::icmp_time_exceeded_sent);
    stack::ip_output<Af>(w.stack, m, Af::src(*lp.ip));
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
template bool ttl_decrement<net::Af6>(WorkerCtx&, LbPacket6&);

}  // namespace xvs::lb
