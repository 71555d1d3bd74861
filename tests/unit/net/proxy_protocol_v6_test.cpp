// Tests for the IPv6 forms of net/proxy_protocol's builders: v1 "PROXY TCP6" with RFC 5952
// addresses, v2 0x21 / 0x22 with the 36-byte address block, exact bytes, read back by the
// strict parser; the family chosen from the addresses; refusals (family mix, capacity).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "net/byteorder.h"
#include "net/headers.h"
#include "net/proxy_protocol.h"

namespace xvs::net {
namespace {

using Bytes = std::vector<uint8_t>;

const InetAddr kClient = *parse_inet("2001:db8:ff::7");
const InetAddr kVip = *parse_inet("2001:db8::100");
const uint16_t kSport = hton16(51000);
const uint16_t kDport = hton16(443);

std::string text(const uint8_t* p, size_t n) {
    return std::string(reinterpret_cast<const char*>(p), n);
}

TEST(PpV1Inet, Tcp6LineExactAndParsedBack) {
    uint8_t out[kPpV1Tcp6MaxLen];
    const size_t n = pp_v1_build(out, sizeof out, kClient, kVip, kSport, kDport);
    EXPECT_EQ(text(out, n), "PROXY TCP6 2001:db8:ff::7 2001:db8::100 51000 443\r\n");
    EXPECT_EQ(pp_v1_len(kClient, kVip, kSport, kDport), n);
    auto parsed = pp_parse(std::span<const uint8_t>(out, n));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->version, 1);
    EXPECT_EQ(parsed->family, PpFamily::Inet6);
    EXPECT_EQ(parsed->src(), kClient);
    EXPECT_EQ(parsed->dst(), kVip);
    EXPECT_EQ(parsed->sport_be, kSport);
    EXPECT_EQ(parsed->dport_be, kDport);
    EXPECT_EQ(parsed->header_len, n);
}

TEST(PpV1Inet, LongestTcp6LineFitsItsBound) {
    const InetAddr full = *parse_inet("2001:dbf8:1111:2222:3333:4444:5555:6666");
    uint8_t out[kPpV1Tcp6MaxLen];
    const uint16_t max_port = hton16(65535);
    const size_t n = pp_v1_build(out, sizeof out, full, full, max_port, max_port);
    EXPECT_EQ(n, kPpV1Tcp6MaxLen);
    EXPECT_LE(n, kPpV1MaxLen);
    EXPECT_EQ(pp_v1_build(out, n - 1, full, full, max_port, max_port), 0u) << "cap one short";
}

TEST(PpV1Inet, Ipv4AddressesGiveTheTcp4LineAndFamiliesMustMatch) {
    uint8_t out[kPpV1MaxLen];
    const InetAddr c4 = *parse_inet("203.0.113.7");
    const InetAddr v4 = *parse_inet("10.10.1.100");
    const size_t n = pp_v1_build(out, sizeof out, c4, v4, kSport, kDport);
    EXPECT_EQ(text(out, n), "PROXY TCP4 203.0.113.7 10.10.1.100 51000 443\r\n");
    uint8_t before[kPpV1MaxLen];
    std::memcpy(before, out, sizeof out);
    EXPECT_EQ(pp_v1_build(out, sizeof out, kClient, v4, kSport, kDport), 0u);
    EXPECT_EQ(pp_v1_len(kClient, v4, kSport, kDport), 0u);
    EXPECT_EQ(std::memcmp(before, out, sizeof out), 0) << "nothing written";
}

TEST(PpV2Inet, TcpOverIpv6ExactBytes) {
    uint8_t out[kPpV2Inet6Len + 4];
    std::memset(out, 0xcc, sizeof out);
    ASSERT_EQ(pp_v2_build(out, sizeof out, kIpProtoTcp, kClient, kVip, kSport, kDport), 52u);
    const Bytes want = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
                        0x21, 0x21, 0x00, 0x24,  // TCP6, 36
                        0x20, 0x01, 0x0d, 0xb8, 0x00, 0xff, 0,    0,    0,    0,    0,    0,
                        0,    0,    0,    0x07, 0x20, 0x01, 0x0d, 0xb8, 0,    0,    0,    0,
                        0,    0,    0,    0,    0,    0,    0x01, 0x00, 0xc7, 0x38, 0x01, 0xbb};
    EXPECT_EQ(Bytes(out, out + 52), want);
    for (size_t i = 52; i < sizeof out; ++i) EXPECT_EQ(out[i], 0xcc);
    auto parsed = pp_parse(std::span<const uint8_t>(out, 52));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->version, 2);
    EXPECT_EQ(parsed->family, PpFamily::Inet6);
    EXPECT_EQ(parsed->transport, kIpProtoTcp);
    EXPECT_EQ(parsed->src(), kClient);
    EXPECT_EQ(parsed->dst(), kVip);
    EXPECT_EQ(parsed->sport_be, kSport);
    EXPECT_EQ(parsed->dport_be, kDport);
    EXPECT_EQ(pp_v2_len(kClient), 52u);
}

TEST(PpV2Inet, UdpOverIpv6AndTheIpv4Forms) {
    uint8_t out[kPpV2Inet6Len];
    ASSERT_EQ(pp_v2_build(out, sizeof out, kIpProtoUdp, kClient, kVip, kSport, kDport), 52u);
    EXPECT_EQ(out[13], kPpV2FamUdp6);
    auto parsed = pp_parse(std::span<const uint8_t>(out, 52));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->transport, kIpProtoUdp);
    const InetAddr c4 = *parse_inet("203.0.113.7");
    const InetAddr v4 = *parse_inet("10.10.1.100");
    ASSERT_EQ(pp_v2_build(out, sizeof out, kIpProtoTcp, c4, v4, kSport, kDport), 28u);
    EXPECT_EQ(out[13], kPpV2FamTcp4);
    parsed = pp_parse(std::span<const uint8_t>(out, 28));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->src(), c4);
    EXPECT_EQ(parsed->dst(), v4);
    EXPECT_EQ(pp_v2_len(c4), 28u);
}

TEST(PpV2Inet, Refusals) {
    uint8_t out[kPpV2Inet6Len];
    std::memset(out, 0xcc, sizeof out);
    EXPECT_EQ(pp_v2_build(out, 51, kIpProtoTcp, kClient, kVip, kSport, kDport), 0u);
    EXPECT_EQ(pp_v2_build(out, sizeof out, kIpProtoIcmp, kClient, kVip, kSport, kDport), 0u);
    EXPECT_EQ(
        pp_v2_build(out, sizeof out, kIpProtoTcp, kClient, *parse_inet("10.0.0.1"), kSport, kDport),
        0u);
    for (uint8_t b : out) EXPECT_EQ(b, 0xcc);
}

}  // namespace
}  // namespace xvs::net
