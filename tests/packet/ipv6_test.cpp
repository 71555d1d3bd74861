// Packet tests for IPv6 (issue 11): neighbour discovery for a VIP and a local address (and
// what ND refuses), resolution of an IPv6 next hop by solicitation, ICMPv6 echo, extension
// headers, and the forwarding modes over IPv6 with exact frames: FNAT66 handshake and data
// both ways, NAT66 (hop limit, time exceeded), DR, TUN (IPv6-in-IPv6, GUE over IPv6), an
// ICMPv6 packet too big of a conn translated; FNAT64 (exact IPv4 both ways, packet too big,
// TOA-v6, ICMP errors changing family); and the family rules the director enforces.
#include <cstring>
#include <set>

#include "fixture/pipeline.h"
#include "net/checksum.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 40000;
const char* const kClient = "2001:db8:1::2";
const char* const kVip = "2001:db8:1::100";
const char* const kRs = "2001:db8:2::2";
const char* const kLip = "2001:db8:2::100";

Bytes mac_bytes(const net::MacAddr& m) {
    return Bytes(m.b, m.b + 6);
}

// A neighbour solicitation for target (to its solicited-node address), with a source
// link-layer address option unless with_slla is false.
Bytes solicit(net::MacAddr src_mac, const char* src, const char* target, uint8_t hop = 255,
              bool with_slla = true) {
    const net::InetAddr t = ip6(target);
    Bytes body(4 + 16);  // reserved, target
    std::memcpy(body.data() + 4, t.b, 16);
    if (with_slla) {
        body.push_back(net::kNdOptSourceLla);
        body.push_back(1);
        for (uint8_t b : mac_bytes(src_mac)) body.push_back(b);
    }
    char dst[64];
    std::snprintf(dst, sizeof dst, "ff02::1:ff%02x:%02x%02x", t.b[13], t.b[14], t.b[15]);
    const net::MacAddr mdst{{0x33, 0x33, 0xff, t.b[13], t.b[14], t.b[15]}};
    return PacketBuilder()
        .eth(src_mac, mdst)
        .ipv6(src, dst)
        .ttl(hop)
        .icmp6(net::kNdNeighSolicit, 0, body)
        .build();
}

// The advertisement xvs answers with: solicited + override, target link-layer option.
Bytes advert(net::MacAddr our_mac, net::MacAddr to_mac, const char* target, const char* to,
             uint8_t flags = net::kNaSolicited | net::kNaOverride) {
    const net::InetAddr t = ip6(target);
    Bytes body(4 + 16);
    body[0] = flags;
    std::memcpy(body.data() + 4, t.b, 16);
    body.push_back(net::kNdOptTargetLla);
    body.push_back(1);
    for (uint8_t b : mac_bytes(our_mac)) body.push_back(b);
    return PacketBuilder()
        .eth(our_mac, to_mac)
        .ipv6(target, to)
        .ttl(255)
        .icmp6(net::kNdNeighAdvert, 0, body)
        .build();
}

class Ipv6Test : public PipelineTest {
  protected:
    void addresses() {
        ok(director->address_add(ip6("2001:db8:1::1"), 64, "wan"));
        ok(director->address_add(ip6("2001:db8:2::1"), 64, "lan"));
    }
    // One TCP (80 -> rport) and one UDP (53 -> 5353) service on the VIP reached by fwd.
    void configure(lb::FwdMode fwd, uint16_t rport = 8080, lb::TunType tun = lb::TunType::Ipip,
                   uint16_t tun_port = 0, bool neighbours = true) {
        addresses();
        for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
            const uint16_t vport = proto == 6 ? 80 : 53;
            lb::ServiceSpec s{proto, ip6(kVip), vport, "rr"};
            s.fwd = fwd;
            ok(director->service_add(s));
            const auto key = lb::make_service_key(proto, ip6(kVip), vport);
            lb::DestSpec d{ip6(kRs), proto == 6 ? rport : uint16_t(5353), 1};
            if (fwd == lb::FwdMode::Dr || fwd == lb::FwdMode::Tun) d.port = vport;
            d.fwd = fwd;
            d.tun_type = tun;
            d.tun_port = tun_port;
            ok(director->dest_add(key, d));
            if (fwd == lb::FwdMode::FullNat) ok(director->laddr_add(key, ip6(kLip), "lan"));
        }
        director->commit();
        lb::WorkerConfig cfg;
        if (max_conns) cfg.max_conns = max_conns;
        start_worker(cfg);
        if (neighbours) {
            worker->neighbours().add_static(ip6(kClient), kClientMac, kWan);
            worker->neighbours().add_static(ip6(kRs), kRs1Mac, kLan);
        }
    }
    static void ok(const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); }
    uint32_t max_conns = 0;  // configure's table size in slots (0: the fixture's)

    Bytes client_tcp(uint8_t flags, const std::string& data = "", uint8_t hop = 64) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv6(kClient, kVip)
            .ttl(hop)
            .tcp(kCport, 80)
            .seq(1000)
            .ack(flags & net::kTcpAck ? 5001 : 0)
            .flags(flags)
            .payload(data)
            .build();
    }
};

// ---- neighbour discovery, echo, input checks -------------------------------------------------

TEST_F(Ipv6Test, NeighbourSolicitationForVipAndLocalAddressIsAnswered) {
    configure(lb::FwdMode::FullNat, 8080, lb::TunType::Ipip, 0, false);
    auto out = roundtrip(kWan, solicit(kClientMac, kClient, kVip), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(advert(wan_mac(), kClientMac, kVip, kClient), out[0]));
    out = roundtrip(kLan, solicit(kRs1Mac, kRs, kLip), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(advert(lan_mac(), kRs1Mac, kLip, kRs), out[0]));
    EXPECT_EQ(counter(Counter::nd_adverts_sent), 2u);
    // The solicitation taught xvs the sender's MAC: the client is now a reachable neighbour.
    const stack::NeighEntry* e = worker->neighbours().find(ip6(kClient));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->mac, kClientMac);
    EXPECT_EQ(e->state, stack::NeighState::Reachable);
}

