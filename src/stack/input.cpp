#include "stack/input.h"

#include <rte_mbuf.h>

#include "stack/arp.h"
#include "stack/ipv4.h"
#include "stack/output.h"

namespace xvs::stack {

namespace {

// TCP/UDP header bounds; the drop reason when they do not hold.
bool l4_valid(const Ipv4View& v, uint8_t& tcp_flags, Counter& reason) {
    switch (v.ip->protocol) {
        case net::kIpProtoTcp: {
            const auto* tcp = reinterpret_cast<const net::TcpHdr*>(v.l4);
            if (v.l4_len < sizeof(net::TcpHdr) || tcp->header_len() < sizeof(net::TcpHdr) ||
                tcp->header_len() > v.l4_len) {
                reason = Counter::drop_tcp_header;
                return false;
            }
            tcp_flags = tcp->flags;
            return true;
        }
        case net::kIpProtoUdp: {
            const auto* udp = reinterpret_cast<const net::UdpHdr*>(v.l4);
            if (v.l4_len < sizeof(net::UdpHdr) || net::ntoh16(udp->length) < 8 ||
                net::ntoh16(udp->length) > v.l4_len) {
                reason = Counter::drop_udp_header;
                return false;
            }
            return true;
        }
        case net::kIpProtoIcmp: {
            // Only echo request/reply go to lb (SNAT maps their identifier like a port).
            const auto* icmp = reinterpret_cast<const net::IcmpHdr*>(v.l4);
            if (v.l4_len < sizeof(net::IcmpHdr)) {
                reason = Counter::drop_icmp_malformed;
                return false;
            }
            if (icmp->type != net::kIcmpEchoRequest && icmp->type != net::kIcmpEchoReply) {
                reason = Counter::drop_icmp_unhandled;
                return false;
            }
            return true;
        }
        default:
            reason = Counter::drop_ip_proto;
            return false;
    }
}
}  // namespace

bool eth_input(StackContext& ctx, uint8_t port, const PortView& pv, uint32_t max_frame, rte_mbuf* m,
               PktMeta<net::Af4>& meta) {
    const uint32_t len = rte_pktmbuf_data_len(m);
    if (m->nb_segs > 1 || len > max_frame) {
        drop(ctx, m, Counter::drop_frame_too_big);
        return false;
    }
    if (len < sizeof(net::EtherHdr)) {
        drop(ctx, m, Counter::drop_frame_truncated);
        return false;
    }
    auto* eth = rte_pktmbuf_mtod(m, net::EtherHdr*);
    if (!(eth->dst == pv.mac) && !eth->dst.is_broadcast()) {
        drop(ctx, m, Counter::drop_not_for_us);
        return false;
    }
    if (eth->ether_type == net::hton16(net::kEtherTypeArp)) {
        arp_input(ctx, port, m);
        return false;
    }
    if (eth->ether_type != net::hton16(net::kEtherTypeIpv4)) {
        drop(ctx, m, Counter::drop_ethertype);
        return false;
    }
    Ipv4View v;
    if (!ipv4_validate(ctx, m, v)) {
        if (m) rte_pktmbuf_free(m);  // nullptr: a fragment, held or dropped by reassembly
        return false;
    }
    uint8_t flags = 0;
    Counter reason = Counter::drop_ip_proto;
    const OwnAddr* own = ctx.view->own(net::Af4::dst(*v.ip));
    // ICMP errors (destination unreachable, time exceeded) may concern a conn whatever their
    // destination: to a VIP or LIP from either side, or to a client behind us (NAT). lb
    // matches them by the packet they quote; an echo for an own address is answered here.
    bool related = false;
    if (v.ip->protocol == net::kIpProtoIcmp && v.l4_len >= sizeof(net::IcmpHdr) &&
        (v.l4[0] == net::kIcmpDestUnreach || v.l4[0] == net::kIcmpTimeExceeded)) {
        related = true;
    } else if (!own) {
        // Not ours: only a TCP/UDP packet of one of our conns goes on (lb decides); anything
        // else is dropped as before, drop_not_local.
        if (!l4_valid(v, flags, reason)) {
            drop(ctx, m, Counter::drop_not_local);
            return false;
        }
    } else if (v.ip->protocol == net::kIpProtoIcmp &&
               (own->kind != AddrKind::Director || v.l4_len < sizeof(net::IcmpHdr) ||
                reinterpret_cast<const net::IcmpHdr*>(v.l4)->type != net::kIcmpEchoReply)) {
        // Pings to own addresses are answered here; an echo reply to a director address may
        // be the answer to an inside host's ping through SNAT (lb looks up its conn).
        icmp_input(ctx, port, m, v);
        return false;
    } else if (!l4_valid(v, flags, reason)) {
        drop(ctx, m, reason);
        return false;
    }
    // TCP/UDP to a director address goes to lb too: a SNAT WAN address receives the replies
    // of inside hosts' connections there; without a conn lb drops it (drop_to_director).
    meta.pkt = m;
    meta.ip = v.ip;
    meta.l4 = v.l4;
    meta.l3_off = sizeof(net::EtherHdr);
    meta.l4_off = static_cast<uint16_t>(v.l4 - rte_pktmbuf_mtod(m, uint8_t*));
    meta.l4_len = v.l4_len;
    meta.port = port;
    meta.proto = v.ip->protocol;
    meta.tcp_flags = flags;
    meta.kind = own ? own->kind : AddrKind::Vip;
    meta.local = own != nullptr;
    meta.related = related;
    return true;
}

}  // namespace xvs::stack
