// ICMPv6 errors the director sends itself (RFC 4443): time exceeded for a NAT66/SNAT66 packet
// with hop limit 1, packet too big when a packet would not fit the next link (IPv6 routers do
// not fragment: TUN over IPv6, FNAT64's larger IPv4 packet... ), quoting the offending packet.
// Addresses in wire order; lengths and MTUs in host order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/addr.h"
#include "net/headers.h"
#include "net/icmp_related.h"

namespace xvs::net {

inline constexpr size_t kIcmp6ErrorMaxLen = 1280;  // RFC 4443 2.4(c): within the minimum MTU
inline constexpr uint16_t kIpv6MinMtu = 1280;      // RFC 8200 5

// Writes IPv6 + an ICMPv6 error `type`/`code` (bytes 4-7 of the ICMPv6 header = `rest`, host
// order) from saddr to orig's source into out, quoting as much of orig (an IPv6 packet of
// orig_len bytes) as fits in 1280 bytes. Returns the length written, or 0 if cap is too small,
// orig is malformed, or RFC 4443 2.4(e) forbids an error for it: orig is itself an ICMPv6
// error, its source is unspecified or multicast, or its destination multicast (except for a
// packet too big).
size_t build_icmp6_error(uint8_t* out, size_t cap, const uint8_t* orig, size_t orig_len,
                         const InetAddr& saddr, uint8_t type, uint8_t code, uint32_t rest,
                         uint8_t hop_limit = 64);

// Parses and validates an ICMPv6 error related to a conn, type 1 (destination unreachable), 2
// (packet too big) or 3 (time exceeded), [icmp, icmp+len) carried in `outer` (whose addresses
// the checksum covers): checksum, quoted IPv6 header and extension headers (a non-first
// fragment has no L4 header: false), >= 8 quoted L4 bytes of TCP, UDP or an echo. For a packet
// too big, next_hop_mtu is its MTU (clamped to 65535); inner_ip_len spans the quoted fixed
// and extension headers.
bool parse_icmp6_error(const Ipv6Hdr& outer, const uint8_t* icmp, size_t len, IcmpQuote& out);

// translate_icmp_error's IPv6 twin: outer and quoted addresses, quoted ports or echo id, the
// quoted L4 checksum when quoted, then the ICMPv6 checksum over the new pseudo-header.
bool translate_icmp6_error(Ipv6Hdr* outer, uint8_t* icmp, size_t len, const IcmpQuote& q,
                           const IcmpTranslation& t);

inline size_t build_packet_too_big(uint8_t* out, size_t cap, const uint8_t* orig, size_t orig_len,
                                   const InetAddr& saddr, uint32_t mtu) {
    return build_icmp6_error(out, cap, orig, orig_len, saddr, kIcmp6PacketTooBig, 0, mtu);
}

// Hop limit exceeded in transit (type 3 code 0).
inline size_t build_time_exceeded6(uint8_t* out, size_t cap, const uint8_t* orig, size_t orig_len,
                                   const InetAddr& saddr) {
    return build_icmp6_error(out, cap, orig, orig_len, saddr, kIcmp6TimeExceeded, 0, 0);
}

}  // namespace xvs::net