TEST_F(Ipv6Test, NeighbourDiscoveryRefusesWhatItMust) {
    configure(lb::FwdMode::FullNat, 8080, lb::TunType::Ipip, 0, false);
    // The LIP lives on lan: asked on wan it is not ours there.
    EXPECT_TRUE(roundtrip(kWan, solicit(kClientMac, kClient, kLip), kWan).empty());
    EXPECT_EQ(counter(Counter::drop_nd_not_ours), 1u);
    // RFC 4861 7.1.1: a hop limit below 255 means the message crossed a router.
    EXPECT_TRUE(roundtrip(kWan, solicit(kClientMac, kClient, kVip, 64), kWan).empty());
    EXPECT_EQ(counter(Counter::drop_nd_malformed), 1u);
    // A sender outside the port's subnets is neither answered nor learned (no hijack).
    EXPECT_TRUE(roundtrip(kWan, solicit(kClientMac, "2001:db8:2::77", kVip), kWan).empty());
    EXPECT_EQ(counter(Counter::drop_nd_off_link), 1u);
    EXPECT_EQ(worker->neighbours().find(ip6("2001:db8:2::77")), nullptr);
    // A DAD probe (source ::) is not answered.
    EXPECT_TRUE(roundtrip(kWan, solicit(kClientMac, "::", kVip, 255, false), kWan).empty());
    EXPECT_EQ(counter(Counter::drop_nd_dad), 1u);
    // A sender claiming our own address.
    EXPECT_TRUE(roundtrip(kWan, solicit(kClientMac, "2001:db8:1::1", kVip), kWan).empty());
    EXPECT_EQ(counter(Counter::drop_nd_own_address), 1u);
    // An advertisement nobody asked for creates no entry.
    EXPECT_TRUE(
        roundtrip(kWan, advert(kClientMac, wan_mac(), "2001:db8:1::9", kClient, 0), kWan).empty());
    EXPECT_EQ(worker->neighbours().find(ip6("2001:db8:1::9")), nullptr);
    EXPECT_EQ(counter(Counter::nd_adverts_sent), 0u);
}

TEST_F(Ipv6Test, NextHopIsResolvedBySolicitationAndQueuedPacketReleased) {
    configure(lb::FwdMode::FullNat, 8080, lb::TunType::Ipip, 0, false);
    worker->neighbours().add_static(ip6(kClient), kClientMac, kWan);
    // The SYN to the RS waits for the RS's MAC; xvs solicits it from the port's address.
    auto out = roundtrip(kWan, client_tcp(net::kTcpSyn), kLan);
    ASSERT_EQ(out.size(), 1u);
    Bytes expected = solicit(lan_mac(), "2001:db8:2::1", kRs);
    EXPECT_TRUE(FramesEqual(expected, out[0]));
    EXPECT_EQ(counter(Counter::nd_solicits_sent), 1u);
    EXPECT_EQ(counter(Counter::neigh_queued), 1u);
    // The RS answers: the SYN leaves.
    out = roundtrip(kLan, advert(kRs1Mac, lan_mac(), kRs, "2001:db8:2::1"), kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* eth = reinterpret_cast<const net::EtherHdr*>(out[0].data());
    EXPECT_EQ(eth->dst, kRs1Mac);
    EXPECT_EQ(net::ntoh16(eth->ether_type), net::kEtherTypeIpv6);
    EXPECT_EQ(counter(Counter::nd_adverts_received), 1u);
}

TEST_F(Ipv6Test, EchoToVipIsAnswered) {
    configure(lb::FwdMode::FullNat);
    Bytes req = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv6(kClient, kVip)
                    .icmp_echo(net::kIcmp6EchoRequest, 7, 1)
                    .payload("ping")
                    .build();
    auto out = roundtrip(kWan, req, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip, kClient)
                                .icmp_echo(net::kIcmp6EchoReply, 7, 1)
                                .payload("ping")
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::icmp6_echo_replies), 1u);
}

TEST_F(Ipv6Test, ExtensionHeadersAreWalkedOrRefused) {
    configure(lb::FwdMode::FullNat);
    // A destination options header (8 bytes of padding: PadN) before TCP is walked.
    Bytes dstopts{net::kIpProtoTcp, 0, 1, 4, 0, 0, 0, 0};
    Bytes syn = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv6(kClient, kVip)
                    .ext_headers(net::kIp6ExtDestOpts, dstopts)
                    .tcp(kCport, 80)
                    .seq(1000)
                    .flags(net::kTcpSyn)
                    .build();
    auto out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 1u);
    // A routing header with segments left asks us to route on: refused.
    Bytes rh{net::kIpProtoTcp, 2, 0, 1, 0, 0, 0, 0};
    for (int i = 0; i < 16; ++i) rh.push_back(0x20);
    Bytes routed = PacketBuilder()
                       .eth(kClientMac, wan_mac())
                       .ipv6(kClient, kVip)
                       .ext_headers(net::kIp6ExtRouting, rh)
                       .tcp(kCport + 1, 80)
                       .flags(net::kTcpSyn)
                       .build();
    EXPECT_TRUE(roundtrip(kWan, routed, kLan).empty());
    EXPECT_EQ(counter(Counter::drop_ip6_ext_header), 1u);
    // Sources no packet may have: IPv4-mapped (would alias an IPv4 client) and multicast.
    for (const char* src : {"::ffff:10.10.1.2", "ff02::1", "::1"}) {
        Bytes bad = PacketBuilder()
                        .eth(kClientMac, wan_mac())
                        .ipv6(src, kVip)
                        .tcp(kCport, 80)
                        .flags(net::kTcpSyn)
                        .build();
        EXPECT_TRUE(roundtrip(kWan, bad, kLan).empty()) << src;
    }
    EXPECT_EQ(counter(Counter::drop_martian_source), 3u);
}

// ---- FNAT66 -----------------------------------------------------------------------------------

