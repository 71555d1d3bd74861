// TOA (TCP Option Address, kind 254: client port be16 + client address; len 8 for an IPv4
// client, 20 for an IPv6 one) for FULLNAT: plan a new options area with our TOA first and every
// client kind-254 option removed, and rewrite an IPv4/TCP or IPv6/TCP packet in place with it.
// The option's form follows the client's family, not the packet's: FNAT64 puts the 20-byte
// form on an IPv4 packet. Pure byte code, no DPDK; never touches bytes it was not given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "net/addr.h"
#include "net/tcp_options.h"

namespace xvs::net {

// One value per outcome worth a counter. X(name, counter_name, description)
#define XVS_TOA_OUTCOMES(X)                                                                    \
    X(Inserted, "toa_inserted", "TOA inserted, other options kept as they were")               \
    X(InsertedPrunedNop, "toa_inserted_pruned_nop", "TOA inserted after dropping NOP padding") \
    X(InsertedPrunedSack, "toa_inserted_pruned_sack",                                          \
      "TOA inserted after dropping NOPs and the SACK option")                                  \
    X(NoRoom, "toa_no_room", "options area (40 bytes) has no room for TOA")                    \
    X(TooBig, "toa_too_big", "TOA would make the packet longer than the capacity (MTU)")       \
    X(Malformed, "toa_malformed", "not a well-formed, unfragmented IPv4/TCP or IPv6/TCP segment")

enum class ToaOutcome : uint8_t {
#define XVS_TOA_ENUM(name, counter, desc) name,
    XVS_TOA_OUTCOMES(XVS_TOA_ENUM)
#undef XVS_TOA_ENUM
};

inline constexpr std::string_view kToaOutcomeNames[] = {
#define XVS_TOA_NAME(name, counter, desc) counter,
    XVS_TOA_OUTCOMES(XVS_TOA_NAME)
#undef XVS_TOA_NAME
};
inline constexpr size_t kToaOutcomeCount = std::size(kToaOutcomeNames);
static_assert(size_t(ToaOutcome::Malformed) + 1 == kToaOutcomeCount);

inline constexpr std::string_view toa_outcome_name(ToaOutcome outcome) {
    return kToaOutcomeNames[size_t(outcome)];
}

inline bool toa_inserted(ToaOutcome outcome) {
    return outcome == ToaOutcome::Inserted || outcome == ToaOutcome::InsertedPrunedNop ||
           outcome == ToaOutcome::InsertedPrunedSack;
}

struct ToaPlan {
    ToaOutcome outcome = ToaOutcome::Malformed;
    uint8_t new_len = 0;         // bytes of new_opts used; a multiple of 4, <= 40 (0 if failed)
    uint8_t forged_removed = 0;  // client kind-254 options left out (whatever their length)
    uint8_t new_opts[kTcpOptionsMaxLen] = {};
};

// The options area to send instead of old_opts: our TOA first, then the old options in order
// without any kind-254 option (a forged TOA must never reach the RS) and without anything after
// an EOL, padded with EOL (zero) bytes to a multiple of 4. If that exceeds max_len (40, or less
// when the packet must not grow past an MTU), in order:
//   1. drop every NOP and re-pack, putting NOPs back only to keep timestamps and SACK edges
//      4-byte aligned (NOP NOP TS) where that still fits, else packed unaligned;
//   2. only if allow_sack_prune (never for a SYN): also drop the SACK option(s) entirely
//      (RFC 2018 SACK is advisory, the RS just learns those blocks later);
// else NoRoom. MSS, wscale, SACK-permitted, timestamps and unknown options keep their bytes.
// old_opts longer than 40 bytes or not walkable (TcpOptionWalker::malformed) -> Malformed.
// client_addr_be/client_port_be are in wire order (as in Ipv4Hdr::saddr / TcpHdr::sport).
ToaPlan toa_plan(std::span<const uint8_t> old_opts, uint32_t client_addr_be,
                 uint16_t client_port_be, bool allow_sack_prune,
                 size_t max_len = kTcpOptionsMaxLen) noexcept;
// The same for a client of either family: the 8-byte TOA for IPv4, the 20-byte one for IPv6.
ToaPlan toa_plan(std::span<const uint8_t> old_opts, const InetAddr& client, uint16_t client_port_be,
                 bool allow_sack_prune, size_t max_len = kTcpOptionsMaxLen) noexcept;
// Bytes of the TOA option for a client of this family: 8 or 20.
inline uint8_t toa_len(const InetAddr& client) {
    return client.is_v4() ? kTcpOptLenToaV4 : kTcpOptLenToaV6;
}

struct ToaResult {
    ToaOutcome outcome = ToaOutcome::Malformed;
    uint8_t forged_removed = 0;  // as in ToaPlan
    size_t new_pkt_len = 0;      // IPv4 total length after the rewrite; pkt_len when not inserted
};

// Rewrites the IPv4/TCP packet at ip_hdr in place with toa_plan(): moves the payload by
// new_opts_len - old_opts_len bytes (a multiple of 4: positive, zero or negative), writes the
// options, and updates TCP data offset, IPv4 total length, the IPv4 header checksum and the TCP
// checksum. Both checksums are updated incrementally (RFC 1624), so a segment that arrived with
// a bad checksum still has a bad one: the balancer never launders corruption.
//   pkt_len:  bytes present from ip_hdr; may exceed the IPv4 total length (Ethernet padding of
//             short frames), whose bytes are dropped: the packet ends at new_pkt_len.
//   capacity: bytes the packet may occupy from ip_hdr: min(buffer space, egress MTU). The new
//             packet is at most capacity long, and writes stay inside the old and new packet.
// ip_hdr needs no particular alignment. IPv4 options are allowed; fragments, non-TCP, bad
// lengths and malformed TCP options -> Malformed. Any outcome but Inserted* leaves the packet
// byte for byte untouched. A packet whose options do fit 40 bytes but not the capacity -> TooBig.
ToaResult toa_insert_ipv4(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, uint32_t client_addr_be,
                          uint16_t client_port_be, bool allow_sack_prune) noexcept;
// The same with the client of either family (FNAT64: an IPv6 client's 20-byte TOA on the
// IPv4 packet to the RS).
ToaResult toa_insert_ipv4(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, const InetAddr& client,
                          uint16_t client_port_be, bool allow_sack_prune) noexcept;

// The IPv6 form: ip6_hdr is a 40-byte IPv6 header followed directly by TCP (next header 6; a
// packet with extension headers is Malformed, the caller strips or refuses them first).
// Payload length and the TCP checksum (pseudo-header upper-layer length) are updated;
// new_pkt_len is the whole length, 40 + payload. Otherwise as toa_insert_ipv4.
ToaResult toa_insert_ipv6(uint8_t* ip6_hdr, size_t pkt_len, size_t capacity, const InetAddr& client,
                          uint16_t client_port_be, bool allow_sack_prune) noexcept;

// Lowers every MSS option of an RS SYN-ACK by the TOA length (8) so that the client's full-size
// segments plus our TOA still fit the RS's MSS (seed 001). *tcp_csum (wire order) is updated
// incrementally unless nullptr. Returns false, changing nothing, when there is no MSS option or
// it is too small to lower (<= 8). Duplicates all get the first option's value minus 8.
bool toa_clamp_mss(std::span<uint8_t> synack_opts, uint16_t* tcp_csum) noexcept;
// The same for a TOA of toa_len bytes (toa_len(client): 20 for an IPv6 client).
bool toa_clamp_mss(std::span<uint8_t> synack_opts, uint16_t* tcp_csum, uint8_t toa_len) noexcept;

// The first kind-254 option of length 8, as the RS `toa` module picks it: (client address, client
// port), both in wire order. Kind-254 options of other lengths are skipped.
std::optional<std::pair<uint32_t, uint16_t>> toa_find(std::span<const uint8_t> opts) noexcept;
// The first kind-254 option of length 8 or 20 (the IPv4 or the IPv6 form): (client, port).
std::optional<std::pair<InetAddr, uint16_t>> toa_find_inet(std::span<const uint8_t> opts) noexcept;

}  // namespace xvs::net
