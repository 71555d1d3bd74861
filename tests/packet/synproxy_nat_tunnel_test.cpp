// Packet tests: the SYN proxy on a NatTun service (issue 20). The cookie SYN-ACK announces an
// MSS lowered by the larger tunnel overhead of the family (the dest is not chosen yet); after
// the cookie ACK the SYN to the RS is client:cport -> RS:rport inside the conn's tunnel from
// the local address, its MSS lowered by that tunnel's overhead; the RS's SYN-ACK comes back in
// the tunnel and is consumed: the saved ACK is replayed (translated, in the tunnel) and the
// client gets the window update from the VIP; then data both ways is translated as FULLNAT's
// SYN proxy translates it. Exact frames, IPv4 over IPIP and GUE, IPv6 over IP6IP6.
#include "fixture/pipeline.h"
#include "lb/service.h"
#include "lb/synproxy/synproxy.h"
#include "net/syncookie.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 40000;
constexpr uint16_t kGuePort = 6080;
constexpr uint32_t kIsn = 1000;
constexpr uint32_t kRsIsn = 7000;
constexpr uint64_t kNow = 5000;  // worker clock at the SYN: our TSval
constexpr uint32_t kRsTs = 900000;
constexpr uint8_t kSynAck = net::kTcpSyn | net::kTcpAck;

Bytes be32(uint32_t v) {
    return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}
Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}
Bytes ts(uint32_t val, uint32_t ecr) {
    return cat(cat({1, 1, 8, 10}, be32(val)), be32(ecr));
}
// MSS, SACK-perm, TS(tsval, tsecr), NOP, wscale 7: a Linux SYN's layout.
Bytes syn_opts(uint16_t mss, uint32_t tsval, uint32_t tsecr = 0) {
    return cat(cat({2, 4, uint8_t(mss >> 8), uint8_t(mss & 0xff), 4, 2, 8, 10},
                   cat(be32(tsval), be32(tsecr))),
               {1, 3, 3, 7});
}

struct Family {
    bool v6;
    const char* client;
    const char* vip;
    const char* rs;
    const char* lip;
};
constexpr Family kV4{false, "10.10.1.2", "10.10.1.100", "10.10.2.2", "10.10.2.100"};
constexpr Family kV6{true, "2001:db8:1::2", "2001:db8:1::100", "2001:db8:2::2", "2001:db8:2::100"};