TEST_F(Ipv6Test, Fnat66HandshakeAndDataBothWays) {
    configure(lb::FwdMode::FullNat);
    auto out = roundtrip(kWan, client_tcp(net::kTcpSyn), kLan);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_GE(out[0].size(), 14u + 40 + 20);
    uint16_t lport;
    std::memcpy(&lport, out[0].data() + 14 + 40, 2);
    lport = net::ntoh16(lport);
    EXPECT_GE(lport, 1025);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv6(kLip, kRs)
                                .tcp(lport, 8080)
                                .seq(1000)
                                .flags(net::kTcpSyn)
                                .build(),
                            out[0]));
    Bytes synack = PacketBuilder()
                       .eth(kRs1Mac, lan_mac())
                       .ipv6(kRs, kLip)
                       .tcp(8080, lport)
                       .seq(5000)
                       .ack(1001)
                       .flags(net::kTcpSyn | net::kTcpAck)
                       .build();
    out = roundtrip(kLan, synack, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip, kClient)
                                .tcp(80, kCport)
                                .seq(5000)
                                .ack(1001)
                                .flags(net::kTcpSyn | net::kTcpAck)
                                .build(),
                            out[0]));
    out = roundtrip(kWan, client_tcp(net::kTcpAck | net::kTcpPsh, "GET / HTTP/1.0\r\n\r\n"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv6(kLip, kRs)
                                .tcp(lport, 8080)
                                .seq(1000)
                                .ack(5001)
                                .flags(net::kTcpAck | net::kTcpPsh)
                                .payload("GET / HTTP/1.0\r\n\r\n")
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::lb_forwarded), 3u);
    EXPECT_EQ(counter(Counter::conns_created), 1u);
}

TEST_F(Ipv6Test, Fnat66Udp) {
    configure(lb::FwdMode::FullNat);
    Bytes q = PacketBuilder()
                  .eth(kClientMac, wan_mac())
                  .ipv6(kClient, kVip)
                  .udp(kCport, 53)
                  .payload("query")
                  .build();
    auto out = roundtrip(kWan, q, kLan);
    ASSERT_EQ(out.size(), 1u);
    uint16_t lport;
    std::memcpy(&lport, out[0].data() + 14 + 40, 2);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv6(kLip, kRs)
                                .udp(net::ntoh16(lport), 5353)
                                .payload("query")
                                .build(),
                            out[0]));
    Bytes a = PacketBuilder()
                  .eth(kRs1Mac, lan_mac())
                  .ipv6(kRs, kLip)
                  .udp(5353, net::ntoh16(lport))
                  .payload("answer")
                  .build();
    out = roundtrip(kLan, a, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip, kClient)
                                .udp(53, kCport)
                                .payload("answer")
                                .build(),
                            out[0]));
}

// An IPv6 conn takes two of the table's 64-byte slots (its addresses in the second): a table
// of 16 slots holds 8, the 9th datagram of a new flow is dropped as a full pool, and the
// walkers see each conn once with its addresses whole.
TEST_F(Ipv6Test, Ipv6ConnsTakeTwoSlotsOfTheTable) {
    max_conns = 16;
    configure(lb::FwdMode::FullNat);
    auto query = [&](uint16_t cport) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv6(kClient, kVip)
            .udp(cport, 53)
            .payload("query")
            .build();
    };
    for (uint16_t i = 0; i < 8; ++i) ASSERT_EQ(roundtrip(kWan, query(4000 + i), kLan).size(), 1u) << i;
    EXPECT_EQ(worker->conns().in_use(), 8u);
    EXPECT_EQ(worker->conns().slots_in_use(), 16u);
    EXPECT_TRUE(roundtrip(kWan, query(5000), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_conn_pool_full), 1u);
    std::set<uint16_t> ports;
    worker->conns().for_each([&](const lb::Conn& c) {
        EXPECT_EQ(c.caddr(), ip6(kClient));
        EXPECT_EQ(c.vaddr(), ip6(kVip));
        EXPECT_EQ(c.laddr_ip(), ip6(kLip));
        EXPECT_EQ(c.daddr(), ip6(kRs));
        ports.insert(net::ntoh16(c.cport));
    });
    EXPECT_EQ(ports, (std::set<uint16_t>{4000, 4001, 4002, 4003, 4004, 4005, 4006, 4007}));
    // A known flow still passes.
    EXPECT_EQ(roundtrip(kWan, query(4003), kLan).size(), 1u);
}

TEST_F(Ipv6Test, PacketTooBigOfAConnReachesTheClientTranslated) {
    configure(lb::FwdMode::FullNat);
    auto out = roundtrip(kWan, client_tcp(net::kTcpSyn), kLan);
    ASSERT_EQ(out.size(), 1u);
    uint16_t lport_be;
    std::memcpy(&lport_be, out[0].data() + 14 + 40, 2);
    // A router on the RS side says the director's packet to the RS (LIP:lport -> RS) was too
    // big for its next link, quoting it.
    const Bytes sent = ip_packet(PacketBuilder()
                                     .eth(lan_mac(), kRs1Mac)
                                     .ipv6(kLip, kRs)
                                     .tcp(net::ntoh16(lport_be), 8080)
                                     .seq(1001)
                                     .flags(net::kTcpAck)
                                     .build());
    Bytes body{0, 0, 0x05, 0x00};  // MTU 1280
    body.insert(body.end(), sent.begin(), sent.end());
    Bytes ptb = PacketBuilder()
                    .eth(kRs1Mac, lan_mac())
                    .ipv6("2001:db8:2::fe", kLip)
                    .icmp6(net::kIcmp6PacketTooBig, 0, body)
                    .build();
    out = roundtrip(kLan, ptb, kWan);
    ASSERT_EQ(out.size(), 1u);
    // The client learns it about its own packet: from the VIP, quoting client -> VIP:80.
    const Bytes client_view = ip_packet(PacketBuilder()
                                            .eth(kClientMac, wan_mac())
                                            .ipv6(kClient, kVip)
                                            .tcp(kCport, 80)
                                            .seq(1001)
                                            .flags(net::kTcpAck)
                                            .build());
    Bytes want{0, 0, 0x05, 0x00};
    want.insert(want.end(), client_view.begin(), client_view.end());
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip, kClient)
                                .icmp6(net::kIcmp6PacketTooBig, 0, want)
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 1u);
}

