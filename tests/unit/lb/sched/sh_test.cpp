// Tests lb/sched/sh.cpp: sh by client address (and port with sh-port), dh by destination
// address, IPVS's bucket fill (weight consecutive buckets per round for sh, one for dh) and
// sh-fallback.
#include <gtest/gtest.h>

#include "sched_fixture.h"

namespace xvs::lb {
namespace {

using testing::SchedFixture;

TEST(SchedSh, BucketsFilledInWeightedRounds) {
    SchedFixture sh("sh");
    sh.build({1, 2, 0});
    const auto& table = sh.plan().table;
    ASSERT_EQ(table.size(), 256u);
    // Rounds of A B B C: a weight-0 dest still holds one bucket per round, as IPVS.
    EXPECT_EQ(table[0], 0u);
    EXPECT_EQ(table[1], 1u);
    EXPECT_EQ(table[2], 1u);
    EXPECT_EQ(table[3], 2u);
    EXPECT_EQ(table[4], 0u);

    SchedFixture dh("dh");
    dh.build({1, 5});
    EXPECT_EQ(dh.plan().table[0], 0u);
    EXPECT_EQ(dh.plan().table[1], 1u);
    EXPECT_EQ(dh.plan().table[2], 0u);  // dh ignores weights
}

TEST(SchedSh, DeterministicPerClientAndPortOnlyWithFlag) {
    SchedFixture sh("sh");
    SchedFixture sh_port("sh", kSchedFlagPort);
    sh.build({1, 1, 1, 1});
    sh_port.build({1, 1, 1, 1});
    FlowKey flow = sh.random_flow();
    std::map<int, int> plain;
    std::map<int, int> ported;
    for (uint16_t port = 2000; port < 2400; ++port) {
        flow.sport = port;
        flow.daddr = net::InetAddr::v4(port);  // sh does not look at it
        ++plain[sh.index_of(sh.pick_for(flow))];
        ++ported[sh_port.index_of(sh_port.pick_for(flow))];
        EXPECT_EQ(sh_port.pick_for(flow), sh_port.pick_for(flow));
    }
    EXPECT_EQ(plain.size(), 1u);
    EXPECT_EQ(ported.size(), 4u);
}

TEST(SchedDh, ByDestinationAddress) {
    SchedFixture dh("dh");
    dh.build({1, 1, 1});
    FlowKey flow = dh.random_flow();
    std::map<int, int> by_client;
    for (int k = 0; k < 200; ++k) {
        flow.saddr = net::InetAddr::v4(static_cast<uint32_t>(k));
        ++by_client[dh.index_of(dh.pick_for(flow))];
    }
    EXPECT_EQ(by_client.size(), 1u);
}

TEST(SchedSh, QuiescedDestsClientsNeedFallback) {
    SchedFixture sh("sh");
    SchedFixture fallback("sh", kSchedFlagFallback);
    sh.build({1, 0});
    fallback.build({1, 0});
    int none = 0;
    for (int k = 0; k < 1000; ++k) {
        const FlowKey flow = sh.random_flow();
        if (sh.pick_for(flow) == nullptr) ++none;
        EXPECT_EQ(fallback.index_of(fallback.pick_for(flow)), 0);
    }
    EXPECT_GT(none, 400);  // half the buckets are the weight-0 dest's
    EXPECT_LT(none, 600);
}

TEST(SchedSh, FallbackKeepsOtherClientsInPlace) {
    SchedFixture sh("sh", kSchedFlagFallback);
    sh.build({1, 1, 1});
    std::vector<FlowKey> flows;
    std::vector<int> before;
    for (int k = 0; k < 2000; ++k) {
        flows.push_back(sh.random_flow());
        before.push_back(sh.index_of(sh.pick_for(flows.back())));
    }
    sh.plan().limits = {DestLimit{}, DestLimit{1, 0}, DestLimit{}};
    sh.dest(1).stats[0].active = 1;
    for (size_t k = 0; k < flows.size(); ++k) {
        const int after = sh.index_of(sh.pick_for(flows[k]));
        if (before[k] == 1)
            EXPECT_NE(after, 1);
        else
            EXPECT_EQ(after, before[k]);
    }
}

}  // namespace
}  // namespace xvs::lb
