#include "lb/xmit/tunnel.h"

#include <rte_mbuf.h>

#include <cstring>

#include "lb/conn.h"
#include "lb/dest.h"
#include "lb/worker_ctx.h"
#include "net/icmp_related.h"
#include "net/tunnel.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// Frag-needed from the VIP to the client, quoting the packet that did not fit.
template <class Af>
void send_frag_needed(WorkerCtx& w, const LbPacket<Af>& lp, const Conn& c, uint16_t next_hop_mtu) {
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) return;
    uint8_t* out = reinterpret_cast<uint8_t*>(
        rte_pktmbuf_append(m, sizeof(net::EtherHdr) + net::kIcmpErrorMaxLen));
    const size_t n = out ? net::build_frag_needed(
                               out + sizeof(net::EtherHdr), net::kIcmpErrorMaxLen,
                               reinterpret_cast<const uint8_t*>(lp.ip), Af::packet_len(*lp.ip),
                               c.vaddr, next_hop_mtu, net::hton16(w.ip_id++))
                         : 0;
    if (n == 0) {  // no room, or RFC 1122 forbids an error for this packet
        w.stack.counters.inc(Counter::drop_icmp_not_sent);
        rte_pktmbuf_free(m);
        return;
    }
    rte_pktmbuf_trim(m, static_cast<uint16_t>(net::kIcmpErrorMaxLen - n));
    w.stack.counters.inc(Counter::icmp_frag_needed_sent);
    stack::ip_output<Af>(w.stack, m, c.caddr);
}

}  // namespace

template <class Af>
stack::Verdict tunnel_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    const bool gue = c.flags & kConnTunGue;
    const size_t overhead = gue ? net::kGueOverhead : net::kIpipOverhead;
    const stack::NextHop nh = w.stack.view->route_lookup(c.daddr);
    if (!nh.found) {
        stack::drop(w.stack, lp.pkt, Counter::drop_no_route);
        return stack::Verdict::Drop;
    }
    const uint16_t inner_len = Af::packet_len(*lp.ip);
    const auto mtu =
        net::tunnel_mtu_check(*lp.ip, inner_len, overhead, w.stack.view->ports[nh.port].mtu);
    if (mtu.action != net::TunnelMtuAction::Fits) {
        if (mtu.action == net::TunnelMtuAction::FragNeeded)
            send_frag_needed(w, lp, c, mtu.next_hop_mtu);
        stack::drop(w.stack, lp.pkt, Counter::drop_tunnel_too_big);
        return stack::Verdict::Drop;
    }
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
    const auto& inner = *reinterpret_cast<const net::Ipv4Hdr*>(outer + overhead);
    const net::InetAddr& src = w.stack.view->ports[nh.port].tunnel_source;
    const uint16_t id = net::hton16(w.ip_id++);
    if (gue) {
        // The GUE source port carries the flow (ECMP/RSS at the RS spread flows, keep one
        // flow on one path): a hash of the inner addresses and ports.
        const uint32_t h = static_cast<uint32_t>(
            mix64(c.caddr.word(1) ^ mix64(c.vaddr.word(1) ^ c.caddr.word(0) ^ c.vaddr.word(0)) ^
                  uint64_t(c.cport) << 16 ^ c.vport));
        const uint16_t gue_port = net::hton16(c.dest->tun_port.load(std::memory_order_relaxed));
        net::gue_outer(outer, src, c.daddr, inner, id, net::tunnel_flow_port(h), gue_port);
    } else {
        net::ipip_outer(outer, src, c.daddr, inner, id);
    }
    lp.ip = reinterpret_cast<typename Af::Hdr*>(outer);
    return stack::Verdict::Accept;
}

template stack::Verdict tunnel_in<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);

}  // namespace xvs::lb
