// Tests lb/sched/fo.cpp: the usable dest of the highest weight takes everything; the next
// highest takes over when it is quiesced or overloaded.
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

TEST(SchedFo, HighestWeightTakesAllFirstOnTies) {
    SchedFixture fo("fo");
    fo.build({2, 5, 5, 1});
    auto counts = fo.histogram(1000);
    EXPECT_EQ(counts[1], 1000);
}

TEST(SchedFo, FailsOverInWeightOrder) {
    SchedFixture fo("fo");
    fo.build({2, 5, 1});
    fo.plan().limits = {DestLimit{}, DestLimit{3, 0}, DestLimit{}};
    fo.dest(1).stats[0].active = 3;  // primary over its threshold
    EXPECT_EQ(fo.index_of(fo.pick()), 0);
    fo.dest(0).weight = 0;  // and the next one quiesced
    fo.rebuild();
    fo.plan().limits = {DestLimit{}, DestLimit{3, 0}, DestLimit{}};
    EXPECT_EQ(fo.index_of(fo.pick()), 2);
    fo.dest(1).stats[0].active = 0;  // primary back
    EXPECT_EQ(fo.index_of(fo.pick()), 1);
}

}  // namespace
}  // namespace xvs::lb
