// Tests lb/sched/twos.cpp: two weighted random draws, the less loaded (overhead / weight) wins.
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

TEST(SchedTwos, LessLoadedOfTwoDrawsWins) {
    SchedFixture twos("twos");
    twos.build({1, 1});
    twos.dest(0).stats[0].active = 10;
    // dest 0 wins only when both draws are dest 0: about a quarter of the picks.
    auto counts = twos.histogram(40000);
    EXPECT_NEAR(counts[0] / 40000.0, 0.25, 0.02);
    EXPECT_NEAR(counts[1] / 40000.0, 0.75, 0.02);
}

TEST(SchedTwos, LevelsLoadBetterThanOneRandomChoice) {
    // 8 equal dests, conns stay open: after 8000 picks two choices keep every dest within a few
    // conns of 1000 (one random choice would spread them by ~+-90).
    SchedFixture twos("twos");
    twos.build({1, 1, 1, 1, 1, 1, 1, 1});
    for (int i = 0; i < 8000; ++i) ++twos.pick()->stats[0].active;
    for (size_t d = 0; d < 8; ++d) EXPECT_NEAR(twos.dest(d).stats[0].active, 1000.0, 10.0) << d;
}

TEST(SchedTwos, WorkersDrawIndependentlyAndNeverPickUnusable) {
    SchedFixture twos("twos");
    twos.build({0, 1, 1});
    for (int index : twos.picks(1000, 1)) EXPECT_NE(index, 0);
    SchedFixture none("twos");
    none.build({0, 0});
    EXPECT_EQ(none.pick(), nullptr);
}

}  // namespace
}  // namespace xvs::lb
