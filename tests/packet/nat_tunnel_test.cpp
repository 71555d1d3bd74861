// Packet tests: NatTun (issue 20), NAT carried over a tunnel both ways, through the real
// pipeline. Exact frames: client -> VIP becomes LIP -> RS outer IPIP (or GUE) around the DNATed
// inner packet (source still the client), with the SYN's MSS lowered by the tunnel overhead;
// the RS's reply in a tunnel to the LIP comes out as VIP -> client, its SYN-ACK MSS lowered too.
// Every checksum is recomputed from scratch by PacketBuilder, so FramesEqual checks the
// incremental updates. An inner packet too big for the tunnel gets frag-needed back; a reply
// outside the tunnel, and a tunnelled packet of no conn, are dropped and counted.
#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 40000;
constexpr const char* kClient = "10.10.1.2";
constexpr const char* kVipText = "10.10.1.100";
constexpr const char* kRs = "10.10.2.2";
constexpr const char* kLip = "10.10.2.100";
constexpr uint16_t kGuePort = 6080;

Bytes mss(uint16_t v) {
    return Bytes{2, 4, uint8_t(v >> 8), uint8_t(v & 0xff)};
}

class NatTunnelTest : public PipelineTest {
  protected:
    void configure(lb::TunType tun) {
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        ok(director->address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
        ok(director->address_add(*net::parse_ipv4("10.10.2.1"), 24, "lan"));
        for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
            const uint16_t vport = proto == 6 ? 80 : 53;
            lb::ServiceSpec s{proto, ip(kVipText), vport, "rr"};
            s.fwd = lb::FwdMode::NatTun;
            ok(director->service_add(s));
            const auto key = lb::make_service_key(proto, ip(kVipText), vport);
            lb::DestSpec d{ip(kRs), proto == 6 ? uint16_t(8080) : uint16_t(5353), 1};
            d.fwd = lb::FwdMode::NatTun;
            d.tun_type = tun;
            d.tun_port = tun == lb::TunType::Gue ? kGuePort : 0;
            ok(director->dest_add(key, d));
            ok(director->laddr_add(key, ip(kLip), "lan"));
        }
        director->commit();
        start_worker();
        learn_neighbours();
    }
    static uint16_t id_of(const Bytes& frame) { return uint16_t(frame[18] << 8 | frame[19]); }
    static uint16_t udp_sport_of(const Bytes& frame) {
        return uint16_t(frame[34] << 8 | frame[35]);
    }
    // The frame the director must send to the RS: eth, outer IPv4 LIP -> RS (id as sent, DF
    // and TOS copied from the inner header, TTL 64), IPIP or UDP(sport as sent) + GUE, inner.
    Bytes to_rs(const Bytes& inner_ip, const Bytes& got, bool gue) {
        PacketBuilder b;
        b.eth(lan_mac(), kRs1Mac).ipv4(kLip, kRs).ttl(64).ip_id(id_of(got)).tos(inner_ip[1]);
        b.frag_off(uint16_t((inner_ip[6] & 0x40) << 8));
        if (!gue) return b.ip_payload(4, inner_ip).build();
        Bytes body{0, 4, 0, 0};  // GUE v0, proto_ctype 4 (IPv4)
        body.insert(body.end(), inner_ip.begin(), inner_ip.end());
        return b.udp(udp_sport_of(got), kGuePort).udp_no_checksum().payload(body).build();
    }
    // What the RS (xvs-rs tunnel) sends back: outer RS -> LIP around its own reply.
    Bytes from_rs(const Bytes& inner_ip, bool gue) {
        PacketBuilder b;
        b.eth(kRs1Mac, lan_mac()).ipv4(kRs, kLip);
        if (!gue) return b.ip_payload(4, inner_ip).build();
        Bytes body{0, 4, 0, 0};
        body.insert(body.end(), inner_ip.begin(), inner_ip.end());
        return b.udp(50000, kGuePort).udp_no_checksum().payload(body).build();
    }
    void tcp_both_ways(bool gue) {
        const size_t overhead = gue ? 32 : 20;
        Bytes syn = PacketBuilder()
                        .eth(kClientMac, wan_mac())
                        .ipv4(kClient, kVipText)
                        .tcp(kCport, 80)
                        .seq(1000)
                        .flags(net::kTcpSyn)
                        .tcp_options(mss(1460))
                        .build();
        auto out = roundtrip(kWan, syn, kLan);
        ASSERT_EQ(out.size(), 1u);
        // Inner: only the destination changes (the RS sees the client), MSS 1460 - overhead.
        Bytes inner = ip_packet(PacketBuilder()
                                    .ipv4(kClient, kRs)
                                    .tcp(kCport, 8080)
                                    .seq(1000)
                                    .flags(net::kTcpSyn)
                                    .tcp_options(mss(uint16_t(1460 - overhead)))
                                    .build());
        ASSERT_EQ(out[0].size(), 14 + overhead + inner.size());
        EXPECT_TRUE(FramesEqual(to_rs(inner, out[0], gue), out[0]));

        Bytes synack = ip_packet(PacketBuilder()
                                     .ipv4(kRs, kClient)
                                     .tcp(8080, kCport)
                                     .seq(5000)
                                     .ack(1001)
                                     .flags(net::kTcpSyn | net::kTcpAck)
                                     .tcp_options(mss(1460))
                                     .build());
        out = roundtrip(kLan, from_rs(synack, gue), kWan);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(PacketBuilder()
                                    .eth(wan_mac(), kClientMac)
                                    .ipv4(kVipText, kClient)
                                    .tcp(80, kCport)
                                    .seq(5000)
                                    .ack(1001)
                                    .flags(net::kTcpSyn | net::kTcpAck)
                                    .tcp_options(mss(uint16_t(1460 - overhead)))
                                    .build(),
                                out[0]));
        // Data both ways keeps its MSS-free headers and payload.
        Bytes data = PacketBuilder()
                         .eth(kClientMac, wan_mac())
                         .ipv4(kClient, kVipText)
                         .tcp(kCport, 80)
                         .seq(1001)
                         .ack(5001)
                         .flags(net::kTcpAck | net::kTcpPsh)
                         .payload("GET / HTTP/1.0\r\n\r\n")
                         .build();
        out = roundtrip(kWan, data, kLan);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(to_rs(ip_packet(PacketBuilder()
                                                    .ipv4(kClient, kRs)
                                                    .tcp(kCport, 8080)
                                                    .seq(1001)
                                                    .ack(5001)
                                                    .flags(net::kTcpAck | net::kTcpPsh)
                                                    .payload("GET / HTTP/1.0\r\n\r\n")
                                                    .build()),
                                      out[0], gue),
                                out[0]));
        EXPECT_EQ(counter(Counter::conns_created), 1u);
        EXPECT_EQ(counter(Counter::tunnel_decap), 1u);
        EXPECT_EQ(counter(Counter::nattun_mss_clamped), 2u);
        EXPECT_EQ(counter(Counter::lb_forwarded), 3u);
    }
    void udp_both_ways(bool gue) {
        Bytes q = PacketBuilder()
                      .eth(kClientMac, wan_mac())
                      .ipv4(kClient, kVipText)
                      .udp(33000, 53)
                      .payload("query")
                      .build();
        auto out = roundtrip(kWan, q, kLan);
        ASSERT_EQ(out.size(), 1u);
        Bytes inner =
            ip_packet(PacketBuilder().ipv4(kClient, kRs).udp(33000, 5353).payload("query").build());
        EXPECT_TRUE(FramesEqual(to_rs(inner, out[0], gue), out[0]));
        Bytes a = ip_packet(
            PacketBuilder().ipv4(kRs, kClient).udp(5353, 33000).payload("answer").build());
        out = roundtrip(kLan, from_rs(a, gue), kWan);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(PacketBuilder()
                                    .eth(wan_mac(), kClientMac)
                                    .ipv4(kVipText, kClient)
                                    .udp(53, 33000)
                                    .payload("answer")
                                    .build(),
                                out[0]));
    }
};

