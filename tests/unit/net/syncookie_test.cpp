// Tests for src/net/syncookie.cpp: SipHash-2-4 against the paper's vectors, the MSS table,
// round trips of every option combination, expiry and counter wrap, forged and shifted ACKs,
// other tuples, and key rotation (previous keys valid only for counters before current_since).
#include "net/syncookie.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace xvs::net {
namespace {

// SipHash paper (Aumasson, Bernstein 2012), appendix / reference vectors.h: key 00 01 .. 0f,
// message 00 01 .. (len-1), 64-bit output as little-endian bytes; lengths 0..15.
constexpr uint8_t kSipVectors[16][8] = {
    {0x31, 0x0e, 0x0e, 0xdd, 0x47, 0xdb, 0x6f, 0x72},
    {0xfd, 0x67, 0xdc, 0x93, 0xc5, 0x39, 0xf8, 0x74},
    {0x5a, 0x4f, 0xa9, 0xd9, 0x09, 0x80, 0x6c, 0x0d},
    {0x2d, 0x7e, 0xfb, 0xd7, 0x96, 0x66, 0x67, 0x85},
    {0xb7, 0x87, 0x71, 0x27, 0xe0, 0x94, 0x27, 0xcf},
    {0x8d, 0xa6, 0x99, 0xcd, 0x64, 0x55, 0x76, 0x18},
    {0xce, 0xe3, 0xfe, 0x58, 0x6e, 0x46, 0xc9, 0xcb},
    {0x37, 0xd1, 0x01, 0x8b, 0xf5, 0x00, 0x02, 0xab},
    {0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93},
    {0xb0, 0xe4, 0xa9, 0x0b, 0xdf, 0x82, 0x00, 0x9e},
    {0xf3, 0xb9, 0xdd, 0x94, 0xc5, 0xbb, 0x5d, 0x7a},
    {0xa7, 0xad, 0x6b, 0x22, 0x46, 0x2f, 0xb3, 0xf4},
    {0xfb, 0xe5, 0x0e, 0x86, 0xbc, 0x8f, 0x1e, 0x75},
    {0x90, 0x3d, 0x84, 0xc0, 0x27, 0x56, 0xea, 0x14},
    {0xee, 0xf2, 0x7a, 0x8e, 0x90, 0xca, 0x23, 0xf7},
    {0xe5, 0x45, 0xbe, 0x49, 0x61, 0xca, 0x29, 0xa1},
};

TEST(SipHash, PaperVectors) {
    std::array<uint8_t, 16> key;
    for (size_t i = 0; i < key.size(); ++i) key[i] = uint8_t(i);
    uint8_t msg[16];
    for (size_t i = 0; i < sizeof msg; ++i) msg[i] = uint8_t(i);
    for (size_t len = 0; len < 16; ++len) {
        uint64_t want = 0;
        for (int b = 7; b >= 0; --b) want = want << 8 | kSipVectors[len][b];
        EXPECT_EQ(siphash24(key, msg, len), want) << "length " << len;
    }
}

CookieKeys keys_from(uint32_t seed) {
    std::mt19937 rng(seed);
    CookieKeys k;
    for (auto& b : k.k0) b = uint8_t(rng());
    return k;
}

CookieSecrets secrets_fixed() {
    CookieSecrets s;
    s.current = keys_from(1);
    s.previous = keys_from(2);
    s.current_since = 0;
    return s;
}

// Network-order addresses/ports as they sit in the headers (the values are arbitrary bits).
const CookieTuple kTuples[] = {
    {0x0a00000a, 0x640000c0, 0x3930, 0x5000},  // 10.0.0.10:12345 -> 192.0.0.100:80
    {0x01020304, 0x05060708, 0xffff, 0x0100},
    {0x00000000, 0xffffffff, 0x0000, 0xffff},
};

std::vector<CookieOptions> all_options() {
    std::vector<CookieOptions> v;
    for (uint8_t mss = 0; mss < kCookieMssTable.size(); ++mss)
        for (int ws = -1; ws <= 14; ++ws)
            for (bool sack : {false, true})
                for (bool ts : {false, true})
                    v.push_back(
                        CookieOptions{mss, ws < 0 ? kCookieWscaleNone : uint8_t(ws), sack, ts});
    return v;
}

TEST(SynCookie, MssIndexBoundaries) {
    EXPECT_EQ(cookie_mss_index(0), 0);
    EXPECT_EQ(cookie_mss_index(535), 0);
    EXPECT_EQ(cookie_mss_index(536), 0);
    EXPECT_EQ(cookie_mss_index(1299), 0);
    EXPECT_EQ(cookie_mss_index(1300), 1);
    EXPECT_EQ(cookie_mss_index(1439), 1);
    EXPECT_EQ(cookie_mss_index(1440), 2);
    EXPECT_EQ(cookie_mss_index(1459), 2);
    EXPECT_EQ(cookie_mss_index(1460), 3);
    EXPECT_EQ(cookie_mss_index(9000), 3);
    EXPECT_EQ(cookie_mss_index(65535), 3);
}

TEST(SynCookie, RoundTripEveryOption) {
    const CookieSecrets s = secrets_fixed();
    const auto opts = all_options();
    ASSERT_EQ(opts.size(), 4u * 16 * 2 * 2);
    const uint32_t counts[] = {0, 1, 255, 256, 0x12345678, 0xFFFFFFFF};
    const uint32_t isns[] = {0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0xDEADBEEF};
    size_t checked = 0;
    for (const auto& t : kTuples)
        for (uint32_t count : counts)
            for (uint32_t isn : isns)
                for (const auto& o : opts) {
                    uint32_t c = syncookie_make(s, t, isn, count, o);
                    for (uint32_t age = 0; age <= kCookieMaxAge; ++age) {
                        auto got = syncookie_check(s, t, isn, c, count + age);
                        ASSERT_TRUE(got) << "count " << count << " isn " << isn << " age " << age;
                        ASSERT_EQ(*got, o);
                        ++checked;
                    }
                }
    EXPECT_EQ(checked, 3u * 6 * 5 * 256 * (kCookieMaxAge + 1));
}

TEST(SynCookie, OutOfRangeOptionsAreClamped) {
    const CookieSecrets s = secrets_fixed();
    const CookieTuple& t = kTuples[0];
    uint32_t c = syncookie_make(s, t, 7, 100, CookieOptions{9, 20, true, false});
    auto got = syncookie_check(s, t, 7, c, 100);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->mss_index, kCookieMssTable.size() - 1);
    EXPECT_EQ(got->wscale, 14);  // RFC 7323: a shift above 14 counts as 14
}