class SynProxyNatTunnelTest : public PipelineTest {
  protected:
    void start(const Family& f, lb::TunType tun) {
        f_ = f;
        gue_ = tun == lb::TunType::Gue;
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        if (f.v6) {
            ok(director->address_add(ip6("2001:db8:1::1"), 64, "wan"));
            ok(director->address_add(ip6("2001:db8:2::1"), 64, "lan"));
        } else {
            ok(director->address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
            ok(director->address_add(*net::parse_ipv4("10.10.2.1"), 24, "lan"));
        }
        lb::ServiceSpec s{6, addr(f.vip), 80, "rr"};
        s.fwd = lb::FwdMode::NatTun;
        s.flags = lb::kSvcFlagSynProxy;
        ok(director->service_add(s));
        const auto key = lb::make_service_key(6, addr(f.vip), 80);
        lb::DestSpec d{addr(f.rs), 8080, 1};
        d.fwd = lb::FwdMode::NatTun;
        d.tun_type = tun;
        d.tun_port = gue_ ? kGuePort : 0;
        ok(director->dest_add(key, d));
        ok(director->laddr_add(key, addr(f.lip), "lan"));
        director->synproxy_set(lb::SynProxyConf{});
        director->commit();
        start_worker();
        worker->neighbours().add_static(addr(f.client), kClientMac, kWan);
        worker->neighbours().add_static(addr(f.rs), kRs1Mac, kLan);
        worker->advance_clock(kNow);
    }
    net::InetAddr addr(const char* text) const {
        return f_.v6 ? ip6(text) : net::InetAddr(ip(text));
    }
    size_t overhead() const { return f_.v6 ? (gue_ ? 52 : 40) : (gue_ ? 32 : 20); }
    PacketBuilder& l3(PacketBuilder& b, const char* src, const char* dst) const {
        return f_.v6 ? b.ipv6(src, dst) : b.ipv4(src, dst);
    }
    PacketBuilder tcp_packet(const char* src, const char* dst, uint16_t sport, uint16_t dport,
                             uint32_t seq, uint32_t ack, uint8_t flags, Bytes opts, uint16_t window,
                             const std::string& data) const {
        PacketBuilder b;
        l3(b, src, dst)
            .tcp(sport, dport)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .window(window)
            .tcp_options(std::move(opts))
            .payload(data);
        return b;
    }
    Bytes client(uint32_t seq, uint32_t ack, uint8_t flags, Bytes opts = {},
                 const std::string& data = "", uint16_t window = 502) const {
        PacketBuilder b = tcp_packet(f_.client, f_.vip, kCport, 80, seq, ack, flags,
                                     std::move(opts), window, data);
        return b.eth(kClientMac, wan_mac()).build();
    }
    Bytes to_client(uint32_t seq, uint32_t ack, uint8_t flags, Bytes opts, uint16_t window,
                    const std::string& data = "", uint8_t ttl = 64, uint16_t id = 0) const {
        PacketBuilder b = tcp_packet(f_.vip, f_.client, 80, kCport, seq, ack, flags,
                                     std::move(opts), window, data);
        return b.eth(wan_mac(), kClientMac).ttl(ttl).ip_id(id).build();
    }
    // An inner packet between the client and the RS (either way), as an IP packet.
    Bytes inner(bool from_client, uint32_t seq, uint32_t ack, uint8_t flags, Bytes opts,
                uint16_t window, const std::string& data = "", uint16_t id = 0x1234) const {
        PacketBuilder b = from_client ? tcp_packet(f_.client, f_.rs, kCport, 8080, seq, ack, flags,
                                                   std::move(opts), window, data)
                                      : tcp_packet(f_.rs, f_.client, 8080, kCport, seq, ack, flags,
                                                   std::move(opts), window, data);
        return ip_packet(b.ip_id(id).build());
    }
    // The frame the director sends to the RS: outer LIP -> RS around `in` (IPIP/GUE, IPv4: id
    // as sent, TOS and DF copied; IPv6: the flow label as sent).
    Bytes to_rs(const Bytes& in, const Bytes& got) const {
        PacketBuilder b;
        b.eth(lan_mac(), kRs1Mac);
        if (f_.v6) {
            const uint32_t flow =
                (uint32_t(got[15] & 0x0f) << 16) | uint32_t(got[16] << 8) | got[17];
            return b.ipv6(f_.lip, f_.rs).flow_label(flow).ip_payload(41, in).build();
        }
        b.ipv4(f_.lip, f_.rs).ttl(64).ip_id(uint16_t(got[18] << 8 | got[19])).tos(in[1]);
        b.frag_off(uint16_t((in[6] & 0x40) << 8));
        if (!gue_) return b.ip_payload(4, in).build();
        return b.udp(uint16_t(got[34] << 8 | got[35]), kGuePort)
            .udp_no_checksum()
            .payload(cat({0, 4, 0, 0}, in))
            .build();
    }
    // What the RS (xvs-rs tunnel) sends back: outer RS -> LIP around its own packet.
    Bytes from_rs(const Bytes& in) const {
        PacketBuilder b;
        b.eth(kRs1Mac, lan_mac());
        if (f_.v6) return b.ipv6(f_.rs, f_.lip).ip_payload(41, in).build();
        b.ipv4(f_.rs, f_.lip);
        if (!gue_) return b.ip_payload(4, in).build();
        return b.udp(50000, kGuePort).udp_no_checksum().payload(cat({0, 4, 0, 0}, in)).build();
    }
    uint32_t expected_cookie(const net::CookieOptions& o) const {
        return net::syncookie_make(director->snapshot()->cookie,
                                   net::CookieTuple::of(addr(f_.client), addr(f_.vip),
                                                        net::hton16(kCport), net::hton16(80)),
                                   kIsn, net::cookie_count(kNow), o);
    }

    // SYN (MSS 1460 v4, 1440 v6) -> the exact cookie SYN-ACK; ACK -> the exact RS SYN in the
    // tunnel; RS SYN-ACK in the tunnel -> the replayed ACK in the tunnel and the window update.
    void establish() {
        const uint16_t client_mss = f_.v6 ? 1440 : 1460;
        auto out = roundtrip(
            kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(client_mss, 100), "", 64240), kWan);
        ASSERT_EQ(out.size(), 1u);
        cookie_ = expected_cookie(net::CookieOptions{uint8_t(f_.v6 ? 2 : 3), 7, true, true});
        // MSS min(client, 1452) less the GUE overhead of the family (32 / 52): the tunnel is
        // not known before a dest is picked. Window 0, TTL 63 (synack_options).
        const uint16_t synack_mss =
            uint16_t(std::min<uint16_t>(client_mss, 1452) - (f_.v6 ? 52 : 32));
        EXPECT_TRUE(FramesEqual(to_client(cookie_, kIsn + 1, kSynAck,
                                          syn_opts(synack_mss, uint32_t(kNow), 100), 0, "", 63),
                                out[0]));
        EXPECT_EQ(worker->conns().in_use(), 0u);

        out = roundtrip(kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck, ts(101, uint32_t(kNow))),
                        kLan);
        ASSERT_EQ(out.size(), 1u);
        // Inner client:cport -> RS:8080, seq = ISN, the client's options from the cookie, MSS
        // = the table's (1460 / 1440) less this tunnel's overhead, window 502 << 7.
        const Bytes syn_in = inner(true, kIsn, 0, net::kTcpSyn,
                                   syn_opts(uint16_t(client_mss - overhead()), 101), 64256, "", 0);
        ASSERT_EQ(out[0].size(), 14 + overhead() + syn_in.size());
        EXPECT_TRUE(FramesEqual(to_rs(syn_in, out[0]), out[0]));
        rs_syn_ = out[0];
        EXPECT_EQ(worker->conns().in_use(), 1u);

