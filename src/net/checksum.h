// Internet checksum: full computation (RFC 1071) and incremental update (RFC 1624, eqn. 3).
// Values passed to the incremental helpers are raw wire-order words; the one's complement sum
// is byte-order independent, so no conversion is needed as long as old and new agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "net/headers.h"

namespace xvs::net {

// Adds the 16-bit words of [data, data+len) to sum (an odd trailing byte is padded with 0).
uint32_t csum_partial(const void* data, size_t len, uint32_t sum);

// Folds a 32-bit accumulator to 16 bits and complements it: the value to store in a header.
inline uint16_t csum_fold(uint32_t sum) {
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

// The 32-bit word at p + 4 * i, zero-extended for a 64-bit one's complement sum. One load
// a word: a memcpy of a whole header into a local array was compiled as a vector load, a store
// to the stack and a reload of each word.
[[gnu::always_inline]] inline uint64_t csum_word32(const void* p, size_t i) {
    uint32_t w;
    std::memcpy(&w, static_cast<const uint8_t*>(p) + 4 * i, 4);
    return w;
}

// csum_partial(data, 20, 0) for an IPv4 header without options, unrolled: five 32-bit loads
// and no loop (the receive path verifies every header this way).
[[gnu::always_inline]] inline uint32_t csum_partial20(const void* data) {
    uint64_t acc = csum_word32(data, 0) + csum_word32(data, 1) + csum_word32(data, 2) +
                   csum_word32(data, 3) + csum_word32(data, 4);
    acc = (acc & 0xffffffff) + (acc >> 32);
    acc = (acc & 0xffffffff) + (acc >> 32);
    return static_cast<uint32_t>(acc);
}

// csum_partial over `words` 32-bit words (a header whose length is a multiple of 4, such as
// TCP's with its options), inline: no call and no byte tail. sum: what is summed already (a
// pseudo-header, words of 32 bits added up), below 2^48; the result is folded as
// csum_partial's.
[[gnu::always_inline]] inline uint32_t csum_words32(const void* data, size_t words, uint64_t sum) {
    uint64_t acc = sum;  // 2^32 more words before it could carry out
    size_t i = 0;
    for (; i + 4 <= words; i += 4)
        acc += csum_word32(data, i) + csum_word32(data, i + 1) + csum_word32(data, i + 2) +
               csum_word32(data, i + 3);
    for (; i < words; ++i) acc += csum_word32(data, i);
    acc = (acc & 0xffffffff) + (acc >> 32);
    acc = (acc & 0xffffffff) + (acc >> 32);
    acc = (acc & 0xffff) + (acc >> 16);
    acc = (acc & 0xffff) + (acc >> 16);
    return static_cast<uint32_t>(acc);
}

// IPv4 header checksum over header_len() bytes (checksum field must be zero or is skipped).
uint16_t ipv4_header_checksum(const Ipv4Hdr* ip);

// Pseudo-header sum (saddr, daddr, proto, length) in wire order. Always inlined: as a call
// (GCC stops inlining it once it has enough callers) NAT64 paid 13 instructions a packet more.
[[gnu::always_inline]] inline uint32_t ipv4_pseudo_sum(uint32_t saddr, uint32_t daddr,
                                                       uint8_t proto, uint16_t len) {
    uint32_t sum = (saddr & 0xffff) + (saddr >> 16) + (daddr & 0xffff) + (daddr >> 16);
    sum += hton16(proto) + hton16(len);
    return sum;
}

// IPv6 pseudo-header sum (RFC 8200 8.1: saddr, daddr, upper-layer length, next header) in
// wire order; saddr and daddr are 16 bytes each.
// Eight 32-bit loads summed in 64 bits and folded to 17 bits, like csum_partial20 (a byte pair
// at a time it cost ~80 instructions, and every NAT64 packet pays it).
inline uint32_t ipv6_pseudo_sum(const uint8_t* saddr, const uint8_t* daddr, uint8_t proto,
                                uint32_t len) {
    uint64_t acc = uint64_t{hton16(proto)} + hton16(static_cast<uint16_t>(len)) +
                   hton16(static_cast<uint16_t>(len >> 16));
    for (size_t i = 0; i < 4; ++i) acc += csum_word32(saddr, i) + csum_word32(daddr, i);
    acc = (acc & 0xffffffff) + (acc >> 32);
    acc = (acc & 0xffffffff) + (acc >> 32);
    return static_cast<uint32_t>((acc & 0xffff) + (acc >> 16));
}

// TCP/UDP/ICMPv6 checksum of an IPv6 L4 segment of len bytes (its checksum field zeroed).
uint16_t ipv6_l4_checksum(const uint8_t* saddr, const uint8_t* daddr, uint8_t proto, const void* l4,
                          size_t len);

// TCP/UDP/ICMP checksum of an IPv4 L4 segment of len bytes (its checksum field zeroed first).
uint16_t ipv4_l4_checksum(uint32_t saddr, uint32_t daddr, uint8_t proto, const void* l4,
                          size_t len);

// The summand of an incremental update (RFC 1624 eqn. 3): ~old + new, over a 32-bit or 16-bit
// wire word. Deltas of several fields add up; csum_fold(~HC + delta) is the new checksum.
inline uint32_t csum_delta32(uint32_t old_v, uint32_t new_v) {
    return static_cast<uint16_t>(~old_v) + static_cast<uint16_t>(~(old_v >> 16)) +
           (new_v & 0xffff) + (new_v >> 16);
}
// The same over a 16-byte address (IPv6): four 32-bit words.
inline uint32_t csum_delta128(const uint8_t* old_v, const uint8_t* new_v) {
    uint32_t d = 0;
    for (unsigned i = 0; i < 16; i += 4) {
        uint32_t o, n;
        __builtin_memcpy(&o, old_v + i, 4);
        __builtin_memcpy(&n, new_v + i, 4);
        d += csum_delta32(o, n);
    }
    return d;
}
inline uint32_t csum_delta16(uint16_t old_v, uint16_t new_v) {
    return static_cast<uint16_t>(~old_v) + uint32_t{new_v};
}

// RFC 1624: HC' = ~(~HC + ~m + m').
inline void csum_replace2(uint16_t* csum, uint16_t old_val, uint16_t new_val) {
    uint32_t sum = static_cast<uint16_t>(~*csum);
    sum += static_cast<uint16_t>(~old_val);
    sum += new_val;
    *csum = csum_fold(sum);
}

inline void csum_replace4(uint16_t* csum, uint32_t old_val, uint32_t new_val) {
    uint32_t sum = static_cast<uint16_t>(~*csum);
    sum += static_cast<uint16_t>(~old_val) + static_cast<uint16_t>(~(old_val >> 16));
    sum += (new_val & 0xffff) + (new_val >> 16);
    *csum = csum_fold(sum);
}

// UDP over IPv4: checksum 0 means "none" and stays 0; a computed 0 is sent as 0xffff.
inline void udp_csum_replace4(uint16_t* csum, uint32_t old_val, uint32_t new_val) {
    if (*csum == 0) return;
    csum_replace4(csum, old_val, new_val);
    if (*csum == 0) *csum = 0xffff;
}
inline void udp_csum_replace2(uint16_t* csum, uint16_t old_val, uint16_t new_val) {
    if (*csum == 0) return;
    csum_replace2(csum, old_val, new_val);
    if (*csum == 0) *csum = 0xffff;
}

}  // namespace xvs::net
