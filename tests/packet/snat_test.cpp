// Packet tests: SNAT (masquerading, DPVS match services; lb/xmit/snat.h). The inside host is
// 10.10.2.2 (lan), the outside host 10.10.1.2 (wan), the WAN address the director's own
// 10.10.1.1. Exact frames both ways for TCP, UDP and ICMP echo (identifier mapped like a
// port), TTL decremented as a router does, and every refusal counted: no match, TCP without
// SYN, an exhausted WAN port pool, expired TTL, unrelated packets to the WAN address.
#include "fixture/pipeline.h"
#include "lb/laddr.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr const char* kInside = "10.10.2.2";
constexpr const char* kInside2 = "10.10.2.3";
constexpr const char* kOutside = "10.10.1.2";
constexpr const char* kWanIp = "10.10.1.1";

class SnatTest : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        for (uint8_t proto : {uint8_t(6), uint8_t(17), uint8_t(1)}) {
            lb::MatchKey k;
            k.proto = proto;
            k.src = *lb::parse_addr_range("10.10.2.2-10.10.2.254");
            k.oif = "wan";
            k.iif = "lan";
            ASSERT_TRUE(director->match_add({k, "", "rr"}));
            lb::DestSpec d;
            d.addr = *net::parse_ipv4(kWanIp);
            d.port = 0;
            d.fwd = lb::FwdMode::Snat;
            auto r = director->match_dest_add(k, d);
            ASSERT_TRUE(r) << r.error();
        }
        director->commit();
        start_worker();
        learn_neighbours();
    }
    static PacketBuilder from_inside(const char* host = kInside) {
        PacketBuilder b;
        b.eth(host == kInside ? kRs1Mac : kRs2Mac, {}).ipv4(host, kOutside);
        return b;
    }
    PacketBuilder in(const char* host = kInside) {
        PacketBuilder b = from_inside(host);
        b.eth(host == kInside ? kRs1Mac : kRs2Mac, lan_mac());
        return b;
    }
    PacketBuilder from_outside() {
        PacketBuilder b;
        b.eth(kClientMac, wan_mac()).ipv4(kOutside, kWanIp);
        return b;
    }
    lb::LocalAddr* wan_pool() { return director->snapshot()->matches[0]->wan[0]; }
};

uint16_t sport_of(const Bytes& f) {
    return net::ntoh16(reinterpret_cast<const net::UdpHdr*>(f.data() + 34)->sport);
}
uint16_t echo_id_of(const Bytes& f) {
    return net::ntoh16(reinterpret_cast<const net::IcmpHdr*>(f.data() + 34)->id);
}

TEST_F(SnatTest, TcpHandshakeAndDataBothWays) {
    auto out =
        roundtrip(kLan, in().ttl(64).tcp(40000, 80).seq(1000).flags(net::kTcpSyn).build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint16_t wport = sport_of(out[0]);
    EXPECT_GE(wport, 1025);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4(kWanIp, kOutside)
                                .ttl(63)
                                .tcp(wport, 80)
                                .seq(1000)
                                .flags(net::kTcpSyn)
                                .build(),
                            out[0]));
    EXPECT_TRUE(wan_pool()->workers[0].pool->in_use(wport));

    out = roundtrip(kWan,
                    from_outside()
                        .ttl(64)
                        .tcp(80, wport)
                        .seq(5000)
                        .ack(1001)
                        .flags(net::kTcpSyn | net::kTcpAck)
                        .build(),
                    kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4(kOutside, kInside)
                                .ttl(63)
                                .tcp(80, 40000)
                                .seq(5000)
                                .ack(1001)
                                .flags(net::kTcpSyn | net::kTcpAck)
                                .build(),
                            out[0]));

    out = roundtrip(kLan,
                    in().tcp(40000, 80)
                        .seq(1001)
                        .ack(5001)
                        .flags(net::kTcpAck | net::kTcpPsh)
                        .payload("GET /")
                        .build(),
                    kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4(kWanIp, kOutside)
                                .ttl(63)
                                .tcp(wport, 80)
                                .seq(1001)
                                .ack(5001)
                                .flags(net::kTcpAck | net::kTcpPsh)
                                .payload("GET /")
                                .build(),
                            out[0]));
    out = roundtrip(kWan,
                    from_outside()
                        .tcp(80, wport)
                        .seq(5001)
                        .ack(1006)
                        .flags(net::kTcpAck)
                        .payload("200 OK")
                        .build(),
                    kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4(kOutside, kInside)
                                .ttl(63)
                                .tcp(80, 40000)
                                .seq(5001)
                                .ack(1006)
                                .flags(net::kTcpAck)
                                .payload("200 OK")
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::conns_created), 1u);
    EXPECT_EQ(counter(Counter::lb_forwarded), 4u);
    const auto& wan_dest = *director->matches()[0]->dests[0];
    EXPECT_EQ(wan_dest.stats[0].inpkts, 2u);
    EXPECT_EQ(wan_dest.stats[0].outpkts, 2u);
}

