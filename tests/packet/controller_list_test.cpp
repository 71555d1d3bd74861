// The control thread's view of a live worker: `xvsadm -L` through the Controller while the
// real pipeline carries a connection. The banner's size= is the workers' connection table size
// (IPVS prints its conn hash table's), and the per-worker counters the worker wrote (relaxed
// atomics, lb/dest.h) reach the listing.
#include <nlohmann/json.hpp>

#include "ctl/controller.h"
#include "ctl/ipvsadm_args.h"
#include "ctl/ipvsadm_format.h"
#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using nlohmann::json;

class ControllerListTest : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        lb::WorkerConfig wc;
        wc.max_conns = 1u << 14;
        start_worker(wc);
        learn_neighbours();
        ctl = std::make_unique<ctl::Controller>(*director, std::vector<lb::Worker*>{worker.get()},
                                                std::vector<ctl::PortInfoForCtl>{},
                                                [] { return Result<void>{}; });
    }
    void TearDown() override {
        ctl.reset();
        PipelineTest::TearDown();
    }
    std::unique_ptr<ctl::Controller> ctl;
};

TEST_F(ControllerListTest, BannerSizeIsTheConnTableAndCountersReachTheListing) {
    Bytes syn = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4("10.10.1.2", "10.10.1.100")
                    .tcp(40000, 80)
                    .seq(1000)
                    .flags(net::kTcpSyn)
                    .build();
    ASSERT_EQ(roundtrip(kWan, syn, kLan).size(), 1u);

    json reply = json::parse(ctl->handle_line(R"({"cmd":"list"})"));
    ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
    const uint64_t size = worker->conns().capacity();
    EXPECT_GE(size, 1u << 14);
    EXPECT_EQ(reply.at("conn_table_size").get<uint64_t>(), size);

    auto cmd = ctl::parse_ipvsadm_args({"-L", "-n", "--stats"});
    ASSERT_TRUE(cmd);
    auto text = ctl::render_reply(*cmd, reply);
    ASSERT_TRUE(text) << text.error();
    EXPECT_EQ(text->substr(0, text->find('\n')),
              "IP Virtual Server version 1.2.1 (size=" + std::to_string(size) + ")");
    // The one SYN: one connection and one inbound packet on the TCP service and its dest.
    uint64_t conns = 0, inpkts = 0, inactive = 0;
    for (const json& s : reply.at("services")) {
        if (s.at("proto") != "tcp") continue;
        EXPECT_EQ(s.at("stats").at("conns"), 1u);
        for (const json& d : s.at("dests")) {
            conns += d.at("stats").at("conns").get<uint64_t>();
            inpkts += d.at("stats").at("inpkts").get<uint64_t>();
            inactive += d.at("inactive").get<uint64_t>() + d.at("active").get<uint64_t>();
        }
    }
    EXPECT_EQ(conns, 1u);
    EXPECT_EQ(inpkts, 1u);
    EXPECT_EQ(inactive, 1u);
}

}  // namespace
}  // namespace xvs::test
