// FNAT64 translation, see net/nat64.h.
#include "net/nat64.h"

#include <algorithm>
#include <cstring>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/headers.h"
#include "net/icmp6.h"
#include "net/nat_rewrite.h"

namespace xvs::net {

namespace {

// A 32-bit one's complement accumulator folded to 16 bits, not complemented.
uint16_t fold16(uint32_t sum) {
    return static_cast<uint16_t>(~csum_fold(sum));
}

// The L4 part shared by both directions: ports replaced, and the checksum moved from the old
// pseudo-header sum to the new one. l4 holds l4_len bytes.
void rewrite_l4(uint8_t* l4, uint16_t l4_len, uint8_t proto, uint32_t old_pseudo,
                uint32_t new_pseudo, uint16_t sport, uint16_t dport, bool v6_out) {
    const size_t csum_off = proto == kIpProtoTcp ? kTcpChecksumOffset : kUdpChecksumOffset;
    if (proto == kIpProtoUdp && load_wire16(l4 + csum_off) == 0) {
        store_wire16(l4, sport);
        store_wire16(l4 + 2, dport);
        if (!v6_out) return;  // IPv4 keeps "no checksum"
        // IPv6 needs one: compute it whole.
        uint16_t c = csum_fold(csum_partial(l4, l4_len, new_pseudo));
        store_wire16(l4 + csum_off, c == 0 ? 0xffff : c);
        return;
    }
    const uint32_t delta = csum_delta16(fold16(old_pseudo), fold16(new_pseudo)) +
                           csum_delta16(load_wire16(l4), sport) +
                           csum_delta16(load_wire16(l4 + 2), dport);
    store_wire16(l4, sport);
    store_wire16(l4 + 2, dport);
    nat_detail::l4_csum_apply(l4, proto, delta);
}

// The quoted L4 header of an error: ports replaced and, when the checksum lies in the quote,
// the checksum moved to the new pseudo-header (a quoted UDP "no checksum" stays 0: it is a
// quote, never delivered). The pseudo sums exclude the length, which does not change.
void rewrite_quoted_l4(uint8_t* l4, size_t l4_len, uint8_t proto, bool csum_quoted,
                       uint32_t old_pseudo, uint32_t new_pseudo, uint16_t sport, uint16_t dport) {
    const size_t csum_off = proto == kIpProtoTcp ? kTcpChecksumOffset : kUdpChecksumOffset;
    const uint32_t delta = csum_delta16(fold16(old_pseudo), fold16(new_pseudo)) +
                           csum_delta16(load_wire16(l4), sport) +
                           csum_delta16(load_wire16(l4 + 2), dport);
    store_wire16(l4, sport);
    store_wire16(l4 + 2, dport);
    if (!csum_quoted || l4_len < csum_off + 2) return;
    if (proto == kIpProtoUdp && load_wire16(l4 + csum_off) == 0) return;
    nat_detail::l4_csum_apply(l4, proto, delta);
}

// Room for the rebuilt quote: an ICMPv6 error quotes at most 1280 - 48 bytes.
constexpr size_t kQuoteMax = kIcmp6ErrorMaxLen;

}  // namespace

size_t icmp_error_4to6(uint8_t* out, size_t cap, const uint8_t* icmp, const IcmpQuote& q,
                       const InetAddr& from, const QuotedFlow& orig) {
    uint8_t type = kIcmp6DestUnreach;
    uint8_t code = 0;
    uint32_t rest = 0;
    if (q.type == kIcmpTimeExceeded) {
        if (q.code > 1) return 0;
        type = kIcmp6TimeExceeded;
        code = q.code;
    } else if (q.type == kIcmpDestUnreach) {
        switch (q.code) {
            case 0:
            case 1:
            case 5:
            case 6:
            case 7:
            case 8:
            case 11:
            case 12:
                code = 0;
                break;
            case 9:
            case 10:
            case 13:
            case 15:
                code = 1;
                break;
            case 3:
                code = 4;
                break;
            case kIcmpFragNeededCode: {
                type = kIcmp6PacketTooBig;
                const uint32_t mtu = q.next_hop_mtu ? q.next_hop_mtu + 20u : kIpv6MinMtu;
                rest = std::max<uint32_t>(mtu, kIpv6MinMtu);
                break;
            }
            default:
                return 0;
        }
    } else {
        return 0;
    }
    const uint8_t* in4 = icmp + q.inner_ip_off;
    const size_t l4_len = std::min<size_t>(q.inner_l4_len, kQuoteMax - 40);
    uint8_t quoted[kQuoteMax];
    store_be32(quoted, 6u << 28 | uint32_t(in4[1]) << 20);
    store_be16(quoted + 4, static_cast<uint16_t>(load_be16(in4 + 2) - q.inner_ip_len));
    quoted[6] = q.inner_proto;
    quoted[7] = in4[8];
    std::memcpy(quoted + 8, orig.saddr.b, 16);
    std::memcpy(quoted + 24, orig.daddr.b, 16);
    std::memcpy(quoted + 40, icmp + q.inner_l4_off, l4_len);
    rewrite_quoted_l4(quoted + 40, l4_len, q.inner_proto, q.inner_l4_csum,
                      ipv4_pseudo_sum(q.inner_saddr.v4_be(), q.inner_daddr.v4_be(), 0, 0),
                      ipv6_pseudo_sum(orig.saddr.b, orig.daddr.b, 0, 0), orig.sport, orig.dport);
    return build_icmp6_error(out, cap, quoted, 40 + l4_len, from, type, code, rest);
}

size_t icmp_error_6to4(uint8_t* out, size_t cap, const uint8_t* icmp, const IcmpQuote& q,
                       const InetAddr& from, const QuotedFlow& orig, uint16_t id_be) {
    uint8_t type = kIcmpDestUnreach;
    uint8_t code = 0;
    uint32_t rest = 0;
    if (q.type == kIcmp6TimeExceeded) {
        if (q.code > 1) return 0;
        type = kIcmpTimeExceeded;
        code = q.code;
    } else if (q.type == kIcmp6PacketTooBig) {
        code = kIcmpFragNeededCode;
        rest = std::clamp<uint32_t>(q.next_hop_mtu, 68 + 20, 0xffff) - 20;
    } else if (q.type == kIcmp6DestUnreach) {
        switch (q.code) {
            case 0:
            case 2:
            case 3:
                code = 1;
                break;
            case 1:
                code = 10;
                break;
            case 4:
                code = 3;
                break;
            default:
                return 0;
        }
    } else {
        return 0;
    }
    const uint8_t* in6 = icmp + q.inner_ip_off;
    const size_t l4_len = std::min<size_t>(q.inner_l4_len, kQuoteMax - 20);
    // The quoted IPv6 payload less its extension headers is the L4 length the RS sent.
    const size_t payload = load_be16(in6 + 4) - (q.inner_ip_len - 40u);
    uint8_t quoted[kQuoteMax];
    quoted[0] = 0x45;
    quoted[1] = static_cast<uint8_t>(load_be32(in6) >> 20);
    store_be16(quoted + 2, static_cast<uint16_t>(20 + payload));
    store_be16(quoted + 4, 0);
    store_be16(quoted + 6, kIpv4DontFragment);
    quoted[8] = in6[7];
    quoted[9] = q.inner_proto;
    store_wire16(quoted + 10, 0);
    store_wire32(quoted + 12, orig.saddr.v4_be());
    store_wire32(quoted + 16, orig.daddr.v4_be());
    store_wire16(quoted + 10, csum_fold(csum_partial20(quoted)));
    std::memcpy(quoted + 20, icmp + q.inner_l4_off, l4_len);
    rewrite_quoted_l4(quoted + 20, l4_len, q.inner_proto, q.inner_l4_csum,
                      ipv6_pseudo_sum(q.inner_saddr.b, q.inner_daddr.b, 0, 0),
                      ipv4_pseudo_sum(orig.saddr.v4_be(), orig.daddr.v4_be(), 0, 0), orig.sport,
                      orig.dport);
    return build_icmp_error(out, cap, quoted, 20 + l4_len, from, type, code, rest, id_be);
}

void nat64_to_v4(uint8_t* out, const IpCarried& in, uint16_t l4_len, const InetAddr& saddr,
                 const InetAddr& daddr, uint16_t sport, uint16_t dport, uint16_t id_be) {
    out[0] = 0x45;
    out[1] = in.tclass;
    store_be16(out + 2, static_cast<uint16_t>(20 + l4_len));
    store_wire16(out + 4, id_be);
    store_be16(out + 6, kIpv4DontFragment);
    out[8] = in.hop_limit;
    out[9] = in.proto;
    store_wire16(out + 10, 0);
    store_wire32(out + 12, saddr.v4_be());
    store_wire32(out + 16, daddr.v4_be());
    store_wire16(out + 10, csum_fold(csum_partial20(out)));
    rewrite_l4(
        out + 20, l4_len, in.proto, ipv6_pseudo_sum(in.saddr.b, in.daddr.b, in.proto, l4_len),
        ipv4_pseudo_sum(saddr.v4_be(), daddr.v4_be(), in.proto, l4_len), sport, dport, false);
}

void nat46_to_v6(uint8_t* out, const IpCarried& in, uint16_t l4_len, const InetAddr& saddr,
                 const InetAddr& daddr, uint16_t sport, uint16_t dport) {
    store_be32(out, 6u << 28 | uint32_t(in.tclass) << 20);
    store_be16(out + 4, l4_len);
    out[6] = in.proto;
    out[7] = in.hop_limit;
    std::memcpy(out + 8, saddr.b, 16);
    std::memcpy(out + 24, daddr.b, 16);
    rewrite_l4(out + 40, l4_len, in.proto,
               ipv4_pseudo_sum(in.saddr.v4_be(), in.daddr.v4_be(), in.proto, l4_len),
               ipv6_pseudo_sum(saddr.b, daddr.b, in.proto, l4_len), sport, dport, true);
}

}  // namespace xvs::net
