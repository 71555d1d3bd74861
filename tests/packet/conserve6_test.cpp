// Packet tests: the client address of an IPv6 client reaching the real server (issue 11 item 3),
// for FNAT66 (IPv6 RS) and FNAT64 (IPv4 RS): PROXY protocol v1 `TCP6` and v2 0x21/0x22 in front
// of the first payload (TCP, with the RS's MSS lowered by the header and, for FNAT64, the
// header difference), as its own segment for a server that speaks first, and in front of a UDP
// flow's first datagram; UOA opp with the 20-byte IPv6 option, in an IPv6 datagram (FNAT66)
// and in the translated IPv4 one (FNAT64, opp version 2), and as an empty IPv6 datagram ahead
// of one with no room; what the director refuses for IPv6 VIPs.
#include <cstring>

#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 40000;  // 0x9c40
const char* const kClient = "2001:db8:1::2";
const char* const kVip = "2001:db8:1::100";
const char* const kRs6 = "2001:db8:2::2";
const char* const kLip6 = "2001:db8:2::100";
const char* const kRs4 = "10.10.2.2";
const char* const kLip4 = "10.10.2.100";
const std::string kV1 = "PROXY TCP6 2001:db8:1::2 2001:db8:1::100 40000 80\r\n";

Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}
Bytes addr16(const char* a) {
    const net::InetAddr x = ip6(a);
    return Bytes(x.b, x.b + 16);
}
// PROXY v2, PROXY command, AF_INET6 + transport (0x21 TCP / 0x22 UDP), 36 address bytes.
Bytes v2_header(uint8_t fam, uint16_t vport) {
    Bytes h = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51,
               0x55, 0x49, 0x54, 0x0a, 0x21, fam,  0x00, 0x24};
    h = cat(cat(h, addr16(kClient)), addr16(kVip));
    return cat(h, {0x9c, 0x40, uint8_t(vport >> 8), uint8_t(vport & 0xff)});
}
// The opp header for an IPv6 client (version 2, protocol UDP, 24 bytes) and the UOA option
// (code 31, length 20, client port, client address).
Bytes opp6() {
    return cat({0x20, 17, 0, 24, 31, 20, 0x9c, 0x40}, addr16(kClient));
}

class Conserve6Test : public PipelineTest {
  protected:
    // One service on [kVip]:vport (proto) with flags, its RS and local address IPv6 (FNAT66) or
    // IPv4 (FNAT64).
    void configure(uint8_t proto, uint32_t flags, bool rs_v4) {
        rs_v4_ = rs_v4;
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        ok(director->address_add(ip6("2001:db8:1::1"), 64, "wan"));
        if (rs_v4)
            ok(director->address_add(*net::parse_ipv4("10.10.2.1"), 24, "lan"));
        else
            ok(director->address_add(ip6("2001:db8:2::1"), 64, "lan"));
        vport_ = proto == 6 ? 80 : 53;
        lb::ServiceSpec s{proto, ip6(kVip), vport_, "rr"};
        s.flags = flags;
        ok(director->service_add(s));
        const auto key = lb::make_service_key(proto, ip6(kVip), vport_);
        ok(director->dest_add(key, lb::DestSpec{rs(), 8080, 1}));
        ok(director->laddr_add(key, lip(), "lan"));
        director->commit();
        start_worker();
        worker->neighbours().add_static(ip6(kClient), kClientMac, kWan);
        worker->neighbours().add_static(rs(), kRs1Mac, kLan);
    }
    net::InetAddr rs() const { return rs_v4_ ? *net::parse_ipv4(kRs4) : ip6(kRs6); }
    net::InetAddr lip() const { return rs_v4_ ? *net::parse_ipv4(kLip4) : ip6(kLip6); }

