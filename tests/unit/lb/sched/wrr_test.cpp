// Tests lb/sched/wrr.cpp: IPVS's interleaved, gcd-stepped weighted round robin gives each dest
// exactly weight/gcd picks per cycle, spread out, and never a weight-0 dest.
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

TEST(SchedWrr, BuildComputesMaxAndGcdOverPositiveWeights) {
    SchedFixture wrr("wrr");
    const SchedPlan& plan = wrr.build({4, 0, 6, 10});
    EXPECT_EQ(plan.max_weight, 10);
    EXPECT_EQ(plan.gcd_weight, 2);  // the 0 weight must not pull gcd to 0 or max down
    EXPECT_EQ(plan.weights, (std::vector<int32_t>{4, 0, 6, 10}));
}

TEST(SchedWrr, BuildWithNoPositiveWeight) {
    SchedFixture wrr("wrr");
    const SchedPlan& plan = wrr.build({0, 0});
    EXPECT_EQ(plan.max_weight, 0);
    EXPECT_EQ(plan.gcd_weight, 1);
}

TEST(SchedWrr, OneToTwoIsExactOverThreeThousandPicks) {
    SchedFixture wrr("wrr");
    wrr.build({1, 2});
    const auto counts = wrr.histogram(3000);
    EXPECT_EQ(counts.size(), 2u);
    EXPECT_EQ(counts.at(0), 1000);
    EXPECT_EQ(counts.at(1), 2000);
}

TEST(SchedWrr, OneToTwoSequence) {
    SchedFixture wrr("wrr");
    wrr.build({1, 2});
    // Level 2: only B; level 1: A then B.
    EXPECT_EQ(wrr.picks(6), (std::vector<int>{1, 0, 1, 1, 0, 1}));
}

TEST(SchedWrr, FiveThreeTwoInterleavesLikeIpvs) {
    SchedFixture wrr("wrr");
    wrr.build({5, 3, 2});
    // Levels 5,4: A; 3: A B; 2: A B C; 1: A B C.
    const std::vector<int> cycle{0, 0, 0, 1, 0, 1, 2, 0, 1, 2};
    EXPECT_EQ(wrr.picks(10), cycle);
    EXPECT_EQ(wrr.picks(10), cycle);  // the next cycle repeats it exactly
}

TEST(SchedWrr, FiveThreeTwoDistribution) {
    SchedFixture wrr("wrr");
    wrr.build({5, 3, 2});
    const auto counts = wrr.histogram(1000);
    EXPECT_EQ(counts.at(0), 500);
    EXPECT_EQ(counts.at(1), 300);
    EXPECT_EQ(counts.at(2), 200);
}

TEST(SchedWrr, GcdSteppingKeepsCycleShort) {
    // 4:2 reduces to 2:1, so a cycle is 3 picks, not 6.
    SchedFixture wrr("wrr");
    wrr.build({4, 2});
    EXPECT_EQ(wrr.picks(6), (std::vector<int>{0, 0, 1, 0, 0, 1}));
}

TEST(SchedWrr, EqualWeightsAreRoundRobin) {
    SchedFixture wrr("wrr");
    wrr.build({3, 3, 3});
    EXPECT_EQ(wrr.picks(6), (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

TEST(SchedWrr, WeightZeroNeverPicked) {
    SchedFixture wrr("wrr");
    wrr.build({0, 2, 0, 1, 0});
    const auto counts = wrr.histogram(300);
    EXPECT_EQ(counts.count(0), 0u);
    EXPECT_EQ(counts.count(2), 0u);
    EXPECT_EQ(counts.count(4), 0u);
    EXPECT_EQ(counts.at(1), 200);
    EXPECT_EQ(counts.at(3), 100);
}

TEST(SchedWrr, AllZeroOrEmptyGivesNull) {
    SchedFixture zero("wrr");
    zero.build({0, 0, 0});
    EXPECT_EQ(zero.pick(), nullptr);
    EXPECT_EQ(zero.pick(), nullptr);

    SchedFixture empty("wrr");
    empty.build({});
    EXPECT_EQ(empty.pick(), nullptr);
}

TEST(SchedWrr, RebuiltPlanWithRemovedDestAndStaleCursor) {
    SchedFixture wrr("wrr");
    wrr.build({1, 1, 1, 4});
    wrr.picks(3);  // level 4: D; level 3: D; level 2: D -> cursor sits at the end, level 2
    wrr.dest(3).removed = true;
    wrr.rebuild();  // three dests of weight 1: max 1, and the cursor index is past the end
    const auto counts = wrr.histogram(300);
    EXPECT_EQ(counts.count(3), 0u);
    EXPECT_EQ(counts.count(-1), 0u);  // never nullptr while dests remain
    EXPECT_EQ(counts.at(0), 100);
    EXPECT_EQ(counts.at(1), 100);
    EXPECT_EQ(counts.at(2), 100);
}

TEST(SchedWrr, StaleCurrentWeightAboveNewMaxResets) {
    SchedFixture wrr("wrr");
    wrr.build({10, 1});
    EXPECT_EQ(wrr.index_of(wrr.pick()), 0);  // level 10, cursor at index 1
    wrr.dest(0).weight = 1;
    wrr.rebuild();  // max drops to 1 while the cursor still holds level 10
    // Without a reset, level 10 would match nobody and the first lap would be wasted or, worse,
    // resolve differently; with it the new plan starts from its own first cycle.
    EXPECT_EQ(wrr.picks(4), (std::vector<int>{0, 1, 0, 1}));
}

TEST(SchedWrr, CorruptCursorNeverYieldsWeightZero) {
    // A cursor whose level is <= 0 mid-round must not let "weight >= level" match weight 0.
    SchedFixture wrr("wrr");
    wrr.build({1, 0, 1});
    wrr.cursor().index = 1;
    wrr.cursor().current_weight = 0;
    EXPECT_NE(wrr.index_of(wrr.pick()), 1);
    wrr.cursor().index = 1;
    wrr.cursor().current_weight = -5;
    EXPECT_NE(wrr.index_of(wrr.pick()), 1);
}

TEST(SchedWrr, CallerSuppliedWeightsWinOverDestWeight) {
    SchedFixture wrr("wrr");
    wrr.build({1, 1});
    SchedPlan& plan = wrr.plan();
    plan.weights = {2, 1};  // e.g. the control plane snapshotted weights itself
    wrr.sched()->build(plan);
    EXPECT_EQ(plan.max_weight, 2);
    EXPECT_EQ(wrr.picks(3), (std::vector<int>{0, 0, 1}));
}

}  // namespace
}  // namespace xvs::lb
