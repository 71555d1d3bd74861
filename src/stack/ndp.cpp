// Neighbour discovery, see stack/ndp.h. Messages are validated as RFC 4861 7.1.1/7.1.2 asks
// (hop limit 255, code 0, ICMPv6 checksum, length, well-formed options, target not multicast).
#include "stack/ndp.h"

#include <rte_mbuf.h>

#include <cstring>

#include "net/af.h"
#include "net/checksum.h"
#include "stack/arp.h"
#include "stack/exception.h"
#include "stack/neigh_shared.h"
#include "stack/output.h"

namespace xvs::stack {

namespace {

using net::EtherHdr;
using net::Ipv6Hdr;
using net::NdMsg;

constexpr size_t kLlaOptLen = 8;  // type, length (in 8-byte units), 6-byte MAC
constexpr size_t kNdFrameLen = sizeof(EtherHdr) + sizeof(Ipv6Hdr) + sizeof(NdMsg) + kLlaOptLen;

bool link_local(const net::InetAddr& a) {
    return a.b[0] == 0xfe && (a.b[1] & 0xc0) == 0x80;
}

// Finds the link-layer address option of `type`; false on a malformed option list.
bool nd_options(const uint8_t* opt, size_t len, uint8_t type, const uint8_t*& mac) {
    mac = nullptr;
    while (len > 0) {
        if (len < 2 || opt[1] == 0 || size_t(opt[1]) * 8 > len) return false;
        const size_t olen = size_t(opt[1]) * 8;
        if (opt[0] == type && olen >= kLlaOptLen) mac = opt + 2;
        opt += olen;
        len -= olen;
    }
    return true;
}

void release_pending(StackContext& ctx, NeighEntry& e) {
    for (unsigned i = 0; i < e.npending; ++i) ether_send(ctx, e.pending[i], e.port, e.mac);
    ctx.neigh->pending_total -= e.npending;
    e.npending = 0;
}

// Writes an ND message (solicitation or advertisement) with one link-layer address option
// after the Ethernet header of m, which holds kNdFrameLen bytes.
void nd_build(rte_mbuf* m, const net::MacAddr& eth_dst, const net::MacAddr& eth_src,
              const uint8_t* saddr, const uint8_t* daddr, uint8_t type, uint8_t flags,
              const uint8_t* target, uint8_t opt_type) {
    auto* eth = rte_pktmbuf_mtod(m, EtherHdr*);
    eth->dst = eth_dst;
    eth->src = eth_src;
    eth->ether_type = net::hton16(net::kEtherTypeIpv6);
    auto* ip = reinterpret_cast<Ipv6Hdr*>(eth + 1);
    ip->vtc_flow = net::hton32(6u << 28);
    ip->payload_len = net::hton16(sizeof(NdMsg) + kLlaOptLen);
    ip->next_header = net::kIpProtoIcmp6;
    ip->hop_limit = 255;
    std::memcpy(ip->saddr, saddr, 16);
    std::memcpy(ip->daddr, daddr, 16);
    auto* nd = reinterpret_cast<uint8_t*>(ip + 1);
    std::memset(nd, 0, sizeof(NdMsg) + kLlaOptLen);
    nd[0] = type;
    nd[4] = flags;
    std::memcpy(nd + 8, target, 16);
    uint8_t* opt = nd + sizeof(NdMsg);
    opt[0] = opt_type;
    opt[1] = 1;
    std::memcpy(opt + 2, eth_src.b, 6);
    const uint16_t csum = net::ipv6_l4_checksum(ip->saddr, ip->daddr, net::kIpProtoIcmp6, nd,
                                                sizeof(NdMsg) + kLlaOptLen);
    std::memcpy(nd + 2, &csum, 2);
}

}  // namespace

void nd_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt, const Ipv6View& v) {
    // Only the neighbour owner learns (and answers), as for ARP.
    if (!ctx.neigh_owner) return neigh_handoff_input(ctx, port, pkt, &v);
    auto drop_with = [&](Counter c) {
        ctx.counters.inc(c);
        rte_pktmbuf_free(pkt);
    };
    const Ipv6Hdr* ip = v.ip;
    const uint8_t* nd = v.l4;
    if (ip->hop_limit != 255 || v.l4_len < sizeof(NdMsg) || nd[1] != 0 || nd[8] == 0xff ||
        net::csum_fold(net::csum_partial(
            nd, v.l4_len,
            net::ipv6_pseudo_sum(ip->saddr, ip->daddr, net::kIpProtoIcmp6, v.l4_len))) != 0)
        return drop_with(Counter::drop_nd_malformed);
    const bool solicit = nd[0] == net::kNdNeighSolicit;
    const uint8_t* mac = nullptr;
    if (!nd_options(nd + sizeof(NdMsg), v.l4_len - sizeof(NdMsg),
                    solicit ? net::kNdOptSourceLla : net::kNdOptTargetLla, mac))
        return drop_with(Counter::drop_nd_malformed);
    const net::InetAddr target = net::InetAddr::v6(nd + 8);
    const net::InetAddr sender = net::Af6::src(*ip);

    if (!solicit) {
        // An advertisement speaks for its target: learned only if we asked (the entry exists),
        // never for one of our addresses, never from off the port's link.
        if (v.multicast && (nd[4] & net::kNaSolicited))
            return drop_with(Counter::drop_nd_malformed);  // RFC 4861 7.1.2
        if (ctx.view->own(target)) return drop_with(Counter::drop_nd_own_address);
        // Only a unicast advertisement to one of our addresses (the answer to our own
        // solicitation) is ours alone. Unicast to another address answers the kernel's
        // solicitation; a multicast one (unsolicited, to all-nodes: a neighbour announcing a
        // new MAC, RFC 4861 7.2.6) is for every node on the link, so xvs learns from it and
        // the kernel gets the frame too.
        const bool kernel = v.multicast || !ctx.view->own(net::Af6::dst(*ip));
        if (!link_local(target) && !ctx.view->on_link(target, port)) {
            if (kernel) return exception_or_drop(ctx, port, pkt, Counter::drop_nd_off_link);
            return drop_with(Counter::drop_nd_off_link);
        }
        if (mac) {
            net::MacAddr m;
            std::memcpy(m.b, mac, 6);
            NeighEntry* e = ctx.neigh->learn(target, m, port, ctx.now_ms, false);
            if (e && e->npending) release_pending(ctx, *e);
        }
        if (kernel) return exception_or_drop(ctx, port, pkt, Counter::nd_adverts_received);
        return drop_with(Counter::nd_adverts_received);
    }

    const OwnAddr* own = ctx.view->own(target);
    // Solicitations for addresses not ours on this port (the kernel's, DAD probes for them)
    // go to the kernel when the port has an exception path.
    if (!own || own->port != port)
        return exception_or_drop(
            ctx, port, pkt,
            sender.is_unspecified() ? Counter::drop_nd_dad : Counter::drop_nd_not_ours);
    if (sender.is_unspecified()) return drop_with(Counter::drop_nd_dad);
    // A backup's VIP or local address (session sync): owned, not answered until takeover.
    if (own->arp_silent) return drop_with(Counter::drop_nd_not_ours);
    if (v.multicast && !ipv6_is_solicited_node_of(ip->daddr, target))
        return drop_with(Counter::drop_nd_malformed);
    if (ctx.view->own(sender)) return drop_with(Counter::drop_nd_own_address);
    if (!link_local(sender) && !ctx.view->on_link(sender, port))
        return drop_with(Counter::drop_nd_off_link);

    auto* eth = rte_pktmbuf_mtod(pkt, EtherHdr*);
    net::MacAddr reply_mac = eth->src;
    if (mac) {
        std::memcpy(reply_mac.b, mac, 6);
        const uint64_t evicted = ctx.neigh->evictions();
        NeighEntry* e = ctx.neigh->learn(sender, reply_mac, port, ctx.now_ms, true);
        ctx.counters.inc(Counter::neigh_evicted, ctx.neigh->evictions() - evicted);
        if (e && e->npending) release_pending(ctx, *e);
    }
    // The solicitation becomes the advertisement in place (one frame, conservation.h).
    uint8_t saddr[16];
    std::memcpy(saddr, ip->saddr, 16);
    const uint32_t len = rte_pktmbuf_data_len(pkt);
    if (len > kNdFrameLen) {
        rte_pktmbuf_trim(pkt, static_cast<uint16_t>(len - kNdFrameLen));
    } else if (len < kNdFrameLen &&
               !rte_pktmbuf_append(pkt, static_cast<uint16_t>(kNdFrameLen - len))) {
        return drop_with(Counter::drop_nd_malformed);
    }
    nd_build(pkt, reply_mac, ctx.view->ports[port].mac, target.b, saddr, net::kNdNeighAdvert,
             net::kNaSolicited | net::kNaOverride, target.b, net::kNdOptTargetLla);
    ctx.counters.inc(Counter::nd_adverts_sent);
    ctx.tx.enqueue(port, pkt, ctx.counters);
}

