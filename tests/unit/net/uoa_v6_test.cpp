// Tests for the IPv6 forms of net/uoa: the 20-byte option (code 31, len 20, port, IPv6 client)
// in opp (version 2) on IPv6 datagrams (FNAT66) and on IPv4 ones (FNAT64), and in ipo on IPv4;
// exact bytes, lengths, the UDP datagram untouched after the insert and its checksum valid
// (independent sums of packet_ref.h), refusals, and the IPv6 empty datagram.
#include <gtest/gtest.h>

#include <cstring>

#include "net/byteorder.h"
#include "net/headers.h"
#include "net/uoa.h"
#include "packet_ref.h"

namespace xvs::net {
namespace {

using testref::Bytes;

const InetAddr kClient6 = *parse_inet("2001:db8:ff::7");
const uint16_t kClientPort = hton16(51000);  // c7 38
// The option for kClient6:51000.
const Bytes kOpt6 = {0x1f, 20, 0xc7, 0x38, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0xff,
                     0,    0,  0,    0,    0,    0,    0,    0,    0,    0x07};
const uint8_t kLocal6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
const uint8_t kRs6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};
constexpr uint32_t kLocal4 = 0x0a000002;
constexpr uint32_t kRs4 = 0xc0a8000a;

uint32_t pseudo6(const uint8_t* s, const uint8_t* d, size_t len, uint8_t next_header) {
    uint32_t sum = testref::ref_sum(s, 16, testref::ref_sum(d, 16));
    return testref::ref_sum(nullptr, 0,
                            sum + uint32_t(len >> 16) + uint32_t(len & 0xffff) + next_header);
}

// An IPv6/UDP datagram local -> RS with a payload of odd length; UDP checksum from scratch.
Bytes udp6_datagram(const Bytes& payload) {
    Bytes udp(8, 0);
    testref::put16(udp, 0, 40000);
    testref::put16(udp, 2, 53);
    testref::put16(udp, 4, uint16_t(8 + payload.size()));
    testref::append(udp, payload);
    testref::put16(
        udp, 6,
        testref::ref_csum(udp.data(), udp.size(), pseudo6(kLocal6, kRs6, udp.size(), kIpProtoUdp)));
    Bytes p(40, 0);
    p[0] = 0x60;
    testref::put16(p, 4, uint16_t(udp.size()));
    p[6] = kIpProtoUdp;
    p[7] = 64;
    std::memcpy(p.data() + 8, kLocal6, 16);
    std::memcpy(p.data() + 24, kRs6, 16);
    testref::append(p, udp);
    return p;
}

const Bytes kHello = {'h', 'e', 'l', 'l', 'o'};

TEST(UoaV6Opp, Ipv6DatagramGetsVersionTwoHeaderBeforeUdp) {
    const Bytes before = udp6_datagram(kHello);
    Bytes buf = before;
    buf.resize(before.size() + 64, 0xee);
    const size_t len =
        uoa_opp_insert_ipv6(buf.data(), before.size(), buf.size(), kClient6, kClientPort);
    ASSERT_EQ(len, before.size() + 24);
    EXPECT_EQ(buf[6], kIpProtoUoaOpp);
    EXPECT_EQ(testref::get16(buf, 4), 8 + 5 + 24u);
    EXPECT_EQ(Bytes(buf.begin() + 40, buf.begin() + 44), (Bytes{0x20, 0x11, 0x00, 0x18}));
    EXPECT_EQ(Bytes(buf.begin() + 44, buf.begin() + 64), kOpt6);
    // The UDP datagram follows as it was; its checksum (pseudo-header with 17) still holds.
    EXPECT_EQ(Bytes(buf.begin() + 64, buf.begin() + long(len)),
              Bytes(before.begin() + 40, before.end()));
    EXPECT_TRUE(testref::ref_valid(buf.data() + 64, 13, pseudo6(kLocal6, kRs6, 13, kIpProtoUdp)));
    EXPECT_EQ(Bytes(buf.begin() + 8, buf.begin() + 40),
              Bytes(before.begin() + 8, before.begin() + 40));
    EXPECT_EQ(buf[len], 0xee);
    // Through uoa_insert, which picks by the version byte.
    Bytes again = before;
    again.resize(before.size() + 64, 0xee);
    EXPECT_EQ(
        uoa_insert(UoaMode::Opp, again.data(), before.size(), again.size(), kClient6, kClientPort),
        len);
    EXPECT_EQ(again, buf);
    EXPECT_EQ(uoa_insert_len(UoaMode::Opp, kClient6), 24u);
    EXPECT_EQ(uoa_insert_len(UoaMode::Ipo, kClient6), 20u);
}

TEST(UoaV6Opp, Ipv6RefusalsLeaveTheDatagramUntouched) {
    const Bytes before = udp6_datagram(kHello);
    Bytes buf = before;
    buf.resize(before.size() + 64, 0xee);
    const Bytes copy = buf;
    EXPECT_EQ(
        uoa_opp_insert_ipv6(buf.data(), before.size(), before.size() + 23, kClient6, kClientPort),
        0u)
        << "capacity";
    EXPECT_EQ(
        uoa_insert(UoaMode::Ipo, buf.data(), before.size(), buf.size(), kClient6, kClientPort), 0u)
        << "IPv6 has no ipo";
    Bytes hbh = buf;
    hbh[6] = 0;  // hop-by-hop options in front of UDP
    EXPECT_EQ(uoa_opp_insert_ipv6(hbh.data(), before.size(), hbh.size(), kClient6, kClientPort),
              0u);
    Bytes longer = buf;
    testref::put16(longer, 4, 100);
    EXPECT_EQ(
        uoa_opp_insert_ipv6(longer.data(), before.size(), longer.size(), kClient6, kClientPort),
        0u);
    EXPECT_EQ(buf, copy);
}

// FNAT64: the IPv4 datagram to the RS carries the IPv6 client.
TEST(UoaV6Opp, Fnat64Ipv4DatagramCarriesTheIpv6Client) {
    const Bytes udp = testref::udp(kLocal4, kRs4, 40000, 53, kHello);
    const Bytes before = testref::ipv4(kIpProtoUdp, kLocal4, kRs4, udp);
    Bytes buf = before;
    buf.resize(before.size() + 64, 0xee);
    const size_t len = uoa_opp_insert(buf.data(), before.size(), buf.size(), kClient6, kClientPort);
    ASSERT_EQ(len, before.size() + 24);
    EXPECT_EQ(buf[9], kIpProtoUoaOpp);
    EXPECT_EQ(testref::get16(buf, 2), len);
    EXPECT_TRUE(testref::ref_valid(buf.data(), 20)) << "IPv4 header checksum";
    EXPECT_EQ(Bytes(buf.begin() + 20, buf.begin() + 24), (Bytes{0x20, 0x11, 0x00, 0x18}));
    EXPECT_EQ(Bytes(buf.begin() + 24, buf.begin() + 44), kOpt6);
    EXPECT_EQ(Bytes(buf.begin() + 44, buf.begin() + long(len)), udp);
}

TEST(UoaV6Ipo, Fnat64OptionInTheIpv4Header) {
    const Bytes udp = testref::udp(kLocal4, kRs4, 40000, 53, kHello);
    const Bytes before = testref::ipv4(kIpProtoUdp, kLocal4, kRs4, udp);
    Bytes buf = before;
    buf.resize(before.size() + 64, 0xee);
    const size_t len = uoa_ipo_insert(buf.data(), before.size(), buf.size(), kClient6, kClientPort);
    ASSERT_EQ(len, before.size() + 20);
    EXPECT_EQ(buf[0], 0x4a);  // IHL 5 + 5 words
    EXPECT_EQ(buf[9], kIpProtoUdp);
    EXPECT_TRUE(testref::ref_valid(buf.data(), 40)) << "IPv4 header checksum with the option";
    EXPECT_EQ(Bytes(buf.begin() + 20, buf.begin() + 40), kOpt6);
    EXPECT_EQ(Bytes(buf.begin() + 40, buf.begin() + long(len)), udp);
    // 24 bytes of IPv4 options already: 20 more would pass IHL 15.
    Bytes opts = before;
    opts[0] = 0x4b;
    opts.insert(opts.begin() + 20, 24, 1);  // NOPs
    testref::put16(opts, 2, uint16_t(opts.size()));
    opts.resize(opts.size() + 64, 0xee);
    EXPECT_EQ(uoa_ipo_insert(opts.data(), opts.size() - 64, opts.size(), kClient6, kClientPort),
              0u);
}

TEST(UoaV6Empty, Ipv6EmptyDatagramCarriesOpp) {
    UoaFlowInet flow;
    flow.saddr = InetAddr::v6(kLocal6);
    flow.daddr = InetAddr::v6(kRs6);
    flow.sport_be = hton16(40000);
    flow.dport_be = hton16(53);
    flow.client = kClient6;
    flow.cport_be = kClientPort;
    flow.ttl = 63;
    uint8_t out[128];
    std::memset(out, 0xee, sizeof out);
    const size_t len = uoa_empty_datagram_build(out, sizeof out, UoaMode::Opp, flow);
    ASSERT_EQ(len, 40 + 24 + 8u);
    const Bytes b(out, out + len);
    EXPECT_EQ(b[0], 0x60);
    EXPECT_EQ(testref::get16(b, 4), 32u);
    EXPECT_EQ(b[6], kIpProtoUoaOpp);
    EXPECT_EQ(b[7], 63);
    EXPECT_EQ(Bytes(b.begin() + 44, b.begin() + 64), kOpt6);
    EXPECT_EQ(testref::get16(b, 64 + 4), 8u);
    EXPECT_TRUE(testref::ref_valid(out + 64, 8, pseudo6(kLocal6, kRs6, 8, kIpProtoUdp)))
        << "UDP checksum over the IPv6 pseudo-header";
    EXPECT_EQ(out[len], 0xee);
    EXPECT_EQ(uoa_empty_datagram_build(out, len - 1, UoaMode::Opp, flow), 0u);
    EXPECT_EQ(uoa_empty_datagram_build(out, sizeof out, UoaMode::Ipo, flow), 0u);
    // FNAT64: an IPv4 flow with the IPv6 client.
    flow.saddr = InetAddr::v4(hton32(kLocal4));
    flow.daddr = InetAddr::v4(hton32(kRs4));
    const size_t len4 = uoa_empty_datagram_build(out, sizeof out, UoaMode::Opp, flow);
    ASSERT_EQ(len4, 20 + 24 + 8u);
    EXPECT_EQ(out[9], kIpProtoUoaOpp);
    EXPECT_TRUE(testref::ref_valid(out, 20));
    EXPECT_EQ(Bytes(out + 24, out + 44), kOpt6);
    EXPECT_TRUE(
        testref::ref_valid(out + 44, 8, testref::ref_pseudo(kLocal4, kRs4, kIpProtoUdp, 8)));
    // Mixed packet families are refused.
    flow.daddr = InetAddr::v6(kRs6);
    EXPECT_EQ(uoa_empty_datagram_build(out, sizeof out, UoaMode::Opp, flow), 0u);
}

}  // namespace
}  // namespace xvs::net
