// Tests lb/sched/wrr.cpp: IPVS's interleaved, gcd-stepped weighted round robin gives each dest
// exactly weight/gcd picks per cycle, spread out, and never a weight-0 dest.
#include <gtest/gtest.h>

#include <random>
#include <vector>

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

// build() keeps the cycle's picks (position, level) in plan.table; pick() takes them from
// there while the cursor is in step with it.
TEST(SchedWrr, BuildKeepsTheCycleAsATable) {
    SchedFixture wrr("wrr");
    const SchedPlan& plan = wrr.build({5, 0, 3, 2});
    // Levels 5, 4: A; 3: A B; 2: A B C; 1: A B C (B, C at positions 2, 3). Each entry: its
    // position and level, then the cursor (index, level) the entry before it leaves.
    EXPECT_EQ(plan.table, (std::vector<uint32_t>{0, 5, 0, 1,  // after the last entry (3, 1)
                                                 0, 4, 1, 5,  //
                                                 0, 3, 1, 4,  //
                                                 2, 3, 1, 3,  //
                                                 0, 2, 3, 3,  //
                                                 2, 2, 1, 2,  //
                                                 3, 2, 3, 2,  //
                                                 0, 1, 0, 2,  // position 3 + 1 wraps to 0
                                                 2, 1, 1, 1,  //
                                                 3, 1, 3, 1}));
    EXPECT_EQ(wrr.picks(10), (std::vector<int>{0, 0, 0, 2, 0, 2, 3, 0, 2, 3}));
    EXPECT_EQ(wrr.cursor().seq, 0u);  // a whole cycle: back at the first entry
    EXPECT_EQ(wrr.picks(3), (std::vector<int>{0, 0, 0}));
    EXPECT_EQ(wrr.cursor().seq, 3u);
}

TEST(SchedWrr, NoTableAboveItsCapAndTheWalkStillPicks) {
    SchedFixture at_cap("wrr");
    EXPECT_EQ(at_cap.build({4095, 1}).table.size(), 4u * 4096);  // 4,096 picks: the most it holds
    SchedFixture wrr("wrr");
    // 4,096 + 1 picks a cycle: more than the table holds.
    const SchedPlan& plan = wrr.build({4096, 1});
    EXPECT_TRUE(plan.table.empty());
    const auto counts = wrr.histogram(size_t{2} * 4097);
    EXPECT_EQ(counts.at(0), 2 * 4096);
    EXPECT_EQ(counts.at(1), 2);
}

// The table and the walk give the same picks, whatever the cursor and the dests do: two
// fixtures with the same dests, one whose plan has its table removed (every pick walks), fed
// the same random weight sets, passed-over dests (sched_skip) and plan rebuilds.
TEST(SchedWrr, TableAndWalkPickTheSameUnderPassOversAndRebuilds) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(20261207);
    unsigned table_picks = 0;
    for (int round = 0; round < 200; ++round) {
        SchedFixture fast("wrr"), walk("wrr");
        const size_t n = 1 + rng() % 6;
        for (size_t i = 0; i < n; ++i) {
            const int32_t weight = static_cast<int32_t>(rng() % 4 == 0 ? 0 : 1 + rng() % 12);
            fast.add(weight);
            walk.add(weight);
        }
        fast.rebuild();
        walk.rebuild();
        walk.plan().table.clear();
        for (int step = 0; step < 300; ++step) {
            const unsigned r = rng() % 100;
            if (r < 8) {  // pass a dest over, or stop passing it over
                const size_t i = rng() % n;
                const bool skip = !fast.dest(i).stats[0].sched_skip;
                fast.dest(i).stats[0].sched_skip = skip;
                walk.dest(i).stats[0].sched_skip = skip;
            } else if (r < 10) {  // a new weight, and a rebuilt plan under the old cursor
                const size_t i = rng() % n;
                const auto weight = static_cast<int32_t>(rng() % 12);
                fast.dest(i).weight = weight;
                walk.dest(i).weight = weight;
                fast.rebuild();
                walk.rebuild();
                walk.plan().table.clear();
            }
            const uint32_t seq = fast.cursor().seq;
            const int want = walk.index_of(walk.pick());
            const int got = fast.index_of(fast.pick());
            ASSERT_EQ(got, want) << "round " << round << " step " << step;
            ASSERT_EQ(fast.cursor().index, walk.cursor().index);
            ASSERT_EQ(fast.cursor().current_weight, walk.cursor().current_weight);
            table_picks += !fast.plan().table.empty() && fast.cursor().seq != seq;
        }
    }
    EXPECT_GT(table_picks, 20000u);  // most picks came from the table
}

}  // namespace
}  // namespace xvs::lb
