// One-sided NAT rewrites of IPv4 packets with RFC 1624 incremental checksums: the destination
// (NAT inbound) or the source (NAT outbound, SNAT inbound) address and port of TCP/UDP, and the
// address plus echo identifier of ICMP echo (SNAT ping). Addresses and ports in network order.
// The caller has checked that the L4 header is present (not a non-first fragment) and is
// responsible for TTL; only addresses, ports/ids and checksums change here.
#pragma once

#include <cstdint>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/headers.h"

namespace xvs::net {

inline constexpr size_t kTcpChecksumOffset = 16;
inline constexpr size_t kUdpChecksumOffset = 6;
inline constexpr size_t kIcmpChecksumOffset = 2;
inline constexpr size_t kIcmpEchoIdOffset = 4;

namespace nat_detail {

// One's complement sum of ~old + new over a 32-bit wire word (RFC 1624 eqn. 3, summand part).
inline uint32_t delta32(uint32_t old_v, uint32_t new_v) {
    return static_cast<uint16_t>(~old_v) + static_cast<uint16_t>(~(old_v >> 16)) +
           (new_v & 0xffff) + (new_v >> 16);
}
inline uint32_t delta16(uint16_t old_v, uint16_t new_v) {
    return static_cast<uint16_t>(~old_v) + uint32_t{new_v};
}

// Applies delta to the checksum at p (any alignment): HC' = ~(~HC + delta).
inline void csum_apply(uint8_t* p, uint32_t delta) {
    store_wire16(p, csum_fold(static_cast<uint16_t>(~load_wire16(p)) + delta));
}

// TCP always; UDP only when a checksum is present (0 = none, stays 0; a computed 0 is 0xffff).
inline void l4_csum_apply(uint8_t* l4, uint8_t proto, uint32_t delta) {
    if (proto == kIpProtoTcp) {
        csum_apply(l4 + kTcpChecksumOffset, delta);
    } else if (proto == kIpProtoUdp) {
        uint8_t* c = l4 + kUdpChecksumOffset;
        if (load_wire16(c) == 0) return;
        csum_apply(c, delta);
        if (load_wire16(c) == 0) store_wire16(c, 0xffff);
    }
}

}  // namespace nat_detail

// NAT inbound: VIP:vport -> RS:rport. l4 points at the TCP (proto 6) or UDP (17) header.
inline void rewrite_daddr_dport(Ipv4Hdr* ip, uint8_t* l4, uint8_t proto, uint32_t daddr,
                                uint16_t dport) {
    const uint32_t addr_delta = nat_detail::delta32(ip->daddr, daddr);
    ip->daddr = daddr;
    ip->checksum = csum_fold(static_cast<uint16_t>(~ip->checksum) + addr_delta);
    const uint32_t l4_delta = addr_delta + nat_detail::delta16(load_wire16(l4 + 2), dport);
    store_wire16(l4 + 2, dport);
    nat_detail::l4_csum_apply(l4, proto, l4_delta);
}

// NAT outbound RS:rport -> VIP:vport, SNAT inbound inside:port -> WAN:port (TCP or UDP).
inline void rewrite_saddr_sport(Ipv4Hdr* ip, uint8_t* l4, uint8_t proto, uint32_t saddr,
                                uint16_t sport) {
    const uint32_t addr_delta = nat_detail::delta32(ip->saddr, saddr);
    ip->saddr = saddr;
    ip->checksum = csum_fold(static_cast<uint16_t>(~ip->checksum) + addr_delta);
    const uint32_t l4_delta = addr_delta + nat_detail::delta16(load_wire16(l4), sport);
    store_wire16(l4, sport);
    nat_detail::l4_csum_apply(l4, proto, l4_delta);
}

// Which address of the IPv4 header rewrite_icmp_echo changes.
enum class IcmpEchoSide : uint8_t { Source, Destination };

// SNAT ping: sets the source (request out: inside -> WAN) or destination (reply in: WAN ->
// inside) address and the echo identifier; fixes the IP checksum and the ICMP checksum, which
// has no pseudo-header and so only sees the identifier. icmp points at the echo header.
inline void rewrite_icmp_echo(Ipv4Hdr* ip, uint8_t* icmp, IcmpEchoSide side, uint32_t addr,
                              uint16_t echo_id) {
    // saddr at byte 12, daddr at 16; a byte pointer, since a packed field binds no reference.
    uint8_t* field = reinterpret_cast<uint8_t*>(ip) + (side == IcmpEchoSide::Source ? 12 : 16);
    const uint32_t addr_delta = nat_detail::delta32(load_wire32(field), addr);
    store_wire32(field, addr);
    ip->checksum = csum_fold(static_cast<uint16_t>(~ip->checksum) + addr_delta);
    const uint32_t id_delta = nat_detail::delta16(load_wire16(icmp + kIcmpEchoIdOffset), echo_id);
    store_wire16(icmp + kIcmpEchoIdOffset, echo_id);
    nat_detail::csum_apply(icmp + kIcmpChecksumOffset, id_delta);
}

}  // namespace xvs::net