TEST_F(NatTunnelTest, IpipTcpBothWaysWithMssClamp) {
    configure(lb::TunType::Ipip);
    tcp_both_ways(false);
}

TEST_F(NatTunnelTest, GueTcpBothWaysWithMssClamp) {
    configure(lb::TunType::Gue);
    tcp_both_ways(true);
}

TEST_F(NatTunnelTest, IpipUdpBothWays) {
    configure(lb::TunType::Ipip);
    udp_both_ways(false);
}

TEST_F(NatTunnelTest, GueUdpBothWays) {
    configure(lb::TunType::Gue);
    udp_both_ways(true);
}

// The RS answering outside the tunnel (routing clients through the director) is refused.
TEST_F(NatTunnelTest, BareReplyIsDropped) {
    configure(lb::TunType::Ipip);
    Bytes q = PacketBuilder()
                  .eth(kClientMac, wan_mac())
                  .ipv4(kClient, kVipText)
                  .udp(33000, 53)
                  .payload("query")
                  .build();
    ASSERT_EQ(roundtrip(kWan, q, kLan).size(), 1u);
    Bytes bare = PacketBuilder()
                     .eth(kRs1Mac, lan_mac())
                     .ipv4(kRs, kClient)
                     .udp(5353, 33000)
                     .payload("answer")
                     .build();
    EXPECT_TRUE(roundtrip(kLan, bare, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_nattun_bare_reply), 1u);
}

