// NAT rewrites of IP packets, written once per address family (net/af.h), with RFC 1624
// incremental checksums: the destination (NAT inbound), the source (NAT outbound, SNAT inbound)
// or both (FULLNAT) addresses and ports of TCP/UDP, and the address plus echo identifier of
// ICMP echo (SNAT ping). Addresses and ports in network order.
// The caller has checked that the L4 header is present (not a non-first fragment) and is
// responsible for TTL; only addresses, ports/ids and checksums change here.
#pragma once

#include <cstdint>

#include "net/af.h"
#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/headers.h"

namespace xvs::net {

inline constexpr size_t kTcpChecksumOffset = 16;
inline constexpr size_t kUdpChecksumOffset = 6;
inline constexpr size_t kIcmpChecksumOffset = 2;
inline constexpr size_t kIcmpEchoIdOffset = 4;

namespace nat_detail {

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

// The port at l4 + at (0: source, 2: destination) becomes port, and the L4 checksum follows
// it and the address delta (the pseudo-header's).
inline void port_apply(uint8_t* l4, size_t at, uint8_t proto, uint16_t port, uint32_t addr_delta) {
    const uint32_t l4_delta = addr_delta + csum_delta16(load_wire16(l4 + at), port);
    store_wire16(l4 + at, port);
    l4_csum_apply(l4, proto, l4_delta);
}

}  // namespace nat_detail

// NAT inbound: VIP:vport -> RS:rport. l4 points at the TCP (proto 6) or UDP (17) header.
// Addresses here and below are InetAddr or Af::Addr (Af4: the 4 bytes in network order).
template <class Af, class Addr>
inline void rewrite_daddr_dport(typename Af::Hdr* ip, uint8_t* l4, uint8_t proto, const Addr& daddr,
                                uint16_t dport) {
    nat_detail::port_apply(l4, 2, proto, dport, Af::set_dst(*ip, daddr));
}
// The same with the address's delta (Af::addr_delta of the old and new address) from a caller
// that knows the old one (Conn::addr_sum), instead of summed from the header.
template <class Af, class Addr>
inline void rewrite_daddr_dport_by(typename Af::Hdr* ip, uint8_t* l4, uint8_t proto,
                                   const Addr& daddr, uint16_t dport, uint32_t addr_delta) {
    Af::put_dst(*ip, daddr, addr_delta);
    nat_detail::port_apply(l4, 2, proto, dport, addr_delta);
}

// NAT outbound RS:rport -> VIP:vport, SNAT inbound inside:port -> WAN:port (TCP or UDP).
template <class Af, class Addr>
inline void rewrite_saddr_sport(typename Af::Hdr* ip, uint8_t* l4, uint8_t proto, const Addr& saddr,
                                uint16_t sport) {
    nat_detail::port_apply(l4, 0, proto, sport, Af::set_src(*ip, saddr));
}
template <class Af, class Addr>
inline void rewrite_saddr_sport_by(typename Af::Hdr* ip, uint8_t* l4, uint8_t proto,
                                   const Addr& saddr, uint16_t sport, uint32_t addr_delta) {
    Af::put_src(*ip, saddr, addr_delta);
    nat_detail::port_apply(l4, 0, proto, sport, addr_delta);
}

// FULLNAT: both addresses and both ports, one delta for the IP header and one for L4.
// addr_delta: the addresses' part, Af::src_dst_delta of the header and the new addresses,
// which a caller that knows the old ones can sum once for many packets (Conn::addr_sum);
// rewrite_both below sums it from the header.
template <class Af, class Addr>
inline void rewrite_both_by(typename Af::Hdr* ip, uint8_t* l4, uint8_t proto, const Addr& saddr,
                            const Addr& daddr, uint16_t sport, uint16_t dport,
                            uint32_t addr_delta) {
    Af::put_src_dst(*ip, saddr, daddr, addr_delta);
    // sport, dport lead both TCP and UDP.
    const uint32_t l4_delta = addr_delta + csum_delta16(load_wire16(l4), sport) +
                              csum_delta16(load_wire16(l4 + 2), dport);
    store_wire16(l4, sport);
    store_wire16(l4 + 2, dport);
    nat_detail::l4_csum_apply(l4, proto, l4_delta);
}
template <class Af, class Addr>
inline void rewrite_both(typename Af::Hdr* ip, uint8_t* l4, uint8_t proto, const Addr& saddr,
                         const Addr& daddr, uint16_t sport, uint16_t dport) {
    rewrite_both_by<Af>(ip, l4, proto, saddr, daddr, sport, dport,
                        Af::src_dst_delta(*ip, saddr, daddr));
}

// Which address of the IP header rewrite_icmp_echo changes.
enum class IcmpEchoSide : uint8_t { Source, Destination };

// SNAT ping: sets the source (request out: inside -> WAN) or destination (reply in: WAN ->
// inside) address and the echo identifier; fixes the IP checksum and the ICMP checksum, which
// sees the identifier (and, for ICMPv6, the pseudo-header). icmp points at the echo header.
template <class Af>
inline void rewrite_icmp_echo(typename Af::Hdr* ip, uint8_t* icmp, IcmpEchoSide side,
                              const InetAddr& addr, uint16_t echo_id) {
    const uint32_t addr_delta =
        side == IcmpEchoSide::Source ? Af::set_src(*ip, addr) : Af::set_dst(*ip, addr);
    uint32_t delta = csum_delta16(load_wire16(icmp + kIcmpEchoIdOffset), echo_id);
    if constexpr (Af::icmp_pseudo_header) delta += addr_delta;
    store_wire16(icmp + kIcmpEchoIdOffset, echo_id);
    nat_detail::csum_apply(icmp + kIcmpChecksumOffset, delta);
}

}  // namespace xvs::net
