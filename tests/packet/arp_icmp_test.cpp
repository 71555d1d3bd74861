// Packet tests: ARP answers for own addresses, VIPs and local addresses; ICMP echo replies.
#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

class ArpIcmpTest : public PipelineTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default();
        start_worker();
    }
};

Bytes arp_request_for(net::MacAddr from, const char* from_ip, const char* target) {
    return arp_frame(from, net::kBroadcastMac, net::kArpOpRequest, from, from_ip, net::MacAddr{},
                     target);
}

TEST_F(ArpIcmpTest, ArpRequestForVipIsAnswered) {
    auto out = roundtrip(kWan, arp_request_for(kClientMac, "10.10.1.2", "10.10.1.100"), kWan);
    ASSERT_EQ(out.size(), 1u);
    Bytes expected = arp_frame(wan_mac(), kClientMac, net::kArpOpReply, wan_mac(), "10.10.1.100",
                               kClientMac, "10.10.1.2");
    EXPECT_TRUE(FramesEqual(expected, out[0]));
    EXPECT_EQ(counter(Counter::arp_replies_sent), 1u);
}

TEST_F(ArpIcmpTest, ArpRequestForDirectorAndLocalAddressAnsweredOnTheirPort) {
    auto out = roundtrip(kWan, arp_request_for(kClientMac, "10.10.1.2", "10.10.1.1"), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(arp_frame(wan_mac(), kClientMac, net::kArpOpReply, wan_mac(),
                                      "10.10.1.1", kClientMac, "10.10.1.2"),
                            out[0]));
    out = roundtrip(kLan, arp_request_for(kRs1Mac, "10.10.2.2", "10.10.2.100"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(arp_frame(lan_mac(), kRs1Mac, net::kArpOpReply, lan_mac(),
                                      "10.10.2.100", kRs1Mac, "10.10.2.2"),
                            out[0]));
}

TEST_F(ArpIcmpTest, ArpForAddressOwnedOnOtherPortOrNotOursIsIgnored) {
    // The LIP lives on lan: a request for it arriving on wan is not answered.
    auto out = roundtrip(kWan, arp_request_for(kClientMac, "10.10.1.2", "10.10.2.100"), kWan);
    EXPECT_TRUE(out.empty());
    out = roundtrip(kWan, arp_request_for(kClientMac, "10.10.1.2", "10.10.1.77"), kWan);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(counter(Counter::drop_arp_not_ours), 2u);
}

TEST_F(ArpIcmpTest, MalformedArpCounted) {
    Bytes f = arp_request_for(kClientMac, "10.10.1.2", "10.10.1.100");
    f[14 + 4] = 8;  // hlen 8
    EXPECT_TRUE(roundtrip(kWan, f, kWan).empty());
    Bytes shortf(f.begin(), f.begin() + 30);
    EXPECT_TRUE(roundtrip(kWan, shortf, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_arp_malformed), 2u);
}

TEST_F(ArpIcmpTest, PingVipGetsEchoReply) {
    Bytes req = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4("10.10.1.2", "10.10.1.100")
                    .ttl(61)
                    .ip_id(7)
                    .icmp_echo(net::kIcmpEchoRequest, 0x4242, 1)
                    .payload("abcdefghijklmnopqrstuvwxyz0123456789")
                    .build();
    auto out = roundtrip(kWan, req, kWan);
    ASSERT_EQ(out.size(), 1u);
    Bytes expected = PacketBuilder()
                         .eth(wan_mac(), kClientMac)
                         .ipv4("10.10.1.100", "10.10.1.2")
                         .ttl(64)
                         .ip_id(7)
                         .icmp_echo(net::kIcmpEchoReply, 0x4242, 1)
                         .payload("abcdefghijklmnopqrstuvwxyz0123456789")
                         .build();
    EXPECT_TRUE(FramesEqual(expected, out[0]));
    EXPECT_EQ(counter(Counter::icmp_echo_replies), 1u);
}

TEST_F(ArpIcmpTest, PingDirectorAddressOnLan) {
    Bytes req = PacketBuilder()
                    .eth(kRs1Mac, lan_mac())
                    .ipv4("10.10.2.2", "10.10.2.1")
                    .icmp_echo(net::kIcmpEchoRequest, 1, 9)
                    .build();
    auto out = roundtrip(kLan, req, kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4("10.10.2.1", "10.10.2.2")
                                .icmp_echo(net::kIcmpEchoReply, 1, 9)
                                .build(),
                            out[0]));
}

TEST_F(ArpIcmpTest, BadIcmpChecksumAndOtherTypesDropped) {
    Bytes bad = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4("10.10.1.2", "10.10.1.100")
                    .icmp_echo(net::kIcmpEchoRequest, 1, 1)
                    .build();
    bad[14 + 20 + 2] ^= 0x55;
    EXPECT_TRUE(roundtrip(kWan, bad, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_icmp_malformed), 1u);
    Bytes reply = PacketBuilder()
                      .eth(kClientMac, wan_mac())
                      .ipv4("10.10.1.2", "10.10.1.100")
                      .icmp_echo(net::kIcmpEchoReply, 1, 1)
                      .build();
    EXPECT_TRUE(roundtrip(kWan, reply, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_icmp_unhandled), 1u);
}

TEST_F(ArpIcmpTest, FrameForAnotherMacOrUnknownEthertypeDropped) {
    Bytes req = PacketBuilder()
                    .eth(kClientMac, mac("02:99:99:99:99:99"))
                    .ipv4("10.10.1.2", "10.10.1.100")
                    .icmp_echo(net::kIcmpEchoRequest, 1, 1)
                    .build();
    EXPECT_TRUE(roundtrip(kWan, req, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_not_for_us), 1u);
    Bytes lldp = req;
    const net::MacAddr wan = wan_mac();  // one object: begin and end must point into it
    std::copy(wan.b, wan.b + 6, lldp.begin());
    lldp[12] = 0x88;
    lldp[13] = 0xcc;
    EXPECT_TRUE(roundtrip(kWan, lldp, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_ethertype), 1u);
}

}  // namespace
}  // namespace xvs::test