// A tunnelled packet to the LIP that is no conn's reply makes no conn and goes nowhere.
TEST_F(NatTunnelTest, TunnelledPacketWithoutConnIsDropped) {
    configure(lb::TunType::Ipip);
    Bytes stray =
        ip_packet(PacketBuilder().ipv4(kRs, kClient).udp(5353, 33999).payload("stray").build());
    EXPECT_TRUE(roundtrip(kLan, from_rs(stray, false), kWan).empty());
    // Nor does a tunnelled packet to the VIP open a conn.
    Bytes to_vip =
        ip_packet(PacketBuilder().ipv4(kClient, kVipText).udp(33000, 53).payload("query").build());
    EXPECT_TRUE(roundtrip(kLan, from_rs(to_vip, false), kLan).empty());
    EXPECT_EQ(counter(Counter::tunnel_decap), 2u);
    EXPECT_EQ(counter(Counter::drop_tunnel_no_conn), 2u);
    EXPECT_EQ(counter(Counter::conns_created), 0u);
}

// 1500-byte client packet with DF (the port MTU): with 20 bytes of IPIP it does not fit, and
// the client gets frag-needed with MTU 1480 from the VIP, quoting its packet as it sent it.
TEST_F(NatTunnelTest, TooBigWithDfGetsFragNeededBackToTheClient) {
    configure(lb::TunType::Ipip);
    auto client = [this](uint8_t flags, const std::string& data) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4(kClient, kVipText)
            .tcp(kCport, 80)
            .seq(1000)
            .ack(flags & net::kTcpAck ? 5001 : 0)
            .flags(flags)
            .payload(data)
            .build();
    };
    ASSERT_EQ(roundtrip(kWan, client(net::kTcpSyn, ""), kLan).size(), 1u);
    Bytes big = client(net::kTcpAck, std::string(1500 - 40, 'z'));
    ASSERT_EQ(big.size(), 14u + 1500u);
    send(kWan, big);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    auto back = recv(kWan);
    ASSERT_EQ(back.size(), 1u);
    const Bytes quote(big.begin() + 14, big.begin() + 14 + (576 - 28));
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4(kVipText, kClient)
                                .tos(0xc0)
                                .ip_id(id_of(back[0]))
                                .frag_off(0)
                                .icmp_error(3, 4, 1480, quote)
                                .build(),
                            back[0]));
    EXPECT_EQ(counter(Counter::drop_tunnel_too_big), 1u);
    EXPECT_EQ(counter(Counter::icmp_frag_needed_sent), 1u);
    // One byte less fits: 1479 + 20 = 1499.
    EXPECT_EQ(roundtrip(kWan, client(net::kTcpAck, std::string(1480 - 40, 'z')), kLan).size(), 1u);
}

