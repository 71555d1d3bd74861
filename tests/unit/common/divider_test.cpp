// Divider against the division instruction: every divisor class (1, small, a timer tick,
// around 2^32, around 2^63, the largest) with the numerators where a quotient steps (k * d
// - 1, k * d) and the extremes, then random pairs.
#include "common/divider.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace xvs {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

void expect_exact(uint64_t d, uint64_t n) {
    ASSERT_EQ(Divider(d).div(n), n / d) << n << " / " << d;
    ASSERT_EQ(Divider(d).mod(n), n % d) << n << " % " << d;
}

TEST(Divider, QuotientStepsAndExtremes) {
    const std::vector<uint64_t> divisors = {1,           2,           3,          7,
                                            10,          100,         1000,       0xffffffffu,
                                            0x100000000, 0x100000001, 1ull << 63, (1ull << 63) + 1,
                                            kMax - 1,    kMax};
    for (uint64_t d : divisors) {
        EXPECT_EQ(Divider(d).divisor(), d);
        for (uint64_t n : {uint64_t{0}, uint64_t{1}, d - 1, d, d + 1, kMax - 1, kMax, kMax - d})
            expect_exact(d, n);
        // Multiples of d and one below them, spread over the whole range.
        for (uint64_t k : {uint64_t{2}, uint64_t{3}, uint64_t{1000}, uint64_t{1} << 20,
                           uint64_t{1} << 40, kMax / d}) {
            if (k == 0 || k > kMax / d) continue;
            expect_exact(d, k * d);
            expect_exact(d, k * d - 1);
        }
    }
}

TEST(Divider, RandomPairs) {
    std::mt19937_64 rng(20261206);  // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible
    for (int i = 0; i < 200000; ++i) {
        const uint64_t n = rng();
        // Divisors of every width: shifted down by 0-63 bits.
        uint64_t d = rng() >> (rng() % 64);
        if (d == 0) d = 1;
        expect_exact(d, n);
        expect_exact(d, n >> (rng() % 64));
    }
}

}  // namespace
}  // namespace xvs
