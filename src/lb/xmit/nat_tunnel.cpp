#include "lb/xmit/nat_tunnel.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "lb/conn.h"
#include "lb/laddr.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/tunnel.h"
#include "net/checksum.h"
#include "net/icmp6.h"
#include "net/icmp_related.h"
#include "net/nat_rewrite.h"
#include "net/tcp_options.h"
#include "net/tunnel.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// SYN or SYN-ACK: the MSS lowered by the tunnel overhead, so the peer's full-sized segments fit
// the tunnel (RFC 4459 section 3.2, what routers with tunnels do). A SYN without MSS keeps the
// default 536 (RFC 9293), which fits any tunnel here.
template <class Af>
void clamp_mss(WorkerCtx& w, LbPacket<Af>& lp, size_t overhead) {
    if (lp.proto != net::kIpProtoTcp || !(lp.tcp_flags & net::kTcpSyn)) return;
    auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
    auto opts = net::tcp_options_span(tcp, lp.l4_len);
    const auto mss = net::tcp_find_mss(opts);
    if (!mss || *mss <= overhead + 536) return;
    if (net::tcp_set_mss(opts, static_cast<uint16_t>(*mss - overhead), &tcp->checksum))
        w.stack.counters.inc(Counter::nattun_mss_clamped);
}

bool gue_of(const Conn& c) {
    return c.flags & kConnTunGue;
}

// The smallest outer path MTU recorded per family (Linux's min_pmtu 552; IPv6's 1280).
constexpr uint16_t kMinPmtu4 = 552;

// The conn's recorded outer path MTU, 0 when none. Read only for a packet that could exceed
// the smallest recordable one: small packets (ACKs) never touch the side slot.
template <class Af>
uint16_t path_mtu_of(WorkerCtx& w, const Conn& c, size_t outer_len) {
    constexpr size_t floor = Af::family == 4 ? kMinPmtu4 : net::kIpv6MinMtu;
    return outer_len > floor ? w.feat_of(&c).nattun_mtu : 0;
}

}  // namespace

template <class Af>
stack::Verdict nat_tunnel_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    const bool gue = gue_of(c);
    const size_t overhead = tunnel_overhead<Af>(gue);
    // Checked before the rewrite: a frag-needed quotes the packet as the client sent it.
    const size_t outer_len = Af::packet_len(*lp.ip) + overhead;
    if (!tunnel_mtu_admit(w, lp, c, overhead, path_mtu_of<Af>(w, c, outer_len)))
        return stack::Verdict::Drop;
    net::rewrite_daddr_dport<Af>(lp.ip, lp.l4, lp.proto, c.daddr_as<Af>(), c.dport);
    clamp_mss(w, lp, overhead);
    return tunnel_push(w, lp, c, w.laddr_of(&c)->addr, overhead, gue);
}

template <class Af>
stack::Verdict nat_tunnel_out(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    // The RS answers through the tunnel only: a bare reply would mean it routes clients
    // through us without `xvs-rs tunnel` (or someone forges its source).
    if (!lp.tunneled) {
        stack::drop(w.stack, lp.pkt, Counter::drop_nattun_bare_reply);
        return stack::Verdict::Drop;
    }
    net::rewrite_saddr_sport<Af>(lp.ip, lp.l4, lp.proto, c.vaddr_as<Af>(), c.vport);
    clamp_mss(w, lp, tunnel_overhead<Af>(gue_of(c)));
    return stack::Verdict::Accept;
}

template <class Af>
stack::Verdict nat_tunnel_wrap(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    const bool gue = gue_of(c);
    return tunnel_push(w, lp, c, w.laddr_of(&c)->addr, tunnel_overhead<Af>(gue), gue);
}

