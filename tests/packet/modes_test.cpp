// Packet tests: the forwarding modes besides FULLNAT through the real pipeline — NAT (both
// directions, port forwarding, UDP), DR (only the MAC changes), TUN (IPIP and GUE outer headers,
// DF, an inner packet too big for the tunnel gets ICMP frag-needed), and ICMP errors related
// to a conn translated in FNAT and NAT in both directions; unrelated ones dropped and counted.
#include "fixture/pipeline.h"
#include "net/checksum.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 40000;
const net::Ipv4 kVip = *net::parse_ipv4("10.10.1.100");

// One TCP and one UDP service on the VIP, every dest reached by `fwd`.
class ModeTest : public PipelineTest {
protected:
    void configure(lb::FwdMode fwd, uint16_t tcp_rport, uint16_t udp_rport,
                   lb::TunType tun = lb::TunType::Ipip, uint16_t tun_port = 0) {
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        ok(director->address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
        ok(director->address_add(*net::parse_ipv4("10.10.2.1"), 24, "lan"));
        for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
            const uint16_t vport = proto == 6 ? 80 : 53;
            lb::ServiceSpec s{proto, kVip, vport, "rr"};
            s.fwd = fwd;
            ok(director->service_add(s));
            lb::DestSpec d{*net::parse_ipv4("10.10.2.2"), proto == 6 ? tcp_rport : udp_rport, 1};
            d.fwd = fwd;
            d.tun_type = tun;
            d.tun_port = tun_port;
            ok(director->dest_add(lb::make_service_key(proto, kVip, vport), d));
        }
        director->commit();
        start_worker();
        learn_neighbours();
    }
    Bytes client_tcp(uint8_t flags, const std::string& data = "", uint16_t cport = kCport) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", "10.10.1.100")
            .tcp(cport, 80)
            .seq(1000)
            .ack(flags & net::kTcpAck ? 5001 : 0)
            .flags(flags)
            .payload(data)
            .build();
    }
};

// ---- NAT ------------------------------------------------------------------------------------

class NatTest : public ModeTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure(lb::FwdMode::Nat, 8080, 5353);
    }
};

TEST_F(NatTest, TcpBothDirectionsWithPortForwarding) {
    auto out = roundtrip(kWan, client_tcp(net::kTcpSyn), kLan);
    ASSERT_EQ(out.size(), 1u);
    // Only the destination changes: the RS sees the client's own address.
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4("10.10.1.2", "10.10.2.2")
                                .ttl(63)  // NAT forwards as a router: TTL decremented both ways
                                .tcp(kCport, 8080)
                                .seq(1000)
                                .flags(net::kTcpSyn)
                                .build(),
                            out[0]));
    // The SYN-ACK is addressed to the client, not to the director: still the conn's.
    Bytes synack = PacketBuilder()
                       .eth(kRs1Mac, lan_mac())
                       .ipv4("10.10.2.2", "10.10.1.2")
                       .tcp(8080, kCport)
                       .seq(5000)
                       .ack(1001)
                       .flags(net::kTcpSyn | net::kTcpAck)
                       .build();
    out = roundtrip(kLan, synack, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4("10.10.1.100", "10.10.1.2")
                                .ttl(63)
                                .tcp(80, kCport)
                                .seq(5000)
                                .ack(1001)
                                .flags(net::kTcpSyn | net::kTcpAck)
                                .build(),
                            out[0]));
    out = roundtrip(kWan, client_tcp(net::kTcpAck | net::kTcpPsh, "GET / HTTP/1.0\r\n\r\n"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 1u);
    EXPECT_EQ(counter(Counter::lb_forwarded), 3u);
}

