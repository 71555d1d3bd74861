// Tests for src/ctl/log_limit.cpp: the token bucket per kind (burst, refill, the suppressed
// count reported once), kinds independent, idle kinds forgotten.
#include "ctl/log_limit.h"

#include <gtest/gtest.h>

namespace xvs::ctl {
namespace {

using std::chrono::milliseconds;
using Clock = LogRateLimit::Clock;

const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1);

unsigned written(LogRateLimit& limit, std::string_view kind, unsigned n, Clock::time_point now) {
    unsigned w = 0;
    for (unsigned i = 0; i < n; ++i) w += limit.admit(kind, now).write ? 1 : 0;
    return w;
}

TEST(LogRateLimit, BurstThenHeldBack) {
    LogRateLimit limit({.burst = 10, .refill = milliseconds(1000)});
    EXPECT_EQ(written(limit, "bad request", 50, t0), 10u);
    EXPECT_EQ(limit.suppressed_total(), 40u);
}

TEST(LogRateLimit, RefillsOnePerPeriodAndReportsTheSuppressedCountOnce) {
    LogRateLimit limit({.burst = 3, .refill = milliseconds(1000)});
    EXPECT_EQ(written(limit, "k", 10, t0), 3u);  // 7 held back
    EXPECT_FALSE(limit.admit("k", t0 + milliseconds(999)).write);  // 8
    auto v = limit.admit("k", t0 + milliseconds(1000));  // one token back
    EXPECT_TRUE(v.write);
    EXPECT_EQ(v.suppressed, 8u);
    EXPECT_FALSE(limit.admit("k", t0 + milliseconds(1500)).write);  // spent again
    v = limit.admit("k", t0 + milliseconds(2000));
    EXPECT_TRUE(v.write);
    EXPECT_EQ(v.suppressed, 1u);  // counted from the last report, not from the start
    // A long silence fills the bucket to its size, not beyond.
    EXPECT_EQ(written(limit, "k", 10, t0 + milliseconds(60000)), 3u);
}

TEST(LogRateLimit, PartialPeriodsAreKept) {
    LogRateLimit limit({.burst = 3, .refill = milliseconds(1000)});
    EXPECT_EQ(written(limit, "k", 3, t0), 3u);
    // 2.5 periods: two tokens, and the half period counts towards the next one (a bucket
    // that fills up drops the remainder: it holds at most `burst`).
    EXPECT_EQ(written(limit, "k", 5, t0 + milliseconds(2500)), 2u);
    EXPECT_EQ(written(limit, "k", 1, t0 + milliseconds(2900)), 0u);
    EXPECT_EQ(written(limit, "k", 1, t0 + milliseconds(3000)), 1u);
}

TEST(LogRateLimit, KindsAreIndependent) {
    LogRateLimit limit({.burst = 2, .refill = milliseconds(1000)});
    EXPECT_EQ(written(limit, "control socket request", 100, t0), 2u);
    EXPECT_EQ(written(limit, "health 10.0.0.2:80", 2, t0), 2u);
    EXPECT_EQ(limit.kinds(), 2u);
}

TEST(LogRateLimit, TakeResumedReportsAFloodThatStopped) {
    LogRateLimit limit({.burst = 1, .refill = milliseconds(1000)});
    EXPECT_EQ(written(limit, "a", 5, t0), 1u);
    EXPECT_EQ(written(limit, "b", 1, t0), 1u);
    EXPECT_TRUE(limit.take_resumed(t0 + milliseconds(500)).empty());  // no token yet
    auto r = limit.take_resumed(t0 + milliseconds(1000));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].kind, "a");
    EXPECT_EQ(r[0].suppressed, 4u);
    EXPECT_TRUE(limit.take_resumed(t0 + milliseconds(5000)).empty());  // reported once
    // The summary spent the token: the next line waits for the next one.
    EXPECT_FALSE(limit.admit("a", t0 + milliseconds(1000)).write);
}

TEST(LogRateLimit, IdleFullKindsAreForgottenPastTheLimit) {
    LogRateLimit limit({.burst = 1, .refill = milliseconds(1000), .max_kinds = 4});
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(limit.admit("k" + std::to_string(i), t0).write);
    EXPECT_FALSE(limit.admit("k0", t0).write);  // k0 holds a count: it must stay
    // Much later every bucket is full again; a new kind prunes those with nothing to report.
    EXPECT_TRUE(limit.admit("new", t0 + milliseconds(10000)).write);
    EXPECT_EQ(limit.kinds(), 2u);  // k0 (1 suppressed) and "new"
    auto v = limit.admit("k0", t0 + milliseconds(10000));
    EXPECT_TRUE(v.write);
    EXPECT_EQ(v.suppressed, 1u);
}

TEST(LogRateLimit, SummaryText) {
    EXPECT_EQ(log_suppressed_text(7, {.burst = 10, .refill = milliseconds(1000)}),
              "7 similar messages suppressed (at most 10 at once, then 1 per 1000 ms)");
    EXPECT_EQ(log_suppressed_text(1, {.burst = 3, .refill = milliseconds(500)}),
              "1 similar message suppressed (at most 3 at once, then 1 per 500 ms)");
}

}  // namespace
}  // namespace xvs::ctl