// Passive health checking (lb/passive.h), the same code as IPv4's: an ICMPv6 destination
// unreachable (type 1, here port unreachable, code 4) from the RS about the director's SYN
// counts one failure; packet too big (type 2) counts nothing. Both reach the client translated.
TEST_F(Ipv6Test, Fnat66DestUnreachableIsAPassiveFailurePacketTooBigIsNot) {
    configure(lb::FwdMode::FullNat);
    auto out = roundtrip(kWan, client_tcp(net::kTcpSyn), kLan);
    ASSERT_EQ(out.size(), 1u);
    const Bytes sent = ip_packet(out[0]);  // the SYN to the RS, quoted whole
    const Bytes client_view = ip_packet(client_tcp(net::kTcpSyn));
    auto error_from_rs = [&](uint8_t type, Bytes body) {
        body.insert(body.end(), sent.begin(), sent.end());
        return PacketBuilder()
            .eth(kRs1Mac, lan_mac())
            .ipv6(kRs, kLip)
            .icmp6(type, type == 1 ? 4 : 0, body)
            .build();
    };
    auto error_to_client = [&](uint8_t type, Bytes body) {
        body.insert(body.end(), client_view.begin(), client_view.end());
        return PacketBuilder()
            .eth(wan_mac(), kClientMac)
            .ipv6(kVip, kClient)
            .icmp6(type, type == 1 ? 4 : 0, body)
            .build();
    };
    const Bytes mtu1280{0, 0, 0x05, 0x00};
    out = roundtrip(kLan, error_from_rs(net::kIcmp6PacketTooBig, mtu1280), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(error_to_client(net::kIcmp6PacketTooBig, mtu1280), out[0]));
    EXPECT_EQ(conn_fails(), 0u);
    out = roundtrip(kLan, error_from_rs(net::kIcmp6DestUnreach, {0, 0, 0, 0}), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(error_to_client(net::kIcmp6DestUnreach, {0, 0, 0, 0}), out[0]));
    EXPECT_EQ(conn_fails(), 1u);
    out = roundtrip(kLan, error_from_rs(net::kIcmp6DestUnreach, {0, 0, 0, 0}), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(conn_fails(), 1u);  // once per conn
}

// An IPv6 fragment header with offset `off` bytes, M flag, id 77, before UDP.
Bytes frag_hdr(uint16_t off, bool more) {
    return Bytes{
        net::kIpProtoUdp, 0, uint8_t((off | more) >> 8), uint8_t((off | more) & 0xff), 0, 0, 0, 77};
}

// The fragments of a UDP datagram client -> VIP:53 of `payload` bytes, `piece` bytes of it
// (UDP header included) per fragment.
std::vector<Bytes> fragments6(size_t payload, size_t piece) {
    const Bytes whole = PacketBuilder()
                            .eth(kClientMac, net::MacAddr{})
                            .ipv6(kClient, kVip)
                            .udp(kCport, 53)
                            .payload(std::string(payload, 'f'))
                            .build();
    const Bytes l4(whole.begin() + 54, whole.end());
    std::vector<Bytes> out;
    for (size_t off = 0; off < l4.size(); off += piece) {
        const size_t len = std::min(piece, l4.size() - off);
        const bool more = off + len < l4.size();
        Bytes f = PacketBuilder()
                      .ipv6(kClient, kVip)
                      .ext_headers(net::kIp6ExtFragment, frag_hdr(uint16_t(off), more))
                      .ip_payload(net::kIpProtoUdp, Bytes(l4.begin() + std::ptrdiff_t(off),
                                                          l4.begin() + std::ptrdiff_t(off + len)))
                      .build();
        out.push_back(f);
    }
    return out;
}

TEST_F(Ipv6Test, FragmentsAreReassembledForwardedAndRefragmented) {
    configure(lb::FwdMode::FullNat);
    // Two fragments, the second first: one datagram reaches the RS, whole.
    auto frags = fragments6(24, 16);
    ASSERT_EQ(frags.size(), 2u);
    for (auto& f : frags) {
        auto* eth = reinterpret_cast<net::EtherHdr*>(f.data());
        eth->src = kClientMac;
        eth->dst = wan_mac();
    }
    EXPECT_TRUE(roundtrip(kWan, frags[1], kLan).empty());
    auto out = roundtrip(kWan, frags[0], kLan);
    ASSERT_EQ(out.size(), 1u);
    uint16_t lport;
    std::memcpy(&lport, out[0].data() + 54, 2);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv6(kLip, kRs)
                                .udp(net::ntoh16(lport), 5353)
                                .payload(std::string(24, 'f'))
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::frag_reassembled), 1u);
    // 4000 bytes in three fragments, reversed: reassembled, rewritten, and sent to the RS in
    // fragments of its own that fit lan's MTU (1500: 1448 bytes of payload each).
    frags = fragments6(4000, 1448);
    ASSERT_EQ(frags.size(), 3u);
    for (auto it = frags.rbegin(); it != frags.rend(); ++it) {
        auto* eth = reinterpret_cast<net::EtherHdr*>(it->data());
        eth->src = kClientMac;
        eth->dst = wan_mac();
        send(kWan, *it);
    }
    poll();
    out = recv(kLan);
    ASSERT_EQ(out.size(), 3u);
    Bytes joined;
    for (size_t i = 0; i < out.size(); ++i) {
        const auto* ip = reinterpret_cast<const net::Ipv6Hdr*>(out[i].data() + 14);
        ASSERT_EQ(ip->next_header, net::kIp6ExtFragment);
        EXPECT_LE(out[i].size(), 1514u);
        EXPECT_EQ(net::InetAddr::v6(ip->saddr), ip6(kLip));
        const uint8_t* fh = out[i].data() + 54;
        EXPECT_EQ(fh[0], net::kIpProtoUdp);
        EXPECT_EQ(net::load_be16(fh + 2) & 0xfff8, joined.size());
        EXPECT_EQ(net::load_be16(fh + 2) & 1, i + 1 < out.size() ? 1 : 0);
        joined.insert(joined.end(), out[i].begin() + 62, out[i].end());
    }
    ASSERT_EQ(joined.size(), 8u + 4000);
    EXPECT_EQ(net::load_be16(joined.data() + 2), 5353);
    EXPECT_EQ(net::load_be16(joined.data() + 4), 4008);
    // The UDP checksum of the whole datagram, over the new pseudo-header, holds.
    EXPECT_EQ(net::ipv6_l4_checksum(ip6(kLip).b, ip6(kRs).b, net::kIpProtoUdp, joined.data(),
                                    joined.size()),
              0);
    EXPECT_EQ(counter(Counter::frag_split), 1u);
}

// ---- NAT66, DR, TUN ---------------------------------------------------------------------------

