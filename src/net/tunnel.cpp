// IPIP and GUE outer headers: every field written explicitly, byte by byte in wire order.
#include "net/tunnel.h"

#include <cstring>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/icmp6.h"

namespace xvs::net {

namespace {

// Outer IPv4 header without options; flags/offset keep only the inner DF bit. Inlined into
// its two callers (one per tunnel kind, every packet of a TUN conn).
[[gnu::always_inline]] inline void outer_ipv4(uint8_t* out, const InetAddr& saddr,
                                              const InetAddr& daddr, const Ipv4Hdr& inner,
                                              uint16_t id, uint8_t ttl, uint8_t proto,
                                              size_t overhead) {
    out[0] = 0x45;
    // RFC 6040 normal mode: DSCP and ECN copied from the inner header.
    out[1] = inner.tos;
    store_be16(out + 2, static_cast<uint16_t>(ntoh16(inner.total_length) + overhead));
    store_wire16(out + 4, id);
    store_wire16(out + 6, static_cast<uint16_t>(inner.frag_off & hton16(kIpv4DontFragment)));
    out[8] = ttl;
    out[9] = proto;
    out[10] = out[11] = 0;
    store_wire32(out + 12, saddr.v4_be());
    store_wire32(out + 16, daddr.v4_be());
    const uint16_t csum = csum_fold(csum_partial20(out));
    store_wire16(out + 10, csum);
}

// Outer IPv6 header: traffic class copied, flow label from the flow's hash.
void outer_ipv6(uint8_t* out, const InetAddr& saddr, const InetAddr& daddr, const Ipv6Hdr& inner,
                uint16_t payload_len, uint32_t flow_hash, uint8_t hop_limit, uint8_t proto) {
    const uint32_t tclass = (ntoh32(inner.vtc_flow) >> 20) & 0xff;
    store_be32(out, 6u << 28 | tclass << 20 | (flow_hash & 0xfffff));
    store_be16(out + 4, payload_len);
    out[6] = proto;
    out[7] = hop_limit;
    std::memcpy(out + 8, saddr.b, 16);
    std::memcpy(out + 24, daddr.b, 16);
}

}  // namespace

void ip6ip6_outer(uint8_t* out40, const InetAddr& saddr, const InetAddr& daddr,
                  const Ipv6Hdr& inner, uint16_t inner_len, uint32_t flow_hash, uint8_t hop_limit) {
    outer_ipv6(out40, saddr, daddr, inner, inner_len, flow_hash, hop_limit, kIpProtoIpv6);
}

void gue6_outer(uint8_t* out52, const InetAddr& saddr, const InetAddr& daddr, const Ipv6Hdr& inner,
                uint16_t inner_len, uint32_t flow_hash, uint16_t sport, uint16_t dport,
                uint8_t hop_limit) {
    const auto udp_len = static_cast<uint16_t>(inner_len + 8 + kGueHdrLen);
    outer_ipv6(out52, saddr, daddr, inner, udp_len, flow_hash, hop_limit, kIpProtoUdp);
    uint8_t* udp = out52 + 40;
    store_wire16(udp, sport);
    store_wire16(udp + 2, dport);
    store_be16(udp + 4, udp_len);
    store_wire16(udp + 6, 0);
    uint8_t* gue = udp + 8;
    gue[0] = 0;
    gue[1] = kIpProtoIpv6;
    gue[2] = gue[3] = 0;
}

void ipip_outer(uint8_t* out20, const InetAddr& saddr, const InetAddr& daddr, const Ipv4Hdr& inner,
                uint16_t id, uint8_t ttl) {
    outer_ipv4(out20, saddr, daddr, inner, id, ttl, kIpProtoIpip, kIpipOverhead);
}

void gue_outer(uint8_t* out32, const InetAddr& saddr, const InetAddr& daddr, const Ipv4Hdr& inner,
               uint16_t id, uint16_t sport, uint16_t dport, uint8_t ttl) {
    outer_ipv4(out32, saddr, daddr, inner, id, ttl, kIpProtoUdp, kGueOverhead);
    uint8_t* udp = out32 + 20;
    store_wire16(udp, sport);
    store_wire16(udp + 2, dport);
    store_be16(udp + 4, static_cast<uint16_t>(ntoh16(inner.total_length) + 8 + kGueHdrLen));
    store_wire16(udp + 6, 0);  // no UDP checksum (see header)
    uint8_t* gue = udp + 8;
    gue[0] = 0;             // variant 0, C = 0 (data), hlen 0 (no optional fields)
    gue[1] = kIpProtoIpip;  // proto_ctype: the payload is an IPv4 packet
    gue[2] = gue[3] = 0;    // flags
}

TunnelMtuVerdict tunnel_mtu_check(const Ipv4Hdr& inner, size_t inner_len, size_t overhead,
                                  size_t mtu) {
    if (tunnel_fits(inner_len, overhead, mtu)) return {TunnelMtuAction::Fits, 0};
    if (mtu < overhead + kIpv4MinMtu) return {TunnelMtuAction::MtuTooSmall, 0};
    if ((ntoh16(inner.frag_off) & kIpv4DontFragment) == 0) {
        return {TunnelMtuAction::Fragment, 0};
    }
    const size_t hop = mtu - overhead;
    return {TunnelMtuAction::FragNeeded, static_cast<uint16_t>(hop > 0xffff ? 0xffff : hop)};
}

TunnelMtuVerdict tunnel_mtu_check(const Ipv6Hdr&, size_t inner_len, size_t overhead, size_t mtu) {
    if (tunnel_fits(inner_len, overhead, mtu)) return {TunnelMtuAction::Fits, 0};
    if (mtu < overhead + kIpv6MinMtu) return {TunnelMtuAction::MtuTooSmall, 0};
    const size_t hop = mtu - overhead;
    return {TunnelMtuAction::FragNeeded, static_cast<uint16_t>(hop > 0xffff ? 0xffff : hop)};
}

size_t tunnel_quote_outer_len(const uint8_t* q, size_t len, const InetAddr& outer_src) {
    const bool v4 = outer_src.is_v4();
    const uint8_t version = v4 ? 4 : 6;
    size_t ip_len = 0;
    uint8_t proto = 0;
    if (len < (v4 ? sizeof(Ipv4Hdr) : sizeof(Ipv6Hdr)) || (q[0] >> 4) != version) return 0;
    if (v4) {
        ip_len = size_t(q[0] & 0x0f) * 4;
        if (ip_len < sizeof(Ipv4Hdr) || (load_be16(q + 6) & 0x1fff) != 0) return 0;
        if (InetAddr::v4(load_wire32(q + 12)) != outer_src) return 0;
        proto = q[9];
    } else {
        ip_len = sizeof(Ipv6Hdr);
        if (InetAddr::v6(q + 8) != outer_src) return 0;
        proto = q[6];
    }
    const uint8_t carried = v4 ? kIpProtoIpip : kIpProtoIpv6;
    size_t cut = 0;
    if (proto == carried)
        cut = ip_len;
    else if (proto == kIpProtoUdp && len >= ip_len + 8 + kGueHdrLen && q[ip_len + 8] == 0 &&
             q[ip_len + 9] == carried)
        cut = ip_len + 8 + kGueHdrLen;  // GUE v0, no flags or options (what we send)
    else
        return 0;
    const size_t inner_min = (v4 ? sizeof(Ipv4Hdr) : sizeof(Ipv6Hdr)) + 8;
    if (len < cut + inner_min || (q[cut] >> 4) != version) return 0;
    return cut;
}

}  // namespace xvs::net
