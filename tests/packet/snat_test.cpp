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
    // TTL that would reach 0: time exceeded back from the inside hosts' gateway address.
    const Bytes expiring = in().ttl(1).udp(5002, 53).build();
    send(kLan, expiring);
    // An unrelated datagram and an unrelated echo reply to the WAN address.
    send(kWan, from_outside().udp(53, 40000).build());
    send(kWan, from_outside().icmp_echo(net::kIcmpEchoReply, 4242, 1).build());
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    auto back = recv(kLan);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4("10.10.2.1", kInside)
                                .tos(0xc0)
                                .ip_id(uint16_t(back[0][18] << 8 | back[0][19]))
                                .frag_off(0)
                                .icmp_error(11, 0, 0, ip_packet(expiring))
                                .build(),
                            back[0]));
    EXPECT_EQ(counter(Counter::icmp_time_exceeded_sent), 1u);
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

// ---- ICMP errors related to a SNAT conn ------------------------------------------------------

// The first 28 bytes of an IPv4 packet (header + 8 bytes of L4), as routers quote it.
Bytes quote28(const Bytes& frame) {
    Bytes ip = ip_packet(frame);
    ip.resize(28);
    return ip;
}

constexpr const char* kRouter = "192.0.2.1";  // a router on the outside path

// A router beyond the WAN could not forward the translated SYN (WAN:wport -> outside:80) in
// one piece: its frag-needed to the WAN address reaches the inside host with the quote as the
// host sent it (inside:40000 -> outside:80), every checksum fixed, the router's source kept,
// TTL decremented as SNAT forwarding does.
TEST_F(SnatTest, FragNeededFromOutsideReachesTheInsideHostTranslated) {
    auto out = roundtrip(kLan, in().tcp(40000, 80).seq(1000).flags(net::kTcpSyn).build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint16_t wport = sport_of(out[0]);
    auto sent = [&](const char* src, uint16_t sport, uint8_t ttl) {
        return PacketBuilder()
            .ipv4(src, kOutside)
            .ttl(ttl)
            .tcp(sport, 80)
            .seq(1001)
            .ack(5001)
            .flags(net::kTcpAck)
            .payload(std::string(1400, 'x'))
            .build();
    };
    Bytes err = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4(kRouter, kWanIp)
                    .ttl(60)
                    .icmp_error(3, 4, 1400, quote28(sent(kWanIp, wport, 62)))
                    .build();
    out = roundtrip(kWan, err, kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4(kRouter, kInside)
                                .ttl(59)
                                .icmp_error(3, 4, 1400, quote28(sent(kInside, 40000, 62)))
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 1u);
}

// The outside host has nothing on the datagram's port: its port unreachable quotes the whole
// datagram (payload and UDP checksum in the quote, both fixed on the way back).
TEST_F(SnatTest, PortUnreachableFromTheOutsideHostQuotingTheWholeDatagram) {
    auto out = roundtrip(kLan, in().udp(5000, 53).payload("query").build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint16_t wport = sport_of(out[0]);
    auto datagram = [&](const char* src, uint16_t sport) {
        return ip_packet(
            PacketBuilder().ipv4(src, kOutside).ttl(63).udp(sport, 53).payload("query").build());
    };
    Bytes err = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4(kOutside, kWanIp)
                    .icmp_error(3, 3, 0, datagram(kWanIp, wport))
                    .build();
    out = roundtrip(kWan, err, kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4(kOutside, kInside)
                                .ttl(63)
                                .icmp_error(3, 3, 0, datagram(kInside, 5000))
                                .build(),
                            out[0]));
}

// The other direction: the inside host refuses a reply that reached it (port unreachable
// quoting outside:53 -> inside:5000); the outside host sees it from the WAN address about
// outside:53 -> WAN:wport.
TEST_F(SnatTest, PortUnreachableFromTheInsideHostLeavesFromTheWanAddress) {
    auto out = roundtrip(kLan, in().udp(5000, 53).payload("query").build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint16_t wport = sport_of(out[0]);
    auto reply = [&](const char* dst, uint16_t dport) {
        return ip_packet(
            PacketBuilder().ipv4(kOutside, dst).ttl(63).udp(53, dport).payload("late").build());
    };
    Bytes err = in().icmp_error(3, 3, 0, reply(kInside, 5000)).build();
    out = roundtrip(kLan, err, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4(kWanIp, kOutside)
                                .ttl(63)
                                .icmp_error(3, 3, 0, reply(kWanIp, wport))
                                .build(),
                            out[0]));
}

// traceroute -I / a ping with a small TTL: a router's time exceeded quotes the translated echo
// request (WAN, mapped identifier); the inside host gets it about its own request and id.
TEST_F(SnatTest, TimeExceededAboutAnEchoRequestReachesThePinger) {
    auto out = roundtrip(
        kLan, in().ttl(2).icmp_echo(net::kIcmpEchoRequest, 0x1111, 3).payload("ping").build(),
        kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint16_t id = echo_id_of(out[0]);
    auto request = [&](const char* src, uint16_t echo_id) {
        return ip_packet(PacketBuilder()
                             .ipv4(src, kOutside)
                             .ttl(1)
                             .icmp_echo(net::kIcmpEchoRequest, echo_id, 3)
                             .payload("ping")
                             .build());
    };
    Bytes err = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4(kRouter, kWanIp)
                    .icmp_error(11, 0, 0, request(kWanIp, id))
                    .build();
    out = roundtrip(kWan, err, kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4(kRouter, kInside)
                                .ttl(63)
                                .icmp_error(11, 0, 0, request(kInside, 0x1111))
                                .build(),
                            out[0]));
    // An error about an identifier no conn has is unrelated.
    send(kWan, PacketBuilder()
                   .eth(kClientMac, wan_mac())
                   .ipv4(kRouter, kWanIp)
                   .icmp_error(11, 0, 0, request(kWanIp, uint16_t(id + 1)))
                   .build());
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_EQ(counter(Counter::drop_icmp_unrelated), 1u);
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 1u);
}