TEST_F(Ipv6Test, Nat66BothWaysAndHopLimitExpiry) {
    configure(lb::FwdMode::Nat);
    auto out = roundtrip(kWan, client_tcp(net::kTcpSyn), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv6(kClient, kRs)
                                .ttl(63)
                                .tcp(kCport, 8080)
                                .seq(1000)
                                .flags(net::kTcpSyn)
                                .build(),
                            out[0]));
    Bytes synack = PacketBuilder()
                       .eth(kRs1Mac, lan_mac())
                       .ipv6(kRs, kClient)
                       .tcp(8080, kCport)
                       .seq(5000)
                       .ack(1001)
                       .flags(net::kTcpSyn | net::kTcpAck)
                       .build();
    out = roundtrip(kLan, synack, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip, kClient)
                                .ttl(63)
                                .tcp(80, kCport)
                                .seq(5000)
                                .ack(1001)
                                .flags(net::kTcpSyn | net::kTcpAck)
                                .build(),
                            out[0]));
    // Hop limit 1: not forwarded; time exceeded (ICMPv6 3/0) from the VIP, quoting it.
    Bytes last = client_tcp(net::kTcpAck, "x", 1);
    out = roundtrip(kWan, last, kWan);
    ASSERT_EQ(out.size(), 1u);
    Bytes body{0, 0, 0, 0};
    const Bytes quoted = ip_packet(last);
    body.insert(body.end(), quoted.begin(), quoted.end());
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip, kClient)
                                .icmp6(net::kIcmp6TimeExceeded, 0, body)
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::drop_ttl_expired), 1u);
    EXPECT_EQ(counter(Counter::icmp_time_exceeded_sent), 1u);
}

TEST_F(Ipv6Test, DrChangesOnlyTheMac) {
    configure(lb::FwdMode::Dr);
    Bytes syn = client_tcp(net::kTcpSyn);
    auto out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    Bytes want = syn;
    auto* eth = reinterpret_cast<net::EtherHdr*>(want.data());
    eth->src = lan_mac();
    eth->dst = kRs1Mac;
    EXPECT_TRUE(FramesEqual(want, out[0]));
}

TEST_F(Ipv6Test, TunIpv6InIpv6AndGueOverIpv6) {
    configure(lb::FwdMode::Tun);
    Bytes syn = client_tcp(net::kTcpSyn);
    auto out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    const Bytes inner = ip_packet(syn);
    ASSERT_EQ(out[0].size(), 14 + 40 + inner.size());
    const auto* outer = reinterpret_cast<const net::Ipv6Hdr*>(out[0].data() + 14);
    EXPECT_EQ(outer->version(), 6u);
    EXPECT_EQ(outer->next_header, net::kIpProtoIpv6);
    EXPECT_EQ(net::ntoh16(outer->payload_len), inner.size());
    EXPECT_EQ(outer->hop_limit, 64);
    EXPECT_EQ(net::InetAddr::v6(outer->saddr), ip6("2001:db8:2::1"));
    EXPECT_EQ(net::InetAddr::v6(outer->daddr), ip6(kRs));
    EXPECT_EQ(Bytes(out[0].begin() + 54, out[0].end()), inner);
}

TEST_F(Ipv6Test, GueOverIpv6) {
    configure(lb::FwdMode::Tun, 8080, lb::TunType::Gue, 6080);
    Bytes syn = client_tcp(net::kTcpSyn);
    auto out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    const Bytes inner = ip_packet(syn);
    ASSERT_EQ(out[0].size(), 14 + 52 + inner.size());
    const auto* outer = reinterpret_cast<const net::Ipv6Hdr*>(out[0].data() + 14);
    EXPECT_EQ(outer->next_header, net::kIpProtoUdp);
    EXPECT_EQ(net::ntoh16(outer->payload_len), 8 + 4 + inner.size());
    const uint8_t* udp = out[0].data() + 54;
    EXPECT_EQ(net::load_be16(udp + 2), 6080);
    EXPECT_GE(net::load_be16(udp), 49152);
    EXPECT_EQ(net::load_be16(udp + 4), 8 + 4 + inner.size());
    EXPECT_EQ(udp[9], net::kIpProtoIpv6);  // GUE proto_ctype
    EXPECT_EQ(Bytes(out[0].begin() + 66, out[0].end()), inner);
}

// ---- what the director refuses ----------------------------------------------------------------