    Bytes client_tcp(uint32_t seq, uint32_t ack, uint8_t flags, Bytes data = {}) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv6(kClient, kVip)
            .tcp(kCport, 80)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .payload(std::move(data))
            .build();
    }
    // What the RS must get: LIP:lport -> RS:8080 in the RS's family (FNAT64's IPv4 header
    // carries the hop limit as TTL, DF, and the worker's IP id).
    PacketBuilder to_rs() {
        PacketBuilder b;
        b.eth(lan_mac(), kRs1Mac);
        if (rs_v4_)
            b.ipv4(kLip4, kRs4).ip_id(ip_id_++);
        else
            b.ipv6(kLip6, kRs6);
        return b;
    }
    PacketBuilder from_rs() {
        PacketBuilder b;
        b.eth(kRs1Mac, lan_mac());
        if (rs_v4_)
            b.ipv4(kRs4, kLip4);
        else
            b.ipv6(kRs6, kLip6);
        return b;
    }
    // The client's SYN and the RS's SYN-ACK (MSS 1460); returns the MSS the client was given.
    uint16_t handshake() {
        auto out = roundtrip(kWan, client_tcp(1000, 0, net::kTcpSyn), kLan);
        if (out.size() != 1) return 0;
        const size_t l4 = 14 + (rs_v4_ ? 20 : 40);
        lport_ = net::load_be16(out[0].data() + l4);
        if (rs_v4_) ip_id_ = static_cast<uint16_t>(net::load_be16(out[0].data() + 18) + 1);
        Bytes synack = from_rs()
                           .tcp(8080, lport_)
                           .seq(5000)
                           .ack(1001)
                           .flags(net::kTcpSyn | net::kTcpAck)
                           .tcp_options({2, 4, 0x05, 0xb4})
                           .build();
        out = roundtrip(kLan, synack, kWan);
        if (out.size() != 1) return 0;
        return net::load_be16(out[0].data() + 14 + 40 + 20 + 2);
    }

    bool rs_v4_ = false;
    uint16_t vport_ = 80;
    uint16_t lport_ = 0;
    uint16_t ip_id_ = 0;
};

// ---- PROXY protocol ----------------------------------------------------------------------------

class ProxyV1Test : public Conserve6Test, public ::testing::WithParamInterface<bool> {};

TEST_P(ProxyV1Test, Tcp6LineInFrontOfTheFirstPayloadAndAcksMappedBack) {
    configure(6, lb::kSvcFlagPpV1, GetParam());
    const Bytes hdr(kV1.begin(), kV1.end());
    // The RS's MSS is lowered by the header, and for FNAT64 by the 20 bytes IPv6 adds.
    EXPECT_EQ(handshake(), 1460 - hdr.size() - (rs_v4_ ? 20 : 0));
    EXPECT_EQ(counter(Counter::pp_mss_clamped), 1u);
    auto out =
        roundtrip(kWan, client_tcp(1001, 5001, net::kTcpAck | net::kTcpPsh, {'h', 'i'}), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs()
                                .tcp(lport_, 8080)
                                .seq(1001)
                                .ack(5001)
                                .flags(net::kTcpAck | net::kTcpPsh)
                                .payload(cat(hdr, {'h', 'i'}))
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::pp_inserted), 1u);
    // The RS acks header + "hi": the client sees its own 2 bytes acked.
    out = roundtrip(kLan,
                    from_rs()
                        .tcp(8080, lport_)
                        .seq(5001)
                        .ack(uint32_t(1001 + hdr.size() + 2))
                        .flags(net::kTcpAck)
                        .build(),
                    kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip, kClient)
                                .tcp(80, kCport)
                                .seq(5001)
                                .ack(1003)
                                .flags(net::kTcpAck)
                                .build(),
                            out[0]));
    // The next client segment is shifted by the header.
    out = roundtrip(kWan, client_tcp(1003, 5001, net::kTcpAck | net::kTcpPsh, {'!'}), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs()
                                .tcp(lport_, 8080)
                                .seq(uint32_t(1003 + hdr.size()))
                                .ack(5001)
                                .flags(net::kTcpAck | net::kTcpPsh)
                                .payload(Bytes{'!'})
                                .build(),
                            out[0]));
}

