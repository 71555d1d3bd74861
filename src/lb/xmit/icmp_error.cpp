// See lb/xmit/icmp_error.h.
#include "lb/xmit/icmp_error.h"

#include <rte_mbuf.h>

#include <algorithm>

#include "lb/worker_ctx.h"
#include "net/icmp6.h"
#include "net/icmp_related.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// An error's type and code in each family, and the counter of one sent.
struct ErrorKind {
    uint8_t type4, code4;
    uint8_t type6, code6;
    Counter sent;
};
constexpr ErrorKind kTooBig{net::kIcmpDestUnreach, net::kIcmpFragNeededCode,
                            net::kIcmp6PacketTooBig, 0, Counter::icmp_frag_needed_sent};
constexpr ErrorKind kTimeExceeded{net::kIcmpTimeExceeded, 0, net::kIcmp6TimeExceeded, 0,
                                  Counter::icmp_time_exceeded_sent};

// Builds the error (bytes 4-7 of its header = rest) in a fresh frame and sends it to `to`.
template <class Af>
void send_error(WorkerCtx& w, const LbPacket<Af>& lp, const net::InetAddr& from,
                const net::InetAddr& to, const ErrorKind& kind, uint32_t rest) {
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) return;  // counted as drop_mbuf_alloc
    constexpr size_t kMax = Af::family == 4 ? net::kIcmpErrorMaxLen : net::kIcmp6ErrorMaxLen;
    auto* out = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, sizeof(net::EtherHdr) + kMax));
    const auto* orig = reinterpret_cast<const uint8_t*>(lp.ip);
    // The quote stays within the first segment, whatever the IP length claims.
    const size_t orig_len =
        std::min<size_t>(Af::packet_len(*lp.ip), rte_pktmbuf_data_len(lp.pkt) -
                                                     (orig - rte_pktmbuf_mtod(lp.pkt, uint8_t*)));
    size_t n = 0;
    if (out) {
        uint8_t* l3 = out + sizeof(net::EtherHdr);
        if constexpr (Af::family == 4)
            n = net::build_icmp_error(l3, kMax, orig, orig_len, from, kind.type4, kind.code4, rest,
                                      net::hton16(w.ip_id++));
        else
            n = net::build_icmp6_error(l3, kMax, orig, orig_len, from, kind.type6, kind.code6,
                                       rest);
    }
    if (n == 0) {  // no room, or no error may be sent for this packet
        stack::drop(w.stack, m, Counter::drop_icmp_not_sent);
        return;
    }
    rte_pktmbuf_trim(m, static_cast<uint16_t>(kMax - n));
    w.stack.counters.inc(kind.sent);
    stack::ip_output<Af>(w.stack, m, to);
}

}  // namespace

template <class Af>
void send_too_big(WorkerCtx& w, const LbPacket<Af>& lp, const net::InetAddr& from,
                  const net::InetAddr& to, uint16_t mtu) {
    send_error(w, lp, from, to, kTooBig, mtu);
}

template <class Af>
void send_time_exceeded(WorkerCtx& w, const LbPacket<Af>& lp, const net::InetAddr& from) {
    send_error(w, lp, from, Af::src(*lp.ip), kTimeExceeded, 0);
}

template void send_too_big<net::Af4>(WorkerCtx&, const LbPacket4&, const net::InetAddr&,
                                     const net::InetAddr&, uint16_t);
template void send_too_big<net::Af6>(WorkerCtx&, const LbPacket6&, const net::InetAddr&,
                                     const net::InetAddr&, uint16_t);
template void send_time_exceeded<net::Af4>(WorkerCtx&, const LbPacket4&, const net::InetAddr&);
template void send_time_exceeded<net::Af6>(WorkerCtx&, const LbPacket6&, const net::InetAddr&);

}  // namespace xvs::lb