// A router between the director and the RS cannot carry the outer packet: its frag-needed to
// the local address quotes the tunnel packet. The client gets frag-needed from the VIP for its
// own packet (the quote unwrapped and translated back), with the router's MTU less the tunnel
// overhead; the conn remembers the path MTU, so the next packet that cannot fit is answered by
// the director at once.
class NatTunnelPmtuTest : public NatTunnelTest {
  protected:
    void router_frag_needed(bool gue) {
        const size_t overhead = gue ? 32 : 20;
        configure(gue ? lb::TunType::Gue : lb::TunType::Ipip);
        auto client = [this](uint8_t flags, const std::string& data) {
            return PacketBuilder()
                .eth(kClientMac, wan_mac())
                .ipv4(kClient, kVipText)
                .tcp(kCport, 80)
                .seq(1000)
                .ack(flags & net::kTcpAck ? 5001 : 0)
                .flags(flags)
                .payload(data)
                .build();
        };
        ASSERT_EQ(roundtrip(kWan, client(net::kTcpSyn, ""), kLan).size(), 1u);
        const Bytes big = client(net::kTcpAck, std::string(1400 - 40, 'z'));
        auto out = roundtrip(kWan, big, kLan);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_EQ(out[0].size(), 14 + overhead + 1400);
        // The router's frag-needed (MTU 1400), quoting 548 bytes of the outer packet.
        const Bytes outer_quote(out[0].begin() + 14, out[0].begin() + 14 + 548);
        const Bytes err = PacketBuilder()
                              .eth(kRs1Mac, lan_mac())
                              .ipv4("10.10.2.254", kLip)
                              .icmp_error(3, 4, 1400, outer_quote)
                              .build();
        out = roundtrip(kLan, err, kWan);
        ASSERT_EQ(out.size(), 1u);
        // To the client from the VIP, about the packet it sent (the inner quote, 548 - overhead
        // bytes of it, translated back to the VIP), MTU 1400 less the tunnel's overhead.
        const Bytes inner_quote(big.begin() + 14,
                                big.begin() + 14 + 548 - static_cast<std::ptrdiff_t>(overhead));
        EXPECT_TRUE(FramesEqual(PacketBuilder()
                                    .eth(wan_mac(), kClientMac)
                                    .ipv4(kVipText, kClient)
                                    .icmp_error(3, 4, uint16_t(1400 - overhead), inner_quote)
                                    .build(),
                                out[0]));
        EXPECT_EQ(counter(Counter::nattun_icmp_unwrapped), 1u);
        EXPECT_EQ(counter(Counter::nattun_pmtu_lowered), 1u);
        EXPECT_EQ(counter(Counter::icmp_related_forwarded), 1u);
        // The client's next 1400-byte packet is answered by the director (port MTU 1500).
        send(kWan, big);
        poll();
        EXPECT_TRUE(recv(kLan).empty());
        auto back = recv(kWan);
        ASSERT_EQ(back.size(), 1u);
        EXPECT_TRUE(FramesEqual(PacketBuilder()
                                    .eth(wan_mac(), kClientMac)
                                    .ipv4(kVipText, kClient)
                                    .tos(0xc0)
                                    .ip_id(id_of(back[0]))
                                    .frag_off(0)
                                    .icmp_error(3, 4, uint16_t(1400 - overhead),
                                                Bytes(big.begin() + 14, big.begin() + 14 + 548))
                                    .build(),
                                back[0]));
        EXPECT_EQ(counter(Counter::drop_tunnel_too_big), 1u);
        // What fits the path goes on.
        EXPECT_EQ(
            roundtrip(kWan, client(net::kTcpAck, std::string(1400 - overhead - 40, 'z')), kLan)
                .size(),
            1u);
        // A larger report later does not raise the recorded MTU (RFC 1191 section 3).
        const Bytes err2 = PacketBuilder()
                               .eth(kRs1Mac, lan_mac())
                               .ipv4("10.10.2.254", kLip)
                               .icmp_error(3, 4, 1450, outer_quote)
                               .build();
        EXPECT_EQ(roundtrip(kLan, err2, kWan).size(), 1u);
        EXPECT_EQ(counter(Counter::nattun_pmtu_lowered), 1u);
    }
};

