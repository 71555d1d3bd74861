// Packet tests: the SYN proxy in FULLNAT. Client SYN -> exact cookie SYN-ACK (window 0, the
// options the client offered and the config allows, full checksums); ACK -> cookie check ->
// conn + SYN to the RS with the client's options; RS SYN-ACK -> replayed ACK (seq/TS
// translated), a window update to the client, never the RS SYN-ACK itself; then every packet
// both ways translated (seq, ack, SACK, TSval/TSecr, window scale, FIN, RST); RS SYN
// retransmission and give-up; RS RST relayed; defer_rs_syn; ack storm; bad cookie; SYN flood.
#include "lb/synproxy/synproxy.h"

#include <cstring>
#include <string>
#include <vector>

#include "fixture/pipeline.h"
#include "lb/service.h"
#include "net/checksum.h"
#include "net/syncookie.h"
#include "net/tcp_options.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 40000;
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
Bytes sack(uint32_t l, uint32_t r) {
    return cat(cat({1, 1, 5, 10}, be32(l)), be32(r));
}
// MSS 1460, SACK-perm, TS(tsval, 0), NOP, wscale 7: a Linux client SYN.
Bytes syn_opts(uint32_t tsval) {
    return cat(cat({2, 4, 0x05, 0xb4, 4, 2, 8, 10}, cat(be32(tsval), be32(0))), {1, 3, 3, 7});
}

const net::TcpHdr* tcp_of(const Bytes& f) {
    const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(f.data() + 14);
    return reinterpret_cast<const net::TcpHdr*>(f.data() + 14 + ip4->header_len());
}

class SynProxyTest : public PipelineTest {
  protected:
    void SetUp() override { PipelineTest::SetUp(); }

    // Passive health checking (lb/passive.h): {conn_ok, conn_fail} summed over every dest.
    std::pair<uint64_t, uint64_t> passive_counts() const {
        std::pair<uint64_t, uint64_t> n{0, 0};
        for (const auto& d : director->services().front()->dests)
            for (const auto& w : d->stats) {
                n.first += w.conn_ok;
                n.second += w.conn_fail;
            }
        return n;
    }

    void start(lb::SynProxyConf conf = {}, uint32_t flags = 0) {
        conf_ = conf;
        configure_default("rr");
        ASSERT_TRUE(
            director
                ->service_edit(lb::ServiceSpec{6, *net::parse_ipv4("10.10.1.100"), 80, "rr",
                                               lb::FwdMode::FullNat, lb::kSvcFlagSynProxy | flags})
                .ok());
        director->synproxy_set(conf);
        director->commit();
        start_worker();
        learn_neighbours();
        worker->advance_clock(kNow);
    }

