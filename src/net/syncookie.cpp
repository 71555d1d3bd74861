// SYN cookie make/check (syncookie.h has the layout). The keyed hash is libsodium's
// SipHash-2-4 (crypto_shorthash_siphash24): maintained and vetted. Measured (bench_syncookie,
// CPU time on the shared 2-core CI box): 28 ns per 16-byte hash against 16 ns for a
// hand-inlined two-word SipHash; a make costs ~36 ns and a check ~34-40 ns (one hash each),
// i.e. 25-29 M cookies/s per core, well above what one core moves in packets. Not worth
// owning crypto code for ~12 ns per SYN; bench_syncookie keeps the inline variant as the
// yardstick.
#include "net/syncookie.h"

#include <sodium/crypto_shorthash_siphash24.h>

#include <bit>
#include <cstring>

namespace xvs::net {

namespace {

constexpr unsigned kCountShift = 30;  // the count's low 2 bits: bits 30-31
constexpr unsigned kDataShift = 22;   // the data: bits 22-29
constexpr uint32_t kMacMask = (1u << kDataShift) - 1;
// The count's low bits must tell the last kCookieMaxAge + 1 counts apart.
static_assert(kCookieMaxAge < (1u << (32 - kCountShift)));

// The hashed words: addresses (1 or 4 words each), sport << 16 | dport (network order, as
// stored), then the count and the data. Written straight into the caller's array (no
// zero-fill, no copy): only the first (n + 2) words are hashed, and all of them are written.
constexpr size_t kHashWordsMax = 11;

// Fills the tuple words and returns how many: 3 (IPv4) or 9 (IPv6).
unsigned hash_tuple_words(uint32_t (&words)[kHashWordsMax], const CookieTuple& t) noexcept {
    if (!t.v6) {
        words[0] = t.saddr;
        words[1] = t.daddr;
        words[2] = uint32_t(t.sport) << 16 | t.dport;
        return 3;
    }
    std::memcpy(words, t.saddr6.data(), 16);
    std::memcpy(words + 4, t.daddr6.data(), 16);
    words[8] = uint32_t(t.sport) << 16 | t.dport;
    return 9;
}

// The cookie of (tuple, count, data) for this client ISN.
uint32_t cookie_of(const CookieKeys& keys, const CookieTuple& t, uint32_t count, uint32_t data,
                   uint32_t client_isn) noexcept {
    uint32_t words[kHashWordsMax];
    const unsigned n = hash_tuple_words(words, t);
    words[n] = count;
    words[n + 1] = data;
    const auto h = static_cast<uint32_t>(siphash24(keys.k0, words, (n + 2) * sizeof(uint32_t)));
    return count << kCountShift | data << kDataShift | ((h + client_isn) & kMacMask);
}

const CookieKeys& keys_for(const CookieSecrets& s, uint32_t count) noexcept {
    return count >= s.current_since ? s.current : s.previous;
}

uint32_t data_encode(const CookieOptions& o) noexcept {
    uint32_t mss = o.mss_index < kCookieMssTable.size() ? o.mss_index : kCookieMssTable.size() - 1;
    // RFC 7323 2.3: a shift above 14 is used as 14.
    uint32_t ws =
        o.wscale == kCookieWscaleNone ? kCookieWscaleNone : (o.wscale > 14 ? 14 : o.wscale);
    return mss | ws << 2 | uint32_t(o.sack_permitted) << 6 | uint32_t(o.timestamps) << 7;
}

// The inverse of data_encode. A verified cookie's data is data_encode's (the MAC covers it),
// and every 8-bit value decodes to valid options: 2 bits index the 4-entry MSS table, and a
// 4-bit wscale is 0-14 or kCookieWscaleNone.
CookieOptions data_decode(uint32_t data) noexcept {
    static_assert(kCookieMssTable.size() == 4 && kCookieWscaleNone == 0xF);
    return CookieOptions{uint8_t(data & 0x3), uint8_t(data >> 2 & 0xF), bool(data >> 6 & 1),
                         bool(data >> 7 & 1)};
}

}  // namespace

uint64_t siphash24(const std::array<uint8_t, 16>& key, const void* msg, size_t len) noexcept {
    unsigned char out[crypto_shorthash_siphash24_BYTES];
    static_assert(sizeof out == sizeof(uint64_t));
    crypto_shorthash_siphash24(out, static_cast<const unsigned char*>(msg), len, key.data());
    // The output is little-endian, as is the host: one load.
    static_assert(std::endian::native == std::endian::little);
    uint64_t v;
    std::memcpy(&v, out, sizeof v);
    return v;
}

uint8_t cookie_mss_index(uint16_t client_mss) noexcept {
    // The table is ascending, so the index is the number of entries above the first that are
    // <= mss: three compares, no loop and no branch.
    static_assert(kCookieMssTable.size() == 4);
    static_assert(kCookieMssTable[0] < kCookieMssTable[1] &&
                  kCookieMssTable[1] < kCookieMssTable[2] &&
                  kCookieMssTable[2] < kCookieMssTable[3]);
    return static_cast<uint8_t>((client_mss >= kCookieMssTable[1]) +
                                (client_mss >= kCookieMssTable[2]) +
                                (client_mss >= kCookieMssTable[3]));
}

uint32_t syncookie_make(const CookieSecrets& secrets, const CookieTuple& t, uint32_t client_isn,
                        uint32_t count, const CookieOptions& opts) noexcept {
    return cookie_of(keys_for(secrets, count), t, count, data_encode(opts), client_isn);
}

std::optional<CookieOptions> syncookie_check(const CookieSecrets& secrets, const CookieTuple& t,
                                             uint32_t client_isn, uint32_t cookie,
                                             uint32_t count_now) noexcept {
    // The one count of the last kCookieMaxAge + 1 with the cookie's low count bits (modulo
    // 2^32, so the counter may wrap); a distance beyond the maximum age is expired, or from
    // the future.
    constexpr uint32_t kLowMask = (1u << (32 - kCountShift)) - 1;
    const uint32_t age = (count_now - (cookie >> kCountShift)) & kLowMask;
    if (age > kCookieMaxAge) return std::nullopt;
    const uint32_t count = count_now - age;
    const uint32_t data = cookie >> kDataShift & 0xFF;
    if (cookie_of(keys_for(secrets, count), t, count, data, client_isn) != cookie)
        return std::nullopt;
    return data_decode(data);
}

}  // namespace xvs::net