TEST_F(NatTest, UdpBothDirections) {
    Bytes q = PacketBuilder()
                  .eth(kClientMac, wan_mac())
                  .ipv4("10.10.1.2", "10.10.1.100")
                  .udp(33000, 53)
                  .payload("query")
                  .build();
    auto out = roundtrip(kWan, q, kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4("10.10.1.2", "10.10.2.2")
                                .ttl(63)
                                .udp(33000, 5353)
                                .payload("query")
                                .build(),
                            out[0]));
    Bytes a = PacketBuilder()
                  .eth(kRs1Mac, lan_mac())
                  .ipv4("10.10.2.2", "10.10.1.2")
                  .udp(5353, 33000)
                  .payload("answer")
                  .build();
    out = roundtrip(kLan, a, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4("10.10.1.100", "10.10.1.2")
                                .ttl(63)
                                .udp(53, 33000)
                                .payload("answer")
                                .build(),
                            out[0]));
}

// As IPVS: a packet whose TTL would reach 0 is not forwarded, either way; the sender gets ICMP
// time exceeded, from the VIP it sent to (client) or from the director's address on the port
// it came in by (RS), quoting the packet as received.
TEST_F(NatTest, TtlExpiringIsDroppedBothWays) {
    auto syn = [this](uint8_t ttl) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", "10.10.1.100")
            .ttl(ttl)
            .tcp(kCport, 80)
            .seq(1000)
            .flags(net::kTcpSyn)
            .build();
    };
    auto synack = [this](uint8_t ttl) {
        return PacketBuilder()
            .eth(kRs1Mac, lan_mac())
            .ipv4("10.10.2.2", "10.10.1.2")
            .ttl(ttl)
            .tcp(8080, kCport)
            .seq(5000)
            .ack(1001)
            .flags(net::kTcpSyn | net::kTcpAck)
            .build();
    };
    auto time_exceeded = [](const Bytes& back, net::MacAddr src_mac, net::MacAddr dst_mac,
                            const char* from, const char* to, const Bytes& orig) {
        const uint16_t id = uint16_t(back[18] << 8 | back[19]);
        return FramesEqual(PacketBuilder()
                               .eth(src_mac, dst_mac)
                               .ipv4(from, to)
                               .tos(0xc0)
                               .ip_id(id)
                               .frag_off(0)
                               .icmp_error(11, 0, 0, ip_packet(orig))
                               .build(),
                           back);
    };
    send(kWan, syn(1));
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    auto back = recv(kWan);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_TRUE(time_exceeded(back[0], wan_mac(), kClientMac, "10.10.1.100", "10.10.1.2", syn(1)));
    EXPECT_EQ(counter(Counter::drop_ttl_expired), 1u);
    auto out = roundtrip(kWan, syn(2), kLan);  // one hop left: forwarded with TTL 1
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0][14 + 8], 1);
    send(kLan, synack(1));
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    back = recv(kLan);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_TRUE(time_exceeded(back[0], lan_mac(), kRs1Mac, "10.10.2.1", "10.10.2.2", synack(1)));
    EXPECT_EQ(counter(Counter::drop_ttl_expired), 2u);
    EXPECT_EQ(counter(Counter::icmp_time_exceeded_sent), 2u);
    out = roundtrip(kLan, synack(2), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4("10.10.1.100", "10.10.1.2")
                                .ttl(1)
                                .tcp(80, kCport)
                                .seq(5000)
                                .ack(1001)
                                .flags(net::kTcpSyn | net::kTcpAck)
                                .build(),
                            out[0]));
}

// Passive health checking (lb/passive.h) in NAT as in FULLNAT: the client's SYN again after
// its retransmission timer (1 s) is one failure of the silent RS; the SYN goes on as before.
TEST_F(NatTest, ClientSynRetransmissionIsAPassiveFailure) {
    auto first = roundtrip(kWan, client_tcp(net::kTcpSyn), kLan);
    ASSERT_EQ(first.size(), 1u);
    worker->advance_clock(1000);
    for (uint64_t n : {1u, 1u}) {
        auto out = roundtrip(kWan, client_tcp(net::kTcpSyn), kLan);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(first[0], out[0]));
        EXPECT_EQ(conn_fails(), n);
        worker->advance_clock(2000);
    }
}

