// Packet tests: flood defence and admission control through the real pipeline — client
// black/white lists, the per-service new-connection rate cap, per-dest connection thresholds
// (ipvsadm -x/-y) and UDP to a VIP port without a service. Every refusal leaves no
// connection behind and is counted under its own reason.
#include <map>
#include <string>

#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

const net::Ipv4 kVip = *net::parse_ipv4("10.10.1.100");

class DefenceTest : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        start_worker();
        learn_neighbours();
    }

    lb::ServiceKey tcp_key() const { return lb::make_service_key(6, kVip, 80); }
    lb::ServiceKey udp_key() const { return lb::make_service_key(17, kVip, 53); }

    Bytes syn_to_us(const char* client, uint16_t cport) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4(client, "10.10.1.100")
            .tcp(cport, 80)
            .seq(1000)
            .flags(net::kTcpSyn)
            .build();
    }
    Bytes udp(const char* client, uint16_t cport, uint16_t vport) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4(client, "10.10.1.100")
            .udp(cport, vport)
            .payload("q")
            .build();
    }
    void acl(lb::AclKind kind, const char* prefix, const lb::ServiceKey& key) {
        auto p = net::parse_acl_prefix(prefix);
        ASSERT_TRUE(p.ok()) << p.error();
        auto r = director->acl_add(key, kind, *p);
        ASSERT_TRUE(r.ok()) << r.error();
        director->commit();
    }
    void set_rate(uint32_t rate) {
        lb::ServiceSpec spec{6, kVip, 80, "rr"};
        spec.conn_rate = rate;
        auto r = director->service_edit(spec);
        ASSERT_TRUE(r.ok()) << r.error();
        director->commit();
    }
    void set_threshold(const char* rs, int32_t weight, uint32_t upper, uint32_t lower = 0) {
        lb::DestSpec spec{*net::parse_ipv4(rs), 8080, weight};
        spec.upper_threshold = upper;
        spec.lower_threshold = lower;
        auto r = director->dest_edit(tcp_key(), spec);
        ASSERT_TRUE(r.ok()) << r.error();
        director->commit();
    }
    // Sends SYNs from ports first.. in one burst (one clock reading) and returns how many
    // went to each real server (by IP destination of the frames on the LAN side).
    std::map<std::string, int> syn_burst(uint16_t first, int count,
                                         const char* client = "10.10.1.2") {
        for (int i = 0; i < count; ++i)
            send(kWan, syn_to_us(client, static_cast<uint16_t>(first + i)));
        poll();
        std::map<std::string, int> per_rs;
        for (const Bytes& f : recv(kLan)) {
            const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(f.data() + 14);
            ++per_rs[net::to_string(net::Ipv4{ip4->daddr})];
        }
        EXPECT_TRUE(recv(kWan).empty());
        return per_rs;
    }
    int total(const std::map<std::string, int>& m) {
        int n = 0;
        for (const auto& [rs, c] : m) n += c;
        return n;
    }
};