    Bytes client(uint32_t seq, uint32_t ack, uint8_t flags, Bytes opts = {},
                 const std::string& data = "", uint16_t window = 502, const char* src = "10.10.1.2",
                 uint16_t cport = kCport) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4(src, "10.10.1.100")
            .tcp(cport, 80)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .window(window)
            .tcp_options(std::move(opts))
            .payload(data)
            .build();
    }
    Bytes to_client(uint32_t seq, uint32_t ack, uint8_t flags, Bytes opts, uint16_t window,
                    const std::string& data = "", uint8_t ttl = 64, uint16_t id = 0) {
        return PacketBuilder()
            .eth(wan_mac(), kClientMac)
            .ipv4("10.10.1.100", "10.10.1.2")
            .ttl(ttl)
            .ip_id(id)
            .tcp(80, kCport)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .window(window)
            .tcp_options(std::move(opts))
            .payload(data)
            .build();
    }
    Bytes rs(uint32_t seq, uint32_t ack, uint8_t flags, Bytes opts = {},
             const std::string& data = "", uint16_t window = 227) {
        return PacketBuilder()
            .eth(rs_mac_, lan_mac())
            .ipv4(rs_, "10.10.2.100")
            .tcp(8080, lport_)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .window(window)
            .tcp_options(std::move(opts))
            .payload(data)
            .build();
    }
    Bytes to_rs(uint32_t seq, uint32_t ack, uint8_t flags, Bytes opts, uint16_t window,
                const std::string& data = "", uint16_t id = 0x1234) {
        return PacketBuilder()
            .eth(lan_mac(), rs_mac_)
            .ipv4("10.10.2.100", rs_)
            .ip_id(id)
            .tcp(lport_, 8080)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .window(window)
            .tcp_options(std::move(opts))
            .payload(data)
            .build();
    }

    uint32_t expected_cookie(const net::CookieOptions& o) const {
        return net::syncookie_make(director->snapshot()->cookie,
                                   net::CookieTuple{ip("10.10.1.2"), ip("10.10.1.100"),
                                                    net::hton16(kCport), net::hton16(80)},
                                   kIsn, net::cookie_count(kNow), o);
    }

    // SYN -> cookie SYN-ACK; returns the cookie.
    uint32_t syn() {
        auto out = roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(100), "", 64240), kWan);
        EXPECT_EQ(out.size(), 1u);
        if (out.empty()) return 0;
        return net::ntoh32(tcp_of(out[0])->seq);
    }
    // SYN, ACK -> RS SYN. Learns which RS and local port were picked.
    void open() {
        cookie_ = syn();
        auto out =
            roundtrip(kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck, ts(101, kNow)), kLan);
        ASSERT_EQ(out.size(), 1u);
        const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
        rs_ = ip4->daddr == ip("10.10.2.2") ? "10.10.2.2" : "10.10.2.3";
        rs_mac_ = ip4->daddr == ip("10.10.2.2") ? kRs1Mac : kRs2Mac;
        lport_ = net::ntoh16(tcp_of(out[0])->sport);
        rs_syn_ = out[0];
    }
    // ... and the RS SYN-ACK: replayed ACK to the RS, window update to the client.
    void establish(uint8_t rs_wscale = 7) {
        open();
        send(kLan, rs(kRsIsn, kIsn + 1, kSynAck,
                      cat(cat({2, 4, 0x05, 0xb4, 4, 2, 8, 10}, cat(be32(kRsTs), be32(101))),
                          {1, 3, 3, rs_wscale}),
                      "", 29200));
        poll();
        replay_ = recv(kLan);
        update_ = recv(kWan);
    }

    lb::SynProxyConf conf_;
    uint32_t cookie_ = 0;
    const char* rs_ = "";
    net::MacAddr rs_mac_{};
    uint16_t lport_ = 0;
    Bytes rs_syn_;
    std::vector<Bytes> replay_, update_;
};

TEST_F(SynProxyTest, SynGetsExactCookieSynAckAndNoConn) {
    start();
    auto out = roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(100), "", 64240), kWan);
    ASSERT_EQ(out.size(), 1u);
    const net::CookieOptions o{3, 7, true, true};  // MSS 1460 -> index 3, wscale 7, SACK, TS
    const uint32_t cookie = expected_cookie(o);
    // MSS min(1460, 1452), SACK-perm, TS(ours = clock, echo 100), NOP wscale 7; window 0; TTL 63.
    const Bytes opts =
        cat(cat({2, 4, 0x05, 0xac, 4, 2, 8, 10}, cat(be32(kNow), be32(100))), {1, 3, 3, 7});
    EXPECT_TRUE(FramesEqual(to_client(cookie, kIsn + 1, kSynAck, opts, 0, "", 63), out[0]));
    // The cookie validates and carries the client's options.
    auto checked = net::syncookie_check(
        director->snapshot()->cookie,
        net::CookieTuple{ip("10.10.1.2"), ip("10.10.1.100"), net::hton16(kCport), net::hton16(80)},
        kIsn, cookie, net::cookie_count(kNow));
    ASSERT_TRUE(checked.has_value());
    EXPECT_EQ(*checked, o);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    EXPECT_EQ(counter(Counter::synproxy_syn_cookie_sent), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 0u);
}

