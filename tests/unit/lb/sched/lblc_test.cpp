// Tests lb/sched/lblc.cpp, lblcr.cpp and locality.cpp: a destination address sticks to its
// dest (set), IPVS's overload rule moves it (lblc) or widens its set (lblcr), entries expire
// after 24 h unused, sets shrink after 24 h unchanged, and the bounded table evicts the least
// recently used entry of a full set.
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

FlowKey to(uint32_t daddr, uint64_t now_ms = 0) {
    FlowKey flow{};
    flow.saddr = net::InetAddr::v4(0x0100000a);
    flow.daddr = net::InetAddr::v4(daddr);
    flow.now_ms = now_ms;
    return flow;
}

TEST(SchedLblc, AddressSticksToItsDestWhileNotOverloaded) {
    SchedFixture f("lblc");
    f.build({1, 1, 1});
    EXPECT_EQ(f.index_of(f.pick_for(to(1))), 0);
    f.dest(0).stats[0].active = 1;  // not over its weight: stays
    EXPECT_EQ(f.index_of(f.pick_for(to(1))), 0);
    EXPECT_EQ(f.index_of(f.pick_for(to(2))), 1);  // a new address: least loaded
    f.dest(0).stats[0].active = 5;  // over its weight, but no dest is under half its weight...
    f.dest(1).stats[0].active = 5;
    f.dest(2).stats[0].active = 5;
    EXPECT_EQ(f.index_of(f.pick_for(to(1))), 0);  // ...so still not overloaded by IPVS's rule
}

TEST(SchedLblc, OverloadMovesTheAddressToTheLeastLoaded) {
    SchedFixture f("lblc");
    f.build({2, 2, 4});
    ASSERT_EQ(f.index_of(f.pick_for(to(7))), 0);
    f.dest(0).stats[0].active = 3;  // > weight 2
    f.dest(1).stats[0].active = 2;
    f.dest(2).stats[0].active = 1;  // 1 * 2 < 4: dest 2 is under half its weight
    EXPECT_EQ(f.index_of(f.pick_for(to(7))), 2);
    f.dest(0).stats[0].active = 0;
    EXPECT_EQ(f.index_of(f.pick_for(to(7))), 2);  // the table now says dest 2
}

TEST(SchedLblc, ThresholdAndWeightZeroMoveTheAddress) {
    SchedFixture f("lblc");
    f.build({1, 1});
    ASSERT_EQ(f.index_of(f.pick_for(to(9))), 0);
    f.plan().limits = {DestLimit{1, 0}, DestLimit{}};
    f.dest(0).stats[0].active = 1;
    EXPECT_EQ(f.index_of(f.pick_for(to(9))), 1);
    f.dest(1).weight = 0;
    f.dest(0).stats[0].active = 0;
    f.rebuild();  // the table survives the new plan
    EXPECT_EQ(f.index_of(f.pick_for(to(9))), 0);
}

TEST(SchedLblc, EntryExpiresAfterADayUnused) {
    SchedFixture f("lblc");
    f.build({1, 1});
    const uint64_t day = kLocalityExpireMs;
    ASSERT_EQ(f.index_of(f.pick_for(to(5, 1000))), 0);
    f.dest(0).stats[0].active = 1;                                // dest 1 is now the least loaded
    EXPECT_EQ(f.index_of(f.pick_for(to(5, 1000 + day - 1))), 0);  // used: lastuse refreshed
    EXPECT_EQ(f.index_of(f.pick_for(to(5, 1000 + 2 * day - 2))), 0);
    EXPECT_EQ(f.index_of(f.pick_for(to(5, 1000 + 3 * day))), 1);  // a day unused: gone
}

