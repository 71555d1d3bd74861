// ICMPv6 error construction, see net/icmp6.h.
#include "net/icmp6.h"

#include <algorithm>
#include <cstring>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/nat_rewrite.h"

namespace xvs::net {

namespace {

constexpr size_t kIcmp6HdrLen = 8;

// The upper-layer protocol and its offset in an IPv6 packet, past the extension headers
// (only as far as the bytes given); false when malformed.
bool upper_layer(const uint8_t* ip, size_t len, uint8_t& proto, size_t& off) {
    proto = ip[6];
    off = sizeof(Ipv6Hdr);
    for (unsigned n = 0; n < 8; ++n) {
        if (proto != kIp6ExtHopByHop && proto != kIp6ExtDestOpts && proto != kIp6ExtRouting &&
            proto != kIp6ExtFragment)
            return true;
        if (off + 8 > len) return false;
        const size_t ext = proto == kIp6ExtFragment ? 8 : (size_t(ip[off + 1]) + 1) * 8;
        proto = ip[off];
        off += ext;
    }
    return false;
}

constexpr size_t kMinQuotedL4 = 8;

uint32_t replace128(uint8_t* p, const InetAddr& a) {
    const uint32_t d = csum_delta128(p, a.b);
    std::memcpy(p, a.b, 16);
    return d;
}
uint32_t replace16(uint8_t* p, uint16_t v) {
    const uint32_t d = csum_delta16(load_wire16(p), v);
    store_wire16(p, v);
    return d;
}

}  // namespace

bool parse_icmp6_error(const Ipv6Hdr& outer, const uint8_t* icmp, size_t len, IcmpQuote& out) {
    if (len < kIcmp6HdrLen + sizeof(Ipv6Hdr) + kMinQuotedL4 || len > 0xffff) return false;
    const uint8_t type = icmp[0], code = icmp[1];
    if (type != kIcmp6DestUnreach && type != kIcmp6PacketTooBig && type != kIcmp6TimeExceeded)
        return false;
    if (csum_fold(csum_partial(icmp, len,
                               ipv6_pseudo_sum(outer.saddr, outer.daddr, kIpProtoIcmp6,
                                               static_cast<uint32_t>(len)))) != 0)
        return false;
    const uint8_t* ip = icmp + kIcmp6HdrLen;
    const size_t quoted = len - kIcmp6HdrLen;
    if ((ip[0] >> 4) != 6) return false;
    // Walk the quoted extension headers; a quoted non-first fragment carries no ports.
    uint8_t proto = ip[6];
    size_t off = sizeof(Ipv6Hdr);
    for (unsigned n = 0;; ++n) {
        if (proto != kIp6ExtHopByHop && proto != kIp6ExtDestOpts && proto != kIp6ExtRouting &&
            proto != kIp6ExtFragment)
            break;
        if (n == 8 || off + 8 > quoted) return false;
        if (proto == kIp6ExtFragment && (load_be16(ip + off + 2) & 0xfff8) != 0) return false;
        const size_t ext = proto == kIp6ExtFragment ? 8 : (size_t(ip[off + 1]) + 1) * 8;
        proto = ip[off];
        off += ext;
    }
    if (off + kMinQuotedL4 > quoted) return false;
    const size_t payload_end = sizeof(Ipv6Hdr) + load_be16(ip + 4);
    if (payload_end < off + kMinQuotedL4) return false;
    const uint8_t* l4 = ip + off;
    const size_t l4_len = std::min(quoted, payload_end) - off;

    out = IcmpQuote{};
    out.type = type;
    out.code = code;
    out.inner_proto = proto;
    out.inner_saddr = InetAddr::v6(ip + 8);
    out.inner_daddr = InetAddr::v6(ip + 24);
    if (type == kIcmp6PacketTooBig) {
        const uint32_t mtu = load_be32(icmp + 4);
        out.next_hop_mtu = static_cast<uint16_t>(mtu > 0xffff ? 0xffff : mtu);
    }
    out.inner_ip_off = static_cast<uint16_t>(kIcmp6HdrLen);
    out.inner_ip_len = static_cast<uint16_t>(off);
    out.inner_l4_off = static_cast<uint16_t>(kIcmp6HdrLen + off);
    out.inner_l4_len = static_cast<uint16_t>(l4_len);
    return quote_l4(out, l4, l4_len, proto, kIpProtoIcmp6, kIcmp6EchoRequest, kIcmp6EchoReply);
}

bool translate_icmp6_error(Ipv6Hdr* outer, uint8_t* icmp, size_t len, const IcmpQuote& q,
                           const IcmpTranslation& t) {
    if (q.inner_ip_len < sizeof(Ipv6Hdr) || q.inner_l4_off != q.inner_ip_off + q.inner_ip_len ||
        q.inner_l4_len < kMinQuotedL4 || size_t(q.inner_l4_off) + q.inner_l4_len > len ||
        t.outer_saddr.is_v4() || t.inner_saddr.is_v4())
        return false;
    std::memcpy(outer->saddr, t.outer_saddr.b, 16);
    std::memcpy(outer->daddr, t.outer_daddr.b, 16);
    uint8_t* ip = icmp + q.inner_ip_off;
    uint8_t* l4 = icmp + q.inner_l4_off;
    const uint32_t addr_delta =
        replace128(ip + 8, t.inner_saddr) + replace128(ip + 24, t.inner_daddr);
    if (q.inner_proto == kIpProtoIcmp6) {
        // ICMPv6's checksum covers the pseudo-header: addresses and the identifier.
        nat_detail::csum_apply(l4 + kIcmpChecksumOffset,
                               addr_delta + replace16(l4 + kIcmpEchoIdOffset, t.inner_sport));
    } else {
        const uint32_t port_delta = replace16(l4, t.inner_sport) + replace16(l4 + 2, t.inner_dport);
        if (q.inner_l4_csum) nat_detail::l4_csum_apply(l4, q.inner_proto, addr_delta + port_delta);
    }
    store_wire16(icmp + 2, 0);
    store_wire16(icmp + 2, ipv6_l4_checksum(outer->saddr, outer->daddr, kIpProtoIcmp6, icmp, len));
    return true;
}

size_t build_icmp6_error(uint8_t* out, size_t cap, const uint8_t* orig, size_t orig_len,
                         const InetAddr& saddr, uint8_t type, uint8_t code, uint32_t rest,
                         uint8_t hop_limit) {
    if (orig_len < sizeof(Ipv6Hdr) || (orig[0] >> 4) != 6 || saddr.is_v4()) return 0;
    const InetAddr osrc = InetAddr::v6(orig + 8);
    if (osrc.is_unspecified() || orig[8] == 0xff) return 0;
    if (orig[24] == 0xff && type != kIcmp6PacketTooBig) return 0;
    uint8_t proto;
    size_t off;
    if (!upper_layer(orig, orig_len, proto, off)) return 0;
    if (proto == kIpProtoIcmp6 && off < orig_len && orig[off] < 128) return 0;  // an error

    const size_t quote = std::min(orig_len, kIcmp6ErrorMaxLen - sizeof(Ipv6Hdr) - kIcmp6HdrLen);
    const size_t total = sizeof(Ipv6Hdr) + kIcmp6HdrLen + quote;
    if (cap < total) return 0;
    store_be32(out, 6u << 28);
    store_be16(out + 4, static_cast<uint16_t>(kIcmp6HdrLen + quote));
    out[6] = kIpProtoIcmp6;
    out[7] = hop_limit;
    std::memcpy(out + 8, saddr.b, 16);
    std::memcpy(out + 24, orig + 8, 16);
    uint8_t* icmp = out + sizeof(Ipv6Hdr);
    icmp[0] = type;
    icmp[1] = code;
    store_wire16(icmp + 2, 0);
    store_be32(icmp + 4, rest);
    std::memmove(icmp + kIcmp6HdrLen, orig, quote);
    store_wire16(icmp + 2,
                 ipv6_l4_checksum(out + 8, out + 24, kIpProtoIcmp6, icmp, kIcmp6HdrLen + quote));
    return total;
}

}  // namespace xvs::net