TEST_F(NatTest, ReplyWithoutConnIsDroppedAsNotLocal) {
    Bytes a = PacketBuilder()
                  .eth(kRs1Mac, lan_mac())
                  .ipv4("10.10.2.2", "10.10.1.2")
                  .udp(5353, 33999)
                  .payload("stray")
                  .build();
    EXPECT_TRUE(roundtrip(kLan, a, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_not_local), 1u);
}

// ---- ICMP related: NAT ---------------------------------------------------------------------

// The first 28 bytes of an IPv4 packet (header + 8 bytes of L4), as routers quote it.
Bytes quote28(const Bytes& frame) {
    Bytes ip = ip_packet(frame);
    ip.resize(28);
    return ip;
}

TEST_F(NatTest, FragNeededFromTheRsSideReachesTheClientTranslated) {
    ASSERT_EQ(roundtrip(kWan, client_tcp(net::kTcpSyn), kLan).size(), 1u);
    // A router between director and RS (here: the RS itself) could not forward
    // client:cport -> RS:8080 in one piece.
    Bytes sent = PacketBuilder()
                     .ipv4("10.10.1.2", "10.10.2.2")
                     .tcp(kCport, 8080)
                     .seq(1001)
                     .flags(net::kTcpAck)
                     .payload(std::string(1400, 'x'))
                     .build();  // eth zero: only the IP part is quoted
    Bytes err = PacketBuilder()
                    .eth(kRs1Mac, lan_mac())
                    .ipv4("10.10.2.2", "10.10.1.2")
                    .icmp_error(3, 4, 1400, quote28(sent))
                    .build();
    auto out = roundtrip(kLan, err, kWan);
    ASSERT_EQ(out.size(), 1u);
    Bytes want_quote = quote28(PacketBuilder()
                                   .ipv4("10.10.1.2", "10.10.1.100")
                                   .tcp(kCport, 80)
                                   .seq(1001)
                                   .flags(net::kTcpAck)
                                   .payload(std::string(1400, 'x'))
                                   .build());
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4("10.10.1.100", "10.10.1.2")
                                .ttl(63)
                                .icmp_error(3, 4, 1400, want_quote)
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 1u);
}

TEST_F(NatTest, FragNeededFromTheClientSideReachesTheRsTranslated) {
    ASSERT_EQ(roundtrip(kWan, client_tcp(net::kTcpSyn), kLan).size(), 1u);
    // A router on the client's path (10.10.1.254) could not forward VIP:80 -> client.
    Bytes sent = PacketBuilder()
                     .ipv4("10.10.1.100", "10.10.1.2")
                     .tcp(80, kCport)
                     .seq(5001)
                     .flags(net::kTcpAck)
                     .payload(std::string(1400, 'y'))
                     .build();
    worker->neighbours().add_static(ip("10.10.1.254"), kClientMac, kWan);
    Bytes err = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4("10.10.1.254", "10.10.1.100")
                    .icmp_error(3, 4, 1280, quote28(sent))
                    .build();
    auto out = roundtrip(kWan, err, kLan);
    ASSERT_EQ(out.size(), 1u);
    Bytes want_quote = quote28(PacketBuilder()
                                   .ipv4("10.10.2.2", "10.10.1.2")
                                   .tcp(8080, kCport)
                                   .seq(5001)
                                   .flags(net::kTcpAck)
                                   .payload(std::string(1400, 'y'))
                                   .build());
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4("10.10.1.254", "10.10.2.2")
                                .ttl(63)
                                .icmp_error(3, 4, 1280, want_quote)
                                .build(),
                            out[0]));
}

TEST_F(NatTest, UnrelatedIcmpErrorIsDroppedAndCounted) {
    Bytes sent = PacketBuilder().ipv4("10.10.1.2", "10.10.2.2").tcp(41234, 8080).build();
    Bytes err = PacketBuilder()
                    .eth(kRs1Mac, lan_mac())
                    .ipv4("10.10.2.2", "10.10.1.2")
                    .icmp_error(3, 3, 0, quote28(sent))
                    .build();
    EXPECT_TRUE(roundtrip(kLan, err, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_icmp_unrelated), 1u);
}