INSTANTIATE_TEST_SUITE_P(Fnat66AndFnat64, ProxyV1Test, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Fnat64" : "Fnat66"; });

class ProxyV2Test : public Conserve6Test, public ::testing::WithParamInterface<bool> {};

// Server speaks first: the handshake ACK goes through, followed by the 52-byte v2 header as
// its own segment at client ISN + 1 in the RS's family.
TEST_P(ProxyV2Test, ServerSpeaksFirstGetsTheHeaderSegment) {
    configure(6, lb::kSvcFlagPpV2, GetParam());
    ASSERT_NE(handshake(), 0);
    auto out = roundtrip(kWan, client_tcp(1001, 5001, net::kTcpAck), kLan);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(FramesEqual(
        to_rs().tcp(lport_, 8080).seq(1001).ack(5001).flags(net::kTcpAck).build(), out[0]));
    PacketBuilder seg = to_rs();
    if (rs_v4_) seg.ip_id(0);  // a segment xvs writes itself carries id 0
    EXPECT_TRUE(FramesEqual(seg.tcp(lport_, 8080)
                                .seq(1001)
                                .ack(5001)
                                .flags(net::kTcpAck | net::kTcpPsh)
                                .payload(v2_header(0x21, 80))
                                .build(),
                            out[1]));
    EXPECT_EQ(counter(Counter::pp_header_segment_sent), 1u);
}

// UDP: the header (0x22) goes in front of the flow's first datagram only.
TEST_P(ProxyV2Test, UdpFirstDatagramCarriesTheHeader) {
    configure(17, lb::kSvcFlagPpV2, GetParam());
    auto query = [&](const std::string& q) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv6(kClient, kVip)
            .udp(kCport, 53)
            .payload(q)
            .build();
    };
    auto out = roundtrip(kWan, query("q1"), kLan);
    ASSERT_EQ(out.size(), 1u);
    lport_ = net::load_be16(out[0].data() + 14 + (rs_v4_ ? 20 : 40));
    if (rs_v4_) ip_id_ = net::load_be16(out[0].data() + 18);
    EXPECT_TRUE(FramesEqual(
        to_rs().udp(lport_, 8080).payload(cat(v2_header(0x22, 53), {'q', '1'})).build(), out[0]));
    out = roundtrip(kWan, query("q2"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs().udp(lport_, 8080).payload("q2").build(), out[0]));
    EXPECT_EQ(counter(Counter::pp_inserted), 1u);
}

INSTANTIATE_TEST_SUITE_P(Fnat66AndFnat64, ProxyV2Test, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Fnat64" : "Fnat66"; });

// ---- UOA ---------------------------------------------------------------------------------------

// The plain datagram to the RS with the opp header and option inserted as the RS must see it:
// after the IP header, protocol / next header 248, length grown by 24 (IPv4 checksum fixed);
// the UDP header and checksum untouched (the RS's UOA module restores protocol 17).
Bytes with_opp(Bytes f, bool v4) {
    const size_t at = 14 + (v4 ? 20 : 40);
    const Bytes ins = opp6();
    f.insert(f.begin() + static_cast<long>(at), ins.begin(), ins.end());
    uint8_t* ip = f.data() + 14;
    if (v4) {
        net::store_be16(ip + 2, static_cast<uint16_t>(net::load_be16(ip + 2) + ins.size()));
        ip[9] = 248;
        net::store_be16(ip + 10, 0);
        net::Ipv4Hdr h;
        std::memcpy(&h, ip, sizeof(h));
        const uint16_t csum = net::ipv4_header_checksum(&h);
        std::memcpy(ip + 10, &csum, 2);
    } else {
        net::store_be16(ip + 4, static_cast<uint16_t>(net::load_be16(ip + 4) + ins.size()));
        ip[6] = 248;
    }
    return f;
}

class Uoa6Test : public Conserve6Test, public ::testing::WithParamInterface<bool> {
  protected:
    Bytes query(const std::string& q) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv6(kClient, kVip)
            .udp(kCport, 53)
            .payload(q)
            .build();
    }
};

