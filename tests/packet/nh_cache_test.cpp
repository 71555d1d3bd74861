// Packet tests: the next hop cached on a conn (stack/nh_cache.h). Packets of an established
// conn skip the route scan and neighbour lookup (nh_cache_hits), and every change that could
// make the cached neighbour wrong sends the next packet through the full path instead: a new
// MAC for the neighbour, a route change, an entry gone stale.
#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

const net::MacAddr kRs1NewMac{{0x02, 0, 0, 0, 0x2a, 0x99}};
const net::MacAddr kGatewayMac{{0x02, 0, 0, 0, 0x2a, 0x09}};

class NhCacheTest : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");  // the first conn goes to 10.10.2.2
        start_worker();
        worker->neighbours().add_static(ip("10.10.1.2"), kClientMac, kWan);
        // 10.10.2.2 is learned (so its MAC can change), from its own ARP request.
        announce(kRs1Mac);
        ASSERT_EQ(recv(kLan).size(), 1u);  // our ARP reply
    }
    void announce(const net::MacAddr& mac) {
        send(kLan, arp_frame(mac, net::kBroadcastMac, net::kArpOpRequest, mac, "10.10.2.2",
                             net::MacAddr{}, "10.10.2.100"));
        poll();
    }
    Bytes client(uint8_t flags, uint32_t seq) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", "10.10.1.100")
            .tcp(40000, 80)
            .seq(seq)
            .ack(flags & net::kTcpAck ? 1 : 0)
            .flags(flags)
            .build();
    }
    // Sends one client packet of the conn; returns the MAC it left the director for.
    net::MacAddr forward(uint8_t flags, uint32_t seq) {
        auto out = roundtrip(kWan, client(flags, seq), kLan);
        EXPECT_EQ(out.size(), 1u);
        if (out.empty()) return {};
        const auto* eth = reinterpret_cast<const net::EtherHdr*>(out.back().data());
        return eth->dst;
    }
};

TEST_F(NhCacheTest, EstablishedPacketsUseTheCachedNeighbour) {
    EXPECT_EQ(forward(net::kTcpSyn, 7), kRs1Mac);  // full path: fills the cache
    EXPECT_EQ(counter(Counter::nh_cache_hits), 0u);
    EXPECT_EQ(forward(net::kTcpAck, 8), kRs1Mac);
    EXPECT_EQ(forward(net::kTcpAck, 8), kRs1Mac);
    EXPECT_EQ(counter(Counter::nh_cache_hits), 2u);
}

TEST_F(NhCacheTest, NewMacOfTheNeighbourIsUsedAtOnce) {
    forward(net::kTcpSyn, 7);
    forward(net::kTcpAck, 8);
    ASSERT_EQ(counter(Counter::nh_cache_hits), 1u);
    announce(kRs1NewMac);  // the RS's NIC was replaced, or a failover moved its address
    ASSERT_EQ(recv(kLan).size(), 1u);
    EXPECT_EQ(forward(net::kTcpAck, 8), kRs1NewMac);
    EXPECT_EQ(counter(Counter::nh_cache_hits), 1u) << "the stale cache must not be used";
    EXPECT_EQ(forward(net::kTcpAck, 8), kRs1NewMac);
    EXPECT_EQ(counter(Counter::nh_cache_hits), 2u) << "refilled with the new entry";
}

TEST_F(NhCacheTest, RouteChangeSendsTheConnToTheNewNextHop) {
    forward(net::kTcpSyn, 7);
    forward(net::kTcpAck, 8);
    ASSERT_EQ(counter(Counter::nh_cache_hits), 1u);
    // A host route now sends the RS's traffic through a gateway on the same link.
    worker->neighbours().add_static(ip("10.10.2.9"), kGatewayMac, kLan);
    ASSERT_TRUE(director
                    ->route_add(*net::parse_ipv4_prefix("10.10.2.2/32"),
                                *net::parse_ipv4("10.10.2.9"), "lan")
                    .ok());
    director->commit();
    EXPECT_EQ(forward(net::kTcpAck, 8), kGatewayMac);
    EXPECT_EQ(counter(Counter::nh_cache_hits), 1u);
}

TEST_F(NhCacheTest, StaleNeighbourTakesTheFullPathAndIsProbed) {
    forward(net::kTcpSyn, 7);
    forward(net::kTcpAck, 8);
    ASSERT_EQ(counter(Counter::nh_cache_hits), 1u);
    const uint64_t probes = counter(Counter::arp_requests_sent);
    worker->advance_clock(31'000);  // past reachable_ms: the entry goes stale on the next scan
    poll();
    ASSERT_EQ(worker->neighbours().find(ip("10.10.2.2"))->state, stack::NeighState::Stale);
    auto out = roundtrip(kWan, client(net::kTcpAck, 8), kLan);
    ASSERT_EQ(out.size(), 2u);  // a unicast-or-broadcast probe, and the packet itself
    EXPECT_EQ(counter(Counter::arp_requests_sent), probes + 1);
    EXPECT_EQ(counter(Counter::nh_cache_hits), 1u);
}

}  // namespace
}  // namespace xvs::test