TEST_F(SynProxyTest, SynAckOffersOnlyWhatClientOfferedAndConfigAllows) {
    lb::SynProxyConf conf;
    conf.sack = false;
    conf.mss = 1400;
    start(conf);
    // Client: MSS 1360, SACK-perm, no TS, no wscale; we answer MSS 1360 only (SACK off).
    auto out = roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, {2, 4, 0x05, 0x50, 4, 2, 1, 1}), kWan);
    ASSERT_EQ(out.size(), 1u);
    const uint32_t cookie =
        expected_cookie(net::CookieOptions{1, net::kCookieWscaleNone, false, false});
    EXPECT_TRUE(
        FramesEqual(to_client(cookie, kIsn + 1, kSynAck, {2, 4, 0x05, 0x50}, 0, "", 63), out[0]));
}

TEST_F(SynProxyTest, ValidAckOpensConnAndSendsRsSynWithClientOptions) {
    start();
    open();
    // seq = client ISN, MSS from the cookie table (1460), SACK-perm, TS = client's TSval,
    // wscale = client's; window = the client's (502 << 7 = 64256).
    const Bytes opts =
        cat(cat({2, 4, 0x05, 0xb4, 4, 2, 8, 10}, cat(be32(101), be32(0))), {1, 3, 3, 7});
    EXPECT_TRUE(FramesEqual(to_rs(kIsn, 0, net::kTcpSyn, opts, 64256, "", 0), rs_syn_));
    EXPECT_EQ(worker->conns().in_use(), 1u);
    EXPECT_EQ(counter(Counter::synproxy_ack_valid), 1u);
    EXPECT_EQ(counter(Counter::synproxy_rs_syn_sent), 1u);
}

// A conn's first packet to its RS is the proxy's SYN: the next hop it found is passed on to
// the dest's next new conn (as lb_slow does with a client's SYN), so the RS SYN of the third
// conn (rr: RS1, RS2, RS1) skips the route scan and the neighbour lookup.
TEST_F(SynProxyTest, RsSynPassesItsNextHopToTheDestsNextConn) {
    start();
    std::vector<std::string> rs_of;
    for (uint16_t cport = 41000; cport < 41003; ++cport) {
        auto out = roundtrip(
            kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(100), "", 64240, "10.10.1.2", cport),
            kWan);
        ASSERT_EQ(out.size(), 1u);
        const uint32_t cookie = net::ntoh32(tcp_of(out[0])->seq);
        out = roundtrip(kWan,
                        client(kIsn + 1, cookie + 1, net::kTcpAck, ts(101, kNow), "", 502,
                               "10.10.1.2", cport),
                        kLan);
        ASSERT_EQ(out.size(), 1u);
        net::Ipv4Hdr ip4;
        std::memcpy(&ip4, out[0].data() + sizeof(net::EtherHdr), sizeof ip4);
        rs_of.push_back(ip4.daddr == ip("10.10.2.2") ? "RS1" : "RS2");
        EXPECT_EQ(tcp_of(out[0])->flags, net::kTcpSyn);
        net::MacAddr dst;
        std::memcpy(&dst, out[0].data(), sizeof dst);  // the Ethernet destination
        EXPECT_EQ(dst, rs_of.back() == "RS1" ? kRs1Mac : kRs2Mac);
    }
    EXPECT_EQ(rs_of, (std::vector<std::string>{"RS1", "RS2", "RS1"}));
    EXPECT_EQ(counter(Counter::synproxy_rs_syn_sent), 3u);
    EXPECT_EQ(counter(Counter::nh_cache_hits), 1u);
}

