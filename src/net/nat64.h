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

}  // namespace xvs::net