// SNAT66: an inside IPv6 host's connection leaves from the director's IPv6 WAN address (a
// match service whose source range holds the host), hop limit decremented, and the reply
// comes back; a host outside the range and an IPv4 match service are passed by; a match
// service keeps one family.
TEST_F(Ipv6Test, Snat66BothWaysAndOneFamilyPerMatchService) {
    addresses();
    ok(director->address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
    auto range = lb::parse_match("proto=tcp,src-range=[2001:db8:2::1-2001:db8:2::ff]:1024-65535,"
                                 "iif=lan,oif=wan");
    ASSERT_TRUE(range.ok()) << range.error();
    lb::MatchKey k6 = *range;
    EXPECT_EQ(k6.family, 6);
    EXPECT_EQ(lb::to_string(k6),
              "proto=tcp,af=ipv6,src-range=[2001:db8:2::1-2001:db8:2::ff]:1024-65535,iif=lan,"
              "oif=wan");
    ASSERT_TRUE(director->match_add({k6, "", "rr"}));
    lb::DestSpec wan6;
    wan6.addr = ip6("2001:db8:1::1");
    wan6.fwd = lb::FwdMode::Snat;
    ok(director->match_dest_add(k6, wan6));
    lb::DestSpec wan4 = wan6;
    wan4.addr = *net::parse_ipv4("10.10.1.1");
    auto r = director->match_dest_add(k6, wan4);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("translates IPv6 packets"), std::string::npos) << r.error();
    // The UDP match service is IPv4: IPv6 datagrams pass it by.
    lb::MatchKey k4;
    k4.proto = 17;
    k4.oif = "wan";
    k4.iif = "lan";
    ASSERT_TRUE(director->match_add({k4, "", "rr"}));
    ok(director->match_dest_add(k4, wan4));
    director->commit();
    start_worker();
    worker->neighbours().add_static(ip6(kClient), kClientMac, kWan);
    worker->neighbours().add_static(ip6(kRs), kRs1Mac, kLan);

    auto out = roundtrip(kLan,
                         PacketBuilder()
                             .eth(kRs1Mac, lan_mac())
                             .ipv6(kRs, kClient)
                             .tcp(40000, 80)
                             .seq(1000)
                             .flags(net::kTcpSyn)
                             .build(),
                         kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint16_t wport = net::load_be16(out[0].data() + 14 + 40);
    EXPECT_GE(wport, 1025);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6("2001:db8:1::1", kClient)
                                .ttl(63)
                                .tcp(wport, 80)
                                .seq(1000)
                                .flags(net::kTcpSyn)
                                .build(),
                            out[0]));
    out = roundtrip(kWan,
                    PacketBuilder()
                        .eth(kClientMac, wan_mac())
                        .ipv6(kClient, "2001:db8:1::1")
                        .tcp(80, wport)
                        .seq(5000)
                        .ack(1001)
                        .flags(net::kTcpSyn | net::kTcpAck)
                        .build(),
                    kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv6(kClient, kRs)
                                .ttl(63)
                                .tcp(80, 40000)
                                .seq(5000)
                                .ack(1001)
                                .flags(net::kTcpSyn | net::kTcpAck)
                                .build(),
                            out[0]));
    // A UDP datagram from the same host matches no IPv6 service: not translated.
    send(kLan, PacketBuilder()
                   .eth(kRs1Mac, lan_mac())
                   .ipv6(kRs, kClient)
                   .udp(40000, 53)
                   .payload("q")
                   .build());
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    // A host outside the source range: not translated either.
    worker->neighbours().add_static(ip6("2001:db8:2::1:2"), kRs1Mac, kLan);
    send(kLan, PacketBuilder()
                   .eth(kRs1Mac, lan_mac())
                   .ipv6("2001:db8:2::1:2", kClient)
                   .tcp(40000, 80)
                   .flags(net::kTcpSyn)
                   .build());
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_EQ(counter(Counter::conns_created), 1u);
}

// An `icmp` match service of IPv6 translates ICMPv6 echo (type 128/129, not ICMP's 8/0).
TEST_F(Ipv6Test, Snat66IcmpEcho) {
    addresses();
    auto k = lb::parse_match("proto=icmp,af=ipv6,oif=wan");
    ASSERT_TRUE(k.ok()) << k.error();
    ASSERT_TRUE(director->match_add({*k, "", "rr"}));
    lb::DestSpec wan6;
    wan6.addr = ip6("2001:db8:1::1");
    wan6.fwd = lb::FwdMode::Snat;
    ok(director->match_dest_add(*k, wan6));
    director->commit();
    start_worker();
    worker->neighbours().add_static(ip6(kClient), kClientMac, kWan);
    worker->neighbours().add_static(ip6(kRs), kRs1Mac, kLan);
    auto out = roundtrip(kLan,
                         PacketBuilder()
                             .eth(kRs1Mac, lan_mac())
                             .ipv6(kRs, kClient)
                             .icmp_echo(128, 0x1234, 1)
                             .build(),
                         kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint16_t id = net::load_be16(out[0].data() + 14 + 40 + 4);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6("2001:db8:1::1", kClient)
                                .ttl(63)
                                .icmp_echo(128, id, 1)
                                .build(),
                            out[0]));
    out = roundtrip(kWan,
                    PacketBuilder()
                        .eth(kClientMac, wan_mac())
                        .ipv6(kClient, "2001:db8:1::1")
                        .icmp_echo(129, id, 1)
                        .build(),
                    kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv6(kClient, kRs)
                                .ttl(63)
                                .icmp_echo(129, 0x1234, 1)
                                .build(),
                            out[0]));
}

TEST_F(Ipv6Test, FamilyRulesAreEnforced) {
    addresses();
    ok(director->address_add(*net::parse_ipv4("10.10.2.1"), 24, "lan"));
    lb::ServiceSpec s{6, ip6(kVip), 80, "rr"};
    s.flags = lb::kSvcFlagUoaIpo;  // an IPv4 option: nothing IPv6 can carry
    auto r = director->service_add(s);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("uoa_mode ipo"), std::string::npos) << r.error();
    s.flags = 0;
    ok(director->service_add(s));
    const auto key = lb::make_service_key(6, ip6(kVip), 80);
    // NAT to an IPv4 RS behind an IPv6 VIP: refused with the reason.
    lb::DestSpec d{*net::parse_ipv4("10.10.2.2"), 8080, 1};
    d.fwd = lb::FwdMode::Nat;
    r = director->dest_add(key, d);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("IPv4"), std::string::npos) << r.error();
    // An IPv6 dest, then an IPv4 local address for the same service: one family per service.
    ok(director->dest_add(key, lb::DestSpec{ip6(kRs), 8080, 1}));
    r = director->laddr_add(key, *net::parse_ipv4("10.10.2.100"), "lan");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("one family"), std::string::npos) << r.error();
    // IPv6 RS behind an IPv4 VIP.
    ok(director->service_add(lb::ServiceSpec{6, *net::parse_ipv4("10.10.1.100"), 80, "rr"}));
    r = director->dest_add(lb::make_service_key(6, *net::parse_ipv4("10.10.1.100"), 80),
                           lb::DestSpec{ip6(kRs), 8080, 1});
    ASSERT_FALSE(r.ok());
    // A gateway of the other family.
    r = director->route_add(net::InetPrefix(ip6("2001:db8:9::"), 48),
                            *net::parse_ipv4("10.10.2.254"), "lan");
    ASSERT_FALSE(r.ok());
}

}  // namespace
}  // namespace xvs::test

