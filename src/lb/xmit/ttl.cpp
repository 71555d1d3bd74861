// TTL decrement of forwarded packets, see lb/xmit/ttl.h.
#include "lb/xmit/ttl.h"

#include <rte_mbuf.h>

#include <algorithm>

#include "lb/worker_ctx.h"
#include "net/checksum.h"
#include "net/icmp_related.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// Time exceeded back to the sender, from the address it sent to when that is ours (a VIP, a
// WAN address), else from the receiving port's own address, as a router answers.
void send_time_exceeded(WorkerCtx& w, const LbPacket& lp) {
    if (lp.related) return;  // RFC 1122 3.2.2: no error about an ICMP error
    const uint32_t saddr = lp.local ? lp.ip->daddr : w.stack.view->port_source[lp.port];
    if (saddr == 0) return;
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) return;
    uint8_t* out = reinterpret_cast<uint8_t*>(
        rte_pktmbuf_append(m, sizeof(net::EtherHdr) + net::kIcmpErrorMaxLen));
    const size_t orig_len = std::min<size_t>(
        net::ntoh16(lp.ip->total_length),
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
    stack::ipv4_output(w.stack, m, lp.ip->saddr);
}

}  // namespace

bool ttl_decrement(WorkerCtx& w, LbPacket& lp) {
    net::Ipv4Hdr* ip = lp.ip;
    if (ip->ttl <= 1) {
        send_time_exceeded(w, lp);
        w.stack.counters.inc(Counter::drop_ttl_expired);
        rte_pktmbuf_free(lp.pkt);
        return false;
    }
    // TTL and protocol share a 16-bit word of the header checksum.
    const uint16_t old_word = net::hton16(uint16_t(ip->ttl << 8 | ip->protocol));
    --ip->ttl;
    net::csum_replace2(&ip->checksum, old_word, net::hton16(uint16_t(ip->ttl << 8 | ip->protocol)));
    return true;
}

}  // namespace xvs::lb
