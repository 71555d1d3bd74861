// FNAT64 header translation (RFC 7915's rules for what is carried, applied to FULLNAT): an
// IPv6 client's packet becomes an IPv4 packet from a local address to an IPv4 RS, and the RS's
// answer becomes an IPv6 packet from the VIP to the client. The L4 segment stays where it is;
// the caller moves the start of the packet. Only TCP and UDP are translated.
//   6 -> 4: traffic class -> TOS, hop limit -> TTL (FULLNAT does not decrement it), DF set
//           (IPv6 is never fragmented on the way, RFC 7915 5.1), a new IP id.
//   4 -> 6: TOS -> traffic class, TTL -> hop limit, flow label 0.
// Checksums: the L4 checksum follows the pseudo-header's change of family and the ports
// (incremental, RFC 1624); a UDP/IPv4 datagram without one gets a full one, since IPv6
// requires it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/addr.h"
#include "net/icmp_related.h"

namespace xvs::net {

inline constexpr size_t kNat64HeaderGrowth = 20;  // an IPv6 header is 20 bytes longer

// What the translation keeps of the header it replaces, read before it is overwritten.
struct IpCarried {
    uint8_t tclass;     // IPv4 TOS / IPv6 traffic class
    uint8_t hop_limit;  // TTL / hop limit
    uint8_t proto;      // kIpProtoTcp or kIpProtoUdp
    InetAddr saddr;
    InetAddr daddr;
};

// Writes the IPv4 header at out (20 bytes, the L4 segment of l4_len bytes follows it) from
// saddr:sport to daddr:dport, and rewrites the segment's ports and checksum.
void nat64_to_v4(uint8_t* out, const IpCarried& in, uint16_t l4_len, const InetAddr& saddr,
                 const InetAddr& daddr, uint16_t sport, uint16_t dport, uint16_t id_be);

// Writes the IPv6 header at out (40 bytes, the segment follows) and rewrites the segment.
void nat46_to_v6(uint8_t* out, const IpCarried& in, uint16_t l4_len, const InetAddr& saddr,
                 const InetAddr& daddr, uint16_t sport, uint16_t dport);

// ICMP errors of an FNAT64 conn change family with its packets (RFC 7915 4.2 and 5.2), built
// anew rather than rewritten (the header sizes differ): type and code mapped, the packet-too-big
// / frag-needed MTU adjusted by the 20 bytes, and the quoted packet given back as the other
// side sent it (orig: its addresses and ports, wire order), its quoted L4 checksum following
// when it lies in the quote. q is parse_icmp_error's / parse_icmp6_error's of [icmp, ...).

// The quoted packet as the receiver of the translated error sent it.
struct QuotedFlow {
    InetAddr saddr;
    InetAddr daddr;
    uint16_t sport;
    uint16_t dport;
};

// An ICMPv4 error about a translated packet (LIP -> RS) becomes an ICMPv6 error from `from`
// to orig.saddr (the client). Unreachable 0/1/5-8/11/12 -> no route (1/0), 9/10/13/15 ->
// administratively prohibited (1/1), 3 -> port unreachable (1/4), 4 -> packet too big with
// max(1280, MTU + 20) (an MTU of 0, RFC 1191's old routers, counts as 1280); time exceeded
// keeps its code. Returns the length written into out, or 0: no IPv6 counterpart (protocol
// unreachable, precedence codes), or build_icmp6_error refused it.
size_t icmp_error_4to6(uint8_t* out, size_t cap, const uint8_t* icmp, const IcmpQuote& q,
                       const InetAddr& from, const QuotedFlow& orig);

// An ICMPv6 error about a translated packet (VIP -> client) becomes an ICMPv4 error from
// `from` to orig.saddr (the RS), IP id id_be. No route 0 / beyond scope 2 / address
// unreachable 3 -> host unreachable (3/1), prohibited 1 -> 3/10, port unreachable 4 -> 3/3;
// packet too big -> frag needed with the MTU - 20 (at least 68); time exceeded keeps its code.
size_t icmp_error_6to4(uint8_t* out, size_t cap, const uint8_t* icmp, const IcmpQuote& q,
                       const InetAddr& from, const QuotedFlow& orig, uint16_t id_be);

}  // namespace xvs::net