// ---- ICMP related: FULLNAT ------------------------------------------------------------------

class FullnatIcmpTest : public PipelineTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        start_worker();
        learn_neighbours();
    }
};

TEST_F(FullnatIcmpTest, FragNeededBothDirections) {
    Bytes syn = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4("10.10.1.2", "10.10.1.100")
                    .tcp(kCport, 80)
                    .seq(1000)
                    .flags(net::kTcpSyn)
                    .build();
    auto out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
    const bool rs1 = ip4->daddr == ip("10.10.2.2");
    const char* rs = rs1 ? "10.10.2.2" : "10.10.2.3";
    const net::MacAddr rs_mac = rs1 ? kRs1Mac : kRs2Mac;
    const uint16_t lport = net::load_wire16(out[0].data() + 34) == 0 ? 0 : net::ntoh16(net::load_wire16(out[0].data() + 34));

    // RS side: LIP:lport -> RS:8080 did not fit; the client learns about client -> VIP.
    Bytes to_rs = PacketBuilder().ipv4("10.10.2.100", rs).tcp(lport, 8080).seq(1001).flags(net::kTcpAck).build();
    Bytes err = PacketBuilder()
                    .eth(rs_mac, lan_mac())
                    .ipv4(rs, "10.10.2.100")
                    .icmp_error(3, 4, 1400, quote28(to_rs))
                    .build();
    out = roundtrip(kLan, err, kWan);
    ASSERT_EQ(out.size(), 1u);
    Bytes client_view = PacketBuilder().ipv4("10.10.1.2", "10.10.1.100").tcp(kCport, 80).seq(1001).flags(net::kTcpAck).build();
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4("10.10.1.100", "10.10.1.2")
                                .icmp_error(3, 4, 1400, quote28(client_view))
                                .build(),
                            out[0]));

    // Client side: VIP:80 -> client did not fit; the RS learns about RS:8080 -> LIP:lport,
    // from the LIP (the RS only knows the director by it).
    Bytes to_client = PacketBuilder().ipv4("10.10.1.100", "10.10.1.2").tcp(80, kCport).seq(7).flags(net::kTcpAck).build();
    err = PacketBuilder()
              .eth(kClientMac, wan_mac())
              .ipv4("10.10.1.2", "10.10.1.100")
              .icmp_error(3, 4, 1280, quote28(to_client))
              .build();
    out = roundtrip(kWan, err, kLan);
    ASSERT_EQ(out.size(), 1u);
    Bytes rs_view = PacketBuilder().ipv4(rs, "10.10.2.100").tcp(8080, lport).seq(7).flags(net::kTcpAck).build();
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), rs_mac)
                                .ipv4("10.10.2.100", rs)
                                .icmp_error(3, 4, 1280, quote28(rs_view))
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 2u);
}

// ---- DR -------------------------------------------------------------------------------------

class DrTest : public ModeTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure(lb::FwdMode::Dr, 80, 53);
    }
};

