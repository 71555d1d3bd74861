// Tests lb/sched/lc.cpp: least active * 256 + inactive, weights only excluding weight 0.
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

TEST(SchedLc, LeastOverheadWinsWhateverTheWeights) {
    SchedFixture lc("lc");
    lc.build({1, 100, 1});
    lc.dest(0).stats[0].active = 2;
    lc.dest(1).stats[0].active = 3;  // heavy weight does not help
    lc.dest(2).stats[0].active = 1;
    lc.dest(2).stats[0].inactive = 300;  // 256 + 300 > 512
    EXPECT_EQ(lc.index_of(lc.pick()), 0);
    lc.dest(2).stats[0].inactive = 200;
    EXPECT_EQ(lc.index_of(lc.pick()), 2);
}

TEST(SchedLc, TiesToFirstAndWeightZeroSkipped) {
    SchedFixture lc("lc");
    lc.build({0, 1, 1});
    EXPECT_EQ(lc.index_of(lc.pick()), 1);
    SchedFixture none("lc");
    none.build({0});
    EXPECT_EQ(none.pick(), nullptr);
}

}  // namespace
}  // namespace xvs::lb