TEST(SchedLblc, FullSetEvictsLeastRecentlyUsed) {
    SchedFixture f("lblc");
    f.build({1});
    LocalityTable& table = f.locality()[0];
    // Fill far more addresses than the table holds: it never grows, evictions are counted.
    for (uint32_t a = 0; a < 4 * kLocalitySets * kLocalityWays; ++a) {
        ASSERT_NE(f.pick_for(to(a + 1, a)), nullptr);
    }
    EXPECT_GT(table.evictions, 0u);
    size_t live = 0;
    for (const LocalityEntry& e : table.entries) live += e.count != 0;
    EXPECT_EQ(live, table.entries.size());
    EXPECT_NE(locality_find(table, net::InetAddr::v4(4 * kLocalitySets * kLocalityWays), 1 << 20),
              nullptr);  // the newest address is in the table
}

TEST(SchedLblc, TablesArePerWorker) {
    SchedFixture f("lblc");
    f.build({1, 1});
    ASSERT_EQ(f.index_of(f.pick_for(to(3), 0)), 0);
    f.dest(0).stats[1].active = 1;  // busy on worker 1 only
    EXPECT_EQ(f.index_of(f.pick_for(to(3), 1)), 1);
    EXPECT_EQ(f.index_of(f.pick_for(to(3), 0)), 0);
}

TEST(SchedLblcr, OverloadAddsTheLeastLoadedToTheSet) {
    SchedFixture f("lblcr");
    f.build({2, 2, 4});
    ASSERT_EQ(f.index_of(f.pick_for(to(7))), 0);
    f.dest(0).stats[0].active = 3;  // overloaded by IPVS's rule (dest 2 under half)
    f.dest(1).stats[0].active = 2;
    f.dest(2).stats[0].active = 1;
    EXPECT_EQ(f.index_of(f.pick_for(to(7))), 2);  // joins the set {0, 2}
    // Dest 0 recovers and is the set's least loaded: the address uses it again (lblc would
    // have replaced it by dest 2 for good).
    f.dest(0).stats[0].active = 0;
    EXPECT_EQ(f.index_of(f.pick_for(to(7))), 0);
    f.dest(0).stats[0].active = 2;  // 2/2 against dest 2's 1/4: the set's least is dest 2
    EXPECT_EQ(f.index_of(f.pick_for(to(7))), 2);
    // Dest 1 never joined: a set member is always preferred while not overloaded.
    f.dest(1).stats[0].active = 0;
    EXPECT_EQ(f.index_of(f.pick_for(to(7))), 2);
}

TEST(SchedLblcr, SetShedsMostLoadedAfterADayUnchanged) {
    SchedFixture f("lblcr");
    f.build({2, 4});
    ASSERT_EQ(f.index_of(f.pick_for(to(7, 0))), 0);
    f.dest(0).stats[0].active = 3;
    f.dest(1).stats[0].active = 1;
    ASSERT_EQ(f.index_of(f.pick_for(to(7, 10))), 1);  // set {0, 1}, changed at 10
    f.dest(0).stats[0].active = 0;
    f.dest(1).stats[0].active = 3;
    EXPECT_EQ(f.index_of(f.pick_for(to(7, 20))), 0);  // least loaded member
    // A day later with no change, the most loaded member (dest 1) leaves the set...
    EXPECT_EQ(f.index_of(f.pick_for(to(7, 20 + kLocalityExpireMs))), 0);
    // ...so when dest 0 is overloaded, dest 1 must be scheduled and joins again.
    LocalityEntry* entry =
        locality_find(f.locality()[0], net::InetAddr::v4(7), 30 + kLocalityExpireMs);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->count, 1);
    EXPECT_EQ(f.index_of(entry->dests[0]), 0);
}

TEST(SchedLblcr, RemovedDestLeavesTheSet) {
    SchedFixture f("lblcr");
    f.build({1, 1});
    ASSERT_EQ(f.index_of(f.pick_for(to(4))), 0);
    f.dest(0).removed = true;
    f.rebuild();
    EXPECT_EQ(f.index_of(f.pick_for(to(4))), 1);
    LocalityEntry* entry = locality_find(f.locality()[0], net::InetAddr::v4(4), 0);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->count, 1);
}

}  // namespace
}  // namespace xvs::lb