TEST_F(DrTest, OnlyTheMacChanges) {
    Bytes syn = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4("10.10.1.2", "10.10.1.100")
                    .ttl(17)
                    .tcp(kCport, 80)
                    .seq(1000)
                    .flags(net::kTcpSyn)
                    .build();
    auto out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    Bytes want = syn;
    std::copy(kRs1Mac.b, kRs1Mac.b + 6, want.begin());
    const net::MacAddr lm = lan_mac();
    std::copy(lm.b, lm.b + 6, want.begin() + 6);
    EXPECT_TRUE(FramesEqual(want, out[0]));  // TTL, IP and TCP checksums as the client sent them
    // Later packets of the flow go the same way; the RS answers the client directly.
    out = roundtrip(kWan, client_tcp(net::kTcpAck, "data"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 1u);
}

TEST_F(DrTest, NoOutboundTupleSoRsTrafficThroughTheDirectorIsNotMatched) {
    ASSERT_EQ(roundtrip(kWan, client_tcp(net::kTcpSyn), kLan).size(), 1u);
    Bytes synack = PacketBuilder()
                       .eth(kRs1Mac, lan_mac())
                       .ipv4("10.10.1.100", "10.10.1.2")
                       .tcp(80, kCport)
                       .flags(net::kTcpSyn | net::kTcpAck)
                       .build();
    EXPECT_TRUE(roundtrip(kLan, synack, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_not_local), 1u);
}

TEST_F(DrTest, DestBehindAGatewayOrWithAnotherPortIsRefused) {
    auto key = lb::make_service_key(6, kVip, 80);
    lb::DestSpec far{*net::parse_ipv4("192.168.9.9"), 80, 1};
    far.fwd = lb::FwdMode::Dr;
    auto r = director->dest_add(key, far);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("not on a directly connected network"), std::string::npos) << r.error();
    lb::DestSpec mapped{*net::parse_ipv4("10.10.2.3"), 8080, 1};
    mapped.fwd = lb::FwdMode::Dr;
    r = director->dest_add(key, mapped);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("cannot map ports"), std::string::npos) << r.error();
}

// ---- TUN ------------------------------------------------------------------------------------

// The outer IPv4 header as the director must write it, computed here from scratch.
Bytes outer_ipv4(const Bytes& inner_ip, uint8_t proto, size_t extra, uint16_t id, const char* src,
                 const char* dst) {
    Bytes h(20);
    h[0] = 0x45;
    h[1] = inner_ip[1];  // TOS copied
    const uint16_t total = static_cast<uint16_t>(inner_ip.size() + 20 + extra);
    h[2] = total >> 8;
    h[3] = total & 0xff;
    h[4] = id >> 8;
    h[5] = id & 0xff;
    h[6] = inner_ip[6] & 0x40;  // DF copied
    h[8] = 64;
    h[9] = proto;
    uint32_t s = ip(src), d = ip(dst);
    std::memcpy(&h[12], &s, 4);
    std::memcpy(&h[16], &d, 4);
    uint32_t sum = 0;
    for (size_t i = 0; i < 20; i += 2) sum += uint32_t(h[i]) << 8 | h[i + 1];
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    const uint16_t c = static_cast<uint16_t>(~sum);
    h[10] = c >> 8;
    h[11] = c & 0xff;
    return h;
}

class TunTest : public ModeTest {};

TEST_F(TunTest, IpipOuterHeaderAroundTheUnchangedPacket) {
    configure(lb::FwdMode::Tun, 80, 53);
    Bytes syn = client_tcp(net::kTcpSyn);
    auto out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].size(), syn.size() + 20);
    const uint16_t id = uint16_t(out[0][18] << 8 | out[0][19]);
    Bytes inner = ip_packet(syn);
    Bytes want(out[0].begin(), out[0].begin() + 14);
    Bytes hdr = outer_ipv4(inner, 4, 0, id, "10.10.2.1", "10.10.2.2");
    want.insert(want.end(), hdr.begin(), hdr.end());
    want.insert(want.end(), inner.begin(), inner.end());
    EXPECT_TRUE(FramesEqual(want, out[0]));
    const net::MacAddr lm = lan_mac();
    EXPECT_TRUE(std::equal(kRs1Mac.b, kRs1Mac.b + 6, out[0].begin()));
    EXPECT_TRUE(std::equal(lm.b, lm.b + 6, out[0].begin() + 6));
}