TEST_F(SynProxyTest, RsSynAckIsConsumedAckReplayedAndClientToldTheWindow) {
    start();
    establish();
    const uint32_t ts_delta = uint32_t(kNow) - kRsTs;
    (void)ts_delta;
    ASSERT_EQ(replay_.size(), 1u);
    // The saved ACK: ack moved into the RS's space, TSecr = the RS's TSval.
    EXPECT_TRUE(
        FramesEqual(to_rs(kIsn + 1, kRsIsn + 1, net::kTcpAck, ts(101, kRsTs), 502), replay_[0]));
    ASSERT_EQ(update_.size(), 1u)
        << "the RS SYN-ACK must not reach the client; a window update must";
    // Window update: seq = cookie + 1, the RS's window in our scale (29200 >> 7), TS = ours.
    EXPECT_TRUE(FramesEqual(to_client(cookie_ + 1, kIsn + 1, net::kTcpAck, ts(kNow, 101), 228),
                            update_[0]));
    EXPECT_EQ(counter(Counter::synproxy_handover), 1u);
    EXPECT_EQ(counter(Counter::synproxy_saved_replayed), 1u);
    EXPECT_EQ(passive_counts(), (std::pair<uint64_t, uint64_t>{1, 0}));  // the RS accepted
}

TEST_F(SynProxyTest, DataBothWaysTranslated) {
    start();
    establish();
    const uint32_t ts_delta = uint32_t(kNow) - kRsTs;
    auto out = roundtrip(
        kWan,
        client(kIsn + 1, cookie_ + 1, net::kTcpAck | net::kTcpPsh, ts(102, kNow + 1), "GET /"),
        kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(
        to_rs(kIsn + 1, kRsIsn + 1, net::kTcpAck | net::kTcpPsh, ts(102, kRsTs + 1), 502, "GET /"),
        out[0]));
    out = roundtrip(
        kLan, rs(kRsIsn + 1, kIsn + 6, net::kTcpAck | net::kTcpPsh, ts(kRsTs + 10, 102), "200 OK"),
        kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(cookie_ + 1, kIsn + 6, net::kTcpAck | net::kTcpPsh,
                                      ts(kRsTs + 10 + ts_delta, 102), 227, "200 OK", 64, 0x1234),
                            out[0]));
}

TEST_F(SynProxyTest, WindowRescaledWhenRsScaleDiffers) {
    start();
    establish(9);  // the RS scales by 9, the client was told 7: multiply fields by 4
    EXPECT_TRUE(FramesEqual(to_client(cookie_ + 1, kIsn + 1, net::kTcpAck, ts(kNow, 101), 228),
                            update_[0]));
    auto out =
        roundtrip(kLan, rs(kRsIsn + 1, kIsn + 1, net::kTcpAck, ts(kRsTs + 1, 101), "x", 100), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(net::ntoh16(tcp_of(out[0])->window), 400);
}

TEST_F(SynProxyTest, SackBlocksTranslated) {
    start();
    establish();
    // The client SACKs RS bytes it saw as cookie+101..cookie+201: the RS sees 7101..7201.
    auto out = roundtrip(kWan,
                         client(kIsn + 1, cookie_ + 1, net::kTcpAck,
                                cat(sack(cookie_ + 101, cookie_ + 201), ts(103, kNow))),
                         kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(kIsn + 1, kRsIsn + 1, net::kTcpAck,
                                  cat(sack(kRsIsn + 101, kRsIsn + 201), ts(103, kRsTs)), 502),
                            out[0]));
}

