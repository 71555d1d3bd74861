// Packet tests: TOA (TCP option 254, client address and port) in FULLNAT — inserted first in
// every client->RS packet that acks the RS SYN-ACK until the client acks RS data (the
// third-handshake ACK, ACK+data, FIN+ACK+data, retransmissions), never in SYN or RST; the RS
// SYN-ACK's MSS lowered by 8; forged client 254 options never reach the RS; full option space
// handled by pruning, or forwarded without TOA and counted.
#include "fixture/pipeline.h"
#include "lb/service.h"
#include "net/checksum.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 40000;
const Bytes kSynOpts = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};  // MSS 1460
const Bytes kSynAckOptsIn = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 1, 1, 3, 3, 7};
const Bytes kSynAckOptsOut = {2, 4, 0x05, 0xac, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 1, 1, 3, 3, 7};  // 1452
const Bytes kTsOpts = {1, 1, 8, 10, 0, 0, 0, 2, 0, 0, 0, 9};
// 254, 8, client port 40000 (0x9c40), client 10.10.1.2
const Bytes kToa = {254, 8, 0x9c, 0x40, 10, 10, 1, 2};

Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

class ToaTest : public PipelineTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        auto key = lb::make_service_key(6, *net::parse_ipv4("10.10.1.100"), 80);
        ASSERT_TRUE(director->service_edit(lb::ServiceSpec{6, *net::parse_ipv4("10.10.1.100"), 80, "rr",
                                                           lb::FwdMode::FullNat, lb::kSvcFlagToa})
                        .ok());
        (void)key;
        director->commit();
        start_worker();
        learn_neighbours();
    }

    Bytes client(uint32_t seq, uint32_t ack, uint8_t flags, const std::string& data = "",
                 Bytes opts = {}) {
        return PacketBuilder().eth(kClientMac, wan_mac()).ipv4("10.10.1.2", "10.10.1.100")
            .tcp(kCport, 80).seq(seq).ack(ack).flags(flags).tcp_options(std::move(opts))
            .payload(data).build();
    }
    Bytes to_rs(uint32_t seq, uint32_t ack, uint8_t flags, const std::string& data = "",
                Bytes opts = {}) {
        return PacketBuilder().eth(lan_mac(), rs_mac_).ipv4("10.10.2.100", rs_)
            .tcp(lport_, 8080).seq(seq).ack(ack).flags(flags).tcp_options(std::move(opts))
            .payload(data).build();
    }
    Bytes rs(uint32_t seq, uint32_t ack, uint8_t flags, const std::string& data = "", Bytes opts = {}) {
        return PacketBuilder().eth(rs_mac_, lan_mac()).ipv4(rs_, "10.10.2.100")
            .tcp(8080, lport_).seq(seq).ack(ack).flags(flags).tcp_options(std::move(opts))
            .payload(data).build();
    }
    Bytes to_client(uint32_t seq, uint32_t ack, uint8_t flags, const std::string& data = "",
                    Bytes opts = {}) {
        return PacketBuilder().eth(wan_mac(), kClientMac).ipv4("10.10.1.100", "10.10.1.2")
            .tcp(80, kCport).seq(seq).ack(ack).flags(flags).tcp_options(std::move(opts))
            .payload(data).build();
    }

    // SYN (no TOA) and RS SYN-ACK (MSS clamped); the client's ACK is left to the test.
    void handshake() {
        auto out = roundtrip(kWan, client(1000, 0, net::kTcpSyn, "", kSynOpts), kLan);
        ASSERT_EQ(out.size(), 1u);
        const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
        const auto* tcp = reinterpret_cast<const net::TcpHdr*>(out[0].data() + 34);
        rs_ = ip4->daddr == ip("10.10.2.2") ? "10.10.2.2" : "10.10.2.3";
        rs_mac_ = ip4->daddr == ip("10.10.2.2") ? kRs1Mac : kRs2Mac;
        lport_ = net::ntoh16(tcp->sport);
        ASSERT_TRUE(FramesEqual(to_rs(1000, 0, net::kTcpSyn, "", kSynOpts), out[0])) << "SYN must not carry TOA";
        out = roundtrip(kLan, rs(5000, 1001, net::kTcpSyn | net::kTcpAck, "", kSynAckOptsIn), kWan);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_TRUE(FramesEqual(to_client(5000, 1001, net::kTcpSyn | net::kTcpAck, "", kSynAckOptsOut), out[0]));
        EXPECT_EQ(counter(Counter::toa_mss_clamped), 1u);
    }
    Bytes forward(const Bytes& from_client) {
        auto out = roundtrip(kWan, from_client, kLan);
        EXPECT_EQ(out.size(), 1u);
        return out.empty() ? Bytes{} : out[0];
    }

    const char* rs_ = "";
    net::MacAddr rs_mac_{};
    uint16_t lport_ = 0;
};