TEST_F(DefenceTest, BlacklistedSynDroppedBeforeAnyState) {
    acl(lb::AclKind::Black, "10.10.1.2", tcp_key());
    EXPECT_TRUE(roundtrip(kWan, syn_to_us("10.10.1.2", 40000), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_blacklisted), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 0u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    // Another client is still served; the list is per service (UDP:53 is unaffected).
    EXPECT_EQ(roundtrip(kWan, syn_to_us("10.10.1.3", 40000), kLan).size(), 1u);
    EXPECT_EQ(roundtrip(kWan, udp("10.10.1.2", 33000, 53), kLan).size(), 1u);
    EXPECT_EQ(counter(Counter::drop_blacklisted), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 2u);
}

TEST_F(DefenceTest, BlacklistPrefixAppliesToUdpFlows) {
    acl(lb::AclKind::Black, "10.10.1.0/24", udp_key());
    EXPECT_TRUE(roundtrip(kWan, udp("10.10.1.2", 33000, 53), kLan).empty());
    EXPECT_TRUE(roundtrip(kWan, udp("10.10.1.254", 33000, 53), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_blacklisted), 2u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    // Removing the entry admits the client again.
    ASSERT_TRUE(
        director->acl_del(udp_key(), lb::AclKind::Black, *net::parse_acl_prefix("10.10.1.0/24"))
            .ok());
    director->commit();
    EXPECT_EQ(roundtrip(kWan, udp("10.10.1.2", 33000, 53), kLan).size(), 1u);
}

TEST_F(DefenceTest, ExistingConnectionSurvivesLaterBlacklisting) {
    ASSERT_EQ(roundtrip(kWan, syn_to_us("10.10.1.2", 40001), kLan).size(), 1u);
    acl(lb::AclKind::Black, "10.10.1.2", tcp_key());
    Bytes ack = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4("10.10.1.2", "10.10.1.100")
                    .tcp(40001, 80)
                    .seq(1001)
                    .ack(1)
                    .flags(net::kTcpAck)
                    .build();
    EXPECT_EQ(roundtrip(kWan, ack, kLan).size(), 1u);
    EXPECT_EQ(counter(Counter::drop_blacklisted), 0u);
}

TEST_F(DefenceTest, WhitelistAdmitsOnlyListedClients) {
    acl(lb::AclKind::White, "10.10.1.3", tcp_key());
    EXPECT_TRUE(roundtrip(kWan, syn_to_us("10.10.1.2", 40000), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_not_whitelisted), 1u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    EXPECT_EQ(roundtrip(kWan, syn_to_us("10.10.1.3", 40000), kLan).size(), 1u);
    EXPECT_EQ(counter(Counter::drop_not_whitelisted), 1u);
}

TEST_F(DefenceTest, BlacklistWinsOverWhitelist) {
    acl(lb::AclKind::White, "10.10.1.0/24", tcp_key());
    acl(lb::AclKind::Black, "10.10.1.3", tcp_key());
    EXPECT_TRUE(roundtrip(kWan, syn_to_us("10.10.1.3", 40000), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_blacklisted), 1u);
    EXPECT_EQ(counter(Counter::drop_not_whitelisted), 0u);
}

TEST_F(DefenceTest, RateCapWithinOneTickThenRefilled) {
    set_rate(3);
    // Five SYNs read the same clock: the bucket holds one second (3 tokens).
    EXPECT_EQ(total(syn_burst(41000, 5)), 3);
    EXPECT_EQ(counter(Counter::drop_conn_rate), 2u);
    EXPECT_EQ(worker->conns().in_use(), 3u);
    // A third of a second later: one token (3/s * 334 ms = 1.002).
    worker->advance_clock(334);
    EXPECT_EQ(total(syn_burst(42000, 2)), 1);
    EXPECT_EQ(counter(Counter::drop_conn_rate), 3u);
    // A long pause refills to the one-second burst, never more.
    worker->advance_clock(10000);
    EXPECT_EQ(total(syn_burst(43000, 5)), 3);
    EXPECT_EQ(counter(Counter::drop_conn_rate), 5u);
}

TEST_F(DefenceTest, ListedClientUsesNoRateTokens) {
    set_rate(1);
    acl(lb::AclKind::Black, "10.10.1.2", tcp_key());
    EXPECT_EQ(total(syn_burst(44000, 3)), 0);  // blacklisted: counted as such, no token taken
    EXPECT_EQ(counter(Counter::drop_blacklisted), 3u);
    EXPECT_EQ(counter(Counter::drop_conn_rate), 0u);
    EXPECT_EQ(roundtrip(kWan, syn_to_us("10.10.1.3", 44000), kLan).size(), 1u);
}

TEST_F(DefenceTest, OverloadedDestSkippedByScheduler) {
    set_threshold("10.10.2.2", 1, 2);  // -x 2 on RS1
    // rr over RS1, RS2: RS1 gets conns 1 and 3, then is at its threshold.
    auto per_rs = syn_burst(45000, 6);
    EXPECT_EQ(per_rs["10.10.2.2"], 2);
    EXPECT_EQ(per_rs["10.10.2.3"], 4);
    EXPECT_EQ(counter(Counter::drop_dest_overloaded), 0u);
}

TEST_F(DefenceTest, AllDestsOverloadedDropsUntilConnectionsExpire) {
    set_threshold("10.10.2.2", 1, 2);
    set_threshold("10.10.2.3", 2, 2);
    EXPECT_EQ(total(syn_burst(46000, 5)), 4);
    EXPECT_EQ(counter(Counter::drop_dest_overloaded), 1u);
    EXPECT_EQ(counter(Counter::drop_no_dest), 0u);
    EXPECT_EQ(worker->conns().in_use(), 4u);
    // The SYN_RECV conns expire (DPVS timeout 30 s): both dests fall below 3/4 of 2.
    worker->advance_clock(31000);
    poll();
    EXPECT_EQ(worker->conns().in_use(), 0u);
    EXPECT_EQ(total(syn_burst(47000, 1)), 1);
}

TEST_F(DefenceTest, WeightZeroIsStillNoDestNotOverload) {
    set_threshold("10.10.2.2", 0, 2);
    set_threshold("10.10.2.3", 0, 2);
    EXPECT_TRUE(roundtrip(kWan, syn_to_us("10.10.1.2", 48000), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_no_dest), 1u);
    EXPECT_EQ(counter(Counter::drop_dest_overloaded), 0u);
}

TEST_F(DefenceTest, UdpToVipPortWithoutServiceCounted) {
    EXPECT_TRUE(roundtrip(kWan, udp("10.10.1.2", 33000, 5353), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_no_service), 1u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
}

TEST_F(DefenceTest, LowerThresholdAboveUpperRefused) {
    lb::DestSpec spec{*net::parse_ipv4("10.10.2.2"), 8080, 1};
    spec.upper_threshold = 2;
    spec.lower_threshold = 3;
    auto r = director->dest_edit(tcp_key(), spec);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "lower threshold 3 is higher than upper threshold 2");
}

}  // namespace
}  // namespace xvs::test