TEST_F(SnatTest, UdpDatagramsAndZeroChecksum) {
    auto out = roundtrip(kLan, in().udp(5000, 53).payload("query").build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint16_t wport = sport_of(out[0]);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4(kWanIp, kOutside)
                                .ttl(63)
                                .udp(wport, 53)
                                .payload("query")
                                .build(),
                            out[0]));
    out = roundtrip(kWan, from_outside().udp(53, wport).payload("answer").build(), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4(kOutside, kInside)
                                .ttl(63)
                                .udp(53, 5000)
                                .payload("answer")
                                .build(),
                            out[0]));
    // Another source port of the same host is another flow with another WAN port; a datagram
    // without checksum keeps none.
    out = roundtrip(kLan, in().udp(5001, 53).udp_no_checksum().payload("q2").build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_NE(sport_of(out[0]), wport);
    EXPECT_EQ(reinterpret_cast<const net::UdpHdr*>(out[0].data() + 34)->checksum, 0);
    EXPECT_EQ(counter(Counter::conns_created), 2u);
}

TEST_F(SnatTest, PingFromTwoHostsWithTheSameIdentifier) {
    auto out1 = roundtrip(
        kLan, in(kInside).icmp_echo(net::kIcmpEchoRequest, 0x1111, 1).payload("ping").build(),
        kWan);
    auto out2 = roundtrip(
        kLan, in(kInside2).icmp_echo(net::kIcmpEchoRequest, 0x1111, 1).payload("ping").build(),
        kWan);
    ASSERT_EQ(out1.size(), 1u);
    ASSERT_EQ(out2.size(), 1u);
    const uint16_t id1 = echo_id_of(out1[0]), id2 = echo_id_of(out2[0]);
    EXPECT_NE(id1, id2);  // mapped like ports: one WAN identifier per inside flow
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4(kWanIp, kOutside)
                                .ttl(63)
                                .icmp_echo(net::kIcmpEchoRequest, id1, 1)
                                .payload("ping")
                                .build(),
                            out1[0]));
    auto back = roundtrip(
        kWan, from_outside().icmp_echo(net::kIcmpEchoReply, id2, 1).payload("ping").build(), kLan);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs2Mac)
                                .ipv4(kOutside, kInside2)
                                .ttl(63)
                                .icmp_echo(net::kIcmpEchoReply, 0x1111, 1)
                                .payload("ping")
                                .build(),
                            back[0]));
    back = roundtrip(
        kWan, from_outside().icmp_echo(net::kIcmpEchoReply, id1, 1).payload("ping").build(), kLan);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(reinterpret_cast<const net::Ipv4Hdr*>(back[0].data() + 14)->daddr, ip(kInside));
    EXPECT_EQ(echo_id_of(back[0]), 0x1111);
    // The director still answers a ping to its WAN address itself.
    auto echo =
        roundtrip(kWan, from_outside().icmp_echo(net::kIcmpEchoRequest, 0x2222, 7).build(), kWan);
    ASSERT_EQ(echo.size(), 1u);
    EXPECT_EQ(reinterpret_cast<const net::IcmpHdr*>(echo[0].data() + 34)->type,
              net::kIcmpEchoReply);
    EXPECT_EQ(counter(Counter::icmp_echo_replies), 1u);
}