TEST_F(SynProxyTest, FinAndRstTranslated) {
    start();
    establish();
    const uint32_t ts_delta = uint32_t(kNow) - kRsTs;
    auto out = roundtrip(
        kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck | net::kTcpFin, ts(104, kNow)), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(
        to_rs(kIsn + 1, kRsIsn + 1, net::kTcpAck | net::kTcpFin, ts(104, kRsTs), 502), out[0]));
    out = roundtrip(kLan, rs(kRsIsn + 1, kIsn + 2, net::kTcpAck | net::kTcpFin, ts(kRsTs + 5, 104)),
                    kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(cookie_ + 1, kIsn + 2, net::kTcpAck | net::kTcpFin,
                                      ts(kRsTs + 5 + ts_delta, 104), 227, "", 64, 0x1234),
                            out[0]));
    out = roundtrip(kLan, rs(kRsIsn + 2, 0, net::kTcpRst), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(
        FramesEqual(to_client(cookie_ + 2, 0, net::kTcpRst, {}, 227, "", 64, 0x1234), out[0]));
}

TEST_F(SynProxyTest, RsSynRetransmittedThenClientReset) {
    start();
    open();
    for (uint64_t wait : {1000u, 2000u, 4000u}) {
        worker->advance_clock(wait + 100);  // timer ticks are 100 ms
        poll();
        auto out = recv(kLan);
        ASSERT_EQ(out.size(), 1u) << "after " << wait << " ms";
        EXPECT_TRUE(FramesEqual(rs_syn_, out[0]));
        EXPECT_TRUE(recv(kWan).empty());
    }
    EXPECT_EQ(counter(Counter::synproxy_rs_syn_retransmit), 3u);
    worker->advance_clock(8100);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    auto out = recv(kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(cookie_ + 1, 0, net::kTcpRst, {}, 0), out[0]));
    EXPECT_EQ(counter(Counter::synproxy_rs_timeout), 1u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    // Passive health checking: the RS never answered our SYN.
    EXPECT_EQ(passive_counts(), (std::pair<uint64_t, uint64_t>{0, 1}));
}

TEST_F(SynProxyTest, RsRstInHandshakeResetsClient) {
    start();
    open();
    auto out = roundtrip(kLan, rs(0, kIsn + 1, net::kTcpRst | net::kTcpAck), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(cookie_ + 1, 0, net::kTcpRst, {}, 0), out[0]));
    EXPECT_EQ(counter(Counter::synproxy_rs_rst_relayed), 1u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    EXPECT_EQ(passive_counts(), (std::pair<uint64_t, uint64_t>{0, 1}));  // refused
}

// An ICMP port unreachable about our SYN to the RS: a failure at once (lb/passive.h), the
// error forwarded to the client as before; the SYN proxy goes on retrying its SYN on its own
// timer, and its give-up counts no second failure.
TEST_F(SynProxyTest, RsUnreachableWhileWaitingIsOneFailure) {
    start();
    open();
    Bytes quote = ip_packet(rs_syn_);
    quote.resize(28);
    auto out = roundtrip(kLan,
                         PacketBuilder()
                             .eth(rs_mac_, lan_mac())
                             .ipv4(rs_, "10.10.2.100")
                             .icmp_error(3, 3, 0, quote)
                             .build(),
                         kWan);
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 1u);
    EXPECT_EQ(passive_counts(), (std::pair<uint64_t, uint64_t>{0, 1}));
    for (uint64_t wait : {1000u, 2000u, 4000u, 8000u}) {
        worker->advance_clock(wait + 100);  // timer ticks are 100 ms
        poll();
        recv(kLan);
        recv(kWan);
    }
    EXPECT_EQ(counter(Counter::synproxy_rs_syn_retransmit), 3u);
    EXPECT_EQ(counter(Counter::synproxy_rs_timeout), 1u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    EXPECT_EQ(passive_counts(), (std::pair<uint64_t, uint64_t>{0, 1}));
}

TEST_F(SynProxyTest, RetransmittedRsSynAckIsAckedAgainNotForwarded) {
    start();
    establish();
    // Our replayed ACK was lost: the RS sends its SYN-ACK again. The director acks it; the
    // client never sees it.
    auto out = roundtrip(kLan, rs(kRsIsn, kIsn + 1, kSynAck, {2, 4, 0x05, 0xb4}, "", 29200), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(kIsn + 1, kRsIsn + 1, net::kTcpAck, {}, 1024, "", 0), out[0]));
    EXPECT_EQ(counter(Counter::synproxy_rs_synack_reacked), 1u);
}

