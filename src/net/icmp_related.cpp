// ICMP related: every read of the message goes through byteorder.h loads (memcpy), since the
// quote sits at arbitrary alignment; bounds are checked before any read.
#include "net/icmp_related.h"

#include <algorithm>
#include <cstring>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/nat_rewrite.h"

namespace xvs::net {

namespace {

constexpr size_t kIcmpHdrLen = 8;
constexpr size_t kMinQuotedL4 = 8;  // RFC 792: the IP header and the first 64 bits of data

bool related_type(uint8_t type, uint8_t code) {
    if (type == kIcmpDestUnreach) return code <= 15;  // RFC 1812 5.2.7.1 codes 0..15
    if (type == kIcmpTimeExceeded) return code <= 1;  // TTL exceeded, reassembly exceeded
    return false;
}

bool icmp_error_type(uint8_t type) {
    return type == kIcmpDestUnreach || type == 4 || type == 5 || type == kIcmpTimeExceeded ||
           type == 12;
}

// One's complement delta of the 32-bit word at p replaced by v; stores v.
uint32_t replace32(uint8_t* p, uint32_t v) {
    const uint32_t d = csum_delta32(load_wire32(p), v);
    store_wire32(p, v);
    return d;
}
uint32_t replace16(uint8_t* p, uint16_t v) {
    const uint32_t d = csum_delta16(load_wire16(p), v);
    store_wire16(p, v);
    return d;
}

}  // namespace

bool parse_icmp_error(const uint8_t* icmp, size_t len, IcmpQuote& out) {
    if (len < kIcmpHdrLen + sizeof(Ipv4Hdr) + kMinQuotedL4 || len > 0xffff) return false;
    const uint8_t type = icmp[0], code = icmp[1];
    if (!related_type(type, code)) return false;
    if (csum_fold(csum_partial(icmp, len, 0)) != 0) return false;

    const uint8_t* ip = icmp + kIcmpHdrLen;
    if ((ip[0] >> 4) != 4) return false;
    const size_t ihl = size_t(ip[0] & 0x0f) * 4;
    if (ihl < sizeof(Ipv4Hdr) || kIcmpHdrLen + ihl + kMinQuotedL4 > len) return false;
    const size_t total = load_be16(ip + 2);
    if (total < ihl + kMinQuotedL4) return false;
    if ((load_be16(ip + 6) & 0x1fff) != 0) return false;  // non-first fragment: no L4 header

    const uint8_t proto = ip[9];
    const size_t l4_off = kIcmpHdrLen + ihl;
    const uint8_t* l4 = icmp + l4_off;
    const size_t l4_len = std::min(len - l4_off, total - ihl);

    out = IcmpQuote{};
    out.type = type;
    out.code = code;
    out.inner_proto = proto;
    out.inner_saddr = InetAddr::v4(load_wire32(ip + 12));
    out.inner_daddr = InetAddr::v4(load_wire32(ip + 16));
    out.next_hop_mtu =
        (type == kIcmpDestUnreach && code == kIcmpFragNeededCode) ? load_be16(icmp + 6) : 0;
    out.inner_ip_off = static_cast<uint16_t>(kIcmpHdrLen);
    out.inner_ip_len = static_cast<uint16_t>(ihl);
    out.inner_l4_off = static_cast<uint16_t>(l4_off);
    out.inner_l4_len = static_cast<uint16_t>(l4_len);

    // Another protocol, or an error quoting an error: false.
    return quote_l4(out, l4, l4_len, proto, kIpProtoIcmp, kIcmpEchoRequest, kIcmpEchoReply);
}

bool quote_l4(IcmpQuote& out, const uint8_t* l4, size_t l4_len, uint8_t proto, uint8_t icmp_proto,
              uint8_t echo_request, uint8_t echo_reply) {
    if (proto == kIpProtoTcp || proto == kIpProtoUdp) {
        out.inner_sport = load_wire16(l4);
        out.inner_dport = load_wire16(l4 + 2);
        const size_t csum_end =
            (proto == kIpProtoTcp ? kTcpChecksumOffset : kUdpChecksumOffset) + 2;
        out.inner_l4_csum = l4_len >= csum_end;
        return true;
    }
    if (proto == icmp_proto && (l4[0] == echo_request || l4[0] == echo_reply)) {
        out.inner_icmp_type = l4[0];
        out.inner_sport = out.inner_dport = load_wire16(l4 + kIcmpEchoIdOffset);
        out.inner_l4_csum = true;
        return true;
    }
    return false;
}

bool translate_icmp_error(Ipv4Hdr* outer, uint8_t* icmp, size_t len, const IcmpQuote& q,
                          const IcmpTranslation& t) {
    if (q.inner_ip_len < sizeof(Ipv4Hdr) || q.inner_l4_off != q.inner_ip_off + q.inner_ip_len ||
        size_t(q.inner_l4_off) + kMinQuotedL4 > len || q.inner_l4_len < kMinQuotedL4 ||
        size_t(q.inner_l4_off) + q.inner_l4_len > len) {
        return false;
    }
    auto* outer_bytes = reinterpret_cast<uint8_t*>(outer);
    uint32_t d = replace32(outer_bytes + 12, t.outer_saddr.v4_be());
    d += replace32(outer_bytes + 16, t.outer_daddr.v4_be());
    nat_detail::csum_apply(outer_bytes + 10, d);

    uint8_t* ip = icmp + q.inner_ip_off;
    uint8_t* l4 = icmp + q.inner_l4_off;
    const uint32_t addr_delta =
        replace32(ip + 12, t.inner_saddr.v4_be()) + replace32(ip + 16, t.inner_daddr.v4_be());
    nat_detail::csum_apply(ip + 10, addr_delta);

    if (q.inner_proto == kIpProtoIcmp) {
        // Echo: no pseudo-header, only the identifier enters the quoted ICMP checksum.
        nat_detail::csum_apply(l4 + kIcmpChecksumOffset,
                               replace16(l4 + kIcmpEchoIdOffset, t.inner_sport));
    } else {
        const uint32_t port_delta = replace16(l4, t.inner_sport) + replace16(l4 + 2, t.inner_dport);
        // The quoted checksum includes the quoted packet's pseudo-header: addresses and ports.
        if (q.inner_l4_csum) nat_detail::l4_csum_apply(l4, q.inner_proto, addr_delta + port_delta);
    }

    store_wire16(icmp + kIcmpChecksumOffset, 0);
    store_wire16(icmp + kIcmpChecksumOffset, csum_fold(csum_partial(icmp, len, 0)));
    return true;
}

size_t build_icmp_error(uint8_t* out, size_t cap, const uint8_t* orig, size_t orig_len,
                        const InetAddr& saddr, uint8_t type, uint8_t code, uint32_t rest,
                        uint16_t id, uint8_t ttl) {
    if (orig_len < sizeof(Ipv4Hdr) || (orig[0] >> 4) != 4) return 0;
    const size_t ihl = size_t(orig[0] & 0x0f) * 4;
    const size_t total = load_be16(orig + 2);
    if (ihl < sizeof(Ipv4Hdr) || ihl > orig_len || total < ihl) return 0;
    if ((load_be16(orig + 6) & 0x1fff) != 0) return 0;  // RFC 1812 4.3.2.7: first fragment only
    const uint8_t src_hi = orig[12];
    if (src_hi == 0 || src_hi == 127 || src_hi >= 224) return 0;  // RFC 1122 3.2.2
    if (orig[16] >= 224) return 0;  // destination multicast, class E or broadcast
    const size_t quote =
        std::min({orig_len, total, kIcmpErrorMaxLen - sizeof(Ipv4Hdr) - kIcmpHdrLen});
    if (orig[9] == kIpProtoIcmp && (quote == ihl || icmp_error_type(orig[ihl]))) return 0;
    const size_t out_len = sizeof(Ipv4Hdr) + kIcmpHdrLen + quote;
    if (cap < out_len) return 0;

    out[0] = 0x45;
    out[1] = 0xc0;  // precedence internetwork control (CS6), as routers send ICMP errors
    store_be16(out + 2, static_cast<uint16_t>(out_len));
    store_wire16(out + 4, id);
    store_be16(out + 6, 0);  // DF clear: the error itself may be fragmented on the way back
    out[8] = ttl;
    out[9] = kIpProtoIcmp;
    store_wire16(out + 10, 0);
    store_wire32(out + 12, saddr.v4_be());
    std::memcpy(out + 16, orig + 12, 4);  // to the original source
    store_wire16(out + 10, csum_fold(csum_partial20(out)));

    uint8_t* icmp = out + sizeof(Ipv4Hdr);
    icmp[0] = type;
    icmp[1] = code;
    store_wire16(icmp + 2, 0);
    store_be16(icmp + 4, static_cast<uint16_t>(rest >> 16));  // frag-needed: unused, 0
    store_be16(icmp + 6, static_cast<uint16_t>(rest));        // frag-needed: next-hop MTU
    std::memcpy(icmp + kIcmpHdrLen, orig, quote);
    store_wire16(icmp + 2, csum_fold(csum_partial(icmp, kIcmpHdrLen + quote, 0)));
    return out_len;
}

}  // namespace xvs::net