void nd_send_solicit(StackContext& ctx, uint8_t port, const net::InetAddr& target) {
    const net::InetAddr& src = ctx.view->port_source6[port];
    if (src.is_unspecified()) {
        ctx.counters.inc(Counter::nd_no_source);
        return;
    }
    rte_mbuf* m = frame_alloc(ctx);
    if (!m) return;
    if (!rte_pktmbuf_append(m, kNdFrameLen)) {
        drop(ctx, m, Counter::drop_mbuf_alloc);
        return;
    }
    // Solicited-node multicast ff02::1:ffXX:XXXX and its MAC 33:33:ff:XX:XX:XX.
    uint8_t dst[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};
    std::memcpy(dst + 13, target.b + 13, 3);
    const net::MacAddr mdst{{0x33, 0x33, 0xff, target.b[13], target.b[14], target.b[15]}};
    nd_build(m, mdst, ctx.view->ports[port].mac, src.b, dst, net::kNdNeighSolicit, 0, target.b,
             net::kNdOptSourceLla);
    ctx.counters.inc(Counter::nd_solicits_sent);
    ctx.tx.enqueue(port, m, ctx.counters);
}

void neigh_probe(StackContext& ctx, uint8_t port, const net::InetAddr& target) {
    if (target.is_v4())
        arp_send_request(ctx, port, target);
    else
        nd_send_solicit(ctx, port, target);
}

}  // namespace xvs::stack