        send(kLan,
             from_rs(inner(false, kRsIsn, kIsn + 1, kSynAck, syn_opts(1460, kRsTs, 101), 29200)));
        poll();
        const auto replay = recv(kLan);
        const auto update = recv(kWan);
        ASSERT_EQ(replay.size(), 1u);
        // The saved ACK: ack in the RS's space, TSecr = the RS's TSval, in the tunnel.
        EXPECT_TRUE(FramesEqual(
            to_rs(inner(true, kIsn + 1, kRsIsn + 1, net::kTcpAck, ts(101, kRsTs), 502), replay[0]),
            replay[0]));
        ASSERT_EQ(update.size(), 1u) << "the RS SYN-ACK must not reach the client";
        EXPECT_TRUE(FramesEqual(
            to_client(cookie_ + 1, kIsn + 1, net::kTcpAck, ts(uint32_t(kNow), 101), 228),
            update[0]));
    }
    void data_both_ways() {
        auto out = roundtrip(kWan,
                             client(kIsn + 1, cookie_ + 1, net::kTcpAck | net::kTcpPsh,
                                    ts(102, uint32_t(kNow)), "GET / HTTP/1.0\r\n\r\n"),
                             kLan);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(to_rs(inner(true, kIsn + 1, kRsIsn + 1, net::kTcpAck | net::kTcpPsh,
                                            ts(102, kRsTs), 502, "GET / HTTP/1.0\r\n\r\n"),
                                      out[0]),
                                out[0]));
        out = roundtrip(kLan,
                        from_rs(inner(false, kRsIsn + 1, kIsn + 19, net::kTcpAck | net::kTcpPsh,
                                      ts(kRsTs + 1, 102), 229, "HTTP/1.0 200 OK\r\n\r\n")),
                        kWan);
        ASSERT_EQ(out.size(), 1u);
        // seq += cookie - RS ISN, TSval += our TS - the RS's; the source is the VIP again.
        EXPECT_TRUE(FramesEqual(
            to_client(cookie_ + 1, kIsn + 19, net::kTcpAck | net::kTcpPsh,
                      ts(uint32_t(kNow) + 1, 102), 229, "HTTP/1.0 200 OK\r\n\r\n", 64, 0x1234),
            out[0]));
    }
    void expect_counters() {
        EXPECT_EQ(counter(Counter::synproxy_syn_cookie_sent), 1u);
        EXPECT_EQ(counter(Counter::synproxy_ack_valid), 1u);
        EXPECT_EQ(counter(Counter::synproxy_rs_syn_sent), 1u);
        EXPECT_EQ(counter(Counter::synproxy_handover), 1u);
        EXPECT_EQ(counter(Counter::synproxy_saved_replayed), 1u);
        EXPECT_EQ(counter(Counter::synproxy_window_update), 1u);
        EXPECT_EQ(counter(Counter::conns_created), 1u);
        EXPECT_EQ(counter(Counter::tunnel_decap), 2u);
        EXPECT_EQ(counter(Counter::nattun_mss_clamped), 0u);  // the proxy wrote both SYNs
    }

    Family f_{};
    bool gue_ = false;
    uint32_t cookie_ = 0;
    Bytes rs_syn_;
};

