// Network byte order helpers. Packet structs keep wire order; accessors convert explicitly.
#pragma once

#include <cstdint>
#include <cstring>

namespace xvs::net {

constexpr uint16_t bswap16(uint16_t v) { return static_cast<uint16_t>((v >> 8) | (v << 8)); }
constexpr uint32_t bswap32(uint32_t v) { return __builtin_bswap32(v); }

// host <-> network (x86 is little-endian; static_assert keeps that assumption honest).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "xvs assumes a little-endian host");
constexpr uint16_t hton16(uint16_t v) { return bswap16(v); }
constexpr uint16_t ntoh16(uint16_t v) { return bswap16(v); }
constexpr uint32_t hton32(uint32_t v) { return bswap32(v); }
constexpr uint32_t ntoh32(uint32_t v) { return bswap32(v); }

inline uint16_t load_be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t load_be32(const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
inline void store_be16(uint8_t* p, uint16_t v) {
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}
// One byte swap and one 4-byte store: GCC 12 turned four byte stores into a long shift chain.
inline void store_be32(uint8_t* p, uint32_t v) {
    const uint32_t wire = hton32(v);
    std::memcpy(p, &wire, sizeof wire);
}

// A 16/32-bit word copied as it sits on the wire (network order kept, any alignment): for
// checksum arithmetic and for fields no header struct covers, e.g. the TTL/protocol word.
// memcpy, not a uint16_t* cast: the cast is type punning the optimiser may break (issue 10:
// at -O3 the ICMP echo reply left with a wrong IPv4 checksum). Compiles to one load/store.
inline uint16_t load_wire16(const void* p) {
    uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline uint32_t load_wire32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store_wire16(void* p, uint16_t v) {
    std::memcpy(p, &v, sizeof v);
}
inline void store_wire32(void* p, uint32_t v) {
    std::memcpy(p, &v, sizeof v);
}

}  // namespace xvs::net
