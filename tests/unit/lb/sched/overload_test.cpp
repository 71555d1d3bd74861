// Every scheduler skips a dest over its connection threshold (ipvsadm -x), picks it again once
// it is back under the lower threshold, and returns nothing when all usable dests are
// overloaded. Counts are the picking worker's own (Dest::stats[worker]). Every registered
// scheduler runs these, the hashing ones (sh, mh) with their fallback flag and a fresh client
// per pick; without fallback a hashing scheduler gives an overloaded dest's clients nothing.
#include <gtest/gtest.h>

#include <ostream>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

struct Sched {
    const char* name;
    uint32_t flags = 0;
};

void PrintTo(const Sched& s, std::ostream* os) {
    *os << s.name;
}

class OverloadTest : public ::testing::TestWithParam<Sched> {
  protected:
    SchedFixture make() {
        SchedFixture f(GetParam().name, GetParam().flags);
        f.vary_flow(true);
        return f;
    }
};

void set_conns(Dest& d, uint32_t n, unsigned worker = 0) {
    d.stats[worker].active = n;
    d.stats[worker].inactive = 0;
}

TEST_P(OverloadTest, OverloadedDestIsSkippedUntilBelowLower) {
    SchedFixture f = make();
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
    SchedFixture f = make();
    f.build({5, 1, 0});
    f.plan().limits = {DestLimit{1, 0}, DestLimit{1, 0}, DestLimit{}};
    set_conns(f.dest(0), 1);
    set_conns(f.dest(1), 1);
    EXPECT_EQ(f.pick(), nullptr);  // dest 2 has weight 0: never usable
}

TEST_P(OverloadTest, OtherWorkersCountsDoNotMatter) {
    SchedFixture f = make();
    f.build({1});
    f.plan().limits = {DestLimit{2, 0}};
    f.plan().workers = 2;  // worker 0's share of 2 is 1
    set_conns(f.dest(0), 5, /*worker=*/1);
    EXPECT_EQ(f.index_of(f.pick(0)), 0);
    set_conns(f.dest(0), 1, 0);
    EXPECT_EQ(f.pick(0), nullptr);
}

// DestWorkerStats::sched_skip (reschedule_refused: a SYN retry passes over the dest that
// refused it) rules a dest out on its worker only, like an overloaded one, whatever its weight
// and load; with it cleared the dest is picked again.
TEST_P(OverloadTest, SkippedDestIsPassedOverOnItsWorkerOnly) {
    SchedFixture f = make();
    f.build({5, 1});  // dest 0 is the one most schedulers prefer
    f.dest(0).stats[0].sched_skip = true;
    for (int i = 0; i < 20; ++i) EXPECT_EQ(f.index_of(f.pick(0)), 1) << i;
    bool saw_dest0 = false;
    for (int i = 0; i < 20; ++i) saw_dest0 = saw_dest0 || f.index_of(f.pick(1)) == 0;
    EXPECT_TRUE(saw_dest0) << "worker 1 must not see worker 0's skip";
    f.dest(0).stats[0].sched_skip = false;
    saw_dest0 = false;
    for (int i = 0; i < 20; ++i) saw_dest0 = saw_dest0 || f.index_of(f.pick(0)) == 0;
    EXPECT_TRUE(saw_dest0);
    f.dest(1).stats[0].sched_skip = true;
    f.dest(0).stats[0].sched_skip = true;
    EXPECT_EQ(f.pick(0), nullptr);  // nothing else to take
}

INSTANTIATE_TEST_SUITE_P(
    Schedulers, OverloadTest,
    ::testing::Values(Sched{"rr"}, Sched{"wrr"}, Sched{"lc"}, Sched{"wlc"}, Sched{"lblc"},
                      Sched{"lblcr"}, Sched{"sh", kSchedFlagFallback}, Sched{"sed"}, Sched{"nq"},
                      Sched{"fo"}, Sched{"ovf"}, Sched{"mh", kSchedFlagFallback}, Sched{"twos"}),
    [](const ::testing::TestParamInfo<Sched>& info) { return std::string(info.param.name); });

// Hashing without fallback: a client mapped to the overloaded dest gets no dest (IPVS's sh and
// mh, DPVS's conhash; dh has no fallback), the others keep theirs; dest 0 serves again once
// under its lower threshold.
class HashOverloadTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HashOverloadTest, OverloadedDestsClientsGetNothing) {
    SchedFixture f(GetParam());
    f.vary_flow(true);
    f.build({1, 1});
    f.plan().limits = {DestLimit{2, 1}, DestLimit{}};
    set_conns(f.dest(0), 2);
    auto counts = f.histogram(2000);
    EXPECT_EQ(counts[0], 0);
    EXPECT_GT(counts[-1], 0);
    EXPECT_GT(counts[1], 0);
    set_conns(f.dest(0), 0);
    counts = f.histogram(2000);
    EXPECT_EQ(counts[-1], 0);
    EXPECT_GT(counts[0], 0);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, HashOverloadTest,
                         ::testing::Values("sh", "dh", "mh", "conhash"));

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
