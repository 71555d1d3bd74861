// ICMP errors "related" to a connection (issue 9 part 5): parse the IPv4 packet quoted in a
// destination-unreachable or time-exceeded message, translate it (outer and quoted addresses,
// quoted ports or echo id, all checksums) so it reaches the other side of a NAT/FULLNAT/SNAT
// conn, and build the frag-needed the director itself sends when a TUN packet would not fit.
// Related: type 3 (every code, incl. 4 frag-needed) and type 11. Source quench (4, deprecated
// by RFC 6633), redirect (5) and parameter problem (12) are treated as unrelated: false.
// Addresses, ports and ids in network order; lengths, offsets and MTUs in host order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/addr.h"
#include "net/headers.h"

namespace xvs::net {

inline constexpr uint8_t kIcmpFragNeededCode = 4;  // type 3 code 4 (RFC 1191)
inline constexpr size_t kIcmpErrorMaxLen = 576;    // RFC 1812 4.3.2.3: whole error datagram

// What parse_icmp_error found. Offsets count from the start of the ICMP header.
struct IcmpQuote {
    uint8_t type;  // kIcmpDestUnreach or kIcmpTimeExceeded
    uint8_t code;
    uint8_t inner_proto;      // kIpProtoTcp, kIpProtoUdp or kIpProtoIcmp (echo only)
    uint8_t inner_icmp_type;  // for a quoted ICMP packet: kIcmpEchoRequest or kIcmpEchoReply
    InetAddr inner_saddr;
    InetAddr inner_daddr;
    uint16_t inner_sport;  // wire order; for a quoted echo both ports hold the identifier
    uint16_t inner_dport;
    uint16_t next_hop_mtu;  // host order; type 3 code 4 only, else 0 (may be 0: RFC 1191)
    uint16_t inner_ip_off;  // quoted IPv4 header: always 8
    uint16_t inner_ip_len;  // its header length (IHL * 4)
    uint16_t inner_l4_off;  // quoted TCP/UDP/ICMP header
    uint16_t inner_l4_len;  // quoted L4 bytes present, >= 8, within the quoted total length
    bool inner_l4_csum;     // the quoted L4 checksum field lies inside the quote
};

// Parses and validates the ICMP message [icmp, icmp+len): related type, ICMP checksum over
// len, quoted IPv4 version/IHL/total length, not a non-first fragment, >= 8 quoted L4 bytes.
bool parse_icmp_error(const uint8_t* icmp, size_t len, IcmpQuote& out);

// The part of parse_icmp_error and parse_icmp6_error after the quoted IP header: the quoted
// ports (TCP/UDP) or echo identifier of family icmp_proto's echo (types echo_request,
// echo_reply) at l4 (l4_len bytes, >= 8) into out; false for anything else.
bool quote_l4(IcmpQuote& out, const uint8_t* l4, size_t l4_len, uint8_t proto, uint8_t icmp_proto,
              uint8_t echo_request, uint8_t echo_reply);

// New values for translate_icmp_error, all in wire order.
struct IcmpTranslation {
    InetAddr outer_saddr;  // IPv4 addresses (ICMPv4 quotes IPv4)
    InetAddr outer_daddr;
    InetAddr inner_saddr;
    InetAddr inner_daddr;
    uint16_t inner_sport;  // for a quoted echo: the new identifier (inner_dport unused)
    uint16_t inner_dport;
};

// Rewrites an ICMP error in place, q from parse_icmp_error on the same bytes: outer addresses
// (IP checksum incremental), quoted addresses and ports/id (quoted IP checksum and, when in the
// quote, quoted L4 checksum incremental; UDP 0 stays 0), then the ICMP checksum recomputed over
// all len bytes (safe: parse verified it). TTL is the caller's. False if q does not fit len.
bool translate_icmp_error(Ipv4Hdr* outer, uint8_t* icmp, size_t len, const IcmpQuote& q,
                          const IcmpTranslation& t);

// Writes IPv4 + an ICMP error `type`/`code` (bytes 4-7 of the ICMP header = `rest`, host
// order) from saddr to orig's source into out, quoting orig up to 576 bytes in total (RFC
// 1812). Returns the length written, or 0 if cap is too small, orig is malformed, or RFC
// 1122/1812 forbid an error for it (ICMP error, non-first fragment, source 0/8, 127/8 or
// >= 224/4, destination multicast or broadcast).
size_t build_icmp_error(uint8_t* out, size_t cap, const uint8_t* orig, size_t orig_len,
                        const InetAddr& saddr, uint8_t type, uint8_t code, uint32_t rest,
                        uint16_t id, uint8_t ttl = 64);

// ICMP 3/4 with the next-hop MTU (RFC 1191: bytes 6-7).
inline size_t build_frag_needed(uint8_t* out, size_t cap, const uint8_t* orig, size_t orig_len,
                                const InetAddr& saddr, uint16_t next_hop_mtu, uint16_t id,
                                uint8_t ttl = 64) {
    return build_icmp_error(out, cap, orig, orig_len, saddr, kIcmpDestUnreach, kIcmpFragNeededCode,
                            next_hop_mtu, id, ttl);
}

// ICMP 11/0, TTL exceeded in transit (RFC 792), as a router sends for a packet it will not
// forward.
inline size_t build_time_exceeded(uint8_t* out, size_t cap, const uint8_t* orig, size_t orig_len,
                                  const InetAddr& saddr, uint16_t id, uint8_t ttl = 64) {
    return build_icmp_error(out, cap, orig, orig_len, saddr, kIcmpTimeExceeded, 0, 0, id, ttl);
}

}  // namespace xvs::net