// An error whose TTL would reach 0 is not forwarded, as SNAT's own packets (and gets no time
// exceeded: no ICMP error about an ICMP error).
TEST_F(SnatTest, RelatedErrorWithTtlOneIsDropped) {
    auto out = roundtrip(kLan, in().udp(5000, 53).build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint16_t wport = sport_of(out[0]);
    send(kWan,
         PacketBuilder()
             .eth(kClientMac, wan_mac())
             .ipv4(kRouter, kWanIp)
             .ttl(1)
             .icmp_error(3, 1, 0,
                         quote28(PacketBuilder().ipv4(kWanIp, kOutside).udp(wport, 53).build()))
             .build());
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_EQ(counter(Counter::drop_ttl_expired), 1u);
    EXPECT_EQ(counter(Counter::icmp_time_exceeded_sent), 0u);
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 0u);
}

// ICMP echo conns live by the ICMP timeout (ipvs_defs timeouts { icmp N }), not UDP's.
TEST_F(SnatTest, EchoConnUsesTheIcmpTimeout) {
    lb::Timeouts t = director->timeouts();
    t.udp = 300;
    t.icmp = 17;
    director->timeouts_set(t);
    director->commit();
    auto out = roundtrip(
        kLan, in().icmp_echo(net::kIcmpEchoRequest, 0x2222, 1).payload("ping").build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    lb::ConnRef ref = worker->conns().lookup(lb::conn_key(
        net::kIpProtoIcmp, ip(kInside), ip(kOutside), net::hton16(0x2222), net::hton16(0x2222)));
    ASSERT_TRUE(ref.conn);
    EXPECT_EQ(ref.conn->expires(worker->now_ms()), worker->now_ms() + 17'000);
    out = roundtrip(kLan, in().udp(5000, 53).build(), kWan);
    ASSERT_EQ(out.size(), 1u);
    ref = worker->conns().lookup(lb::conn_key(net::kIpProtoUdp, ip(kInside), ip(kOutside),
                                              net::hton16(5000), net::hton16(53)));
    ASSERT_TRUE(ref.conn);
    EXPECT_EQ(ref.conn->expires(worker->now_ms()), worker->now_ms() + 300'000);
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
