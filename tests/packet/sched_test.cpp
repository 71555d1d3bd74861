// Packet tests: the schedulers through the real pipeline. The flow key a scheduler hashes on
// reaches it from the packet (client address and port, VIP), and lblc/lblcr find the per-worker
// tables the Director allocated for the service.
#include "lb/sched/sched.h"

#include <set>

#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

class SchedPipelineTest : public PipelineTest, public ::testing::WithParamInterface<const char*> {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default(GetParam());
        start_worker();
        learn_neighbours();
    }
    // The RS (last address byte, 2 or 3) each of `n` datagrams from one client, each from a new
    // source port, was sent to.
    std::set<uint8_t> rs_of_datagrams(int n) {
        std::set<uint8_t> seen;
        for (int i = 0; i < n; ++i) {
            PacketBuilder b;
            b.eth(kClientMac, wan_mac())
                .ipv4("10.10.1.2", "10.10.1.100")
                .udp(static_cast<uint16_t>(40000 + i), 53)
                .payload("q");
            auto out = roundtrip(kWan, b.build(), kLan);
            EXPECT_EQ(out.size(), 1u) << i;
            if (out.size() == 1) seen.insert(out[0][14 + 19]);  // IPv4 daddr, last byte
        }
        return seen;
    }
    void set_flags(uint32_t flags) {
        lb::ServiceSpec spec{17, *net::parse_ipv4("10.10.1.100"), 53, GetParam()};
        spec.sched_flags = flags;
        ASSERT_TRUE(director->service_edit(spec).ok());
        director->commit();
    }
};

// One client address, or one VIP: these schedulers send all its flows to one RS.
TEST_P(SchedPipelineTest, OneClientStaysOnOneRs) {
    EXPECT_EQ(rs_of_datagrams(24).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(ByAddress, SchedPipelineTest,
                         ::testing::Values("sh", "dh", "mh", "conhash", "lblc", "lblcr"));

class PortHashTest : public SchedPipelineTest {};

// With sh-port / mh-port the client port joins the hash: 24 flows spread over both RS.
TEST_P(PortHashTest, PortFlagSpreadsOneClient) {
    set_flags(lb::kSchedFlagPort);
    EXPECT_EQ(rs_of_datagrams(24), (std::set<uint8_t>{2, 3}));
}

INSTANTIATE_TEST_SUITE_P(Hashing, PortHashTest, ::testing::Values("sh", "mh"));

}  // namespace
}  // namespace xvs::test
