// Tests lb/sched/rr.cpp: plain rotation over dests with weight > 0, ignoring weight values.
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

TEST(SchedRr, RotatesInPlanOrder) {
    SchedFixture rr("rr");
    rr.build({1, 1, 1});
    EXPECT_EQ(rr.picks(7), (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(SchedRr, IgnoresWeightValues) {
    SchedFixture rr("rr");
    rr.build({1, 5, 100});
    EXPECT_EQ(rr.picks(6), (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

TEST(SchedRr, SkipsWeightZero) {
    SchedFixture rr("rr");
    rr.build({0, 1, 0, 1, 0});
    EXPECT_EQ(rr.picks(5), (std::vector<int>{1, 3, 1, 3, 1}));
}

TEST(SchedRr, AllZeroOrEmptyGivesNull) {
    SchedFixture zero("rr");
    zero.build({0, 0, 0});
    EXPECT_EQ(zero.pick(), nullptr);
    EXPECT_EQ(zero.pick(), nullptr);

    SchedFixture empty("rr");
    empty.build({});
    EXPECT_EQ(empty.pick(), nullptr);
}

TEST(SchedRr, NegativeWeightCountsAsZero) {
    SchedFixture rr("rr");
    rr.build({-1, 1});
    EXPECT_EQ(rr.picks(3), (std::vector<int>{1, 1, 1}));
}

TEST(SchedRr, UsesPlanWeightsNotLiveDestWeight) {
    SchedFixture rr("rr");
    rr.build({1, 1});
    // A live weight change does not reach pick() until the plan is rebuilt.
    rr.dest(0).weight = 0;
    EXPECT_EQ(rr.picks(2), (std::vector<int>{0, 1}));
    rr.rebuild();
    EXPECT_EQ(rr.picks(2), (std::vector<int>{1, 1}));
}

TEST(SchedRr, StaleCursorFromLargerPlanStaysInRange) {
    SchedFixture rr("rr");
    rr.build({1, 1, 1, 1});
    EXPECT_EQ(rr.picks(3), (std::vector<int>{0, 1, 2}));  // cursor now at index 3
    rr.dest(3).removed = true;
    rr.dest(2).removed = true;
    rr.rebuild();
    for (int index : rr.picks(6)) EXPECT_TRUE(index == 0 || index == 1) << index;

    rr.cursor().index = 1000;  // arbitrarily far out of range
    EXPECT_NE(rr.pick(), nullptr);
}

TEST(SchedRr, CursorIsPerWorkerStateOnly) {
    // Two cursors over one plan rotate independently (one per worker).
    SchedFixture rr("rr");
    rr.build({1, 1, 1});
    SchedCursor other;
    FlowKey flow{};
    EXPECT_EQ(rr.index_of(rr.pick()), 0);
    EXPECT_EQ(rr.index_of(rr.sched()->pick(rr.plan(), other, 1, flow)), 0);
    EXPECT_EQ(rr.index_of(rr.pick()), 1);
}

}  // namespace
}  // namespace xvs::lb
