// IPv6 input checks and ICMPv6 echo. As for IPv4, echo replies go back out of the receiving
// port to the requester's MAC.
#include "stack/ipv6.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "net/af.h"
#include "net/byteorder.h"
#include "net/checksum.h"
#include "stack/fragment.h"
#include "stack/output.h"

namespace xvs::stack {

namespace {

constexpr unsigned kMaxExtHeaders = 8;  // more is an attack, not a packet we serve

bool is_multicast(const uint8_t* a) {
    return a[0] == 0xff;
}

}  // namespace

bool ipv6_source_martian(const uint8_t* s) {
    static constexpr uint8_t kZero[16] = {};
    if (is_multicast(s)) return true;
    if (std::memcmp(s, kZero, 10) != 0) return false;
    // ::, ::1 and ::ffff:a.b.c.d share ten leading zero bytes.
    if (s[10] == 0xff && s[11] == 0xff) return true;
    if (s[10] != 0 || s[11] != 0 || s[12] != 0 || s[13] != 0 || s[14] != 0) return false;
    return s[15] <= 1;
}

bool ipv6_is_solicited_node_of(const uint8_t* d, const net::InetAddr& target) {
    static constexpr uint8_t kPrefix[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};
    return std::memcmp(d, kPrefix, 13) == 0 && std::memcmp(d + 13, target.b + 13, 3) == 0;
}

bool ipv6_validate(StackContext& ctx, rte_mbuf*& pkt, Ipv6View& out) {
    const uint32_t frame = rte_pktmbuf_data_len(pkt);
    if (frame < sizeof(net::EtherHdr) + sizeof(net::Ipv6Hdr)) {
        drop(ctx, pkt, Counter::drop_frame_truncated);
        pkt = nullptr;
        return false;
    }
    auto* ip = rte_pktmbuf_mtod_offset(pkt, net::Ipv6Hdr*, sizeof(net::EtherHdr));
    const uint32_t avail = frame - sizeof(net::EtherHdr);
    if (ip->version() != 6) {
        drop(ctx, pkt, Counter::drop_ip_version);
        pkt = nullptr;
        return false;
    }
    // A payload length of 0 announces a jumbogram (RFC 2675), which no port here carries.
    const uint32_t total = sizeof(net::Ipv6Hdr) + net::ntoh16(ip->payload_len);
    if (total == sizeof(net::Ipv6Hdr) || total > avail) {
        drop(ctx, pkt, Counter::drop_ip_total_len);
        pkt = nullptr;
        return false;
    }
    if (rte_pktmbuf_mtod(pkt, const net::EtherHdr*)->dst.is_broadcast()) {
        drop(ctx, pkt, Counter::drop_l2_broadcast_ip);
        pkt = nullptr;
        return false;
    }
    if (ipv6_source_martian(ip->saddr) &&
        !(net::Af6::src(*ip).is_unspecified() && ip->next_header == net::kIpProtoIcmp6)) {
        // (:: may only send DAD solicitations; nd_input counts those, drop_nd_dad.)
        drop(ctx, pkt, Counter::drop_martian_source);
        pkt = nullptr;
        return false;
    }
    if (total < avail) rte_pktmbuf_trim(pkt, static_cast<uint16_t>(avail - total));

    uint8_t* p = reinterpret_cast<uint8_t*>(ip) + sizeof(net::Ipv6Hdr);
    const uint8_t* const end = reinterpret_cast<uint8_t*>(ip) + total;
    uint8_t nh = ip->next_header;
    uint8_t* nh_byte = &ip->next_header;  // the byte that names the header at p
    for (unsigned n = 0;; ++n) {
        if (nh != net::kIp6ExtHopByHop && nh != net::kIp6ExtDestOpts && nh != net::kIp6ExtRouting &&
            nh != net::kIp6ExtFragment)
            break;
        // Hop-by-hop only directly after the fixed header (RFC 8200 4.3).
        if (n == kMaxExtHeaders || end - p < 8 || (nh == net::kIp6ExtHopByHop && n != 0)) {
            drop(ctx, pkt, Counter::drop_ip6_ext_header);
            pkt = nullptr;
            return false;
        }
        size_t len = (size_t(p[1]) + 1) * 8;
        if (nh == net::kIp6ExtFragment) {
            // An atomic fragment (offset 0, no more fragments, RFC 6946) is a whole packet.
            len = 8;
            const uint16_t fo = net::load_be16(p + 2);
            if ((fo & 0xfff9) != 0) {
                // A real fragment: reassembled here (stack/fragment.h) into the unfragmentable
                // part (without the fragment header) and the payload; the whole datagram then
                // goes through these checks again, as one packet with no fragment header.
                if (end - p < 8) {
                    drop(ctx, pkt, Counter::drop_ip6_ext_header);
                    pkt = nullptr;
                    return false;
                }
                *nh_byte = p[0];
                net::ReasmKey key;
                key.src = net::Af6::src(*ip);
                key.dst = net::Af6::dst(*ip);
                key.id = net::load_wire32(p + 4);
                key.proto = 0;  // RFC 8200 4.5: source, destination and identification
                const auto unfrag = static_cast<uint32_t>(p - reinterpret_cast<uint8_t*>(ip));
                const uint32_t max_payload =
                    std::min<uint32_t>(ctx.frag.max_datagram_size, 65535 + 40) - unfrag;
                uint32_t hdr_len = 0;
                rte_mbuf* whole = reassemble(
                    ctx, pkt, key, fo & 0xfff8, fo & 1, p + 8, static_cast<uint32_t>(end - p - 8),
                    rte_pktmbuf_mtod(pkt, const uint8_t*),
                    static_cast<uint32_t>(sizeof(net::EtherHdr)) + unfrag, max_payload, hdr_len);
                pkt = whole;  // nullptr: held or dropped (counted)
                if (!whole) return false;
                auto* wip = rte_pktmbuf_mtod_offset(whole, net::Ipv6Hdr*, sizeof(net::EtherHdr));
                wip->payload_len = net::hton16(static_cast<uint16_t>(
                    rte_pktmbuf_data_len(whole) - sizeof(net::EtherHdr) - sizeof(net::Ipv6Hdr)));
                return ipv6_validate(ctx, pkt, out);
            }
        } else if (nh == net::kIp6ExtRouting && p[3] != 0) {
            // Segments left: the packet is to be routed on past us, which xvs does not do.
            drop(ctx, pkt, Counter::drop_ip6_ext_header);
            pkt = nullptr;
            return false;
        }
        if (size_t(end - p) < len) {
            drop(ctx, pkt, Counter::drop_ip6_ext_header);
            pkt = nullptr;
            return false;
        }
        nh = p[0];
        nh_byte = p;
        p += len;
    }
    out.ip = ip;
    out.l4 = p;
    out.l4_len = static_cast<uint16_t>(end - p);
    out.proto = nh;
    out.multicast = is_multicast(ip->daddr);
    return true;
}

void icmp6_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt, const Ipv6View& v) {
    net::Ipv6Hdr* ip = v.ip;
    if (v.l4_len < sizeof(net::IcmpHdr) ||
        net::csum_fold(net::csum_partial(
            v.l4, v.l4_len,
            net::ipv6_pseudo_sum(ip->saddr, ip->daddr, net::kIpProtoIcmp6, v.l4_len))) != 0) {
        drop(ctx, pkt, Counter::drop_icmp_malformed);
        return;
    }
    if (ctx.view->own(net::Af6::src(*ip)) != nullptr) {
        drop(ctx, pkt, Counter::drop_martian_source);
        return;
    }
    auto* icmp = reinterpret_cast<net::IcmpHdr*>(v.l4);
    if (icmp->type != net::kIcmp6EchoRequest || icmp->code != 0) {
        drop(ctx, pkt, Counter::drop_icmp_unhandled);
        return;
    }
    // Swapping the addresses leaves the pseudo-header sum alone; only the type changes.
    net::csum_replace2(&icmp->checksum, net::hton16(net::kIcmp6EchoRequest << 8),
                       net::hton16(net::kIcmp6EchoReply << 8));
    icmp->type = net::kIcmp6EchoReply;
    uint8_t tmp[16];
    std::memcpy(tmp, ip->saddr, 16);
    std::memcpy(ip->saddr, ip->daddr, 16);
    std::memcpy(ip->daddr, tmp, 16);
    ip->hop_limit = 64;

    auto* eth = rte_pktmbuf_mtod(pkt, net::EtherHdr*);
    eth->dst = eth->src;
    eth->src = ctx.view->ports[port].mac;
    ctx.counters.inc(Counter::icmp6_echo_replies);
    ctx.tx.enqueue(port, pkt, ctx.counters);
}

}  // namespace xvs::stack
