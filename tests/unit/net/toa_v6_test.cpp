// Tests for the IPv6 forms of net/toa: the 20-byte TOA (kind 254, port, IPv6 client) planned
// byte for byte, inserted into IPv6/TCP packets and, for FNAT64, into IPv4/TCP ones; lengths
// exact, payload intact, checksums checked by the independent sums of packet_ref.h; the
// untouched-on-failure rule; the MSS clamp by 20; toa_find_inet for both forms.
#include <gtest/gtest.h>

#include <cstring>

#include "net/byteorder.h"
#include "net/toa.h"
#include "packet_ref.h"

namespace xvs::net {
namespace {

using testref::Bytes;

const InetAddr kClient6 = *parse_inet("2001:db8::7");
const uint16_t kClientPort = hton16(40000);  // 0x9c40
const Bytes kToa6 = {254, 20, 0x9c, 0x40, 0x20, 0x01, 0x0d, 0xb8, 0, 0,
                     0,   0,  0,    0,    0,    0,    0,    0,    0, 7};
const Bytes kToa4 = {254, 8, 0x9c, 0x40, 192, 168, 10, 7};
const Bytes kNopNopTs = {1, 1, 8, 10, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
const Bytes kTs = {8, 10, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
// Linux's SYN: MSS 1440, SACK permitted, timestamps, NOP, window scale 7.
const Bytes kSynOpts = {2, 4, 0x05, 0xa0, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7};

// The local address and the RS of an FNAT66 flow, and of FNAT64's IPv4 side (host order).
const uint8_t kLocal6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
const uint8_t kRs6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};
constexpr uint32_t kLocal4 = 0x0a000001;
constexpr uint32_t kRs4 = 0x0a000102;

Bytes cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts) testref::append(out, p);
    return out;
}

Bytes sack(int blocks) {
    Bytes out = {5, uint8_t(2 + 8 * blocks)};
    for (int i = 0; i < 8 * blocks; ++i) out.push_back(uint8_t(0xa0 + i));
    return out;
}

Bytes payload_bytes(size_t n) {
    Bytes out(n);
    for (size_t i = 0; i < n; ++i) out[i] = uint8_t(i * 7 + 3);
    return out;
}

// A TCP header with `opts` (a multiple of 4 bytes) and payload; checksum 0.
Bytes tcp_segment(const Bytes& opts, const Bytes& payload, uint8_t flags = kTcpAck | kTcpPsh) {
    Bytes seg(20, 0);
    testref::put16(seg, 0, 5000);
    testref::put16(seg, 2, 80);
    testref::put32(seg, 4, 0x01020304);
    testref::put32(seg, 8, 0x0a0b0c0d);
    seg[12] = uint8_t((20 + opts.size()) / 4 << 4);
    seg[13] = flags;
    testref::put16(seg, 14, 502);
    testref::append(seg, opts);
    testref::append(seg, payload);
    return seg;
}

// RFC 8200 8.1 pseudo-header sum: source, destination, upper-layer length (32 bits), next
// header (zero-padded to 32 bits).
uint32_t pseudo6(const uint8_t* s, const uint8_t* d, size_t len, uint8_t next_header) {
    uint32_t sum = testref::ref_sum(s, 16, testref::ref_sum(d, 16));
    return testref::ref_sum(nullptr, 0,
                            sum + uint32_t(len >> 16) + uint32_t(len & 0xffff) + next_header);
}

// 40-byte IPv6 header (next header TCP) + segment, TCP checksum from scratch; `spare` canary
// bytes (0xcc) after it.
Bytes ipv6_tcp(const Bytes& seg, size_t spare = 64) {
    Bytes p(40, 0);
    p[0] = 0x60;
    testref::put16(p, 4, uint16_t(seg.size()));
    p[6] = kIpProtoTcp;
    p[7] = 64;
    std::memcpy(p.data() + 8, kLocal6, 16);
    std::memcpy(p.data() + 24, kRs6, 16);
    testref::append(p, seg);
    testref::put16(p, 40 + 16,
                   testref::ref_csum(p.data() + 40, seg.size(),
                                     pseudo6(kLocal6, kRs6, seg.size(), kIpProtoTcp)));
    p.resize(p.size() + spare, 0xcc);
    return p;
}

size_t payload_len6(const Bytes& p) {
    return testref::get16(p, 4);
}

bool tcp6_valid(const Bytes& p) {
    const size_t len = payload_len6(p);
    return testref::ref_valid(p.data() + 40, len, pseudo6(p.data() + 8, p.data() + 24, len, p[6]));
}

Bytes opts_of(const Bytes& p, size_t ip_len) {
    const size_t doff = size_t(p[ip_len + 12] >> 4) * 4;
    return Bytes(p.begin() + long(ip_len) + 20, p.begin() + long(ip_len + doff));
}

TEST(ToaV6Plan, EmptyOptionsGiveTheTwentyByteForm) {
    const ToaPlan plan = toa_plan({}, kClient6, kClientPort, true);
    EXPECT_EQ(plan.outcome, ToaOutcome::Inserted);
    ASSERT_EQ(plan.new_len, 20);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), kToa6);
    EXPECT_EQ(toa_len(kClient6), 20);
    EXPECT_EQ(toa_len(*parse_inet("192.168.10.7")), 8);
}