// ip_defs `tunnel_source`: the outer source is the configured address of the port (not its
// first one), for IPIP and GUE alike; a change reaches packets of existing conns with the
// next snapshot, and clearing it goes back to the first address.
TEST_F(TunTest, ConfiguredTunnelSourceIsTheOuterSource) {
    configure(lb::FwdMode::Tun, 80, 53);  // lan's first address: 10.10.2.1
    ASSERT_TRUE(director->address_add(*net::parse_ipv4("10.10.2.5"), 24, "lan"));
    ASSERT_TRUE(director->tunnel_source_set("lan", *net::parse_ipv4("10.10.2.5")));
    director->commit();
    Bytes syn = client_tcp(net::kTcpSyn);
    const Bytes inner = ip_packet(syn);
    auto expect_outer = [&](const Bytes& frame, const char* src) {
        ASSERT_EQ(frame.size(), syn.size() + 20);
        const uint16_t id = uint16_t(frame[18] << 8 | frame[19]);
        Bytes want(frame.begin(), frame.begin() + 14);
        Bytes hdr = outer_ipv4(inner, 4, 0, id, src, "10.10.2.2");
        want.insert(want.end(), hdr.begin(), hdr.end());
        want.insert(want.end(), inner.begin(), inner.end());
        EXPECT_TRUE(FramesEqual(want, frame)) << src;
    };
    auto out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    expect_outer(out[0], "10.10.2.5");
    // Back to the default (as a reload without tunnel_source does).
    ASSERT_TRUE(director->tunnel_source_set("lan", std::nullopt));
    director->commit();
    out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    expect_outer(out[0], "10.10.2.1");
    EXPECT_EQ(counter(Counter::conns_created), 1u);
}

TEST_F(TunTest, TunnelSourceMustBeADirectorAddressOfThatPort) {
    configure(lb::FwdMode::Tun, 80, 53);
    auto r = director->tunnel_source_set("lan", *net::parse_ipv4("10.10.1.1"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(
        r.error(),
        "10.10.1.1 is on port 'wan', not on 'lan' (the outer source must be an address of the "
        "port the tunnel leaves by): use one of port 'lan': 10.10.2.1");
    r = director->tunnel_source_set("lan", kVip);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("10.10.1.100 is not a director address"), std::string::npos)
        << r.error();
    EXPECT_EQ(director->tunnel_source("lan"), std::nullopt);
}

TEST_F(TunTest, GueOuterHeaderToTheDestsPort) {
    configure(lb::FwdMode::Tun, 80, 53, lb::TunType::Gue, 6080);
    Bytes q = PacketBuilder()
                  .eth(kClientMac, wan_mac())
                  .ipv4("10.10.1.2", "10.10.1.100")
                  .udp(33000, 53)
                  .payload("query")
                  .build();
    auto out = roundtrip(kWan, q, kLan);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].size(), q.size() + 32);
    const uint16_t id = uint16_t(out[0][18] << 8 | out[0][19]);
    const uint16_t sport = uint16_t(out[0][34] << 8 | out[0][35]);
    EXPECT_GE(sport, 49152);  // flow entropy in the dynamic range
    Bytes inner = ip_packet(q);
    Bytes want(out[0].begin(), out[0].begin() + 14);
    Bytes hdr = outer_ipv4(inner, 17, 12, id, "10.10.2.1", "10.10.2.2");
    want.insert(want.end(), hdr.begin(), hdr.end());
    const uint16_t ulen = static_cast<uint16_t>(8 + 4 + inner.size());
    Bytes udp_gue = {uint8_t(sport >> 8), uint8_t(sport), 6080 >> 8, 6080 & 0xff,
                     uint8_t(ulen >> 8), uint8_t(ulen), 0, 0,  // checksum 0 (IPv4)
                     0x00, 4, 0, 0};                            // GUE v0, proto_ctype 4 (IPIP)
    want.insert(want.end(), udp_gue.begin(), udp_gue.end());
    want.insert(want.end(), inner.begin(), inner.end());
    EXPECT_TRUE(FramesEqual(want, out[0]));
    // The same flow keeps its source port.
    out = roundtrip(kWan, q, kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(uint16_t(out[0][34] << 8 | out[0][35]), sport);
}