TEST_F(SynProxyNatTunnelTest, IpipHandshakeAndDataBothWays) {
    start(kV4, lb::TunType::Ipip);
    establish();
    data_both_ways();
    expect_counters();
}

TEST_F(SynProxyNatTunnelTest, GueHandshakeAndDataBothWays) {
    start(kV4, lb::TunType::Gue);
    establish();
    data_both_ways();
    expect_counters();
}

TEST_F(SynProxyNatTunnelTest, Ip6ip6HandshakeAndDataBothWays) {
    start(kV6, lb::TunType::Ipip);
    establish();
    data_both_ways();
    expect_counters();
}

// The RS SYN is retransmitted in the tunnel (same inner packet), then given up: the client
// gets a RST from the VIP.
TEST_F(SynProxyNatTunnelTest, RsSynRetransmittedInTheTunnelThenClientReset) {
    start(kV4, lb::TunType::Ipip);
    const uint16_t mss = 1460;
    auto out = roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(mss, 100), "", 64240), kWan);
    ASSERT_EQ(out.size(), 1u);
    cookie_ = expected_cookie(net::CookieOptions{3, 7, true, true});
    out =
        roundtrip(kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck, ts(101, uint32_t(kNow))), kLan);
    ASSERT_EQ(out.size(), 1u);
    const Bytes syn_in = inner(true, kIsn, 0, net::kTcpSyn, syn_opts(1440, 101), 64256, "", 0);
    for (uint64_t wait : {1000u, 2000u, 4000u}) {
        worker->advance_clock(wait + 100);  // timer ticks are 100 ms
        poll();
        auto again = recv(kLan);
        ASSERT_EQ(again.size(), 1u) << "after " << wait << " ms";
        EXPECT_TRUE(FramesEqual(to_rs(syn_in, again[0]), again[0]));
    }
    worker->advance_clock(8100);
    poll();
    out = recv(kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(cookie_ + 1, 0, net::kTcpRst, {}, 0), out[0]));
    EXPECT_EQ(counter(Counter::synproxy_rs_syn_retransmit), 3u);
    EXPECT_EQ(counter(Counter::synproxy_rs_timeout), 1u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
}

// A retransmitted RS SYN-ACK (our replayed ACK was lost) is acked again, in the tunnel.
TEST_F(SynProxyNatTunnelTest, RetransmittedRsSynAckIsAckedAgainInTheTunnel) {
    start(kV4, lb::TunType::Gue);
    establish();
    auto out = roundtrip(
        kLan, from_rs(inner(false, kRsIsn, kIsn + 1, kSynAck, {2, 4, 0x05, 0xb4}, 29200)), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(
        to_rs(inner(true, kIsn + 1, kRsIsn + 1, net::kTcpAck, {}, 1024, "", 0), out[0]), out[0]));
    EXPECT_EQ(counter(Counter::synproxy_rs_synack_reacked), 1u);
}

// The RS's SYN-ACK outside the tunnel is no NatTun reply: dropped, counted, the handshake
// still waits for the tunnelled one.
TEST_F(SynProxyNatTunnelTest, BareRsSynAckIsDroppedAndTheHandshakeWaits) {
    start(kV4, lb::TunType::Ipip);
    auto out = roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(1460, 100), "", 64240), kWan);
    ASSERT_EQ(out.size(), 1u);
    cookie_ = expected_cookie(net::CookieOptions{3, 7, true, true});
    ASSERT_EQ(
        roundtrip(kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck, ts(101, uint32_t(kNow))), kLan)
            .size(),
        1u);
    const Bytes synack = inner(false, kRsIsn, kIsn + 1, kSynAck, syn_opts(1460, kRsTs, 101), 29200);
    send(kLan, PacketBuilder()
                   .eth(kRs1Mac, lan_mac())
                   .ipv4(f_.rs, f_.client)
                   .tcp(8080, kCport)
                   .seq(kRsIsn)
                   .ack(kIsn + 1)
                   .flags(kSynAck)
                   .window(29200)
                   .tcp_options(syn_opts(1460, kRsTs, 101))
                   .build());
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_EQ(counter(Counter::drop_nattun_bare_reply), 1u);
    EXPECT_EQ(counter(Counter::synproxy_handover), 0u);
    send(kLan, from_rs(synack));
    poll();
    EXPECT_EQ(recv(kLan).size(), 1u);
    EXPECT_EQ(recv(kWan).size(), 1u);
    EXPECT_EQ(counter(Counter::synproxy_handover), 1u);
}

}  // namespace
}  // namespace xvs::test
