// See lb/xmit/too_big.h.
#include "lb/xmit/too_big.h"

#include <rte_mbuf.h>

#include "lb/worker_ctx.h"
#include "net/icmp6.h"
#include "net/icmp_related.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

template <class Af>
void send_too_big(WorkerCtx& w, const LbPacket<Af>& lp, const net::InetAddr& from,
                  const net::InetAddr& to, uint16_t mtu) {
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) return;
    constexpr size_t kMax = Af::family == 4 ? net::kIcmpErrorMaxLen : net::kIcmp6ErrorMaxLen;
    uint8_t* out = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, sizeof(net::EtherHdr) + kMax));
    const auto* orig = reinterpret_cast<const uint8_t*>(lp.ip);
    size_t n = 0;
    if (out) {
        if constexpr (Af::family == 4)
            n = net::build_frag_needed(out + sizeof(net::EtherHdr), kMax, orig,
                                       Af::packet_len(*lp.ip), from, mtu, net::hton16(w.ip_id++));
        else
            n = net::build_packet_too_big(out + sizeof(net::EtherHdr), kMax, orig,
                                          Af::packet_len(*lp.ip), from, mtu);
    }
    if (n == 0) {
        w.stack.counters.inc(Counter::drop_icmp_not_sent);
        rte_pktmbuf_free(m);
        return;
    }
    rte_pktmbuf_trim(m, static_cast<uint16_t>(kMax - n));
    w.stack.counters.inc(Counter::icmp_frag_needed_sent);
    stack::ip_output<Af>(w.stack, m, to);
}

template void send_too_big<net::Af4>(WorkerCtx&, const LbPacket4&, const net::InetAddr&,
                                     const net::InetAddr&, uint16_t);
template void send_too_big<net::Af6>(WorkerCtx&, const LbPacket6&, const net::InetAddr&,
                                     const net::InetAddr&, uint16_t);

}  // namespace xvs::lb