TEST_F(NatTunnelPmtuTest, RouterFragNeededAboutIpipPacketReachesTheClient) {
    router_frag_needed(false);
}

TEST_F(NatTunnelPmtuTest, RouterFragNeededAboutGuePacketReachesTheClient) {
    router_frag_needed(true);
}

// ICMP through the tunnel: the RS's port unreachable for the client's datagram comes back in
// the tunnel and reaches the client about the datagram it sent to the VIP.
TEST_F(NatTunnelTest, IcmpErrorFromTheRsThroughTheTunnel) {
    configure(lb::TunType::Ipip);
    Bytes q = PacketBuilder()
                  .eth(kClientMac, wan_mac())
                  .ipv4(kClient, kVipText)
                  .udp(33000, 53)
                  .payload("query")
                  .build();
    ASSERT_EQ(roundtrip(kWan, q, kLan).size(), 1u);
    Bytes seen =
        ip_packet(PacketBuilder().ipv4(kClient, kRs).udp(33000, 5353).payload("query").build());
    Bytes err = ip_packet(PacketBuilder().ipv4(kRs, kClient).icmp_error(3, 3, 0, seen).build());
    auto out = roundtrip(kLan, from_rs(err, false), kWan);
    ASSERT_EQ(out.size(), 1u);
    Bytes want_quote =
        ip_packet(PacketBuilder().ipv4(kClient, kVipText).udp(33000, 53).payload("query").build());
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4(kVipText, kClient)
                                .icmp_error(3, 3, 0, want_quote)
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 1u);
}

// IPv6 from the same templated code: IPv6-in-IPv6 (next header 41) from the IPv6 local address,
// MSS lowered by 40, the reply in IP6IP6 to the local address comes out from the VIP.
class NatTunnel6Test : public PipelineTest {
  protected:
    static constexpr const char* kClient6 = "2001:db8:1::2";
    static constexpr const char* kVip6 = "2001:db8:1::100";
    static constexpr const char* kRs6 = "2001:db8:2::2";
    static constexpr const char* kLip6 = "2001:db8:2::100";
    void SetUp() override {
        PipelineTest::SetUp();
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        ok(director->address_add(ip6("2001:db8:1::1"), 64, "wan"));
        ok(director->address_add(ip6("2001:db8:2::1"), 64, "lan"));
        lb::ServiceSpec s{6, ip6(kVip6), 80, "rr"};
        s.fwd = lb::FwdMode::NatTun;
        ok(director->service_add(s));
        const auto key = lb::make_service_key(6, ip6(kVip6), 80);
        lb::DestSpec d{ip6(kRs6), 8080, 1};
        d.fwd = lb::FwdMode::NatTun;
        ok(director->dest_add(key, d));
        ok(director->laddr_add(key, ip6(kLip6), "lan"));
        director->commit();
        start_worker();
        worker->neighbours().add_static(ip6(kClient6), kClientMac, kWan);
        worker->neighbours().add_static(ip6(kRs6), kRs1Mac, kLan);
    }
};

