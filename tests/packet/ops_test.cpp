// Packet tests: one-packet scheduling (ipvsadm -o, keepalived `ops`) on a UDP service with DR
// real servers: every datagram of one client flow is scheduled anew (rr alternates) and no
// conn stays behind; a service without ops keeps its flow on one real server.
#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

class OpsTest : public PipelineTest {
  protected:
    void configure(uint32_t flags) {
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        const auto vip = *net::parse_ipv4("10.10.1.100");
        ok(director->address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
        ok(director->address_add(*net::parse_ipv4("10.10.2.1"), 24, "lan"));
        lb::ServiceSpec s{17, vip, 53, "rr"};
        s.fwd = lb::FwdMode::Dr;
        s.flags = flags;
        ok(director->service_add(s));
        for (const char* rs : {"10.10.2.2", "10.10.2.3"}) {
            lb::DestSpec d{*net::parse_ipv4(rs), 53, 1};
            d.fwd = lb::FwdMode::Dr;
            ok(director->dest_add(lb::make_service_key(17, vip, 53), d));
        }
        director->commit();
        start_worker();
        learn_neighbours();
    }
    // The RS MAC each of n datagrams of one flow (same client port) went to.
    std::vector<net::MacAddr> send_flow(int n) {
        std::vector<net::MacAddr> macs;
        for (int i = 0; i < n; ++i) {
            Bytes q = PacketBuilder()
                          .eth(kClientMac, wan_mac())
                          .ipv4("10.10.1.2", "10.10.1.100")
                          .udp(33000, 53)
                          .payload("query")
                          .build();
            auto out = roundtrip(kWan, q, kLan);
            EXPECT_EQ(out.size(), 1u) << i;
            if (out.size() != 1) break;
            net::MacAddr dst;
            std::memcpy(dst.b, out[0].data(), 6);
            macs.push_back(dst);
        }
        return macs;
    }
};

TEST_F(OpsTest, EveryDatagramIsScheduledAnewAndLeavesNoConn) {
    configure(lb::kSvcFlagOps);
    const auto macs = send_flow(4);
    ASSERT_EQ(macs.size(), 4u);
    EXPECT_EQ(macs[0], kRs1Mac);
    EXPECT_EQ(macs[1], kRs2Mac);
    EXPECT_EQ(macs[2], kRs1Mac);
    EXPECT_EQ(macs[3], kRs2Mac);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    EXPECT_EQ(counter(Counter::conns_created), 4u);
    EXPECT_EQ(counter(Counter::conns_expired), 4u);
    EXPECT_EQ(counter(Counter::lb_forwarded), 4u);
    for (const auto& d :
         director->service_find(lb::make_service_key(17, *net::parse_ipv4("10.10.1.100"), 53))
             ->dests) {
        EXPECT_EQ(d->stats[0].inactive, 0u);
        EXPECT_EQ(d->stats[0].refs, 0u);
        EXPECT_EQ(d->stats[0].inpkts, 2u);
    }
}

TEST_F(OpsTest, WithoutOpsTheFlowKeepsItsConn) {
    configure(0);
    const auto macs = send_flow(4);
    ASSERT_EQ(macs.size(), 4u);
    for (const auto& m : macs) EXPECT_EQ(m, macs[0]);
    EXPECT_EQ(worker->conns().in_use(), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 1u);
}

TEST_F(OpsTest, TcpAndFullnatAreRefused) {
    const auto vip = *net::parse_ipv4("10.10.1.100");
    lb::ServiceSpec tcp{6, vip, 80, "rr"};
    tcp.flags = lb::kSvcFlagOps;
    auto r = director->service_add(tcp);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "ops (one-packet scheduling) needs protocol UDP");
    lb::ServiceSpec udp{17, vip, 53, "rr"};
    udp.flags = lb::kSvcFlagOps;
    ASSERT_TRUE(director->service_add(udp).ok());
    r = director->dest_add(lb::make_service_key(17, vip, 53),
                           lb::DestSpec{*net::parse_ipv4("10.10.2.2"), 5353, 1});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("use DR or TUN real servers"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace xvs::test
