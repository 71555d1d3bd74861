// The address-family seam of the packet code (DESIGN.md "Packet path"): packet functions are
// written once as `template <class Af>` over one of these traits, so IPv6 (Af6) and NAT64
// (<AfIn, AfOut>) arrive as new traits and instantiations rather than copies. A trait says how
// to read and replace the addresses of its L3 header, with the checksum arithmetic each family
// needs; code that only exists for one family (IPv4 options, the IP id) tests
// `Af::family` with `if constexpr`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/addr.h"
#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/headers.h"

namespace xvs::net {

struct Af4 {
    using Hdr = Ipv4Hdr;
    // An address as the header holds it: 4 bytes in network order (put_src_dst and friends
    // take it as well as an InetAddr, so a caller that has the 4 bytes builds no InetAddr).
    using Addr = uint32_t;
    static constexpr uint8_t family = 4;
    static constexpr uint16_t ether_type = kEtherTypeIpv4;
    static constexpr uint8_t icmp_proto = kIpProtoIcmp;
    // ICMPv4's checksum covers no pseudo-header (ICMPv6's does).
    static constexpr bool icmp_pseudo_header = false;

    static bool is(const InetAddr& a) { return a.is_v4(); }  // an address of this family
    static InetAddr src(const Hdr& h) { return InetAddr::v4(h.saddr); }
    static InetAddr dst(const Hdr& h) { return InetAddr::v4(h.daddr); }
    static unsigned header_len(const Hdr& h) { return h.header_len(); }
    static uint16_t packet_len(const Hdr& h) { return ntoh16(h.total_length); }  // L3 + payload
    static uint8_t l4_proto(const Hdr& h) { return h.protocol; }

    // One's complement delta of replacing address o by n (RFC 1624), as the pseudo-header of
    // TCP/UDP sees it.
    static uint32_t addr_delta(const InetAddr& o, const InetAddr& n) {
        return csum_delta32(o.v4_be(), n.v4_be());
    }
    // Replace an address and keep the IPv4 header checksum right; return the delta the L4
    // checksum needs for its pseudo-header.
    static uint32_t set_src(Hdr& h, const InetAddr& a) { return set_src(h, a.v4_be()); }
    static uint32_t set_src(Hdr& h, uint32_t a_be) {
        const uint32_t d = csum_delta32(h.saddr, a_be);
        put_src(h, a_be, d);
        return d;
    }
    static uint32_t set_dst(Hdr& h, const InetAddr& a) { return set_dst(h, a.v4_be()); }
    static uint32_t set_dst(Hdr& h, uint32_t a_be) {
        const uint32_t d = csum_delta32(h.daddr, a_be);
        put_dst(h, a_be, d);
        return d;
    }
    // The same with the delta known (the caller knows the old address: Conn::addr_sum).
    static void put_src(Hdr& h, uint32_t a_be, uint32_t delta) {
        h.saddr = a_be;
        h.checksum = csum_fold(static_cast<uint16_t>(~h.checksum) + delta);
    }
    static void put_dst(Hdr& h, uint32_t a_be, uint32_t delta) {
        h.daddr = a_be;
        h.checksum = csum_fold(static_cast<uint16_t>(~h.checksum) + delta);
    }
    // Both at once (FULLNAT), in two steps: the delta of replacing the header's addresses by
    // s and d, then the replacement with the header checksum following by that delta (which
    // a caller that knows the old addresses may have summed in advance: Conn::addr_sum).
    static uint32_t src_dst_delta(const Hdr& h, const InetAddr& s, const InetAddr& d) {
        return src_dst_delta(h, s.v4_be(), d.v4_be());
    }
    static uint32_t src_dst_delta(const Hdr& h, uint32_t s_be, uint32_t d_be) {
        return csum_delta32(h.saddr, s_be) + csum_delta32(h.daddr, d_be);
    }
    static void put_src_dst(Hdr& h, const InetAddr& s, const InetAddr& d, uint32_t delta) {
        put_src_dst(h, s.v4_be(), d.v4_be(), delta);
    }
    static void put_src_dst(Hdr& h, uint32_t s_be, uint32_t d_be, uint32_t delta) {
        h.saddr = s_be;
        h.daddr = d_be;
        h.checksum = csum_fold(static_cast<uint16_t>(~h.checksum) + delta);
    }
    // Forwarding as a router: TTL - 1 (RFC 1812 5.3.1) with the header checksum following.
    // False, header unchanged, when the packet must not be forwarded (TTL <= 1).
    static bool ttl_decrement(Hdr& h) {
        if (h.ttl <= 1) return false;
        const uint16_t old_word = hton16(uint16_t(h.ttl << 8 | h.protocol));
        --h.ttl;
        csum_replace2(&h.checksum, old_word, hton16(uint16_t(h.ttl << 8 | h.protocol)));
        return true;
    }
    // Pseudo-header sum for an L4 segment of len bytes.
    static uint32_t pseudo_sum(const InetAddr& s, const InetAddr& d, uint8_t proto, uint16_t len) {
        return ipv4_pseudo_sum(s.v4_be(), d.v4_be(), proto, len);
    }
    // The full L4 checksum of a segment of len bytes under this header's addresses.
    static uint16_t l4_checksum(const Hdr& h, uint8_t proto, const void* l4, uint16_t len) {
        return ipv4_l4_checksum(h.saddr, h.daddr, proto, l4, len);
    }
    // The L3 length (header, options or extension headers, and payload) becomes len.
    static void set_packet_len(Hdr& h, uint16_t len) {
        h.total_length = hton16(len);
        h.checksum = 0;
        h.checksum = ipv4_header_checksum(&h);
    }
    // A fresh header without options: s -> d, DF, id 0, TOS 0, for an L4 segment of l4_len.
    static void write_header(Hdr& h, const InetAddr& s, const InetAddr& d, uint8_t proto,
                             uint16_t l4_len, uint8_t ttl) {
        h = Hdr{};
        h.version_ihl = 0x45;
        h.frag_off = hton16(kIpv4DontFragment);
        h.ttl = ttl;
        h.protocol = proto;
        h.saddr = s.v4_be();
        h.daddr = d.v4_be();
        h.total_length = hton16(static_cast<uint16_t>(sizeof(Hdr) + l4_len));
        // 20 bytes, checksum field zero: the unrolled sum, no length check or field removal
        // as in ipv4_header_checksum (the packets the SYN proxy writes come through here).
        h.checksum = csum_fold(csum_partial20(&h));
    }
};

// IPv6 (RFC 8200). No header checksum: replacing an address only changes the pseudo-header
// the L4 checksum covers. header_len is the fixed header; extension headers, walked by the
// input, sit between it and the L4 header (PktMeta::l4_off says where that is).
struct Af6 {
    using Hdr = Ipv6Hdr;
    using Addr = InetAddr;  // an address as the header holds it (Af4::Addr)
    static constexpr uint8_t family = 6;
    static constexpr uint16_t ether_type = kEtherTypeIpv6;
    static constexpr uint8_t icmp_proto = kIpProtoIcmp6;
    static constexpr bool icmp_pseudo_header = true;

