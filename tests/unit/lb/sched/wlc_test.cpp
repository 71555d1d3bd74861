// Tests lb/sched/wlc.cpp: least (active*256 + inactive) / weight using the calling worker's
// counters, ties to the first dest in plan order, weight-0 dests never picked.
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

TEST(SchedWlc, EqualWeightsAndCountsPickFirst) {
    SchedFixture wlc("wlc");
    wlc.build({1, 1, 1});
    EXPECT_EQ(wlc.picks(3), (std::vector<int>{0, 0, 0}));  // counts unchanged: still a tie
}

TEST(SchedWlc, FollowsActiveCounts) {
    SchedFixture wlc("wlc");
    wlc.build({1, 1, 1});
    wlc.dest(0).stats[0].active = 5;
    wlc.dest(1).stats[0].active = 2;
    wlc.dest(2).stats[0].active = 3;
    EXPECT_EQ(wlc.index_of(wlc.pick()), 1);
    wlc.dest(1).stats[0].active = 4;
    EXPECT_EQ(wlc.index_of(wlc.pick()), 2);
}

TEST(SchedWlc, ActiveOutweighsInactive) {
    SchedFixture wlc("wlc");
    wlc.build({1, 1});
    wlc.dest(0).stats[0].active = 1;   // overhead 256
    wlc.dest(1).stats[0].inactive = 255;  // overhead 255
    EXPECT_EQ(wlc.index_of(wlc.pick()), 1);
    wlc.dest(1).stats[0].inactive = 257;  // overhead 257
    EXPECT_EQ(wlc.index_of(wlc.pick()), 0);
}

TEST(SchedWlc, DividesByWeight) {
    SchedFixture wlc("wlc");
    wlc.build({1, 3});
    wlc.dest(0).stats[0].active = 1;  // 256 / 1
    wlc.dest(1).stats[0].active = 2;  // 512 / 3 is less
    EXPECT_EQ(wlc.index_of(wlc.pick()), 1);
    wlc.dest(1).stats[0].active = 4;  // 1024 / 3 is more
    EXPECT_EQ(wlc.index_of(wlc.pick()), 0);
}

TEST(SchedWlc, WeightedTieGoesToFirstInPlanOrder) {
    // 2*256/2 == 1*256/1: a tie, so the first dest wins whichever that is.
    SchedFixture heavy_first("wlc");
    heavy_first.build({2, 1});
    heavy_first.dest(0).stats[0].active = 2;
    heavy_first.dest(1).stats[0].active = 1;
    EXPECT_EQ(heavy_first.index_of(heavy_first.pick()), 0);

    SchedFixture light_first("wlc");
    light_first.build({1, 2});
    light_first.dest(0).stats[0].active = 1;
    light_first.dest(1).stats[0].active = 2;
    EXPECT_EQ(light_first.index_of(light_first.pick()), 0);
}

TEST(SchedWlc, ReadsOnlyTheCallingWorkersCounters) {
    SchedFixture wlc("wlc");
    wlc.build({1, 1});
    wlc.dest(0).stats[1].active = 10;  // busy on worker 1 only
    wlc.dest(1).stats[0].active = 10;  // busy on worker 0 only
    EXPECT_EQ(wlc.index_of(wlc.pick(0)), 0);
    EXPECT_EQ(wlc.index_of(wlc.pick(1)), 1);
}

TEST(SchedWlc, WeightZeroNeverPicked) {
    SchedFixture wlc("wlc");
    wlc.build({0, 1});
    wlc.dest(1).stats[0].active = 1000;  // an idle weight-0 dest is still not a candidate
    EXPECT_EQ(wlc.index_of(wlc.pick()), 1);
}

TEST(SchedWlc, AllZeroOrEmptyGivesNull) {
    SchedFixture zero("wlc");
    zero.build({0, 0});
    EXPECT_EQ(zero.pick(), nullptr);

    SchedFixture empty("wlc");
    empty.build({});
    EXPECT_EQ(empty.pick(), nullptr);
}

TEST(SchedWlc, UsesPlanWeightsNotLiveDestWeight) {
    SchedFixture wlc("wlc");
    wlc.build({1, 1});
    wlc.dest(0).stats[0].active = 1;
    wlc.dest(1).stats[0].active = 1;
    wlc.dest(1).weight = 10;  // not yet in the plan
    EXPECT_EQ(wlc.index_of(wlc.pick()), 0);
    wlc.rebuild();
    EXPECT_EQ(wlc.index_of(wlc.pick()), 1);
}

TEST(SchedWlc, LargeCountsAndWeightsDoNotOverflow) {
    // overhead reaches ~2^40 and weight ~2^31, so the cross products exceed 64 bits. Here
    // dest 0 carries (2^32-1)/2^30 < 4 active conns per weight and dest 1 exactly 4; a
    // comparison wrapped at 64 bits would pick dest 1.
    SchedFixture wlc("wlc");
    wlc.build({1 << 30, 1 << 29});
    wlc.dest(0).stats[0].active = UINT32_MAX;
    wlc.dest(1).stats[0].active = 1u << 31;
    EXPECT_EQ(wlc.index_of(wlc.pick()), 0);
}

TEST(SchedWlc, SimulatedConnectionsSplitByWeight) {
    SchedFixture wlc("wlc");
    wlc.build({1, 2});
    int counts[2] = {0, 0};
    for (int i = 0; i < 300; ++i) {
        Dest* dest = wlc.pick();
        ASSERT_NE(dest, nullptr);
        ++dest->stats[0].active;  // the conn stays open
        ++counts[wlc.index_of(dest)];
    }
    // wlc keeps active/weight level to within one conn, so 300 conns split exactly 100:200.
    EXPECT_EQ(counts[0], 100);
    EXPECT_EQ(counts[1], 200);
    EXPECT_EQ(wlc.dest(0).stats[0].active, 100u);
    EXPECT_EQ(wlc.dest(1).stats[0].active, 200u);
}

}  // namespace
}  // namespace xvs::lb