namespace xvs::test {
namespace {

// ---- FNAT64 -----------------------------------------------------------------------------------

const char* const kRs4 = "10.10.2.2";
const char* const kLip4 = "10.10.2.100";

class Fnat64Test : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        ok(director->address_add(ip6("2001:db8:1::1"), 64, "wan"));
        ok(director->address_add(*net::parse_ipv4("10.10.2.1"), 24, "lan"));
        lb::ServiceSpec spec{6, ip6(kVip), 80, "rr"};
        spec.flags = svc_flags;
        ok(director->service_add(spec));
        const auto key = lb::make_service_key(6, ip6(kVip), 80);
        ok(director->dest_add(key, lb::DestSpec{*net::parse_ipv4(kRs4), 8080, 1}));
        ok(director->laddr_add(key, *net::parse_ipv4(kLip4), "lan"));
        director->commit();
        start_worker();
        worker->neighbours().add_static(ip6(kClient), kClientMac, kWan);
        worker->neighbours().add_static(ip(kRs4), kRs1Mac, kLan);
    }
    Bytes client(uint8_t flags, const std::string& data = "", uint32_t seq = 1000) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv6(kClient, kVip)
            .ttl(60)
            .tos(0x28)
            .tcp(kCport, 80)
            .seq(seq)
            .ack(flags & net::kTcpAck ? 5001 : 0)
            .flags(flags)
            .payload(data)
            .build();
    }
    uint32_t svc_flags = 0;  // set before SetUp
    // The translated client packet xvs must send: IPv4, DF, TTL = the hop limit, TOS carried.
    Bytes to_rs(uint16_t lport, uint8_t flags, uint16_t id, const std::string& data = "",
                uint32_t seq = 1000, Bytes opts = {}) {
        return PacketBuilder()
            .eth(lan_mac(), kRs1Mac)
            .ipv4(kLip4, kRs4)
            .ttl(60)
            .tos(0x28)
            .ip_id(id)
            .tcp(lport, 8080)
            .seq(seq)
            .ack(flags & net::kTcpAck ? 5001 : 0)
            .flags(flags)
            .tcp_options(std::move(opts))
            .payload(data)
            .build();
    }
    uint16_t syn(std::vector<Bytes>& out) {
        out = roundtrip(kWan, client(net::kTcpSyn), kLan);
        if (out.size() != 1 || out[0].size() < 14 + 20 + 20) return 0;
        return net::load_be16(out[0].data() + 34);
    }
};

TEST_F(Fnat64Test, SynDataFinAsExactIpv4AndBack) {
    std::vector<Bytes> out;
    const uint16_t lport = syn(out);
    ASSERT_NE(lport, 0);
    const uint16_t id0 = net::load_be16(out[0].data() + 18);
    EXPECT_TRUE(FramesEqual(to_rs(lport, net::kTcpSyn, id0), out[0]));
    // The RS answers with MSS 1460: the client gets IPv6 from the VIP with MSS 1440.
    Bytes synack = PacketBuilder()
                       .eth(kRs1Mac, lan_mac())
                       .ipv4(kRs4, kLip4)
                       .ttl(64)
                       .tos(0x10)
                       .tcp(8080, lport)
                       .seq(5000)
                       .ack(1001)
                       .flags(net::kTcpSyn | net::kTcpAck)
                       .tcp_options({2, 4, 0x05, 0xb4})
                       .build();
    out = roundtrip(kLan, synack, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip, kClient)
                                .ttl(64)
                                .tos(0x10)
                                .tcp(80, kCport)
                                .seq(5000)
                                .ack(1001)
                                .flags(net::kTcpSyn | net::kTcpAck)
                                .tcp_options({2, 4, 0x05, 0xa0})
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::nat64_mss_clamped), 1u);
    out = roundtrip(kWan, client(net::kTcpAck | net::kTcpPsh, "hello", 1001), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(
        to_rs(lport, net::kTcpAck | net::kTcpPsh, uint16_t(id0 + 1), "hello", 1001), out[0]));
    out = roundtrip(kWan, client(net::kTcpAck | net::kTcpFin, "", 1006), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(lport, net::kTcpAck | net::kTcpFin, uint16_t(id0 + 2), "", 1006),
                            out[0]));
    EXPECT_EQ(counter(Counter::nat64_translated), 4u);
    EXPECT_EQ(counter(Counter::lb_forwarded), 4u);
}

TEST_F(Fnat64Test, AnRsPacketTooBigForIpv6GetsFragNeeded) {
    std::vector<Bytes> out;
    const uint16_t lport = syn(out);
    ASSERT_NE(lport, 0);
    // 1500 bytes of IPv4 (DF) would be 1520 as IPv6: over the client link's 1500.
    Bytes big = PacketBuilder()
                    .eth(kRs1Mac, lan_mac())
                    .ipv4(kRs4, kLip4)
                    .tcp(8080, lport)
                    .seq(5001)
                    .ack(1001)
                    .flags(net::kTcpAck)
                    .payload(std::string(1460, 'x'))
                    .build();
    send(kLan, big);
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);
    const uint8_t* icmp = out[0].data() + 14 + 20;
    EXPECT_EQ(icmp[0], net::kIcmpDestUnreach);
    EXPECT_EQ(icmp[1], 4);
    EXPECT_EQ(net::load_be16(icmp + 6), 1480);
    EXPECT_EQ(net::InetAddr::v4(net::load_wire32(out[0].data() + 26)), ip(kLip4));
    EXPECT_EQ(counter(Counter::drop_nat64_too_big), 1u);
}

// ICMP errors of an FNAT64 conn change family (RFC 7915): a router on the IPv4 side says the
// translated packet needs fragmenting -> the client gets a packet too big from the VIP with
// the MTU + 20, quoting exactly the packet it sent (addresses, ports and quoted checksum back).
TEST_F(Fnat64Test, Ipv4FragNeededReachesTheClientAsPacketTooBig) {
    std::vector<Bytes> out;
    const uint16_t lport = syn(out);
    ASSERT_NE(lport, 0);
    const uint16_t id0 = net::load_be16(out[0].data() + 18);
    const Bytes sent = client(net::kTcpAck | net::kTcpPsh, "hello", 1001);
    out = roundtrip(kWan, sent, kLan);
    ASSERT_EQ(out.size(), 1u);
    const Bytes translated = out[0];
    ASSERT_TRUE(FramesEqual(
        to_rs(lport, net::kTcpAck | net::kTcpPsh, uint16_t(id0 + 1), "hello", 1001), translated));
    Bytes err = PacketBuilder()
                    .eth(kRs1Mac, lan_mac())
                    .ipv4("10.10.2.254", kLip4)
                    .icmp_error(net::kIcmpDestUnreach, 4, 1400, ip_packet(translated))
                    .build();
    out = roundtrip(kLan, err, kWan);
    ASSERT_EQ(out.size(), 1u);
    Bytes body = {0, 0, 0x05, 0x8c};  // MTU 1420
    const Bytes quote = ip_packet(sent);
    body.insert(body.end(), quote.begin(), quote.end());
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip, kClient)
                                .icmp6(net::kIcmp6PacketTooBig, 0, body)
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::icmp_nat64_translated), 1u);
    // Port unreachable -> ICMPv6 port unreachable; protocol unreachable has no counterpart.
    err = PacketBuilder()
              .eth(kRs1Mac, lan_mac())
              .ipv4(kRs4, kLip4)
              .icmp_error(net::kIcmpDestUnreach, 3, 0, ip_packet(translated))
              .build();
    out = roundtrip(kLan, err, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0][14 + 40], net::kIcmp6DestUnreach);
    EXPECT_EQ(out[0][14 + 40 + 1], 4);
    err = PacketBuilder()
              .eth(kRs1Mac, lan_mac())
              .ipv4(kRs4, kLip4)
              .icmp_error(net::kIcmpDestUnreach, 2, 0, ip_packet(translated))
              .build();
    send(kLan, err);
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_EQ(counter(Counter::drop_icmp_nat64), 1u);
    EXPECT_EQ(counter(Counter::drop_icmp_not_sent), 1u);
}