    static bool is(const InetAddr& a) { return !a.is_v4(); }
    static InetAddr src(const Hdr& h) { return InetAddr::v6(h.saddr); }
    static InetAddr dst(const Hdr& h) { return InetAddr::v6(h.daddr); }
    static unsigned header_len(const Hdr&) { return sizeof(Hdr); }
    static uint16_t packet_len(const Hdr& h) {
        return static_cast<uint16_t>(sizeof(Hdr) + ntoh16(h.payload_len));
    }
    static uint8_t l4_proto(const Hdr& h) { return h.next_header; }

    static uint32_t addr_delta(const InetAddr& o, const InetAddr& n) {
        return csum_delta128(o.b, n.b);
    }
    static uint32_t set_src(Hdr& h, const InetAddr& a) {
        const uint32_t d = csum_delta128(h.saddr, a.b);
        put_src(h, a, d);
        return d;
    }
    static uint32_t set_dst(Hdr& h, const InetAddr& a) {
        const uint32_t d = csum_delta128(h.daddr, a.b);
        put_dst(h, a, d);
        return d;
    }
    static void put_src(Hdr& h, const InetAddr& a, uint32_t /*delta*/) {
        __builtin_memcpy(h.saddr, a.b, 16);
    }
    static void put_dst(Hdr& h, const InetAddr& a, uint32_t /*delta*/) {
        __builtin_memcpy(h.daddr, a.b, 16);
    }
    static uint32_t src_dst_delta(const Hdr& h, const InetAddr& s, const InetAddr& d) {
        return csum_delta128(h.saddr, s.b) + csum_delta128(h.daddr, d.b);
    }
    static void put_src_dst(Hdr& h, const InetAddr& s, const InetAddr& d, uint32_t /*delta*/) {
        __builtin_memcpy(h.saddr, s.b, 16);
        __builtin_memcpy(h.daddr, d.b, 16);
    }
    // The hop limit (RFC 8200 3), no checksum to follow.
    static bool ttl_decrement(Hdr& h) {
        if (h.hop_limit <= 1) return false;
        --h.hop_limit;
        return true;
    }
    static uint32_t pseudo_sum(const InetAddr& s, const InetAddr& d, uint8_t proto, uint16_t len) {
        return ipv6_pseudo_sum(s.b, d.b, proto, len);
    }
    static uint16_t l4_checksum(const Hdr& h, uint8_t proto, const void* l4, uint16_t len) {
        return ipv6_l4_checksum(h.saddr, h.daddr, proto, l4, len);
    }
    static void set_packet_len(Hdr& h, uint16_t len) {
        h.payload_len = hton16(static_cast<uint16_t>(len - sizeof(Hdr)));
    }
    // Traffic class and flow label 0.
    static void write_header(Hdr& h, const InetAddr& s, const InetAddr& d, uint8_t proto,
                             uint16_t l4_len, uint8_t ttl) {
        h = Hdr{};
        h.vtc_flow = hton32(6u << 28);
        h.payload_len = hton16(l4_len);
        h.next_header = proto;
        h.hop_limit = ttl;
        __builtin_memcpy(h.saddr, s.b, 16);
        __builtin_memcpy(h.daddr, d.b, 16);
    }
};

}  // namespace xvs::net