TEST(SynCookie, ExpiryAndFuture) {
    const CookieSecrets s = secrets_fixed();
    const CookieTuple& t = kTuples[0];
    const CookieOptions o{3, 7, true, true};
    const uint32_t count = 5000;
    const uint32_t c = syncookie_make(s, t, 42, count, o);
    for (uint32_t age = 0; age <= kCookieMaxAge; ++age)
        EXPECT_TRUE(syncookie_check(s, t, 42, c, count + age)) << "age " << age;
    EXPECT_FALSE(syncookie_check(s, t, 42, c, count + kCookieMaxAge + 1));
    EXPECT_FALSE(syncookie_check(s, t, 42, c, count + 100));
    EXPECT_FALSE(syncookie_check(s, t, 42, c, count + 256));  // same low 8 bits, much older
    EXPECT_FALSE(syncookie_check(s, t, 42, c, count - 1));    // from the future
    EXPECT_FALSE(syncookie_check(s, t, 42, c, count - 2));
}

TEST(SynCookie, CounterWrapsAt2Pow32) {
    const CookieSecrets s = secrets_fixed();
    const CookieTuple& t = kTuples[1];
    const CookieOptions o{1, kCookieWscaleNone, false, true};
    const uint32_t c = syncookie_make(s, t, 99, 0xFFFFFFFF, o);
    EXPECT_EQ(syncookie_check(s, t, 99, c, 0xFFFFFFFF), o);
    EXPECT_EQ(syncookie_check(s, t, 99, c, 0), o);
    EXPECT_EQ(syncookie_check(s, t, 99, c, 1), o);
    EXPECT_FALSE(syncookie_check(s, t, 99, c, 2));
    EXPECT_FALSE(syncookie_check(s, t, 99, c, 0xFFFFFFFE));  // future
    const uint32_t c2 = syncookie_make(s, t, 99, 0xFFFFFFFE, o);
    EXPECT_EQ(syncookie_check(s, t, 99, c2, 0), o);
    EXPECT_FALSE(syncookie_check(s, t, 99, c2, 1));
}

// A random 32-bit value passes only if its top 2 bits land on one of the kCookieMaxAge + 1
// valid counters (3/4) and its 22 MAC bits match (2^-22): p = 3/2^24 ~ 1.8e-7 per guess (each
// counter has one key set), so 1e6 guesses expect ~0.18 acceptances; we allow 3
// (Poisson tail P(>= 4) ~ 5e-5; the seed is fixed, so the test is deterministic).
TEST(SynCookie, ForgedCookiesAlmostNeverPass) {
    CookieSecrets s = secrets_fixed();
    const uint32_t now = 777;
    s.current_since = now - 1;  // both key sets in play: ages 0-1 current, age 2 previous
    const CookieTuple& t = kTuples[0];
    std::mt19937 rng(12345);
    unsigned accepted = 0;
    for (int i = 0; i < 1'000'000; ++i)
        if (syncookie_check(s, t, 1000, uint32_t(rng()), now)) ++accepted;
    EXPECT_LE(accepted, 3u);
}

