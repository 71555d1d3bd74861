// FULLNAT: DNAT + SNAT in one step (net::rewrite_both), both directions through the director.
#include "lb/xmit/fullnat.h"

#include <rte_mbuf.h>

#include "lb/conn.h"
#include "lb/conn_egress.h"
#include "lb/conserve/uoa.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/fullnat_rewrite.h"
#include "lb/xmit/icmp_error.h"
#include "net/icmp6.h"
#include "net/nat64.h"
#include "net/nat_rewrite.h"
#include "net/tcp_options.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// The MTU of the link the conn's packets in direction dir leave by, when a packet of len bytes
// might not fit it (every link carries 1280 bytes, so shorter packets need no lookup); 0 when
// it fits.
uint16_t too_big_for(WorkerCtx& w, const Conn& c, stack::NhDir dir, uint32_t len) {
    if (len <= net::kIpv6MinMtu) return 0;
    const std::optional<uint8_t> port = conn_egress_port(w, c, dir);
    if (!port) return 0;  // ip_output counts drop_no_route
    const uint16_t mtu = w.stack.view->ports[*port].mtu;
    return len > mtu ? mtu : 0;
}

// FNAT64 inbound: the IPv6 client's packet becomes IPv4 LIP:lport -> RS:rport. The IPv6
// header and any extension headers give way to a 20-byte IPv4 header in front of the L4
// segment, which does not move.
stack::Verdict fnat64_in(WorkerCtx& w, LbPacket<net::Af6>& lp, Conn& c) {
    const net::IpCarried in{static_cast<uint8_t>(net::ntoh32(lp.ip->vtc_flow) >> 20),
                            lp.ip->hop_limit, lp.proto, net::Af6::src(*lp.ip),
                            net::Af6::dst(*lp.ip)};
    if (const uint16_t mtu = too_big_for(w, c, stack::NhDir::ToDest, 20u + lp.l4_len)) {
        // The client may send up to the IPv4 MTU plus the 20 bytes the IPv6 header is longer.
        send_too_big(w, lp, c.vaddr(), c.caddr(), static_cast<uint16_t>(mtu + 20));
        stack::drop(w.stack, lp.pkt, Counter::drop_nat64_too_big);
        return stack::Verdict::Drop;
    }
    const uint16_t cut = static_cast<uint16_t>(lp.l4_off - sizeof(net::EtherHdr) - 20);
    rte_pktmbuf_adj(lp.pkt, cut);
    uint8_t* ip4 = rte_pktmbuf_mtod_offset(lp.pkt, uint8_t*, sizeof(net::EtherHdr));
    net::nat64_to_v4(ip4, in, lp.l4_len, c.laddr_ip(), c.daddr(), c.lport, c.dport,
                     net::hton16(w.ip_id++));
    lp.l4 = ip4 + 20;
    lp.l4_off = static_cast<uint16_t>(sizeof(net::EtherHdr) + 20);
    w.stack.counters.inc(Counter::nat64_translated);
    if (c.flags & kConnUoa) uoa_inbound(w, lp.pkt, ip4, &c);  // the 20-byte IPv6 form
    return stack::Verdict::Accept;
}

// FNAT64 outbound: the IPv4 RS's answer becomes IPv6 VIP:vport -> client:cport (IPv4 options
// are not carried). The RS's SYN-ACK MSS is lowered by 20: the client's segments grow by the
// header difference on the way back.
stack::Verdict fnat46_out(WorkerCtx& w, LbPacket<net::Af4>& lp, Conn& c) {
    const net::IpCarried in{lp.ip->tos, lp.ip->ttl, lp.proto, net::Af4::src(*lp.ip),
                            net::Af4::dst(*lp.ip)};
    if (const uint16_t mtu = too_big_for(w, c, stack::NhDir::ToClient, 40u + lp.l4_len)) {
        if (net::ntoh16(lp.ip->frag_off) & net::kIpv4DontFragment)
            send_too_big(w, lp, c.laddr_ip(), c.daddr(), static_cast<uint16_t>(mtu - 20));
        stack::drop(w.stack, lp.pkt, Counter::drop_nat64_too_big);
        return stack::Verdict::Drop;
    }
    const int grow = 40 - (lp.l4_off - int(sizeof(net::EtherHdr)));
    if (grow > 0 ? !rte_pktmbuf_prepend(lp.pkt, static_cast<uint16_t>(grow))
                 : (grow < 0 && !rte_pktmbuf_adj(lp.pkt, static_cast<uint16_t>(-grow)))) {
        stack::drop(w.stack, lp.pkt, Counter::drop_no_headroom);
        return stack::Verdict::Drop;
    }
    uint8_t* ip6 = rte_pktmbuf_mtod_offset(lp.pkt, uint8_t*, sizeof(net::EtherHdr));
    net::nat46_to_v6(ip6, in, lp.l4_len, c.vaddr(), c.caddr(), c.vport, c.cport);
    lp.l4 = ip6 + 40;
    lp.l4_off = static_cast<uint16_t>(sizeof(net::EtherHdr) + 40);
    if (lp.proto == net::kIpProtoTcp && (lp.tcp_flags & net::kTcpSyn)) {
        auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
        const auto opts = net::tcp_options_span(tcp);
        if (const auto mss = net::tcp_find_mss(opts); mss && *mss > 20 + 536) {
            net::tcp_set_mss(opts, static_cast<uint16_t>(*mss - 20), &tcp->checksum);
            w.stack.counters.inc(Counter::nat64_mss_clamped);
        }
    }
    w.stack.counters.inc(Counter::nat64_translated);
    return stack::Verdict::Accept;
}

}  // namespace

template <class Af>
stack::Verdict fullnat_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    if constexpr (Af::family == 6) {
        if (c.daddr_as<Af>().is_v4()) return fnat64_in(w, lp, c);
    }
    fullnat_rewrite_in(lp, c);
    // UOA after the rewrite: rewrite_both finds the ports at lp.l4, which an insert moves.
    // kConnUoa (UDP only) keeps the side slot out of the way of every other packet.
    if (c.flags & kConnUoa) uoa_inbound(w, lp.pkt, reinterpret_cast<uint8_t*>(lp.ip), &c);
    return stack::Verdict::Accept;
}

template <class Af>
stack::Verdict fullnat_out(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    if constexpr (Af::family == 4) {
        // An IPv4 reply's conn is wide only for an IPv6 client (NAT64).
        if (c.wide) [[unlikely]]
            return fnat46_out(w, lp, c);
    } else {
        (void)w;
    }
    fullnat_rewrite_out(lp, c);
    return stack::Verdict::Accept;
}

template stack::Verdict fullnat_in<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict fullnat_in<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);
template stack::Verdict fullnat_out<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict fullnat_out<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);

}  // namespace xvs::lb
