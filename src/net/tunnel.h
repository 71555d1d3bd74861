// Outer headers for TUN mode (issue 9): IPIP (RFC 2003) and GUE variant 0 carrying IPv4, laid
// out as IPVS writes them (IPv4 + UDP + 4-byte GUE header, proto_ctype 4), written into a
// caller-provided buffer just in front of the inner IPv4 packet; plus the MTU/DF decision.
// Addresses and ports in network order; lengths and MTUs in host order, in bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/addr.h"
#include "net/headers.h"

namespace xvs::net {

inline constexpr uint8_t kIpProtoIpip = 4;   // IPv4-in-IPv4 (RFC 2003)
inline constexpr size_t kIpipOverhead = 20;  // outer IPv4 header, no options
inline constexpr size_t kGueHdrLen = 4;      // GUE v0 base header, no extension fields
inline constexpr size_t kGueOverhead = 20 + 8 + kGueHdrLen;  // IPv4 + UDP + GUE = 32
inline constexpr size_t kIp6ip6Overhead = 40;                // outer IPv6 header (RFC 2473)
inline constexpr size_t kGue6Overhead = 40 + 8 + kGueHdrLen;  // IPv6 + UDP + GUE = 52
inline constexpr uint8_t kTunnelDefaultTtl = 64;
inline constexpr uint16_t kIpv4MinMtu = 68;  // RFC 791: every IPv4 link carries 68 bytes

// Writes the 20-byte outer IPIP header for `inner` (which must follow it): protocol 4, TOS and
// DF copied from the inner header, total length = inner total length + 20, header checksum.
void ipip_outer(uint8_t* out20, const InetAddr& saddr, const InetAddr& daddr, const Ipv4Hdr& inner,
                uint16_t id, uint8_t ttl = kTunnelDefaultTtl);

// Writes the 32-byte outer IPv4 + UDP + GUE v0 header (proto_ctype 4) for `inner`. The UDP
// checksum is 0 (allowed for IPv4, RFC 768; IPVS's default "nocsum"; the inner packet keeps
// its own checksums). sport: flow entropy, e.g. tunnel_flow_port(); dport: the GUE port.
void gue_outer(uint8_t* out32, const InetAddr& saddr, const InetAddr& daddr, const Ipv4Hdr& inner,
               uint16_t id, uint16_t sport, uint16_t dport, uint8_t ttl = kTunnelDefaultTtl);

// IPv6-in-IPv6 (RFC 2473): the 40-byte outer header for `inner` (inner_len bytes, following
// it): next header 41, traffic class copied (RFC 6040), flow label from flow_hash (RFC 6438).
void ip6ip6_outer(uint8_t* out40, const InetAddr& saddr, const InetAddr& daddr,
                  const Ipv6Hdr& inner, uint16_t inner_len, uint32_t flow_hash,
                  uint8_t hop_limit = kTunnelDefaultTtl);
// GUE v0 over IPv6 carrying IPv6 (proto_ctype 41): the 52-byte IPv6 + UDP + GUE header. The
// UDP checksum is 0, as IPVS's "nocsum" default writes it (RFC 6935 allows it for tunnels;
// the inner packet keeps its own checksums).
void gue6_outer(uint8_t* out52, const InetAddr& saddr, const InetAddr& daddr, const Ipv6Hdr& inner,
                uint16_t inner_len, uint32_t flow_hash, uint16_t sport, uint16_t dport,
                uint8_t hop_limit = kTunnelDefaultTtl);

// Maps a flow hash to a UDP source port in 49152..65535 (network order), so ECMP between the
// director and the RS spreads flows while one flow keeps one path (RFC 8086 section 3.2).
inline uint16_t tunnel_flow_port(uint32_t flow_hash) {
    const uint32_t folded = (flow_hash ^ (flow_hash >> 16)) & 0x3fff;
    return hton16(static_cast<uint16_t>(0xc000 | folded));
}

// True when an inner packet of inner_len bytes plus the tunnel overhead fits in mtu.
inline bool tunnel_fits(size_t inner_len, size_t overhead, size_t mtu) {
    return inner_len + overhead <= mtu;
}

enum class TunnelMtuAction : uint8_t {
    Fits,         // encapsulate and send
    Fragment,     // too big but DF clear: the outer packet may be fragmented (or dropped)
    FragNeeded,   // too big with DF set: send ICMP frag-needed with next_hop_mtu to the client
    MtuTooSmall,  // mtu - overhead is below 68: no usable next-hop MTU, drop
};

struct TunnelMtuVerdict {
    TunnelMtuAction action;
    uint16_t next_hop_mtu;  // host order; mtu - overhead when action is FragNeeded, else 0
};

// Decides what to do with `inner` (inner_len bytes) before encapsulating it on a link of mtu.
TunnelMtuVerdict tunnel_mtu_check(const Ipv4Hdr& inner, size_t inner_len, size_t overhead,
                                  size_t mtu);
// The same for an IPv6 inner packet, which nobody on the way may fragment: too big means a
// packet too big with mtu - overhead (FragNeeded) while that is at least 1280, else
// MtuTooSmall.
TunnelMtuVerdict tunnel_mtu_check(const Ipv6Hdr& inner, size_t inner_len, size_t overhead,
                                  size_t mtu);

// The outer headers at the start of an ICMP error's quote (quote_len bytes) when it quotes a
// tunnel packet from outer_src (the address the error came to): IPIP / IP6IP6 (an outer
// header of outer_src's family with protocol 4 / 41), or that header + UDP + GUE v0
// (proto_ctype 4 / 41), around an inner header of the same family with 8 bytes of its L4
// header quoted. Their length (what to cut to get a quote of the inner packet), else 0.
size_t tunnel_quote_outer_len(const uint8_t* quote, size_t quote_len, const InetAddr& outer_src);

}  // namespace xvs::net
