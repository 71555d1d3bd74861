// Tests for lb/admission.h: worker shares, the connection-threshold hysteresis of ipvsadm
// -x/-y (IPVS rules: overloaded at >= upper; back below lower, or below 3/4 upper when lower
// is 0) and the per-worker token bucket of the new-connection rate cap.
#include "lb/admission.h"

#include <gtest/gtest.h>

namespace xvs::lb {
namespace {

TEST(WorkerShareTest, SharesAddUpToTheTotal) {
    for (uint32_t total : {0u, 1u, 2u, 7u, 100u, 4294967295u}) {
        for (unsigned n : {1u, 2u, 3u, 16u}) {
            uint64_t sum = 0;
            for (unsigned w = 0; w < n; ++w) sum += worker_share(total, w, n);
            EXPECT_EQ(sum, total) << total << " over " << n;
        }
    }
    EXPECT_EQ(worker_share(7, 0, 3), 3u);
    EXPECT_EQ(worker_share(7, 1, 3), 2u);
    EXPECT_EQ(worker_share(7, 2, 3), 2u);
}

struct Conns {
    DestWorkerStats stats;
    void set(uint32_t active, uint32_t inactive) {
        stats.active = active;
        stats.inactive = inactive;
    }
};

TEST(DestOverloadTest, NoUpperThresholdNeverOverloads) {
    Conns c;
    c.set(1000000, 1000000);
    EXPECT_FALSE(dest_overloaded(DestLimit{}, c.stats, 0, 1));
}

TEST(DestOverloadTest, OverloadedAtUpperCountingActiveAndInactive) {
    Conns c;
    const DestLimit limit{4, 0};
    c.set(2, 1);
    EXPECT_FALSE(dest_overloaded(limit, c.stats, 0, 1));
    c.set(2, 2);
    EXPECT_TRUE(dest_overloaded(limit, c.stats, 0, 1));
    c.set(0, 5);
    EXPECT_TRUE(dest_overloaded(limit, c.stats, 0, 1));
}

TEST(DestOverloadTest, HysteresisWithLowerThreshold) {
    Conns c;
    const DestLimit limit{10, 5};
    c.set(10, 0);
    EXPECT_TRUE(dest_overloaded(limit, c.stats, 0, 1));
    for (uint32_t n : {9u, 7u, 5u}) {  // between lower and upper: stays overloaded
        c.set(n, 0);
        EXPECT_TRUE(dest_overloaded(limit, c.stats, 0, 1)) << n;
    }
    c.set(4, 0);  // below lower: back
    EXPECT_FALSE(dest_overloaded(limit, c.stats, 0, 1));
    c.set(9, 0);  // not yet at upper again
    EXPECT_FALSE(dest_overloaded(limit, c.stats, 0, 1));
    c.set(10, 0);
    EXPECT_TRUE(dest_overloaded(limit, c.stats, 0, 1));
}

TEST(DestOverloadTest, WithoutLowerBackBelowThreeQuartersOfUpper) {
    Conns c;
    const DestLimit limit{8, 0};  // back when conns * 4 < 24, i.e. conns <= 5
    c.set(8, 0);
    EXPECT_TRUE(dest_overloaded(limit, c.stats, 0, 1));
    c.set(6, 0);
    EXPECT_TRUE(dest_overloaded(limit, c.stats, 0, 1));
    c.set(5, 0);
    EXPECT_FALSE(dest_overloaded(limit, c.stats, 0, 1));
}

TEST(DestOverloadTest, EachWorkerEnforcesItsShare) {
    const DestLimit limit{5, 2};  // 2 workers: upper 3 + 2, lower 1 + 1
    Conns w0, w1;
    w0.set(2, 0);
    w1.set(2, 0);
    EXPECT_FALSE(dest_overloaded(limit, w0.stats, 0, 2));
    EXPECT_TRUE(dest_overloaded(limit, w1.stats, 1, 2));
    w1.set(1, 0);
    EXPECT_TRUE(dest_overloaded(limit, w1.stats, 1, 2));  // not below its lower share 1
    w1.set(0, 0);
    EXPECT_FALSE(dest_overloaded(limit, w1.stats, 1, 2));
}

TEST(DestOverloadTest, ZeroShareAdmitsNothingOnThatWorker) {
    const DestLimit limit{1, 0};  // 2 workers: shares 1 and 0
    Conns w1;
    EXPECT_TRUE(dest_overloaded(limit, w1.stats, 1, 2));
    Conns w0;
    EXPECT_FALSE(dest_overloaded(limit, w0.stats, 0, 2));
}

TEST(TokenBucketTest, StartsFullWithOneSecondOfBurst) {
    TokenBucket b;
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(token_take(b, 5, 1000)) << i;
    EXPECT_FALSE(token_take(b, 5, 1000));
}

TEST(TokenBucketTest, RefillsFromTheClockAtMillisecondGranularity) {
    TokenBucket b;
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(token_take(b, 2, 0));
    EXPECT_FALSE(token_take(b, 2, 499));  // 0.998 tokens
    EXPECT_TRUE(token_take(b, 2, 500));   // 1.0
    EXPECT_FALSE(token_take(b, 2, 500));
    EXPECT_TRUE(token_take(b, 2, 1000));
}

TEST(TokenBucketTest, LongIdleCapsAtCapacityWithoutOverflow) {
    TokenBucket b;
    EXPECT_TRUE(token_take(b, 4000000000u, 0));
    int taken = 0;
    while (token_take(b, 3, UINT64_MAX / 2)) ++taken;  // rate lowered to 3, huge gap
    EXPECT_EQ(taken, 3);
}

TEST(TokenBucketTest, ZeroRateAdmitsNothing) {
    TokenBucket b;
    EXPECT_FALSE(token_take(b, 0, 0));
    EXPECT_FALSE(token_take(b, 0, 100000));
}

TEST(TokenBucketTest, ClockGoingBackwardsAddsNothing) {
    TokenBucket b;
    ASSERT_TRUE(token_take(b, 1, 5000));
    EXPECT_FALSE(token_take(b, 1, 4000));
    EXPECT_FALSE(token_take(b, 1, 4999));
    EXPECT_TRUE(token_take(b, 1, 6000));
}

}  // namespace
}  // namespace xvs::lb