TEST_F(SynProxyTest, ClientRstInHandshakeReachesRsAndCloses) {
    start();
    open();
    auto out = roundtrip(kWan, client(kIsn + 1, 0, net::kTcpRst), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(kIsn + 1, 0, net::kTcpRst, {}, 502), out[0]));
    // The RS SYN-ACK that crosses it is not a hand-over any more.
    EXPECT_TRUE(roundtrip(kLan, rs(kRsIsn, kIsn + 1, kSynAck, {2, 4, 0x05, 0xb4}, "", 29200), kWan)
                    .empty());
    EXPECT_EQ(counter(Counter::synproxy_handover), 0u);
    EXPECT_EQ(counter(Counter::synproxy_rs_unexpected), 1u);
}

TEST_F(SynProxyTest, BadCookieDroppedAndCounted) {
    start();
    cookie_ = syn();
    // A forged cookie, a shifted one, and the right cookie with another ISN: all fail.
    EXPECT_TRUE(roundtrip(kWan,
                          client(kIsn + 1, (cookie_ ^ 0x5a5a0000) + 1, net::kTcpAck, ts(101, kNow)),
                          kLan)
                    .empty());
    EXPECT_TRUE(
        roundtrip(kWan, client(kIsn + 1, cookie_ + 2, net::kTcpAck, ts(101, kNow)), kLan).empty());
    EXPECT_TRUE(
        roundtrip(kWan, client(kIsn + 2, cookie_ + 1, net::kTcpAck, ts(101, kNow)), kLan).empty());
    EXPECT_EQ(counter(Counter::synproxy_bad_cookie), 3u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    // Expired: more than kCookieMaxAge counter periods later.
    worker->advance_clock(uint64_t(net::kCookieMaxAge + 1) << 16);
    EXPECT_TRUE(
        roundtrip(kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck, ts(101, kNow)), kLan).empty());
    EXPECT_EQ(counter(Counter::synproxy_bad_cookie), 4u);
}

TEST_F(SynProxyTest, AckStormAndSavedLimit) {
    start();  // max_ack_saved 3, ack_storm_thresh 10
    open();
    for (int i = 0; i < 12; ++i)
        EXPECT_TRUE(
            roundtrip(kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck, ts(101, kNow)), kLan)
                .empty());
    // Duplicates 1-2 fill the saved slots, 3-10 find them full, 11-12 are the storm.
    EXPECT_EQ(counter(Counter::synproxy_saved_full), 8u);
    EXPECT_EQ(counter(Counter::synproxy_ack_storm), 2u);
    send(kLan, rs(kRsIsn, kIsn + 1, kSynAck,
                  cat({2, 4, 0x05, 0xb4, 1, 1, 8, 10}, cat(be32(kRsTs), be32(101))), "", 29200));
    poll();
    EXPECT_EQ(recv(kLan).size(), 3u);
}