// The other way: the client's path says the VIP's IPv6 packet is too big -> the RS gets a
// frag needed from the local address with the MTU - 20, quoting its own IPv4 packet.
TEST_F(Fnat64Test, Ipv6PacketTooBigReachesTheRsAsFragNeeded) {
    std::vector<Bytes> out;
    const uint16_t lport = syn(out);
    ASSERT_NE(lport, 0);
    const Bytes rs_sent = PacketBuilder()
                              .eth(kRs1Mac, lan_mac())
                              .ipv4(kRs4, kLip4)
                              .ip_id(0)
                              .tcp(8080, lport)
                              .seq(5001)
                              .ack(1001)
                              .flags(net::kTcpAck | net::kTcpPsh)
                              .payload("world")
                              .build();
    out = roundtrip(kLan, rs_sent, kWan);
    ASSERT_EQ(out.size(), 1u);
    Bytes body = {0, 0, 0x05, 0x78};  // MTU 1400
    const Bytes quote = ip_packet(out[0]);
    body.insert(body.end(), quote.begin(), quote.end());
    Bytes err = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv6("2001:db8:1::fe", kVip)
                    .icmp6(net::kIcmp6PacketTooBig, 0, body)
                    .build();
    out = roundtrip(kWan, err, kLan);
    ASSERT_EQ(out.size(), 1u);
    const uint16_t id = net::load_be16(out[0].data() + 18);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(lan_mac(), kRs1Mac)
                                .ipv4(kLip4, kRs4)
                                .tos(0xc0)
                                .ip_id(id)
                                .frag_off(0)
                                .icmp_error(net::kIcmpDestUnreach, 4, 1380, ip_packet(rs_sent))
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::icmp_nat64_translated), 1u);
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 1u);
}

// TOA for an IPv6 client on the IPv4 packets to the RS: the 20-byte form (kind 254, port,
// the client's IPv6 address), and the RS's MSS lowered by both the TOA and the header growth.
class Fnat64ToaTest : public Fnat64Test {
  protected:
    void SetUp() override {
        svc_flags = lb::kSvcFlagToa;
        Fnat64Test::SetUp();
    }
};

TEST_F(Fnat64ToaTest, Toa6OnTheAckWithData) {
    std::vector<Bytes> out;
    const uint16_t lport = syn(out);
    ASSERT_NE(lport, 0);
    const uint16_t id0 = net::load_be16(out[0].data() + 18);
    Bytes synack = PacketBuilder()
                       .eth(kRs1Mac, lan_mac())
                       .ipv4(kRs4, kLip4)
                       .tcp(8080, lport)
                       .seq(5000)
                       .ack(1001)
                       .flags(net::kTcpSyn | net::kTcpAck)
                       .tcp_options({2, 4, 0x05, 0xb4})
                       .build();
    out = roundtrip(kLan, synack, kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint8_t* opts = out[0].data() + 14 + 40 + 20;
    EXPECT_EQ(net::load_be16(opts + 2), 1460 - 20 - 20);
    EXPECT_EQ(counter(Counter::toa_mss_clamped), 1u);
    out = roundtrip(kWan, client(net::kTcpAck | net::kTcpPsh, "hello", 1001), kLan);
    ASSERT_EQ(out.size(), 1u);
    Bytes toa{254, 20, uint8_t(kCport >> 8), uint8_t(kCport & 0xff)};
    const net::InetAddr c6 = ip6(kClient);
    toa.insert(toa.end(), c6.b, c6.b + 16);
    EXPECT_TRUE(FramesEqual(
        to_rs(lport, net::kTcpAck | net::kTcpPsh, uint16_t(id0 + 1), "hello", 1001, toa), out[0]));
    EXPECT_EQ(counter(Counter::toa_inserted), 1u);
}

class Fnat64SmallLanTest : public Fnat64Test {
  protected:
    void SetUp() override {
        lan_mtu = 1400;
        Fnat64Test::SetUp();
    }
};

TEST_F(Fnat64SmallLanTest, PacketTooBigToTheClientWhenTheIpv4LinkIsSmaller) {
    std::vector<Bytes> out;
    ASSERT_NE(syn(out), 0);
    // 1440 bytes of IPv6 become 1420 of IPv4: over lan's 1400. The client hears 1420.
    Bytes big = client(net::kTcpAck, std::string(1440 - 60, 'y'), 1001);
    send(kWan, big);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    out = recv(kWan);
    ASSERT_EQ(out.size(), 1u);
    Bytes body{0, 0, 0x05, 0x8c};  // 1420
    const Bytes quoted = ip_packet(big);
    body.insert(
        body.end(), quoted.begin(),
        quoted.begin() + std::min<std::ptrdiff_t>(std::ptrdiff_t(quoted.size()), 1280 - 48));
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(wan_mac(), kClientMac)
                                .ipv6(kVip, kClient)
                                .icmp6(net::kIcmp6PacketTooBig, 0, body)
                                .build(),
                            out[0]));
    EXPECT_EQ(counter(Counter::drop_nat64_too_big), 1u);
}

}  // namespace
}  // namespace xvs::test