TEST_F(ToaTest, ThirdHandshakeAckCarriesToa) {
    handshake();
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, net::kTcpAck, "", kToa), forward(client(1001, 5001, net::kTcpAck))));
    EXPECT_EQ(counter(Counter::toa_inserted), 1u);
}

TEST_F(ToaTest, EveryPacketUntilRsDataIsAckedCarriesToa) {
    handshake();
    forward(client(1001, 5001, net::kTcpAck, "", kTsOpts));
    // Request data, still acking only the SYN-ACK: TOA again, options kept after it.
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, net::kTcpAck | net::kTcpPsh, "GET /", cat(kToa, kTsOpts)),
                            forward(client(1001, 5001, net::kTcpAck | net::kTcpPsh, "GET /", kTsOpts))));
    // RS answers; the client acks RS data: no TOA from now on.
    roundtrip(kLan, rs(5001, 1006, net::kTcpAck, "200 OK"), kWan);
    EXPECT_TRUE(FramesEqual(to_rs(1006, 5007, net::kTcpAck, "", kTsOpts),
                            forward(client(1006, 5007, net::kTcpAck, "", kTsOpts))));
    // ... even a retransmission of old data that acks only the SYN-ACK again.
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, net::kTcpAck, "GET /"),
                            forward(client(1001, 5001, net::kTcpAck, "GET /"))));
    EXPECT_EQ(counter(Counter::toa_inserted), 2u);
}

TEST_F(ToaTest, AckWithDataAsFirstPacketAfterSynAck) {
    handshake();
    std::string body(1448, 'q');  // a full-MSS segment: fits because the MSS was clamped
    Bytes out = forward(client(1001, 5001, net::kTcpAck, body));
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, net::kTcpAck, body, kToa), out));
    EXPECT_EQ(out.size(), 14u + 20 + 20 + 8 + 1448);
}

TEST_F(ToaTest, FinAckWithDataAsFirstPacket) {
    handshake();
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, net::kTcpFin | net::kTcpAck, "bye", kToa),
                            forward(client(1001, 5001, net::kTcpFin | net::kTcpAck, "bye"))));
}

TEST_F(ToaTest, OutOfOrderDataBeforeTheAckStillGetsToa) {
    handshake();
    EXPECT_TRUE(FramesEqual(to_rs(1101, 5001, net::kTcpAck, "later", kToa),
                            forward(client(1101, 5001, net::kTcpAck, "later"))));
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, net::kTcpAck, "", kToa), forward(client(1001, 5001, net::kTcpAck))));
}

TEST_F(ToaTest, RstNeverCarriesToa) {
    handshake();
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, net::kTcpRst | net::kTcpAck),
                            forward(client(1001, 5001, net::kTcpRst | net::kTcpAck))));
    EXPECT_EQ(counter(Counter::toa_inserted), 0u);
}

TEST_F(ToaTest, ForgedClientToaIsReplaced) {
    handshake();
    const Bytes forged = {254, 8, 0, 1, 6, 6, 6, 6};
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, net::kTcpAck, "x", kToa),
                            forward(client(1001, 5001, net::kTcpAck, "x", forged))));
    EXPECT_EQ(counter(Counter::toa_forged_removed), 1u);
}

