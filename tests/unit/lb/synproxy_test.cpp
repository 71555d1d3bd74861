// Unit tests for the SYN proxy's header work: SYN-ACK planning and option blocks, and the
// seq/ack/SACK/TS/window translation, with checksums checked by full recomputation.
#include "lb/synproxy/synproxy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/tcp_options.h"

namespace xvs::lb {
namespace {

using Bytes = std::vector<uint8_t>;
constexpr uint32_t kSrc = 0x0201010a, kDst = 0x6401010a;  // network order

Bytes be32(uint32_t v) {
    return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}
Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// A TCP segment (header + options) with a correct checksum.
struct Segment {
    Bytes bytes;
    Segment(uint32_t seq, uint32_t ack, uint8_t flags, uint16_t window, const Bytes& opts) {
        bytes.assign(20, 0);
        bytes.insert(bytes.end(), opts.begin(), opts.end());
        auto* t = tcp();
        t->seq = net::hton32(seq);
        t->ack = net::hton32(ack);
        t->flags = flags;
        t->window = net::hton16(window);
        t->data_off = static_cast<uint8_t>((bytes.size() / 4) << 4);
        t->checksum = net::ipv4_l4_checksum(kSrc, kDst, 6, bytes.data(), bytes.size());
    }
    net::TcpHdr* tcp() { return reinterpret_cast<net::TcpHdr*>(bytes.data()); }
    bool checksum_ok() const {
        return net::ipv4_l4_checksum(kSrc, kDst, 6, bytes.data(), bytes.size()) == 0 ||
               net::csum_fold(net::csum_partial(
                   bytes.data(), bytes.size(),
                   net::ipv4_pseudo_sum(kSrc, kDst, 6, uint16_t(bytes.size())))) == 0;
    }
    std::span<uint8_t> opts() { return net::tcp_options_span(tcp()); }
};

TEST(SynProxyPlan, AnswersOnlyWhatClientOfferedAndConfigAllows) {
    const Bytes linux_syn = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 0, 1, 3, 3, 7};
    SynProxyConf conf;
    SynAckPlan p = synproxy_plan_synack(linux_syn, conf, 0);
    EXPECT_EQ(p.mss, 1452);
    EXPECT_TRUE(p.sack);
    EXPECT_TRUE(p.timestamps);
    EXPECT_EQ(p.client_tsval, 9u);
    EXPECT_EQ(p.our_wscale, 7);
    EXPECT_EQ(p.cookie, (net::CookieOptions{3, 7, true, true}));
    uint8_t out[20];
    ASSERT_EQ(synproxy_write_synack_options(out, p, 0x11223344), 20u);
    EXPECT_EQ(Bytes(out, out + 20), (Bytes{2,    4,    0x05, 0xac, 4, 2, 8, 10, 0x11, 0x22,
                                           0x33, 0x44, 0,    0,    0, 9, 1, 3,  3,    7}));

    conf.timestamp = false;
    conf.wscale = kSynProxyNoWscale;
    p = synproxy_plan_synack(linux_syn, conf, 8);  // TOA room
    EXPECT_EQ(p.mss, 1444);
    EXPECT_EQ(p.cookie, (net::CookieOptions{3, net::kCookieWscaleNone, true, false}));
    ASSERT_EQ(synproxy_write_synack_options(out, p, 0), 8u);
    EXPECT_EQ(Bytes(out, out + 8), (Bytes{2, 4, 0x05, 0xa4, 1, 1, 4, 2}));

