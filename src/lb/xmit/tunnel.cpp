#include "lb/xmit/tunnel.h"

#include <rte_mbuf.h>

#include <cstring>

#include "lb/conn.h"
#include "lb/conn_egress.h"
#include "lb/dest.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/icmp_error.h"
#include "net/icmp6.h"
#include "net/icmp_related.h"
#include "net/tunnel.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

template <class Af>
std::optional<uint8_t> tunnel_mtu_admit(WorkerCtx& w, LbPacket<Af>& lp, Conn& c, size_t overhead,
                                        size_t path_mtu) {
    // The outer packet goes to c.daddr(), which the conn's next hop toward the dest caches
    // from the conn's first packet on: its port without the route scan.
    const std::optional<uint8_t> port = conn_egress_port(w, c, stack::NhDir::ToDest);
    if (!port) {
        stack::drop(w.stack, lp.pkt, Counter::drop_no_route);
        return std::nullopt;
    }
    const uint16_t inner_len = Af::packet_len(*lp.ip);
    size_t link_mtu = w.stack.view->ports[*port].mtu;
    if (path_mtu != 0 && path_mtu < link_mtu) link_mtu = path_mtu;
    if (net::tunnel_fits(inner_len, overhead, link_mtu)) return port;
    // Too big: frag-needed / packet-too-big to the client when the packet asks for it.
    const auto mtu = net::tunnel_mtu_check(*lp.ip, inner_len, overhead, link_mtu);
    if (mtu.action == net::TunnelMtuAction::FragNeeded)
        send_too_big(w, lp, c.vaddr(), c.caddr(), mtu.next_hop_mtu);
    stack::drop(w.stack, lp.pkt, Counter::drop_tunnel_too_big);
    return std::nullopt;
}

template <class Af>
stack::Verdict tunnel_push(WorkerCtx& w, LbPacket<Af>& lp, Conn& c, const net::InetAddr& src,
                           size_t overhead, bool gue) {
    constexpr bool v4 = Af::family == 4;
    const uint16_t inner_len = Af::packet_len(*lp.ip);
    rte_mbuf* m = lp.pkt;
    // Ethernet padding after the IP packet would end up inside the outer packet: cut it.
    const uint32_t frame_len = sizeof(net::EtherHdr) + inner_len;
    if (rte_pktmbuf_data_len(m) > frame_len)
        rte_pktmbuf_trim(m, static_cast<uint16_t>(rte_pktmbuf_data_len(m) - frame_len));
    auto* start =
        reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, static_cast<uint16_t>(overhead)));
    if (!start) {
        stack::drop(w.stack, m, Counter::drop_no_headroom);
        return stack::Verdict::Drop;
    }
    std::memmove(start, start + overhead, sizeof(net::EtherHdr));  // output rewrites it anyway
    uint8_t* outer = start + sizeof(net::EtherHdr);
    const auto& inner = *reinterpret_cast<const typename Af::Hdr*>(outer + overhead);
    // The flow's hash: the GUE source port (ECMP/RSS at the RS spread flows, one flow keeps
    // one path) and the IPv6 flow label. IPIP has neither and does not compute it.
    const auto flow_hash = [&c] {
        return static_cast<uint32_t>(mix64(
            c.caddr().word(1) ^ mix64(c.vaddr().word(1) ^ c.caddr().word(0) ^ c.vaddr().word(0)) ^
            uint64_t(c.cport) << 16 ^ c.vport));
    };
    const uint16_t gue_port =
        gue ? net::hton16(c.dest->tun_port.load(std::memory_order_relaxed)) : 0;
    if constexpr (v4) {
        const uint16_t id = net::hton16(w.ip_id++);
        if (gue)
            net::gue_outer(outer, src, c.daddr(), inner, id, net::tunnel_flow_port(flow_hash()),
                           gue_port);
        else
            net::ipip_outer(outer, src, c.daddr(), inner, id);
    } else {
        const uint32_t h = flow_hash();
        if (gue)
            net::gue6_outer(outer, src, c.daddr(), inner, inner_len, h, net::tunnel_flow_port(h),
                            gue_port);
        else
            net::ip6ip6_outer(outer, src, c.daddr(), inner, inner_len, h);
    }
    lp.ip = reinterpret_cast<typename Af::Hdr*>(outer);
    return stack::Verdict::Accept;
}

template <class Af>
stack::Verdict tunnel_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    const bool gue = c.flags & kConnTunGue;
    const size_t overhead = tunnel_overhead<Af>(gue);
    const auto port = tunnel_mtu_admit(w, lp, c, overhead);
    if (!port) return stack::Verdict::Drop;
    const stack::PortView& pv = w.stack.view->ports[*port];
    return tunnel_push(w, lp, c, Af::family == 4 ? pv.tunnel_source : pv.tunnel_source6,
                       overhead, gue);
}

template stack::Verdict tunnel_in<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict tunnel_in<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);
template std::optional<uint8_t> tunnel_mtu_admit<net::Af4>(WorkerCtx&, LbPacket4&, Conn&, size_t,
                                                           size_t);
template std::optional<uint8_t> tunnel_mtu_admit<net::Af6>(WorkerCtx&, LbPacket6&, Conn&, size_t,
                                                           size_t);
template stack::Verdict tunnel_push<net::Af4>(WorkerCtx&, LbPacket4&, Conn&,
                                              const net::InetAddr&, size_t, bool);
template stack::Verdict tunnel_push<net::Af6>(WorkerCtx&, LbPacket6&, Conn&,
                                              const net::InetAddr&, size_t, bool);

}  // namespace xvs::lb
