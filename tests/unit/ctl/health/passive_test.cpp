// Tests for src/ctl/health/passive.h: the passive-check decision over chosen counter sequences
// (baseline, window expiry, successes outweighing failures or not masking them, 32-bit
// wrap, reset).
#include "ctl/health/passive.h"

#include <gtest/gtest.h>

namespace xvs::ctl::health {
namespace {

PassiveConf conf(uint32_t failures, uint32_t window_ms) {
    PassiveConf c;
    c.failures = failures;
    c.window_ms = window_ms;
    return c;
}

TEST(PassiveWindow, FirstReadingIsTheBaseline) {
    PassiveWindow w;
    const auto c = conf(3, 2000);
    EXPECT_FALSE(w.observe(0, 100, 1000, c));  // old totals count nothing
    EXPECT_EQ(w.failures(), 0u);
    EXPECT_FALSE(w.observe(100, 100, 1002, c));
    EXPECT_EQ(w.failures(), 2u);
    EXPECT_TRUE(w.observe(200, 100, 1003, c));  // the third failure trips it
}

TEST(PassiveWindow, FailuresOlderThanTheWindowAreForgotten) {
    PassiveWindow w;
    const auto c = conf(3, 1000);
    w.observe(0, 0, 0, c);
    EXPECT_FALSE(w.observe(100, 0, 2, c));
    EXPECT_FALSE(w.observe(1050, 0, 2, c));  // nothing new
    EXPECT_EQ(w.failures(), 2u);
    EXPECT_FALSE(w.observe(1100, 0, 3, c));  // the two at t=100 left the window at 1100
    EXPECT_EQ(w.failures(), 1u);
    EXPECT_FALSE(w.observe(1200, 0, 4, c));
    EXPECT_TRUE(w.observe(1300, 0, 5, c));  // three within 1 s
}

TEST(PassiveWindow, SuccessesOutnumberingFailuresKeepItUp) {
    PassiveWindow w;
    const auto c = conf(3, 2000);
    w.observe(0, 0, 0, c);
    EXPECT_FALSE(w.observe(100, 10, 4, c));  // 4 failures, but 10 conns accepted
    EXPECT_FALSE(w.observe(200, 10, 9, c));  // 9 vs 10
    EXPECT_TRUE(w.observe(300, 10, 11, c));  // 11 vs 10: most now fail
}

TEST(PassiveWindow, SuccessesBeforeTheFirstFailureDoNotMaskIt) {
    PassiveWindow w;
    const auto c = conf(3, 2000);
    w.observe(0, 0, 0, c);
    EXPECT_FALSE(w.observe(100, 50, 0, c));  // busy and healthy
    EXPECT_FALSE(w.observe(200, 50, 2, c));  // dies: 2 failures, no success since
    EXPECT_EQ(w.successes(), 0u);
    EXPECT_TRUE(w.observe(300, 50, 3, c));  // the 50 earlier successes do not hold it up
}

TEST(PassiveWindow, TotalsWrapAt32Bits) {
    PassiveWindow w;
    const auto c = conf(5, 2000);
    w.observe(0, 0, 0xffff'fffe, c);
    EXPECT_FALSE(w.observe(100, 0, 2, c));  // +4 across the wrap
    EXPECT_EQ(w.failures(), 4u);
    EXPECT_TRUE(w.observe(200, 0, 3, c));
}

TEST(PassiveWindow, ResetStartsANewBaseline) {
    PassiveWindow w;
    const auto c = conf(2, 2000);
    w.observe(0, 0, 0, c);
    EXPECT_FALSE(w.observe(100, 0, 1, c));
    w.reset();
    EXPECT_FALSE(w.observe(200, 0, 50, c));  // baseline again: the 49 in between are not seen
    EXPECT_EQ(w.failures(), 0u);
    EXPECT_FALSE(w.observe(300, 0, 51, c));
    EXPECT_TRUE(w.observe(400, 0, 52, c));
}

}  // namespace
}  // namespace xvs::ctl::health
