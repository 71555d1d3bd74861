// Packet tests: next-hop resolution — unknown neighbours are resolved with ARP while packets
// wait in a bounded queue; replies release them; silence drops them after the probes.
#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

class NeighTest : public PipelineTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        start_worker();
        // Only the client is known; real servers must be resolved.
        worker->neighbours().add_static(ip("10.10.1.2"), kClientMac, kWan);
    }
    Bytes syn(uint16_t cport) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", "10.10.1.100")
            .tcp(cport, 80)
            .seq(7)
            .flags(net::kTcpSyn)
            .build();
    }
    Bytes arp_request_from_us(const char* target) {
        return arp_frame(lan_mac(), net::kBroadcastMac, net::kArpOpRequest, lan_mac(), "10.10.2.1",
                         net::MacAddr{}, target);
    }
};

TEST_F(NeighTest, UnknownNextHopIsResolvedThenPacketSent) {
    auto out = roundtrip(kWan, syn(40000), kLan);  // rr: first to 10.10.2.2
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(arp_request_from_us("10.10.2.2"), out[0]));
    EXPECT_EQ(counter(Counter::neigh_queued), 1u);
    // The reply releases the waiting SYN.
    send(kLan, arp_frame(kRs1Mac, lan_mac(), net::kArpOpReply, kRs1Mac, "10.10.2.2", lan_mac(),
                         "10.10.2.1"));
    poll();
    out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* eth = reinterpret_cast<const net::EtherHdr*>(out[0].data());
    EXPECT_EQ(eth->dst, kRs1Mac);
    const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
    EXPECT_EQ(ip4->daddr, ip("10.10.2.2"));
    EXPECT_EQ(ip4->saddr, ip("10.10.2.100"));
    // Now resolved: the next packet goes out directly.
    out = roundtrip(kWan, syn(40002), kLan);  // rr: back to 10.10.2.2? (2 -> .3, 3 -> .2)
    for (const auto& f : out) {
        const auto* e = reinterpret_cast<const net::EtherHdr*>(f.data());
        EXPECT_TRUE(e->ether_type == net::hton16(net::kEtherTypeIpv4) ||
                    e->ether_type == net::hton16(net::kEtherTypeArp));
    }
}

TEST_F(NeighTest, SilentNeighbourDropsQueuedPacketsAfterProbes) {
    roundtrip(kWan, syn(40000), kLan);
    // Probes at 1 s intervals: two more, then failure on the fourth tick.
    for (int i = 0; i < 2; ++i) {
        worker->advance_clock(1000);
        poll();
        auto out = recv(kLan);
        ASSERT_EQ(out.size(), 1u) << "probe " << i + 2;
        EXPECT_TRUE(FramesEqual(arp_request_from_us("10.10.2.2"), out[0]));
    }
    worker->advance_clock(1000);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_EQ(counter(Counter::drop_neigh_unresolved), 1u);
    EXPECT_EQ(counter(Counter::arp_requests_sent), 3u);
}

TEST_F(NeighTest, QueueIsBoundedPerNeighbour) {
    // Retransmitted SYNs of one flow to the same unresolved RS: 4 wait, the rest are dropped.
    for (int i = 0; i < 10; ++i) send(kWan, syn(40000));
    poll();
    auto out = recv(kLan);
    EXPECT_EQ(out.size(), 1u);  // just the ARP request
    EXPECT_EQ(counter(Counter::neigh_queued), 4u);
    EXPECT_EQ(counter(Counter::drop_neigh_queue_full), 6u);
}

TEST_F(NeighTest, ArpRequestFromServerTeachesItsAddress) {
    send(kLan, arp_frame(kRs1Mac, net::kBroadcastMac, net::kArpOpRequest, kRs1Mac, "10.10.2.2",
                         net::MacAddr{}, "10.10.2.100"));
    poll();
    ASSERT_EQ(recv(kLan).size(), 1u);  // our reply
    auto out = roundtrip(kWan, syn(40000), kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* eth = reinterpret_cast<const net::EtherHdr*>(out[0].data());
    EXPECT_EQ(eth->ether_type, net::hton16(net::kEtherTypeIpv4));
    EXPECT_EQ(eth->dst, kRs1Mac);
}

TEST_F(NeighTest, UnsolicitedReplyDoesNotCreateEntries) {
    send(kLan, arp_frame(kRs1Mac, lan_mac(), net::kArpOpReply, kRs1Mac, "10.10.2.9", lan_mac(),
                         "10.10.2.1"));
    poll();
    EXPECT_EQ(worker->neighbours().find(ip("10.10.2.9")), nullptr);
}

TEST_F(NeighTest, NoRouteIsCounted) {
    ASSERT_TRUE(director->route_del(*net::parse_ipv4_prefix("10.10.1.0/24")).ok());
    director->commit();
    // The SYN reaches the RS (lan route stays); the SYN-ACK back has no route to the client.
    worker->neighbours().add_static(ip("10.10.2.2"), kRs1Mac, kLan);
    worker->neighbours().add_static(ip("10.10.2.3"), kRs2Mac, kLan);
    auto out = roundtrip(kWan, syn(40000), kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* tcp = reinterpret_cast<const net::TcpHdr*>(out[0].data() + 34);
    const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
    Bytes synack = PacketBuilder()
                       .eth(ip4->daddr == ip("10.10.2.2") ? kRs1Mac : kRs2Mac, lan_mac())
                       .ipv4(ip4->daddr, ip("10.10.2.100"))
                       .tcp(8080, net::ntoh16(tcp->sport))
                       .flags(net::kTcpSyn | net::kTcpAck)
                       .ack(8)
                       .build();
    EXPECT_TRUE(roundtrip(kLan, synack, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_no_route), 1u);
}

}  // namespace
}  // namespace xvs::test