TEST(SynCookie, ShiftedAckRejected) {
    const CookieSecrets s = secrets_fixed();
    const auto opts = all_options();
    for (const auto& t : kTuples)
        for (const auto& o : opts) {
            const uint32_t isn = 0x10203040, count = 321;
            const uint32_t c = syncookie_make(s, t, isn, count, o);
            ASSERT_TRUE(syncookie_check(s, t, isn, c, count));
            for (int64_t d : {-1, 1, -2, 2, 255, -256, 65535, -65535}) {
                EXPECT_FALSE(syncookie_check(s, t, isn, c + uint32_t(d), count)) << "cookie " << d;
                EXPECT_FALSE(syncookie_check(s, t, isn + uint32_t(d), c, count)) << "isn " << d;
            }
        }
}

TEST(SynCookie, OtherTupleRejected) {
    const CookieSecrets s = secrets_fixed();
    const CookieOptions o{2, 9, true, false};
    const uint32_t isn = 555, count = 1234;
    for (const auto& t : kTuples) {
        const uint32_t c = syncookie_make(s, t, isn, count, o);
        ASSERT_TRUE(syncookie_check(s, t, isn, c, count));
        for (uint32_t bit : {1u, 0x100u, 0x80000000u}) {
            CookieTuple u = t;
            u.saddr ^= bit;
            EXPECT_FALSE(syncookie_check(s, u, isn, c, count)) << "saddr";
            u = t;
            u.daddr ^= bit;
            EXPECT_FALSE(syncookie_check(s, u, isn, c, count)) << "daddr";
            u = t;
            u.sport ^= uint16_t(bit | bit >> 16);
            EXPECT_FALSE(syncookie_check(s, u, isn, c, count)) << "sport";
            u = t;
            u.dport ^= uint16_t(bit | bit >> 16);
            EXPECT_FALSE(syncookie_check(s, u, isn, c, count)) << "dport";
        }
        CookieTuple swapped{t.daddr, t.saddr, t.dport, t.sport};
        if (swapped.saddr != t.saddr || swapped.sport != t.sport) {
            EXPECT_FALSE(syncookie_check(s, swapped, isn, c, count)) << "reversed direction";
        }
    }
}

TEST(SynCookie, KeysMatter) {
    const CookieSecrets s = secrets_fixed();
    const CookieTuple& t = kTuples[0];
    const CookieOptions o{0, kCookieWscaleNone, false, false};
    const uint32_t c = syncookie_make(s, t, 1, 50, o);
    CookieSecrets other = s;
    other.current.k0[0] ^= 1;
    EXPECT_FALSE(syncookie_check(other, t, 1, c, 50)) << "key byte 0 changed";
    other = s;
    other.current.k0[15] ^= 0x80;
    EXPECT_FALSE(syncookie_check(other, t, 1, c, 50)) << "key byte 15 changed";
}

TEST(SynCookie, RotationKeepsPreviousKeysForEarlierCounters) {
    CookieSecrets before = secrets_fixed();
    before.current_since = 0;
    const CookieTuple& t = kTuples[2];
    const CookieOptions o{3, 14, true, true};
    const uint32_t rotate_at = 10'000;  // count_now at rotation; new keys from rotate_at + 1
    const uint32_t minted_before = syncookie_make(before, t, 9, rotate_at, o);
    const uint32_t minted_older = syncookie_make(before, t, 9, rotate_at - 1, o);

    CookieSecrets after;
    after.previous = before.current;
    after.current = keys_from(3);
    after.current_since = rotate_at + 1;
    // Minted before the rotation at counts < current_since: still valid within their lifetime.
    EXPECT_EQ(syncookie_check(after, t, 9, minted_before, rotate_at), o);
    EXPECT_EQ(syncookie_check(after, t, 9, minted_before, rotate_at + 2), o);
    EXPECT_FALSE(syncookie_check(after, t, 9, minted_before, rotate_at + 3));
    EXPECT_EQ(syncookie_check(after, t, 9, minted_older, rotate_at + 1), o);
    // A worker that still minted with the old keys at a count >= current_since: rejected.
    const uint32_t stale = syncookie_make(before, t, 9, rotate_at + 1, o);
    EXPECT_FALSE(syncookie_check(after, t, 9, stale, rotate_at + 1));
    // make() itself picks the key set by count.
    EXPECT_EQ(syncookie_make(after, t, 9, rotate_at, o), minted_before);
    const uint32_t fresh = syncookie_make(after, t, 9, rotate_at + 1, o);
    EXPECT_NE(fresh, stale);
    EXPECT_EQ(syncookie_check(after, t, 9, fresh, rotate_at + 2), o);
    // The new keys do not validate a cookie claimed for a count before current_since.
    CookieSecrets new_only = after;
    new_only.previous = keys_from(4);
    EXPECT_FALSE(syncookie_check(new_only, t, 9, minted_before, rotate_at + 1));
}

}  // namespace
}  // namespace xvs::net
