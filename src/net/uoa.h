// UOA ("UDP option of address", DPVS): carries the client address of a FULLNAT UDP flow to the
// real server, either as an IPv4 option (ipo) or as a private protocol-248 header between IP
// and UDP (opp). Functions rewrite an IPv4 datagram (or, opp only, an IPv6 one) in place and
// touch nothing unless the result fits; the UDP checksum never changes (its pseudo-header does
// not see either insert). The option's form follows the client's family: 8 bytes for IPv4, 20
// for IPv6 (FNAT66, and FNAT64 where an IPv4 packet carries an IPv6 client).
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/addr.h"

namespace xvs::net {

// The option, in both modes: {code 31, len, client port (2), client address}, wire order; len 8
// with an IPv4 client (4 address bytes), 20 with an IPv6 one (16), as DPVS's RS module reads
// it (op_len is the whole option: 4 + address).
inline constexpr uint8_t kUoaOptCode = 31;
inline constexpr uint8_t kUoaOptLenV4 = 8;
inline constexpr uint8_t kUoaOptLenV6 = 20;
// opp: {version (high nibble; 1 = IPv4, 2 = IPv6), reserved (low nibble), protocol (17),
// length be16 of the opp header including the option} then the option. The version sits in the
// high nibble as in IPv4's version/IHL byte.
inline constexpr uint8_t kIpProtoUoaOpp = 248;
// The version is the family of the client address the option carries (DPVS: 1 for IPv4, 2 for
// IPv6), not of the packet: FNAT64's IPv4 packets carry version 2.
inline constexpr uint8_t kUoaOppVersionV4 = 1;
inline constexpr uint8_t kUoaOppVersionV6 = 2;
inline constexpr size_t kUoaOppHdrLen = 4;
inline constexpr size_t kUoaOppLenV4 = kUoaOppHdrLen + kUoaOptLenV4;  // 12
inline constexpr size_t kUoaOppLenV6 = kUoaOppHdrLen + kUoaOptLenV6;  // 24
// IHL is 4 bits of 32-bit words: a header of at most 60 bytes.
inline constexpr unsigned kIpv4MaxIhl = 15;

enum class UoaMode : uint8_t { Ipo, Opp };

// UOA rides on the first few datagrams of a flow: DPVS sends it on 3 (its uoa_max_trail).
inline constexpr uint8_t kUoaDefaultMaxTrail = 3;

// Bytes an insert adds to the datagram: 8 (ipo) or 12 (opp). For the MTU check that decides
// between inserting and sending uoa_empty_datagram_build first.
constexpr size_t uoa_insert_len(UoaMode mode) {
    return mode == UoaMode::Ipo ? kUoaOptLenV4 : kUoaOppLenV4;
}
// The same for a client of either family: 8 / 12 (IPv4 client), 20 / 24 (IPv6 client).
inline size_t uoa_insert_len(UoaMode mode, const InetAddr& client) {
    const size_t opt = client.is_v4() ? kUoaOptLenV4 : kUoaOptLenV6;
    return mode == UoaMode::Ipo ? opt : kUoaOppHdrLen + opt;
}

// Common rules for the two inserts: `ip_hdr` is the IPv4 header (2-byte aligned, as mbuf data
// is) of a whole UDP datagram (not a fragment, UDP header present) whose total length is at
// most pkt_len (bytes past it, e.g. Ethernet padding, are dropped). `capacity` bytes from
// ip_hdr are writable; pass min(buffer room, MTU) so that a refusal means "use the empty
// datagram". client_be/cport_be are the client's address and port, wire order. Each returns the
// new total length, or 0 with the packet untouched when the datagram is not as described or
// the result would not fit.

// ipo: inserts the option right after the fixed 20-byte header, ahead of any existing options
// (a receiver that takes the first UOA option then reads ours, and an existing EOL option
// cannot hide it). IHL += 2, total length += 8, IP checksum recomputed. Refused if IHL would
// exceed 15 words.
size_t uoa_ipo_insert(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, uint32_t client_be,
                      uint16_t cport_be) noexcept;

// opp: inserts the 12-byte opp header between the IP header (options kept) and UDP; protocol
// becomes 248, total length += 12, IP checksum recomputed.
size_t uoa_opp_insert(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, uint32_t client_be,
                      uint16_t cport_be) noexcept;

size_t uoa_insert(UoaMode mode, uint8_t* ip_hdr, size_t pkt_len, size_t capacity,
                  uint32_t client_be, uint16_t cport_be) noexcept;

// The same on an IPv4 datagram with a client of either family (FNAT64: the IPv6 client in a
// 20-byte option; ipo then needs IHL + 5 <= 15, opp writes version 2).
size_t uoa_ipo_insert(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, const InetAddr& client,
                      uint16_t cport_be) noexcept;
size_t uoa_opp_insert(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, const InetAddr& client,
                      uint16_t cport_be) noexcept;

// opp on an IPv6 datagram (FNAT66): ip6_hdr is a 40-byte IPv6 header followed directly by UDP
// (next header 17; extension headers are refused). The opp header goes between them: next
// header becomes 248, opp protocol 17, payload length grows by 12 or 24. IPv6 has no ipo.
// Returns the new length (40 + payload) or 0 with the packet untouched, as above.
size_t uoa_opp_insert_ipv6(uint8_t* ip6_hdr, size_t pkt_len, size_t capacity,
                           const InetAddr& client, uint16_t cport_be) noexcept;

// Picks by the packet's family (saddr of flow / the IP version byte): IPv4 packets take either
// mode, IPv6 ones opp only (Ipo on an IPv6 packet returns 0).
size_t uoa_insert(UoaMode mode, uint8_t* ip_hdr, size_t pkt_len, size_t capacity,
                  const InetAddr& client, uint16_t cport_be) noexcept;

// The flow of the datagram the UOA rides on, as the RS sees it (FULLNAT: local address and
// port -> RS), plus the client it announces. Wire order throughout.
struct UoaFlow {
    uint32_t saddr_be = 0;
    uint32_t daddr_be = 0;
    uint16_t sport_be = 0;
    uint16_t dport_be = 0;
    uint32_t client_be = 0;
    uint16_t cport_be = 0;
    uint16_t ip_id_be = 0;
    uint8_t ttl = 64;
};

// Writes an IPv4/UDP datagram with no payload carrying UOA in `mode` into `out` (2-byte
// aligned): the fallback sent ahead of a datagram that has no room for UOA under the MTU.
// The UDP checksum is computed (a result of 0 is sent as 0xffff). Returns the length (36 for
// ipo, 40 for opp), or 0 with nothing written if cap is smaller.
size_t uoa_empty_datagram_build(uint8_t* out, size_t cap, UoaMode mode,
                                const UoaFlow& flow) noexcept;

// UoaFlow for either family: the packet's (saddr/daddr, both IPv4 or both IPv6) and the
// client's, which may differ (FNAT64).
struct UoaFlowInet {
    InetAddr saddr;
    InetAddr daddr;
    uint16_t sport_be = 0;
    uint16_t dport_be = 0;
    InetAddr client;
    uint16_t cport_be = 0;
    uint16_t ip_id_be = 0;  // IPv4 only
    uint8_t ttl = 64;       // hop limit for IPv6
};

// The empty datagram for either family: IPv4 as above (any mode), IPv6 (40-byte header, hop
// limit ttl, traffic class and flow label 0) with opp only. The UDP checksum is computed over
// the family's pseudo-header (mandatory for IPv6; 0 is sent as 0xffff). Returns the length, or
// 0 with nothing written if cap is too small, the families of saddr and daddr differ, or Ipo
// is asked for IPv6.
size_t uoa_empty_datagram_build(uint8_t* out, size_t cap, UoaMode mode,
                                const UoaFlowInet& flow) noexcept;

}  // namespace xvs::net
