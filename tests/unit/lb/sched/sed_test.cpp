// Tests lb/sched/sed.cpp: sed picks the least (active + 1) / weight; nq takes an idle dest
// first, then behaves as sed. Inactive conns count for neither.
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

TEST(SchedSed, ExpectedDelayIsActivePlusOneOverWeight) {
    SchedFixture sed("sed");
    sed.build({1, 3});
    // All idle: 1/1 against 1/3, the heavier dest wins (wlc would tie 0/1 with 0/3).
    EXPECT_EQ(sed.index_of(sed.pick()), 1);
    sed.dest(1).stats[0].active = 2;  // 3/3 == 1/1: tie, the first wins
    EXPECT_EQ(sed.index_of(sed.pick()), 0);
    sed.dest(1).stats[0].active = 1;  // 2/3 < 1/1
    EXPECT_EQ(sed.index_of(sed.pick()), 1);
    sed.dest(0).stats[0].inactive = 1000;  // inactive conns do not count
    sed.dest(1).stats[0].active = 2;
    EXPECT_EQ(sed.index_of(sed.pick()), 0);
}

TEST(SchedNq, IdleDestFirstEvenIfLight) {
    SchedFixture nq("nq");
    nq.build({10, 1, 1});
    nq.dest(0).stats[0].active = 1;  // sed would still pick it: 2/10 < 1/1
    EXPECT_EQ(nq.index_of(nq.pick()), 1);
    nq.dest(1).stats[0].active = 1;
    EXPECT_EQ(nq.index_of(nq.pick()), 2);
    nq.dest(2).stats[0].active = 1;  // none idle: sed's choice
    EXPECT_EQ(nq.index_of(nq.pick()), 0);
}

TEST(SchedNq, WeightZeroIdleDestNotTaken) {
    SchedFixture nq("nq");
    nq.build({0, 1});
    nq.dest(1).stats[0].active = 5;
    EXPECT_EQ(nq.index_of(nq.pick()), 1);
}

}  // namespace
}  // namespace xvs::lb