TEST_F(TunTest, TooBigWithDfGetsFragNeededBackToTheClient) {
    configure(lb::FwdMode::Tun, 80, 53);
    ASSERT_EQ(roundtrip(kWan, client_tcp(net::kTcpSyn), kLan).size(), 1u);
    // 1500-byte packet (the port MTU), DF set: with 20 bytes of IPIP it no longer fits.
    Bytes big = client_tcp(net::kTcpAck, std::string(1500 - 40, 'z'));
    ASSERT_EQ(big.size(), 14u + 1500u);
    send(kWan, big);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    auto back = recv(kWan);
    ASSERT_EQ(back.size(), 1u);
    const Bytes quote(big.begin() + 14, big.begin() + 14 + (576 - 28));
    const uint16_t id = uint16_t(back[0][18] << 8 | back[0][19]);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv4("10.10.1.100", "10.10.1.2")
                                .tos(0xc0)  // internetwork control, as routers send errors
                                .ip_id(id)
                                .frag_off(0)
                                .icmp_error(3, 4, 1480, quote)
                                .build(),
                            back[0]));
    EXPECT_EQ(counter(Counter::drop_tunnel_too_big), 1u);
    EXPECT_EQ(counter(Counter::icmp_frag_needed_sent), 1u);
}

// The MTU check of an established conn's packet takes the port from the conn's cached next
// hop instead of scanning the routes: it must be the port the packet then leaves by, and a
// route change must move the check to the new port with the conn.
class TunSmallLanMtuTest : public TunTest {
  protected:
    void SetUp() override {
        lan_mtu = 1400;
        TunTest::SetUp();
    }
};

TEST_F(TunSmallLanMtuTest, MtuCheckFollowsThePortOfTheCachedNextHop) {
    configure(lb::FwdMode::Tun, 80, 53);
    ASSERT_EQ(roundtrip(kWan, client_tcp(net::kTcpSyn), kLan).size(), 1u);
    ASSERT_EQ(roundtrip(kWan, client_tcp(net::kTcpAck), kLan).size(), 1u);
    ASSERT_EQ(counter(Counter::nh_cache_hits), 1u);  // the conn's next hop is cached
    // 1400 bytes fit lan's MTU alone, not with 20 bytes of IPIP: frag-needed, MTU 1380.
    const Bytes big = client_tcp(net::kTcpAck, std::string(1400 - 40, 'z'));
    send(kWan, big);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    auto back = recv(kWan);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(uint16_t(back[0][14 + 20 + 6] << 8 | back[0][14 + 20 + 7]), 1380);
    EXPECT_EQ(counter(Counter::drop_tunnel_too_big), 1u);
    // A host route now takes the RS through a gateway on wan (MTU 1500): the same packet
    // fits there, and leaves by wan to the gateway.
    const net::MacAddr gateway_mac{{0x02, 0, 0, 0, 0x1a, 0x09}};
    worker->neighbours().add_static(ip("10.10.1.9"), gateway_mac, kWan);
    ASSERT_TRUE(director
                    ->route_add(*net::parse_ipv4_prefix("10.10.2.2/32"),
                                *net::parse_ipv4("10.10.1.9"), "wan")
                    .ok());
    director->commit();
    auto out = roundtrip(kWan, big, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].size(), big.size() + 20);
    EXPECT_TRUE(std::equal(gateway_mac.b, gateway_mac.b + 6, out[0].begin()));
    EXPECT_EQ(counter(Counter::drop_tunnel_too_big), 1u);
    // Back through lan once the route is gone: too big again.
    ASSERT_TRUE(director->route_del(*net::parse_ipv4_prefix("10.10.2.2/32")).ok());
    director->commit();
    send(kWan, big);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_EQ(recv(kWan).size(), 1u);
    EXPECT_EQ(counter(Counter::drop_tunnel_too_big), 2u);
}

}  // namespace
}  // namespace xvs::test
