// PROVISIONAL SYN-cookie implementation so the SYN proxy data path links and tests before the
// `cookie` branch lands; that branch owns this file and replaces it at merge (take theirs).
// Follows syncookie.h: SipHash-2-4 keyed hashes, a 8-bit minute counter, 8 data bits.
#include "net/syncookie.h"

#include <cstring>

namespace xvs::net {
namespace {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

uint64_t siphash24(const std::array<uint8_t, 16>& key, const uint8_t* in, size_t len) {
    uint64_t k0, k1;
    std::memcpy(&k0, key.data(), 8);
    std::memcpy(&k1, key.data() + 8, 8);
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    auto round = [&] {
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
    };
    const size_t full = len / 8 * 8;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m;
        std::memcpy(&m, in + i, 8);
        v3 ^= m; round(); round(); v0 ^= m;
    }
    uint64_t b = uint64_t(len) << 56;
    for (size_t i = 0; i < len - full; ++i) b |= uint64_t(in[full + i]) << (8 * i);
    v3 ^= b; round(); round(); v0 ^= b;
    v2 ^= 0xff;
    round(); round(); round(); round();
    return v0 ^ v1 ^ v2 ^ v3;
}

uint32_t hash_tuple(const std::array<uint8_t, 16>& key, const CookieTuple& t, uint32_t count) {
    uint8_t buf[16];
    std::memcpy(buf, &t.saddr, 4);
    std::memcpy(buf + 4, &t.daddr, 4);
    std::memcpy(buf + 8, &t.sport, 2);
    std::memcpy(buf + 10, &t.dport, 2);
    std::memcpy(buf + 12, &count, 4);
    return static_cast<uint32_t>(siphash24(key, buf, sizeof buf));
}

uint8_t encode(const CookieOptions& o) {
    return static_cast<uint8_t>((o.mss_index & 3) | ((o.wscale & 0xF) << 2) |
                                (o.sack_permitted ? 1u << 6 : 0) | (o.timestamps ? 1u << 7 : 0));
}

uint32_t make_with(const CookieKeys& k, const CookieTuple& t, uint32_t isn, uint32_t count,
                   uint32_t data) {
    return hash_tuple(k.k0, t, 0) + isn + (count << 24) +
           ((hash_tuple(k.k1, t, count) + data) & 0xFFFFFF);
}

std::optional<CookieOptions> check_with(const CookieKeys& k, const CookieTuple& t, uint32_t isn,
                                        uint32_t cookie, uint32_t count_now) {
    const uint32_t v = cookie - hash_tuple(k.k0, t, 0) - isn;
    const uint32_t age = (count_now - (v >> 24)) & 0xFF;
    if (age > kCookieMaxAge) return std::nullopt;
    const uint32_t count = count_now - age;
    const uint32_t data = (v - hash_tuple(k.k1, t, count)) & 0xFFFFFF;
    if (data > 0xFF) return std::nullopt;
    CookieOptions o;
    o.mss_index = data & 3;
    o.wscale = (data >> 2) & 0xF;
    o.sack_permitted = data & (1u << 6);
    o.timestamps = data & (1u << 7);
    if (o.wscale != kCookieWscaleNone && o.wscale > 14) return std::nullopt;
    return o;
}

}  // namespace

uint8_t cookie_mss_index(uint16_t client_mss) noexcept {
    uint8_t idx = 0;
    for (uint8_t i = 0; i < kCookieMssTable.size(); ++i)
        if (kCookieMssTable[i] <= client_mss) idx = i;
    return idx;
}

uint32_t syncookie_make(const CookieSecrets& s, const CookieTuple& t, uint32_t client_isn,
                        uint32_t count, const CookieOptions& opts) noexcept {
    return make_with(s.current, t, client_isn, count, encode(opts));
}

std::optional<CookieOptions> syncookie_check(const CookieSecrets& s, const CookieTuple& t,
                                             uint32_t client_isn, uint32_t cookie,
                                             uint32_t count_now) noexcept {
    if (auto o = check_with(s.current, t, client_isn, cookie, count_now)) return o;
    return check_with(s.previous, t, client_isn, cookie, count_now);
}

}  // namespace xvs::net