TEST_F(SynProxyTest, DeferOpensRsOnlyWithData) {
    lb::SynProxyConf conf;
    conf.defer_rs_syn = true;
    start(conf);
    auto out = roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(100), "", 64240), kWan);
    ASSERT_EQ(out.size(), 1u);
    cookie_ = net::ntoh32(tcp_of(out[0])->seq);
    EXPECT_EQ(net::ntoh16(tcp_of(out[0])->window), 3 * 1452) << "room for max_ack_saved segments";
    // The bare ACK: nothing sent, nothing kept.
    EXPECT_TRUE(
        roundtrip(kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck, ts(101, kNow)), kLan).empty());
    EXPECT_EQ(counter(Counter::synproxy_ack_deferred), 1u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    // The first data opens the RS side.
    out = roundtrip(
        kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck | net::kTcpPsh, ts(102, kNow), "GET /"),
        kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(tcp_of(out[0])->flags, net::kTcpSyn);
    const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
    rs_ = ip4->daddr == ip("10.10.2.2") ? "10.10.2.2" : "10.10.2.3";
    rs_mac_ = ip4->daddr == ip("10.10.2.2") ? kRs1Mac : kRs2Mac;
    lport_ = net::ntoh16(tcp_of(out[0])->sport);
    send(kLan, rs(kRsIsn, kIsn + 1, kSynAck,
                  cat({2, 4, 0x05, 0xb4, 4, 2, 8, 10}, cat(be32(kRsTs), be32(102))), "", 29200));
    poll();
    out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(
        to_rs(kIsn + 1, kRsIsn + 1, net::kTcpAck | net::kTcpPsh, ts(102, kRsTs), 502, "GET /"),
        out[0]));
    EXPECT_TRUE(recv(kWan).empty()) << "the client was given a window: no update needed";
}

TEST_F(SynProxyTest, SynFloodAllocatesNoConns) {
    start();
    uint32_t rnd = 12345;
    size_t answered = 0;
    for (int batch = 0; batch < 10000 / 25; ++batch) {
        for (int i = 0; i < 25; ++i) {
            rnd = rnd * 1103515245u + 12345u;
            char src[32];
            snprintf(src, sizeof src, "10.%u.%u.%u", 20 + (rnd >> 24) % 200, (rnd >> 16) & 0xff,
                     1 + ((rnd >> 8) & 0x7f));
            send(kWan, PacketBuilder()
                           .eth(kClientMac, wan_mac())
                           .ipv4(src, "10.10.1.100")
                           .tcp(static_cast<uint16_t>(1024 + (rnd & 0x7fff)), 80)
                           .seq(rnd)
                           .flags(net::kTcpSyn)
                           .tcp_options(syn_opts(rnd))
                           .build());
        }
        poll();
        answered += recv(kWan).size();
        ASSERT_TRUE(recv(kLan).empty());
    }
    EXPECT_EQ(answered, 10000u);
    EXPECT_EQ(counter(Counter::synproxy_syn_cookie_sent), 10000u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    EXPECT_EQ(counter(Counter::conns_created), 0u);
}

// Admission with the SYN proxy: a blacklisted source never gets a cookie (nothing is kept).
TEST_F(SynProxyTest, BlacklistedSourceGetsNoCookie) {
    start();
    const lb::ServiceKey key{ip("10.10.1.100"), net::hton16(80), 6};
    ASSERT_TRUE(director->acl_add(key, lb::AclKind::Black, *net::parse_ipv4_prefix("10.10.1.0/24")).ok());
    director->commit();
    EXPECT_TRUE(roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(100), "", 64240), kWan).empty());
    EXPECT_EQ(counter(Counter::drop_blacklisted), 1u);
    EXPECT_EQ(counter(Counter::synproxy_syn_cookie_sent), 0u);
    // Off the list again: the same SYN is answered.
    ASSERT_TRUE(director->acl_del(key, lb::AclKind::Black, *net::parse_ipv4_prefix("10.10.1.0/24")).ok());
    director->commit();
    EXPECT_EQ(roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(100), "", 64240), kWan).size(), 1u);
    EXPECT_EQ(counter(Counter::synproxy_syn_cookie_sent), 1u);
}