TEST_F(ToaTest, FullOptionSpacePrunesSackBlocks) {
    handshake();
    // NOP NOP TS (12) + NOP NOP SACK with 3 blocks (2 + 26) = 40 bytes: no room for 8 more.
    Bytes full = kTsOpts;
    Bytes sack = {1, 1, 5, 26};
    for (int i = 0; i < 24; ++i) sack.push_back(uint8_t(i + 1));
    full = cat(full, sack);
    ASSERT_EQ(full.size(), 40u);
    Bytes out = forward(client(1001, 5001, net::kTcpAck, "data", full));
    const auto* tcp = reinterpret_cast<const net::TcpHdr*>(out.data() + 34);
    ASSERT_GE(tcp->header_len(), 28u);
    EXPECT_TRUE(std::equal(kToa.begin(), kToa.end(), out.begin() + 54)) << hexdump(out);
    EXPECT_EQ(counter(Counter::toa_pruned_sack), 1u);
    // The payload is intact at the end.
    EXPECT_EQ(std::string(out.end() - 4, out.end()), "data");
    // Checksums verify.
    auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out.data() + 14);
    EXPECT_EQ(net::csum_fold(net::csum_partial(ip4, 20, 0)), 0);
    size_t l4len = net::ntoh16(ip4->total_length) - 20;
    EXPECT_EQ(net::csum_fold(net::csum_partial(out.data() + 34, l4len,
                                               net::ipv4_pseudo_sum(ip4->saddr, ip4->daddr, 6, uint16_t(l4len)))),
              0);
}

TEST_F(ToaTest, ServiceWithoutToaLeavesPacketsAlone) {
    ASSERT_TRUE(director->service_edit(lb::ServiceSpec{6, *net::parse_ipv4("10.10.1.100"), 80, "rr"}).ok());
    director->commit();
    auto out = roundtrip(kWan, client(1000, 0, net::kTcpSyn, "", kSynOpts), kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
    const auto* tcp = reinterpret_cast<const net::TcpHdr*>(out[0].data() + 34);
    rs_ = ip4->daddr == ip("10.10.2.2") ? "10.10.2.2" : "10.10.2.3";
    rs_mac_ = ip4->daddr == ip("10.10.2.2") ? kRs1Mac : kRs2Mac;
    lport_ = net::ntoh16(tcp->sport);
    out = roundtrip(kLan, rs(5000, 1001, net::kTcpSyn | net::kTcpAck, "", kSynAckOptsIn), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(5000, 1001, net::kTcpSyn | net::kTcpAck, "", kSynAckOptsIn), out[0]));
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, net::kTcpAck), forward(client(1001, 5001, net::kTcpAck))));
    EXPECT_EQ(counter(Counter::toa_inserted), 0u);
}

// TOA's room is capped by the egress link's MTU, which it takes from the conn's cached next
// hop (stack::egress_port) while no route changed, else from the routes: with lan at 1400, a
// 1400-byte segment cannot take 8 bytes of TOA; once a host route takes the RS through a
// gateway on wan (1500), the next one can, and leaves by wan.
class ToaSmallLanMtuTest : public ToaTest {
  protected:
    void SetUp() override {
        lan_mtu = 1400;
        ToaTest::SetUp();
    }
};

TEST_F(ToaSmallLanMtuTest, MtuFollowsTheRouteOfTheCachedNextHop) {
    handshake();
    const std::string data(1400 - 40, 'd');
    Bytes out = forward(client(1001, 5001, net::kTcpAck, data));
    EXPECT_EQ(out.size(), 14u + 1400u);  // forwarded without TOA
    EXPECT_EQ(counter(Counter::toa_fail_mtu), 1u);
    EXPECT_EQ(counter(Counter::toa_inserted), 0u);
    EXPECT_GE(counter(Counter::nh_cache_hits), 1u);  // the conn's next hop toward the RS is cached

    const net::MacAddr gateway_mac{{0x02, 0, 0, 0, 0x1a, 0x09}};
    worker->neighbours().add_static(ip("10.10.1.9"), gateway_mac, kWan);
    ASSERT_TRUE(director
                    ->route_add(*net::parse_ipv4_prefix(std::string(rs_) + "/32"),
                                *net::parse_ipv4("10.10.1.9"), "wan")
                    .ok());
    director->commit();
    auto via_wan = roundtrip(kWan, client(1001 + 1360, 5001, net::kTcpAck, data), kWan);
    ASSERT_EQ(via_wan.size(), 1u);
    EXPECT_EQ(via_wan[0].size(), 14u + 1400u + kToa.size());
    EXPECT_TRUE(std::equal(gateway_mac.b, gateway_mac.b + 6, via_wan[0].begin()));
    EXPECT_EQ(counter(Counter::toa_inserted), 1u);
    EXPECT_EQ(counter(Counter::toa_fail_mtu), 1u);
}

}  // namespace
}  // namespace xvs::test