TEST_F(SnatTest, RefusalsAreCounted) {
    // Not from a matched source (10.10.2.1 is outside 10.10.2.2-254... use another subnet).
    send(kLan,
         PacketBuilder().eth(kRs1Mac, lan_mac()).ipv4("10.10.9.9", kOutside).udp(1, 53).build());
    // TCP without SYN and no conn.
    send(kLan, in().tcp(40001, 80).flags(net::kTcpAck).build());
    // TTL that would reach 0.
    send(kLan, in().ttl(1).udp(5002, 53).build());
    // An unrelated datagram and an unrelated echo reply to the WAN address.
    send(kWan, from_outside().udp(53, 40000).build());
    send(kWan, from_outside().icmp_echo(net::kIcmpEchoReply, 4242, 1).build());
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_EQ(counter(Counter::drop_not_local), 1u);
    EXPECT_EQ(counter(Counter::drop_tcp_no_conn), 1u);
    EXPECT_EQ(counter(Counter::drop_ttl_expired), 1u);
    EXPECT_EQ(counter(Counter::drop_to_director), 1u);
    EXPECT_EQ(counter(Counter::drop_icmp_unhandled), 1u);
}

// The match holds only for its iif, its oif (the route toward the destination) and, when
// set, its destination range; the first match service in order wins.
TEST_F(SnatTest, IifOifAndDestinationRangeSelect) {
    // Inside host to another inside host (route via lan, not the oif): no match.
    send(kLan,
         PacketBuilder().eth(kRs1Mac, lan_mac()).ipv4(kInside, "10.10.2.77").udp(7, 53).build());
    // Right source and destination, but arriving on wan (not the iif).
    send(kWan,
         PacketBuilder().eth(kClientMac, wan_mac()).ipv4(kInside, kOutside).udp(7, 53).build());
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_EQ(counter(Counter::drop_not_local), 2u);

    // A UDP match for one destination only, ahead of the catch-all, with another WAN address.
    ASSERT_TRUE(director->address_add(*net::parse_ipv4("10.10.1.5"), 24, "wan"));
    lb::MatchKey only;
    only.proto = 17;
    only.dst = *lb::parse_addr_range("10.10.1.9:53");
    only.oif = "wan";
    ASSERT_TRUE(director->match_add({only, "", "rr"}));
    lb::DestSpec d;
    d.addr = *net::parse_ipv4("10.10.1.5");
    d.fwd = lb::FwdMode::Snat;
    ASSERT_TRUE(director->match_dest_add(only, d));
    director->commit();
    worker->neighbours().add_static(ip("10.10.1.9"), kClientMac, kWan);
    // The catch-all was added first, so it still wins: 10.10.1.1.
    auto out = roundtrip(kLan, in().udp(8000, 53).build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14)->saddr, ip(kWanIp));
    // Without the catch-all, 10.10.1.9:53 matches the narrow one and 10.10.1.2 nothing.
    lb::MatchKey all = *director->matches()[1]->match;
    ASSERT_EQ(all.proto, 17);
    ASSERT_TRUE(director->match_del(all));
    director->commit();
    out = roundtrip(
        kLan,
        PacketBuilder().eth(kRs1Mac, lan_mac()).ipv4(kInside, "10.10.1.9").udp(8001, 53).build(),
        kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14)->saddr, ip("10.10.1.5"));
    send(kLan,
         PacketBuilder().eth(kRs1Mac, lan_mac()).ipv4(kInside, "10.10.1.9").udp(8002, 54).build());
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_EQ(counter(Counter::drop_not_local), 3u);
}

TEST_F(SnatTest, ExhaustedWanPortsAreCounted) {
    lb::PortPool& pool = *wan_pool()->workers[0].pool;
    std::vector<uint16_t> held;
    while (auto p = pool.alloc()) held.push_back(*p);  // as if other flows held every port
    send(kLan, in().udp(6000, 53).build());
    send(kLan, in().tcp(40002, 80).flags(net::kTcpSyn).build());
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_EQ(counter(Counter::drop_laddr_exhausted), 2u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    pool.free(held.back());
    auto out = roundtrip(kLan, in().udp(6000, 53).build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(sport_of(out[0]), held.back());
    for (uint16_t p : held) pool.free(p);
}

}  // namespace
}  // namespace xvs::test