// The new-connection rate cap is spent by cookie-valid ACKs, not by SYNs: a spoofed SYN flood
// cannot use up the tokens of real clients.
TEST_F(SynProxyTest, SynFloodDoesNotSpendTheConnRate) {
    configure_default("rr");
    lb::ServiceSpec spec{6, *net::parse_ipv4("10.10.1.100"), 80, "rr", lb::FwdMode::FullNat,
                         lb::kSvcFlagSynProxy};
    spec.conn_rate = 1;
    ASSERT_TRUE(director->service_edit(spec).ok());
    director->commit();
    start_worker();
    learn_neighbours();
    worker->advance_clock(kNow);
    for (int i = 0; i < 50; ++i) {
        char src[32];
        snprintf(src, sizeof src, "10.20.0.%d", i + 1);
        EXPECT_EQ(roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(100), "", 64240, src), kWan).size(), 1u);
    }
    EXPECT_EQ(counter(Counter::drop_conn_rate), 0u);
    open();  // the real client's SYN and ACK: the one token opens its connection
    EXPECT_EQ(worker->conns().in_use(), 1u);
    EXPECT_EQ(counter(Counter::drop_conn_rate), 0u);
}

TEST_F(SynProxyTest, ToaGoesIntoTheReplayedAck) {
    start({}, lb::kSvcFlagToa);
    auto out = roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(100), "", 64240), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(net::tcp_find_mss(net::tcp_options_span(tcp_of(out[0]))), 1452 - 8)
        << "SYN-ACK MSS leaves room for TOA";
    worker->advance_clock(0);
    establish();
    const Bytes toa = {254, 8, 0x9c, 0x40, 10, 10, 1, 2};
    ASSERT_EQ(replay_.size(), 1u);
    EXPECT_TRUE(FramesEqual(
        to_rs(kIsn + 1, kRsIsn + 1, net::kTcpAck, cat(toa, ts(101, kRsTs)), 502), replay_[0]));
    EXPECT_EQ(tcp_of(rs_syn_)->header_len(), 40u) << "no TOA in the RS SYN";
    // Data acking only the handshake carries it too; the translated ack is what TOA checks.
    out = roundtrip(
        kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck | net::kTcpPsh, ts(102, kNow), "GET /"),
        kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(kIsn + 1, kRsIsn + 1, net::kTcpAck | net::kTcpPsh,
                                  cat(toa, ts(102, kRsTs)), 502, "GET /"),
                            out[0]));
    EXPECT_EQ(counter(Counter::toa_inserted), 2u);
}

TEST_F(SynProxyTest, ProxyProtocolHeaderFollowsTheReplayedAck) {
    start({}, lb::kSvcFlagPpV2);
    establish();
    ASSERT_EQ(replay_.size(), 2u) << "replayed ACK, then the PROXY header as its own segment";
    EXPECT_TRUE(
        FramesEqual(to_rs(kIsn + 1, kRsIsn + 1, net::kTcpAck, ts(101, kRsTs), 502), replay_[0]));
    const auto* hdr_seg = tcp_of(replay_[1]);
    EXPECT_EQ(net::ntoh32(hdr_seg->seq), kIsn + 1);
    EXPECT_EQ(net::ntoh32(hdr_seg->ack), kRsIsn + 1);
    const Bytes sig = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
    const size_t off = 14 + 20 + hdr_seg->header_len();
    ASSERT_EQ(replay_[1].size(), off + 28);
    EXPECT_TRUE(std::equal(sig.begin(), sig.end(), replay_[1].begin() + off));
    // Client data is shifted by the header, acks translated.
    auto out = roundtrip(
        kWan, client(kIsn + 1, cookie_ + 1, net::kTcpAck | net::kTcpPsh, ts(102, kNow), "GET /"),
        kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(
        to_rs(kIsn + 1 + 28, kRsIsn + 1, net::kTcpAck | net::kTcpPsh, ts(102, kRsTs), 502, "GET /"),
        out[0]));
}

TEST_F(SynProxyTest, ServiceWithoutSynProxyUnchanged) {
    configure_default("rr");
    director->commit();
    start_worker();
    learn_neighbours();
    auto out = roundtrip(kWan, client(kIsn, 0, net::kTcpSyn, syn_opts(100)), kLan);
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(counter(Counter::synproxy_syn_cookie_sent), 0u);
}

}  // namespace
}  // namespace xvs::test
