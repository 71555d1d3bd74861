// Tests lb/sched/conhash.cpp: a client address keeps its dest, and adding or removing a dest
// moves only about the share of clients that dest gains or loses.
#include <gtest/gtest.h>

#include <iostream>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

TEST(SchedConhash, SameClientSameDestAnyPort) {
    SchedFixture ch("conhash");
    ch.build({1, 1, 1});
    for (int k = 0; k < 500; ++k) {
        FlowKey flow = ch.random_flow();
        Dest* first = ch.pick_for(flow);
        flow.sport = static_cast<uint16_t>(flow.sport + 1);
        flow.daddr = net::InetAddr::v4(0x01020304);
        EXPECT_EQ(ch.pick_for(flow), first);
    }
}

// hash_target qid: a flow with a QUIC connection ID is placed by the ID, whatever its client
// address; IDs spread over the dests by weight; a flow without one falls back to the address.
TEST(SchedConhash, QuicConnectionIdInPlaceOfTheClientAddress) {
    SchedFixture ch("conhash");
    ch.build({1, 1, 1});
    std::vector<int> count(3);
    for (uint32_t k = 0; k < 30000; ++k) {
        uint8_t id[8] = {0x5a, uint8_t(k >> 24), uint8_t(k >> 16), uint8_t(k >> 8), uint8_t(k), 1, 2, 3};
        FlowKey flow = ch.random_flow();
        flow.cid = net::QuicCid{id, 8};
        Dest* by_id = ch.pick_for(flow);
        ASSERT_NE(by_id, nullptr);
        ++count[static_cast<size_t>(ch.index_of(by_id))];
        if (k % 100 != 0) continue;
        // The same ID from another address and port (a migrated or rebound client).
        FlowKey moved = ch.random_flow();
        moved.cid = net::QuicCid{id, 8};
        EXPECT_EQ(ch.pick_for(moved), by_id);
        // Without the ID the address decides, as plain conhash.
        FlowKey plain = flow;
        plain.cid = {};
        FlowKey plain_again = plain;
        plain_again.sport = static_cast<uint16_t>(plain.sport + 7);
        EXPECT_EQ(ch.pick_for(plain), ch.pick_for(plain_again));
    }
    for (int c : count) EXPECT_NEAR(c, 10000, 2000);  // 160 points a dest: a ring is that uneven
}

TEST(SchedConhash, StableUnderAdditionsAndRemovals) {
    SchedFixture ch("conhash");
    for (int i = 0; i < 10; ++i) ch.add(1);
    ch.rebuild();
    std::vector<FlowKey> flows;
    std::vector<int> before;
    for (int k = 0; k < 50000; ++k) {
        flows.push_back(ch.random_flow());
        before.push_back(ch.index_of(ch.pick_for(flows.back())));
    }
    ch.add(1);  // an 11th dest: ideally 1/11 = 9.1% of the clients move, all to it
    ch.rebuild();
    size_t moved = 0;
    for (size_t k = 0; k < flows.size(); ++k) {
        const int after = ch.index_of(ch.pick_for(flows[k]));
        if (after == before[k]) continue;
        ++moved;
        EXPECT_EQ(after, 10);  // only to the new dest
    }
    const double share = static_cast<double>(moved) / static_cast<double>(flows.size());
    std::cout << "conhash: adding an 11th dest moved " << share * 100 << "% of clients\n";
    EXPECT_GT(share, 0.05);
    EXPECT_LT(share, 0.14);

    ch.dest(3).removed = true;  // removal: only dest 3's clients move
    ch.rebuild();
    for (size_t k = 0; k < flows.size(); ++k) {
        if (before[k] == 3 || before[k] == 10) continue;
        const int after = ch.index_of(ch.pick_for(flows[k]));
        if (after != before[k]) {
            EXPECT_EQ(after, 10);  // may only be a client the added dest took
        }
    }
}

TEST(SchedConhash, WeightZeroIsOffTheRing) {
    SchedFixture ch("conhash");
    ch.build({0, 1});
    ch.vary_flow(true);
    auto counts = ch.histogram(1000);
    EXPECT_EQ(counts[1], 1000);
    SchedFixture none("conhash");
    none.build({0});
    EXPECT_EQ(none.pick(), nullptr);
}

}  // namespace
}  // namespace xvs::lb