TEST(ToaV6Plan, SynOptionsAndTimestampsFit) {
    ToaPlan plan = toa_plan(kSynOpts, kClient6, kClientPort, false);
    EXPECT_EQ(plan.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), cat({kToa6, kSynOpts}));
    plan = toa_plan(kNopNopTs, kClient6, kClientPort, true);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), cat({kToa6, kNopNopTs}));
}

// 30 bytes of TS and SACK: the 8-byte form fits beside them, the 20-byte one only without SACK.
TEST(ToaV6Plan, PrunesSackWhereOnlyTheIpv4FormWouldFit) {
    const Bytes old = cat({kNopNopTs, {1, 1}, sack(2)});
    ASSERT_EQ(old.size(), 32u);
    EXPECT_EQ(toa_plan(old, *parse_inet("192.168.10.7"), kClientPort, true).outcome,
              ToaOutcome::Inserted);
    const ToaPlan plan = toa_plan(old, kClient6, kClientPort, true);
    EXPECT_EQ(plan.outcome, ToaOutcome::InsertedPrunedSack);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), cat({kToa6, kNopNopTs}));
    EXPECT_EQ(toa_plan(old, kClient6, kClientPort, false).outcome, ToaOutcome::NoRoom);
}

TEST(ToaV6Plan, ForgedToasOfBothFormsAreRemoved) {
    const Bytes old = cat({kToa4, kToa6});
    const ToaPlan plan = toa_plan(old, kClient6, kClientPort, true);
    EXPECT_EQ(plan.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(plan.forged_removed, 2);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), kToa6);
}