// The first uoa_max_trail (3) datagrams carry the 20-byte option, the rest go plain.
TEST_P(Uoa6Test, OppWithTheIpv6ClientOnTheFirstDatagrams) {
    configure(17, lb::kSvcFlagUoaOpp, GetParam());
    for (int i = 0; i < 4; ++i) {
        auto out = roundtrip(kWan, query("q"), kLan);
        ASSERT_EQ(out.size(), 1u) << i;
        if (i == 0) {
            lport_ = net::load_be16(out[0].data() + 14 + (rs_v4_ ? 20 : 40) + 24);  // after opp
            if (rs_v4_) ip_id_ = net::load_be16(out[0].data() + 18);
        }
        const Bytes plain = to_rs().udp(lport_, 8080).payload("q").build();
        EXPECT_TRUE(FramesEqual(i < 3 ? with_opp(plain, rs_v4_) : plain, out[0])) << i;
    }
    EXPECT_EQ(counter(Counter::uoa_inserted), 3u);
    EXPECT_EQ(counter(Counter::uoa_empty_sent), 0u);
}

INSTANTIATE_TEST_SUITE_P(Fnat66AndFnat64, Uoa6Test, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Fnat64" : "Fnat66"; });

// A full-size IPv6 datagram has no room for 24 more bytes: an empty IPv6 datagram carrying UOA
// goes first (UDP checksum over the IPv6 pseudo-header), then the datagram unchanged.
TEST_F(Conserve6Test, Fnat66FullDatagramGetsAnEmptyOneAhead) {
    configure(17, lb::kSvcFlagUoaOpp, false);
    const std::string big(1500 - 40 - 8, 'x');
    auto out = roundtrip(kWan,
                         PacketBuilder()
                             .eth(kClientMac, wan_mac())
                             .ipv6(kClient, kVip)
                             .udp(kCport, 53)
                             .payload(big)
                             .build(),
                         kLan);
    ASSERT_EQ(out.size(), 2u);
    lport_ = net::load_be16(out[1].data() + 14 + 40);
    EXPECT_TRUE(FramesEqual(with_opp(to_rs().udp(lport_, 8080).build(), false), out[0]));
    EXPECT_TRUE(FramesEqual(to_rs().udp(lport_, 8080).payload(big).build(), out[1]));
    EXPECT_EQ(counter(Counter::uoa_fail_mtu), 1u);
    EXPECT_EQ(counter(Counter::uoa_empty_sent), 1u);
}

// ---- refusals ----------------------------------------------------------------------------------

TEST_F(Conserve6Test, IpoAndSynProxyAreRefusedOnIpv6Vips) {
    ASSERT_TRUE(director->address_add(ip6("2001:db8:1::1"), 64, "wan").ok());
    lb::ServiceSpec s{17, ip6(kVip), 53, "rr"};
    s.flags = lb::kSvcFlagUoaIpo;
    auto r = director->service_add(s);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("use uoa_mode opp"), std::string::npos) << r.error();
    lb::ServiceSpec t{6, ip6(kVip), 80, "rr"};
    t.flags = lb::kSvcFlagSynProxy;
    r = director->service_add(t);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("syn_proxy"), std::string::npos) << r.error();
    // PROXY protocol and UOA opp are accepted.
    s.flags = lb::kSvcFlagUoaOpp;
    EXPECT_TRUE(director->service_add(s).ok());
    t.flags = lb::kSvcFlagPpV2;
    EXPECT_TRUE(director->service_add(t).ok());
}

}  // namespace
}  // namespace xvs::test
