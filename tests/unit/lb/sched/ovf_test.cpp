// Tests lb/sched/ovf.cpp: weight is a capacity in active conns; the highest-weight dest with
// room takes the conn and the next one the overflow.
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

TEST(SchedOvf, FillsHighestWeightThenOverflows) {
    SchedFixture ovf("ovf");
    ovf.build({2, 4, 0});
    std::vector<int> order;
    for (int i = 0; i < 10; ++i) {
        Dest* dest = ovf.pick();
        if (dest == nullptr) break;
        ++dest->stats[0].active;  // conns stay open
        order.push_back(ovf.index_of(dest));
    }
    // IPVS skips a dest once active > weight, so dest 1 takes 5 (0..4 active), dest 0 takes 3.
    EXPECT_EQ(order, (std::vector<int>{1, 1, 1, 1, 1, 0, 0, 0}));
    ovf.dest(1).stats[0].active = 2;  // conns closed: back to the primary
    EXPECT_EQ(ovf.index_of(ovf.pick()), 1);
}

TEST(SchedOvf, InactiveConnsDoNotFill) {
    SchedFixture ovf("ovf");
    ovf.build({1, 1});
    ovf.dest(0).stats[0].inactive = 100;
    EXPECT_EQ(ovf.index_of(ovf.pick()), 0);
}

}  // namespace
}  // namespace xvs::lb
