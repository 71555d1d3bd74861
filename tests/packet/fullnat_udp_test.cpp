// Packet tests: FULLNAT for UDP — both directions, checksum-less datagrams, timeout.
#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

class FullnatUdpTest : public PipelineTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        start_worker();
        learn_neighbours();
    }
    PacketBuilder from_client(uint16_t cport, const std::string& data) {
        PacketBuilder b;
        b.eth(kClientMac, wan_mac()).ipv4("10.10.1.2", "10.10.1.100").udp(cport, 53).payload(data);
        return b;
    }
};

TEST_F(FullnatUdpTest, DatagramBothWays) {
    auto out = roundtrip(kWan, from_client(33000, "query-1").build(), kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
    const auto* udp = reinterpret_cast<const net::UdpHdr*>(out[0].data() + 34);
    const bool rs1 = ip4->daddr == ip("10.10.2.2");
    const char* rs = rs1 ? "10.10.2.2" : "10.10.2.3";
    const net::MacAddr rs_mac = rs1 ? kRs1Mac : kRs2Mac;
    const uint16_t lport = net::ntoh16(udp->sport);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), rs_mac)
                                .ipv4("10.10.2.100", rs)
                                .udp(lport, 5353)
                                .payload("query-1")
                                .build(),
                            out[0]));
    Bytes reply = PacketBuilder()
                      .eth(rs_mac, lan_mac())
                      .ipv4(rs, "10.10.2.100")
                      .udp(5353, lport)
                      .payload("answer-1!")
                      .build();
    out = roundtrip(kLan, reply, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4("10.10.1.100", "10.10.1.2")
                                .udp(53, 33000)
                                .payload("answer-1!")
                                .build(),
                            out[0]));
    // The second datagram of the flow uses the same connection.
    out = roundtrip(kWan, from_client(33000, "query-2").build(), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 1u);
}

TEST_F(FullnatUdpTest, ZeroChecksumStaysZero) {
    auto out = roundtrip(kWan, from_client(33001, "nocsum").udp_no_checksum().build(), kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* udp = reinterpret_cast<const net::UdpHdr*>(out[0].data() + 34);
    EXPECT_EQ(udp->checksum, 0);
}

TEST_F(FullnatUdpTest, FlowExpiresAfterUdpTimeout) {
    lb::Timeouts t = director->timeouts();
    t.udp = 5;
    director->timeouts_set(t);
    director->commit();
    ASSERT_EQ(roundtrip(kWan, from_client(33002, "a").build(), kLan).size(), 1u);
    worker->advance_clock(4000);
    poll();
    EXPECT_EQ(worker->conns().in_use(), 1u);
    worker->advance_clock(1200);
    poll();
    EXPECT_EQ(worker->conns().in_use(), 0u);
    EXPECT_EQ(counter(Counter::conns_expired), 1u);
}

TEST_F(FullnatUdpTest, UdpToPortWithoutServiceDropped) {
    Bytes d = PacketBuilder()
                  .eth(kClientMac, wan_mac())
                  .ipv4("10.10.1.2", "10.10.1.100")
                  .udp(33000, 123)
                  .payload("ntp")
                  .build();
    EXPECT_TRUE(roundtrip(kWan, d, kLan).empty());
    EXPECT_EQ(counter(Counter::drop_no_service), 1u);
}

TEST_F(FullnatUdpTest, BadUdpLengthDropped) {
    Bytes d = from_client(33000, "abc").build();
    d[34 + 4] = 0;
    d[34 + 5] = 200;  // UDP length beyond the IP payload
    EXPECT_TRUE(roundtrip(kWan, d, kLan).empty());
    d[34 + 5] = 4;  // below the header size
    EXPECT_TRUE(roundtrip(kWan, d, kLan).empty());
    EXPECT_EQ(counter(Counter::drop_udp_header), 2u);
}

TEST_F(FullnatUdpTest, LocalPortExhaustionIsCounted) {
    // One local address with a tiny range: replace the LIP by one with 2 ports.
    auto key = lb::make_service_key(17, *net::parse_ipv4("10.10.1.100"), 53);
    ASSERT_TRUE(director->laddr_del(key, *net::parse_ipv4("10.10.2.100")).ok());
    director->commit();
    EXPECT_TRUE(roundtrip(kWan, from_client(1, "x").build(), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_no_laddr), 1u);
}

}  // namespace
}  // namespace xvs::test