    // No options at all: MSS 536 (the default), nothing else.
    p = synproxy_plan_synack({}, SynProxyConf{}, 0);
    EXPECT_EQ(p.mss, 536);
    EXPECT_EQ(p.cookie, (net::CookieOptions{0, net::kCookieWscaleNone, false, false}));
}

TEST(SynProxyPlan, RsSynOptionsFromCookie) {
    uint8_t out[20];
    ASSERT_EQ(synproxy_write_rs_syn_options(out, net::CookieOptions{2, 9, false, true}, 77), 20u);
    EXPECT_EQ(Bytes(out, out + 20),
              (Bytes{2, 4, 0x05, 0xa0, 1, 1, 8, 10, 0, 0, 0, 77, 0, 0, 0, 0, 1, 3, 3, 9}));
    EXPECT_EQ(synproxy_synack_window(SynProxyConf{}, 1452), 0);
    SynProxyConf defer;
    defer.defer_rs_syn = true;
    EXPECT_EQ(synproxy_synack_window(defer, 1452), 3 * 1452);
}

TEST(SynProxyTranslate, InboundAckSackTsecr) {
    const SynProxySeq s{0x10000000u, 500, 7, 7};
    Segment seg(111, 0x10000100u, net::kTcpAck, 1000,
                cat(cat({1, 1, 5, 10}, cat(be32(0x10000200u), be32(0x10000300u))),
                    cat({1, 1, 8, 10}, cat(be32(42), be32(1500)))));
    synproxy_translate_in(seg.tcp(), seg.bytes.size(), s);
    EXPECT_EQ(net::ntoh32(seg.tcp()->seq), 111u);
    EXPECT_EQ(net::ntoh32(seg.tcp()->ack), 0x100u);
    const auto parsed = net::parse_tcp_options(seg.opts());
    ASSERT_TRUE(parsed.timestamp);
    EXPECT_EQ(parsed.timestamp->first, 42u);
    EXPECT_EQ(parsed.timestamp->second, 1000u);
    EXPECT_EQ(Bytes(seg.bytes.begin() + 24, seg.bytes.begin() + 32), cat(be32(0x200), be32(0x300)));
    EXPECT_TRUE(seg.checksum_ok());
}

TEST(SynProxyTranslate, OutboundSeqTsvalWindowAcrossWrap) {
    const SynProxySeq s{0x20u, 0xFFFFFF00u, 9, 7};
    Segment seg(0xFFFFFFF0u, 5, net::kTcpAck, 0x5000, cat({1, 1, 8, 10}, cat(be32(0x80), be32(7))));
    synproxy_translate_out(seg.tcp(), seg.bytes.size(), s);
    EXPECT_EQ(net::ntoh32(seg.tcp()->seq), 0x10u);
    EXPECT_EQ(net::ntoh32(seg.tcp()->ack), 5u);
    EXPECT_EQ(net::ntoh16(seg.tcp()->window), 0xFFFF) << "0x5000 << 2 saturates";
    EXPECT_EQ(net::parse_tcp_options(seg.opts()).timestamp->first, 0x80u + 0xFFFFFF00u);
    EXPECT_TRUE(seg.checksum_ok());
}

TEST(SynProxyTranslate, TimestampAtOddOffsetKeepsChecksum) {
    Segment seg(1, 2, net::kTcpAck, 3, {1, 8, 10, 0, 0, 1, 0, 0, 0, 2, 0, 1});
    ASSERT_TRUE(tcp_ts_adjust(seg.opts(), 0, 0x01020304u, &seg.tcp()->checksum));
    ASSERT_TRUE(tcp_ts_adjust(seg.opts(), 1, 0xFFFFFFFFu, &seg.tcp()->checksum));
    const auto parsed = net::parse_tcp_options(seg.opts());
    EXPECT_EQ(parsed.timestamp->first, 0x100u + 0x01020304u);
    EXPECT_EQ(parsed.timestamp->second, 0x1FFu);  // 0x200 - 1
    EXPECT_TRUE(seg.checksum_ok());
    Segment none(1, 2, net::kTcpAck, 3, {1, 1, 1, 1});
    EXPECT_FALSE(tcp_ts_adjust(none.opts(), 0, 5, &none.tcp()->checksum));
}

}  // namespace
}  // namespace xvs::lb
