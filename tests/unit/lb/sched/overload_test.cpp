// Every scheduler skips a dest over its connection threshold (ipvsadm -x), picks it again once
// it is back under the lower threshold, and returns nothing when all usable dests are
// overloaded. Counts are the picking worker's own (Dest::stats[worker]).
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

class OverloadTest : public ::testing::TestWithParam<const char*> {};

void set_conns(Dest& d, uint32_t n, unsigned worker = 0) {
    d.stats[worker].active = n;
    d.stats[worker].inactive = 0;
}

TEST_P(OverloadTest, OverloadedDestIsSkippedUntilBelowLower) {
    SchedFixture f(GetParam());
    f.build({3, 1});
    f.plan().limits = {DestLimit{2, 1}, DestLimit{}};
    set_conns(f.dest(0), 2);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(f.index_of(f.pick()), 1) << i;
    set_conns(f.dest(0), 1);  // not below lower 1 yet
    for (int i = 0; i < 3; ++i) EXPECT_EQ(f.index_of(f.pick()), 1) << i;
    set_conns(f.dest(0), 0);
    bool saw_dest0 = false;
    for (int i = 0; i < 6; ++i) saw_dest0 = saw_dest0 || f.index_of(f.pick()) == 0;
    EXPECT_TRUE(saw_dest0);
}

TEST_P(OverloadTest, AllOverloadedPicksNothing) {
    SchedFixture f(GetParam());
    f.build({5, 1, 0});
    f.plan().limits = {DestLimit{1, 0}, DestLimit{1, 0}, DestLimit{}};
    set_conns(f.dest(0), 1);
    set_conns(f.dest(1), 1);
    EXPECT_EQ(f.pick(), nullptr);  // dest 2 has weight 0: never usable
}

TEST_P(OverloadTest, OtherWorkersCountsDoNotMatter) {
    SchedFixture f(GetParam());
    f.build({1});
    f.plan().limits = {DestLimit{2, 0}};
    f.plan().workers = 2;  // worker 0's share of 2 is 1
    set_conns(f.dest(0), 5, /*worker=*/1);
    EXPECT_EQ(f.index_of(f.pick(0)), 0);
    set_conns(f.dest(0), 1, 0);
    EXPECT_EQ(f.pick(0), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, OverloadTest, ::testing::Values("rr", "wrr", "wlc"));

// wrr with the heaviest dest overloaded still serves the lighter ones at once (no walk
// through the empty weight levels), in their weighted proportion.
TEST(WrrOverloadTest, LighterDestsKeepTheirRatio) {
    SchedFixture f("wrr");
    f.build({100, 2, 1});
    f.plan().limits = {DestLimit{1, 0}, DestLimit{}, DestLimit{}};
    set_conns(f.dest(0), 1);
    auto counts = f.histogram(30);
    EXPECT_EQ(counts[0], 0);
    EXPECT_EQ(counts[1], 20);
    EXPECT_EQ(counts[2], 10);
}

}  // namespace
}  // namespace xvs::lb