template <class Af>
void nat_tunnel_icmp_unwrap(WorkerCtx& w, LbPacket<Af>& lp) {
    constexpr size_t kIcmpHdr = 8;
    if (lp.tunneled || lp.kind != stack::AddrKind::Lip || lp.l4_len < kIcmpHdr) return;
    uint8_t* icmp = lp.l4;
    const size_t cut =
        net::tunnel_quote_outer_len(icmp + kIcmpHdr, lp.l4_len - kIcmpHdr, Af::dst(*lp.ip));
    if (cut == 0) return;
    // The ICMP checksum of the message at lp.l4 (ICMPv6's covers a pseudo-header, ICMPv4's
    // does not): verified before the message is changed, recomputed after.
    auto icmp_sum = [&lp] {
        uint32_t pseudo = 0;
        if constexpr (Af::icmp_pseudo_header)
            pseudo = Af::pseudo_sum(Af::src(*lp.ip), Af::dst(*lp.ip), Af::icmp_proto, lp.l4_len);
        return net::csum_fold(net::csum_partial(lp.l4, lp.l4_len, pseudo));
    };
    if (icmp_sum() != 0) return;  // unrelated
    // Too big: the MTU the router gave is the outer packet's; the client's packet rides inside.
    if constexpr (Af::family == 4) {
        const uint16_t mtu = net::load_be16(icmp + 6);
        if (icmp[0] == net::kIcmpDestUnreach && icmp[1] == net::kIcmpFragNeededCode && mtu > cut)
            net::store_be16(icmp + 6, static_cast<uint16_t>(mtu - cut));
    } else {
        const uint32_t mtu = net::load_be32(icmp + 4);
        if (icmp[0] == net::kIcmp6PacketTooBig && mtu > cut)
            net::store_be32(icmp + 4, static_cast<uint32_t>(mtu - cut));
    }
    // Cut the quoted outer headers: everything up to the ICMP header moves forward.
    rte_mbuf* m = lp.pkt;
    auto* base = rte_pktmbuf_mtod(m, uint8_t*);
    const size_t front = static_cast<size_t>(icmp - base) + kIcmpHdr;
    std::memmove(base + cut, base, front);
    rte_pktmbuf_adj(m, static_cast<uint16_t>(cut));
    lp.ip = reinterpret_cast<typename Af::Hdr*>(reinterpret_cast<uint8_t*>(lp.ip) + cut);
    lp.l4 = icmp + cut;
    lp.l4_len = static_cast<uint16_t>(lp.l4_len - cut);
    Af::set_packet_len(*lp.ip, static_cast<uint16_t>(Af::packet_len(*lp.ip) - cut));
    net::store_wire16(lp.l4 + 2, 0);
    net::store_wire16(lp.l4 + 2, icmp_sum());
    lp.tunneled = true;
    w.stack.counters.inc(Counter::nattun_icmp_unwrapped);
}

void nat_tunnel_pmtu_lower(WorkerCtx& w, Conn& c, uint16_t inner_mtu) {
    const size_t overhead = tunnel_overhead(c.daddr().is_v4(), gue_of(c));
    const size_t outer = std::min<size_t>(inner_mtu + overhead, 0xffff);
    if (outer < (c.daddr().is_v4() ? kMinPmtu4 : net::kIpv6MinMtu)) return;
    uint16_t& mtu = w.feat_of(&c).nattun_mtu;
    if (mtu != 0 && mtu <= outer) return;
    mtu = static_cast<uint16_t>(outer);
    w.stack.counters.inc(Counter::nattun_pmtu_lowered);
}

template stack::Verdict nat_tunnel_in<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict nat_tunnel_in<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);
template stack::Verdict nat_tunnel_out<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict nat_tunnel_out<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);
template stack::Verdict nat_tunnel_wrap<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict nat_tunnel_wrap<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);
template void nat_tunnel_icmp_unwrap<net::Af4>(WorkerCtx&, LbPacket4&);
template void nat_tunnel_icmp_unwrap<net::Af6>(WorkerCtx&, LbPacket6&);

}  // namespace xvs::lb
