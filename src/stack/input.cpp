#include "stack/input.h"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "net/tunnel.h"
#include "stack/arp.h"
#include "stack/exception.h"
#include "stack/ipv4.h"
#include "stack/ipv6.h"
#include "stack/ndp.h"
#include "stack/output.h"

namespace xvs::stack {

namespace {

// TCP/UDP/ICMP-echo header bounds; the drop reason when they do not hold. icmp_proto is the
// family's ICMP (echo request/reply are the types lb maps, for SNAT ping).
template <class Af>
[[gnu::always_inline]] inline bool l4_valid(uint8_t proto, const uint8_t* l4, uint16_t l4_len,
                                            uint8_t& tcp_flags, Counter& reason) {
    switch (proto) {
        case net::kIpProtoTcp: {
            const auto* tcp = reinterpret_cast<const net::TcpHdr*>(l4);
            if (l4_len < sizeof(net::TcpHdr) || tcp->header_len() < sizeof(net::TcpHdr) ||
                tcp->header_len() > l4_len) {
                reason = Counter::drop_tcp_header;
                return false;
            }
            tcp_flags = tcp->flags;
            return true;
        }
        case net::kIpProtoUdp: {
            const auto* udp = reinterpret_cast<const net::UdpHdr*>(l4);
            // IPv6 has no UDP without a checksum (RFC 8200 8.1).
            if (l4_len < sizeof(net::UdpHdr) || net::ntoh16(udp->length) < 8 ||
                net::ntoh16(udp->length) > l4_len || (Af::family == 6 && udp->checksum == 0)) {
                reason = Counter::drop_udp_header;
                return false;
            }
            return true;
        }
        case Af::icmp_proto: {
            constexpr uint8_t kRequest =
                Af::family == 4 ? net::kIcmpEchoRequest : net::kIcmp6EchoRequest;
            constexpr uint8_t kReply = Af::family == 4 ? net::kIcmpEchoReply : net::kIcmp6EchoReply;
            if (l4_len < sizeof(net::IcmpHdr)) {
                reason = Counter::drop_icmp_malformed;
                return false;
            }
            if (l4[0] != kRequest && l4[0] != kReply) {
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

template <class Af>
void fill(PktMeta<Af>& meta, rte_mbuf* m, typename Af::Hdr* ip, uint8_t* l4, uint16_t l4_len,
          uint8_t port, uint8_t proto, uint8_t flags, const OwnAddr* own, bool related,
          bool tunneled) {
    meta.pkt = m;
    meta.ip = ip;
    meta.l4 = l4;
    meta.l3_off = sizeof(net::EtherHdr);
    meta.l4_off = static_cast<uint16_t>(l4 - rte_pktmbuf_mtod(m, uint8_t*));
    meta.l4_len = l4_len;
    meta.port = port;
    meta.proto = proto;
    meta.tcp_flags = flags;
    meta.kind = own ? own->kind : AddrKind::Vip;
    meta.local = own != nullptr;
    meta.related = related;
    meta.tunneled = tunneled;
}

// NatTun return path: a packet to a local address in an IPIP / IP6IP6 tunnel (inner of the
// outer's family), or in GUE to one of the snapshot's NatTun GUE ports. Returns the outer header
// bytes to strip (IP [+ UDP + GUE]), 0 when the packet is no such tunnel packet.
template <class Af>
size_t tunnel_outer_len(const StackView& view, const OwnAddr* own, uint8_t proto,
                        const uint8_t* l4, uint16_t l4_len, size_t l3_len) {
    constexpr uint8_t kInner = Af::family == 4 ? net::kIpProtoIpip : net::kIpProtoIpv6;
    if (!own || own->kind != AddrKind::Lip) return 0;
    if (proto == kInner) return l3_len;
    if (proto != net::kIpProtoUdp || l4_len < 8 + 4) return 0;
    const uint16_t dport = net::load_wire16(l4 + 2);
    bool ours = false;
    for (uint16_t p : view.nattun_gue_ports) ours |= p == dport;
    // GUE variant 0, a data message without optional fields (what `xvs-rs tunnel` sends).
    if (!ours || l4[8] != 0 || l4[9] != kInner) return 0;
    return l3_len + 8 + 4;
}

// StackView::own through the burst's memo (OwnMemo): the map is looked up only when the
// destination differs from the last one asked about. dst by value: a header's field may sit
// at any address (the headers are packed), where no reference may bind.
template <class Addr>
[[gnu::always_inline]] inline const OwnAddr* own_memo(const StackView& view, OwnMemo<Addr>& memo,
                                                      const Addr dst) {
    if (memo.valid && memo.dst == dst) return memo.own;
    memo.own = view.own(dst);
    memo.dst = dst;
    memo.valid = true;
    return memo.own;
}

// Strips `outer` bytes after the Ethernet header; the stale RX checksum flags described the
// outer header only.
void tunnel_strip(rte_mbuf* m, size_t outer) {
    auto* base = rte_pktmbuf_mtod(m, uint8_t*);
    std::memmove(base + outer, base, sizeof(net::EtherHdr));
    rte_pktmbuf_adj(m, static_cast<uint16_t>(outer));
    m->ol_flags &= ~(RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK);
}

bool ip4_tunnel_input(StackContext& ctx, uint8_t port, rte_mbuf* m, PktMeta<net::Af4>& meta,
                      size_t outer);

// Inlined into eth_input (and with it into the worker's burst loop): no call and register
// saves per packet here. The tunnel's inner packet comes back through ip4_tunnel_input.
[[gnu::always_inline]] inline bool ip4_input(StackContext& ctx, uint8_t port, rte_mbuf* m,
                                             PktMeta<net::Af4>& meta, bool tunneled) {
    Ipv4View v;
    if (!ipv4_validate(ctx, m, v)) {
        if (m) rte_pktmbuf_free(m);  // nullptr: a fragment, held or dropped by reassembly
        return false;
    }
    uint8_t flags = 0;
    Counter reason = Counter::drop_ip_proto;
    const OwnAddr* own = own_memo(*ctx.view, ctx.own4, v.ip->daddr);
    const auto l3_len = static_cast<size_t>(v.l4 - reinterpret_cast<uint8_t*>(v.ip));
    if (const size_t outer = tunneled ? 0
                                      : tunnel_outer_len<net::Af4>(*ctx.view, own, v.ip->protocol,
                                                                   v.l4, v.l4_len, l3_len))
        return ip4_tunnel_input(ctx, port, m, meta, outer);
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
        if (!l4_valid<net::Af4>(v.ip->protocol, v.l4, v.l4_len, flags, reason)) {
            exception_or_drop(ctx, port, m, Counter::drop_not_local);
            return false;
        }
    } else if (v.ip->protocol == net::kIpProtoIcmp &&
               (own->kind != AddrKind::Director || v.l4_len < sizeof(net::IcmpHdr) ||
                reinterpret_cast<const net::IcmpHdr*>(v.l4)->type != net::kIcmpEchoReply)) {
        // Pings to own addresses are answered here; an echo reply to a director address may
        // be the answer to an inside host's ping through SNAT (lb looks up its conn).
        icmp_input(ctx, port, m, v);
        return false;
    } else if (!l4_valid<net::Af4>(v.ip->protocol, v.l4, v.l4_len, flags, reason)) {
        drop(ctx, m, reason);
        return false;
    }
    // TCP/UDP to a director address goes to lb too: a SNAT WAN address receives the replies
    // of inside hosts' connections there; without a conn lb drops it (drop_to_director).
    fill(meta, m, v.ip, v.l4, v.l4_len, port, v.ip->protocol, flags, own, related, tunneled);
    return true;
}

// A NatTun tunnel packet: its outer header goes, and the inner packet is classified as having
// come in the tunnel. Out of line: rare, and it keeps ip4_input from calling itself.
[[gnu::noinline]] bool ip4_tunnel_input(StackContext& ctx, uint8_t port, rte_mbuf* m,
                                        PktMeta<net::Af4>& meta, size_t outer) {
    ctx.counters.inc(Counter::tunnel_decap);
    tunnel_strip(m, outer);
    return ip4_input(ctx, port, m, meta, true);
}

// The same classification for IPv6, plus neighbour discovery.
bool ip6_input(StackContext& ctx, uint8_t port, rte_mbuf* m, PktMeta<net::Af6>& meta,
               bool tunneled = false) {
    Ipv6View v;
    if (!ipv6_validate(ctx, m, v)) {
        if (m) rte_pktmbuf_free(m);  // nullptr: a fragment, held or dropped by reassembly
        return false;
    }
    // Multicast destinations are never own addresses: own is nullptr for them.
    const OwnAddr* own = own_memo(*ctx.view, ctx.own6, net::Af6::dst(*v.ip));
    if (!tunneled && own) {
        const auto l3_len = static_cast<size_t>(v.l4 - reinterpret_cast<uint8_t*>(v.ip));
        if (const size_t outer =
                tunnel_outer_len<net::Af6>(*ctx.view, own, v.proto, v.l4, v.l4_len, l3_len)) {
            ctx.counters.inc(Counter::tunnel_decap);
            tunnel_strip(m, outer);
            return ip6_input(ctx, port, m, meta, true);
        }
    }
    const bool icmp = v.proto == net::kIpProtoIcmp6 && v.l4_len >= sizeof(net::IcmpHdr);
    const uint8_t type = icmp ? v.l4[0] : 0;
    if (icmp && (type == net::kNdNeighSolicit || type == net::kNdNeighAdvert)) {
        nd_input(ctx, port, m, v);
        return false;
    }
    if (v.multicast) {  // MLD, router discovery, ...: the kernel's business if anyone's
        exception_or_drop(ctx, port, m, Counter::drop_ip6_multicast);
        return false;
    }
    uint8_t flags = 0;
    Counter reason = Counter::drop_ip_proto;
    bool related = false;
    if (icmp && (type == net::kIcmp6DestUnreach || type == net::kIcmp6PacketTooBig ||
                 type == net::kIcmp6TimeExceeded)) {
        related = true;
    } else if (!own) {
        if (!l4_valid<net::Af6>(v.proto, v.l4, v.l4_len, flags, reason)) {
            exception_or_drop(ctx, port, m, Counter::drop_not_local);
            return false;
        }
    } else if (v.proto == net::kIpProtoIcmp6 &&
               (own->kind != AddrKind::Director || type != net::kIcmp6EchoReply)) {
        icmp6_input(ctx, port, m, v);
        return false;
    } else if (!l4_valid<net::Af6>(v.proto, v.l4, v.l4_len, flags, reason)) {
        drop(ctx, m, reason);
        return false;
    }
    fill(meta, m, v.ip, v.l4, v.l4_len, port, v.proto, flags, own, related, tunneled);
    return true;
}

// An IPv4 multicast datagram in its RFC 1112 6.4 frame: destination 224.0.0.0/4 and the MAC
// 01:00:5e carrying its low 23 bits. xvs has no multicast listener; the kernel's link
// protocols do (IGMP, OSPF 224.0.0.5/6, VRRP 224.0.0.18, PIM, mDNS), so on a port with an
// exception path every such frame goes to it, as IPv6 multicast does and as the XDP program
// passes it on net_af_xdp: the kernel keeps only the groups it joined. Checked before
// ipv4_validate (which drops what is not unicast): the kernel validates what it takes.
bool ip4_multicast_frame(const rte_mbuf* m, const net::MacAddr& dst) {
    if (rte_pktmbuf_data_len(m) < sizeof(net::EtherHdr) + sizeof(net::Ipv4Hdr)) return false;
    uint8_t d[4];
    std::memcpy(d,
                rte_pktmbuf_mtod_offset(m, const uint8_t*,
                                        sizeof(net::EtherHdr) + offsetof(net::Ipv4Hdr, daddr)),
                4);
    return net::ipv4_is_multicast(d) && dst == net::ipv4_multicast_mac(d);
}

}  // namespace

namespace {
uint64_t g_tunneled_flag = 0;
}

uint64_t tunneled_mbuf_flag() { return g_tunneled_flag; }

namespace {
// A handed-over frame that came in a tunnel (its outer header is gone): the flag, cleared.
bool take_tunneled(rte_mbuf* m) {
    if (!(m->ol_flags & g_tunneled_flag)) return false;
    m->ol_flags &= ~g_tunneled_flag;
    return true;
}
}  // namespace

Result<void> tunneled_mbuf_flag_register() {
    if (g_tunneled_flag) return {};
    rte_mbuf_dynflag desc{};
    std::strncpy(desc.name, "xvs_dynflag_tunneled", sizeof desc.name - 1);
    const int bit = rte_mbuf_dynflag_register(&desc);
    if (bit < 0)
        return make_error(std::string("cannot register the mbuf flag for tunnelled frames: ") +
                          rte_strerror(rte_errno));
    g_tunneled_flag = uint64_t{1} << bit;
    return {};
}

uint8_t eth_input(StackContext& ctx, uint8_t port, const PortView& pv, uint32_t max_frame,
                  rte_mbuf* m, PktMeta<net::Af4>& meta4, PktMeta<net::Af6>& meta6) {
    const uint32_t len = rte_pktmbuf_data_len(m);
    if (m->nb_segs > 1 || len > max_frame) {
        drop(ctx, m, Counter::drop_frame_too_big);
        return 0;
    }
    if (len < sizeof(net::EtherHdr)) {
        drop(ctx, m, Counter::drop_frame_truncated);
        return 0;
    }
    auto* eth = rte_pktmbuf_mtod(m, net::EtherHdr*);
    const bool unicast = eth->dst == pv.mac;
    if (eth->ether_type == net::hton16(net::kEtherTypeIpv4)) {
        if (!unicast && !eth->dst.is_broadcast()) {
            if (ip4_multicast_frame(m, eth->dst)) {
                exception_or_drop(ctx, port, m, Counter::drop_ip4_multicast);
                return 0;
            }
            drop(ctx, m, Counter::drop_not_for_us);
            return 0;
        }
        return ip4_input(ctx, port, m, meta4, take_tunneled(m)) ? 4 : 0;
    }
    if (eth->ether_type == net::hton16(net::kEtherTypeIpv6)) {
        // IPv6 multicast frames (33:33:...) carry neighbour solicitations.
        if (!unicast && !(eth->dst.b[0] == 0x33 && eth->dst.b[1] == 0x33)) {
            drop(ctx, m, Counter::drop_not_for_us);
            return 0;
        }
        return ip6_input(ctx, port, m, meta6, take_tunneled(m)) ? 6 : 0;
    }
    if (!unicast && !eth->dst.is_broadcast()) {
        drop(ctx, m, Counter::drop_not_for_us);
        return 0;
    }
    if (eth->ether_type == net::hton16(net::kEtherTypeArp)) {
        arp_input(ctx, port, m);
        return 0;
    }
    exception_or_drop(ctx, port, m, Counter::drop_ethertype);  // LLDP, ... : the kernel's
    return 0;
}

}  // namespace xvs::stack