TEST_F(NatTunnel6Test, Ip6ip6TcpBothWaysWithMssClamp) {
    Bytes syn = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv6(kClient6, kVip6)
                    .tcp(kCport, 80)
                    .seq(1000)
                    .flags(net::kTcpSyn)
                    .tcp_options(mss(1440))
                    .build();
    auto out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    Bytes inner = ip_packet(PacketBuilder()
                                .ipv6(kClient6, kRs6)
                                .tcp(kCport, 8080)
                                .seq(1000)
                                .flags(net::kTcpSyn)
                                .tcp_options(mss(1440 - 40))
                                .build());
    ASSERT_EQ(out[0].size(), 14 + 40 + inner.size());
    const uint32_t flow =
        (uint32_t(out[0][15] & 0x0f) << 16) | uint32_t(out[0][16] << 8) | out[0][17];
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv6(kLip6, kRs6)
                                .flow_label(flow)
                                .ip_payload(41, inner)
                                .build(),
                            out[0]));
    Bytes synack = ip_packet(PacketBuilder()
                                 .ipv6(kRs6, kClient6)
                                 .tcp(8080, kCport)
                                 .seq(5000)
                                 .ack(1001)
                                 .flags(net::kTcpSyn | net::kTcpAck)
                                 .tcp_options(mss(1440))
                                 .build());
    out = roundtrip(
        kLan,
        PacketBuilder().eth(kRs1Mac, lan_mac()).ipv6(kRs6, kLip6).ip_payload(41, synack).build(),
        kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip6, kClient6)
                                .tcp(80, kCport)
                                .seq(5000)
                                .ack(1001)
                                .flags(net::kTcpSyn | net::kTcpAck)
                                .tcp_options(mss(1440 - 40))
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::tunnel_decap), 1u);
    EXPECT_EQ(counter(Counter::nattun_mss_clamped), 2u);
}

// IPv6: a router's packet too big (MTU 1400) about the IP6IP6 packet reaches the client as a
// packet too big from the VIP with MTU 1360, quoting its own packet; the conn remembers it.
TEST_F(NatTunnel6Test, RouterPacketTooBigAboutTheTunnelReachesTheClient) {
    auto client = [this](uint8_t flags, const std::string& data) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv6(kClient6, kVip6)
            .tcp(kCport, 80)
            .seq(1000)
            .ack(flags & net::kTcpAck ? 5001 : 0)
            .flags(flags)
            .payload(data)
            .build();
    };
    ASSERT_EQ(roundtrip(kWan, client(net::kTcpSyn, ""), kLan).size(), 1u);
    const Bytes big = client(net::kTcpAck, std::string(1400 - 60, 'z'));
    auto out = roundtrip(kWan, big, kLan);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].size(), 14u + 40u + 1400u);
    // RFC 4443 2.4(c): as much of the packet as fits in 1280 bytes.
    const Bytes outer_quote(out[0].begin() + 14, out[0].begin() + 14 + 1232);
    auto ptb = [&](uint32_t mtu, const Bytes& quote) {
        Bytes body{uint8_t(mtu >> 24), uint8_t(mtu >> 16), uint8_t(mtu >> 8), uint8_t(mtu)};
        body.insert(body.end(), quote.begin(), quote.end());
        return body;
    };
    out = roundtrip(kLan,
                    PacketBuilder()
                        .eth(kRs1Mac, lan_mac())
                        .ipv6("2001:db8:2::fe", kLip6)
                        .icmp6(net::kIcmp6PacketTooBig, 0, ptb(1400, outer_quote))
                        .build(),
                    kWan);
    ASSERT_EQ(out.size(), 1u);
    const Bytes inner_quote(big.begin() + 14, big.begin() + 14 + 1232 - 40);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip6, kClient6)
                                .icmp6(net::kIcmp6PacketTooBig, 0, ptb(1360, inner_quote))
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::nattun_icmp_unwrapped), 1u);
    EXPECT_EQ(counter(Counter::nattun_pmtu_lowered), 1u);
    // The next 1400-byte packet: packet too big (1360) from the director itself.
    send(kWan, big);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    auto back = recv(kWan);
    ASSERT_EQ(back.size(), 1u);
    ASSERT_GE(back[0].size(), 14u + 40u + 8u);
    EXPECT_EQ(back[0][14 + 40], net::kIcmp6PacketTooBig);
    EXPECT_EQ(Bytes(back[0].begin() + 14 + 44, back[0].begin() + 14 + 48),
              (Bytes{0, 0, 0x05, 0x50}));
    EXPECT_EQ(counter(Counter::drop_tunnel_too_big), 1u);
}

}  // namespace
}  // namespace xvs::test
