// Reference packet builders for the net/ NAT, tunnel and ICMP tests: every checksum computed
// from scratch with a naive byte-pair RFC 1071 sum written here, independent of net/checksum,
// so a test never checks the incremental code only against itself. Addresses and ports are
// host-order integers (0xcb007107 = 203.0.113.7); the bytes produced are wire order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xvs::net::testref {

using Bytes = std::vector<uint8_t>;

inline void put16(Bytes& b, size_t at, uint16_t v) {
    b[at] = uint8_t(v >> 8);
    b[at + 1] = uint8_t(v);
}
inline void put32(Bytes& b, size_t at, uint32_t v) {
    put16(b, at, uint16_t(v >> 16));
    put16(b, at + 2, uint16_t(v));
}
inline uint16_t get16(const Bytes& b, size_t at) {
    return uint16_t(b[at] << 8 | b[at + 1]);
}

// Naive one's complement sum of big-endian byte pairs (odd byte padded), plus `extra`.
inline uint32_t ref_sum(const uint8_t* p, size_t len, uint32_t extra = 0) {
    uint64_t s = extra;
    for (size_t i = 0; i < len; i += 2) s += uint32_t(p[i]) << 8 | (i + 1 < len ? p[i + 1] : 0);
    while (s >> 16) s = (s & 0xffff) + (s >> 16);
    return uint32_t(s);
}
inline uint16_t ref_csum(const uint8_t* p, size_t len, uint32_t extra = 0) {
    return uint16_t(~ref_sum(p, len, extra));
}
inline uint32_t ref_pseudo(uint32_t s, uint32_t d, uint8_t proto, size_t len) {
    return (s >> 16) + (s & 0xffff) + (d >> 16) + (d & 0xffff) + proto + uint32_t(len);
}

// True when the bytes sum to 0xffff, i.e. the stored checksum in them is right.
inline bool ref_valid(const uint8_t* p, size_t len, uint32_t extra = 0) {
    return ref_sum(p, len, extra) == 0xffff;
}

struct IpFields {
    uint8_t tos = 0;
    uint16_t id = 0x1234;
    uint16_t frag = 0x4000;  // DF
    uint8_t ttl = 64;
};

// IPv4 header (no options) + l4 bytes; header checksum computed.
inline Bytes ipv4(uint8_t proto, uint32_t s, uint32_t d, const Bytes& l4, IpFields f = {}) {
    Bytes b(20);
    b[0] = 0x45;
    b[1] = f.tos;
    put16(b, 2, uint16_t(20 + l4.size()));
    put16(b, 4, f.id);
    put16(b, 6, f.frag);
    b[8] = f.ttl;
    b[9] = proto;
    put32(b, 12, s);
    put32(b, 16, d);
    put16(b, 10, ref_csum(b.data(), 20));
    b.insert(b.end(), l4.begin(), l4.end());
    return b;
}

inline Bytes tcp(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, const Bytes& payload,
                 uint32_t seq = 0x01020304, uint8_t flags = 0x18) {
    Bytes b(20);
    put16(b, 0, sp);
    put16(b, 2, dp);
    put32(b, 4, seq);
    put32(b, 8, 0x0a0b0c0d);
    b[12] = 5 << 4;
    b[13] = flags;
    put16(b, 14, 0xfaf0);
    b.insert(b.end(), payload.begin(), payload.end());
    put16(b, 16, ref_csum(b.data(), b.size(), ref_pseudo(s, d, 6, b.size())));
    return b;
}

// with_csum false: checksum 0 ("none"). A computed 0 is stored as 0xffff (RFC 768).
inline Bytes udp(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, const Bytes& payload,
                 bool with_csum = true) {
    Bytes b(8);
    put16(b, 0, sp);
    put16(b, 2, dp);
    put16(b, 4, uint16_t(8 + payload.size()));
    b.insert(b.end(), payload.begin(), payload.end());
    if (with_csum) {
        uint16_t c = ref_csum(b.data(), b.size(), ref_pseudo(s, d, 17, b.size()));
        put16(b, 6, c == 0 ? 0xffff : c);
    }
    return b;
}

inline Bytes icmp_echo(uint8_t type, uint16_t id, uint16_t seq, const Bytes& payload) {
    Bytes b(8);
    b[0] = type;
    put16(b, 4, id);
    put16(b, 6, seq);
    b.insert(b.end(), payload.begin(), payload.end());
    put16(b, 2, ref_csum(b.data(), b.size()));
    return b;
}

// An ICMP error message (header + quote), checksum computed; rest = bytes 4..7.
inline Bytes icmp_error(uint8_t type, uint8_t code, uint32_t rest, const Bytes& quote) {
    Bytes b(8);
    b[0] = type;
    b[1] = code;
    put32(b, 4, rest);
    b.insert(b.end(), quote.begin(), quote.end());
    put16(b, 2, ref_csum(b.data(), b.size()));
    return b;
}

inline Bytes head(const Bytes& b, size_t n) {
    return Bytes(b.begin(), b.begin() + n);
}

}  // namespace xvs::net::testref