TEST(ToaV6Insert, Ipv6PacketGrowsByTheOptionWithPayloadAndChecksumIntact) {
    const Bytes payload = payload_bytes(517);
    Bytes p = ipv6_tcp(tcp_segment(kNopNopTs, payload));
    ASSERT_TRUE(tcp6_valid(p));
    const size_t len = 40 + payload_len6(p);
    const ToaResult r = toa_insert_ipv6(p.data(), len, p.size(), kClient6, kClientPort, true);
    EXPECT_EQ(r.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(r.new_pkt_len, 40 + 20 + 32 + 517u);
    EXPECT_EQ(payload_len6(p), 20 + 32 + 517u);
    EXPECT_EQ(p[40 + 12] >> 4, (20 + 32) / 4);
    EXPECT_EQ(opts_of(p, 40), cat({kToa6, kNopNopTs}));
    EXPECT_EQ(Bytes(p.begin() + 40 + 52, p.begin() + long(r.new_pkt_len)), payload);
    EXPECT_TRUE(tcp6_valid(p)) << "TCP checksum over the IPv6 pseudo-header";
    for (size_t i = r.new_pkt_len; i < p.size(); ++i) ASSERT_EQ(p[i], 0xcc) << "byte " << i;
    const auto found = toa_find_inet(opts_of(p, 40));
    ASSERT_TRUE(found);
    EXPECT_EQ(found->first, kClient6);
    EXPECT_EQ(found->second, kClientPort);
}

TEST(ToaV6Insert, Ipv4ClientOnIpv6PacketTakesTheEightByteForm) {
    Bytes p = ipv6_tcp(tcp_segment({}, payload_bytes(10), kTcpAck));
    const InetAddr v4 = *parse_inet("192.168.10.7");
    const ToaResult r = toa_insert_ipv6(p.data(), 40 + 30, p.size(), v4, kClientPort, true);
    EXPECT_EQ(r.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(opts_of(p, 40), kToa4);
    EXPECT_TRUE(tcp6_valid(p));
}

// FNAT64: the IPv6 client's 20-byte TOA on the IPv4 packet to the RS.
TEST(ToaV6Insert, Fnat64PutsTheTwentyByteFormOnIpv4) {
    const Bytes seg = tcp_segment(kNopNopTs, payload_bytes(100));
    Bytes p = testref::ipv4(kIpProtoTcp, kLocal4, kRs4, seg);
    testref::put16(p, 20 + 16,
                   testref::ref_csum(p.data() + 20, seg.size(),
                                     testref::ref_pseudo(kLocal4, kRs4, kIpProtoTcp, seg.size())));
    const size_t len = p.size();
    p.resize(len + 64, 0xcc);
    const ToaResult r = toa_insert_ipv4(p.data(), len, p.size(), kClient6, kClientPort, true);
    EXPECT_EQ(r.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(r.new_pkt_len, len + 20);
    EXPECT_EQ(testref::get16(p, 2), len + 20);
    EXPECT_EQ(opts_of(p, 20), cat({kToa6, kNopNopTs}));
    EXPECT_TRUE(testref::ref_valid(p.data(), 20)) << "IPv4 header checksum";
    const size_t tcp_len = r.new_pkt_len - 20;
    EXPECT_TRUE(testref::ref_valid(p.data() + 20, tcp_len,
                                   testref::ref_pseudo(kLocal4, kRs4, kIpProtoTcp, tcp_len)))
        << "TCP checksum";
    EXPECT_EQ(Bytes(p.begin() + 20 + 52, p.begin() + long(r.new_pkt_len)), payload_bytes(100));
    // The IPv4-client overload is unchanged: the 8-byte form.
    Bytes q = testref::ipv4(kIpProtoTcp, kLocal4, kRs4, tcp_segment({}, {}, kTcpAck));
    q.resize(q.size() + 64, 0xcc);
    EXPECT_EQ(
        toa_insert_ipv4(q.data(), 40, q.size(), hton32(0xc0a80a07), kClientPort, true).outcome,
        ToaOutcome::Inserted);
    EXPECT_EQ(opts_of(q, 20), kToa4);
}

TEST(ToaV6Insert, TooBigAndMalformedLeaveThePacketUntouched) {
    Bytes p = ipv6_tcp(tcp_segment(kNopNopTs, payload_bytes(64)), 0);
    const size_t len = p.size();
    const Bytes before = p;
    // A capacity one byte short of the 20 the option needs: it fits 40 bytes, not the MTU.
    ToaResult r = toa_insert_ipv6(p.data(), len, len + 19, kClient6, kClientPort, true);
    EXPECT_EQ(r.outcome, ToaOutcome::TooBig);
    EXPECT_EQ(r.new_pkt_len, len);
    EXPECT_EQ(p, before);
    // A hop-by-hop header in front of TCP, a payload length beyond the bytes, not version 6.
    Bytes hbh = p;
    hbh[6] = 0;
    EXPECT_EQ(toa_insert_ipv6(hbh.data(), len, len + 64, kClient6, kClientPort, true).outcome,
              ToaOutcome::Malformed);
    Bytes longer = p;
    testref::put16(longer, 4, uint16_t(len));
    EXPECT_EQ(toa_insert_ipv6(longer.data(), len, len + 64, kClient6, kClientPort, true).outcome,
              ToaOutcome::Malformed);
    Bytes v4 = p;
    v4[0] = 0x45;
    EXPECT_EQ(toa_insert_ipv6(v4.data(), len, len + 64, kClient6, kClientPort, true).outcome,
              ToaOutcome::Malformed);
    EXPECT_EQ(toa_insert_ipv6(p.data(), 39, 200, kClient6, kClientPort, true).outcome,
              ToaOutcome::Malformed);
    EXPECT_EQ(p, before);
}

TEST(ToaV6ClampMss, SynAckMssLoweredByTwenty) {
    Bytes p = ipv6_tcp(tcp_segment(kSynOpts, {}, kTcpSyn | kTcpAck), 0);
    uint16_t csum;
    std::memcpy(&csum, p.data() + 40 + 16, 2);
    std::span<uint8_t> opts(p.data() + 60, kSynOpts.size());
    EXPECT_TRUE(toa_clamp_mss(opts, &csum, toa_len(kClient6)));
    std::memcpy(p.data() + 40 + 16, &csum, 2);
    EXPECT_EQ(tcp_find_mss(opts), 1440 - 20);
    EXPECT_TRUE(tcp6_valid(p));
    Bytes tiny = {2, 4, 0, 20};
    EXPECT_FALSE(toa_clamp_mss(tiny, nullptr, 20));
}

TEST(ToaV6Find, FirstOptionOfEitherForm) {
    const Bytes v6_first = cat({{254, 6, 1, 2, 3, 4}, {1, 1}, kToa6, kToa4});
    auto found = toa_find_inet(v6_first);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->first, kClient6);
    EXPECT_EQ(found->second, kClientPort);
    found = toa_find_inet(cat({kToa4, kToa6}));
    ASSERT_TRUE(found);
    EXPECT_EQ(found->first, *parse_inet("192.168.10.7"));
    EXPECT_FALSE(toa_find(kToa6)) << "the IPv4 finder sees only the 8-byte form";
    EXPECT_FALSE(toa_find_inet(kNopNopTs));
}

}  // namespace
}  // namespace xvs::net
