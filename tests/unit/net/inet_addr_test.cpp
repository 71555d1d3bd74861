// Tests for net::InetAddr and net::InetPrefix: IPv4 held IPv4-mapped (never equal to any IPv6
// address), text forms both ways, prefix containment per family at bit granularity, masking.
#include <gtest/gtest.h>

#include "net/addr.h"
#include "net/af.h"

namespace xvs::net {
namespace {

InetAddr a(const char* t) {
    auto r = parse_inet(t);
    EXPECT_TRUE(r) << t;
    return r ? *r : InetAddr{};
}

TEST(InetAddrTest, Ipv4IsMappedAndRoundTrips) {
    const InetAddr v = a("10.1.2.3");
    EXPECT_TRUE(v.is_v4());
    EXPECT_EQ(v.v4_be(), parse_ipv4("10.1.2.3")->be);
    EXPECT_EQ(to_string(v), "10.1.2.3");
    const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3};
    EXPECT_EQ(v, InetAddr::v6(mapped));
    EXPECT_EQ(InetAddr(*parse_ipv4("10.1.2.3")), v);  // from the typed IPv4 address
}

TEST(InetAddrTest, Ipv6ParsesAndPrintsCanonically) {
    EXPECT_EQ(to_string(a("2001:DB8:0:0:0:0:0:1")), "2001:db8::1");
    EXPECT_EQ(to_string(a("::1")), "::1");
    EXPECT_FALSE(a("::1").is_v4());
    EXPECT_FALSE(parse_inet("2001:db8::1::2"));
    EXPECT_FALSE(parse_inet("10.1.2"));
    EXPECT_FALSE(parse_inet(""));
    EXPECT_FALSE(parse_inet(std::string(60, ':')));
}

TEST(InetAddrTest, FamiliesNeverCollide) {
    EXPECT_NE(a("0.0.0.1"), a("::1"));
    EXPECT_NE(a("0.0.0.0"), a("::"));
    EXPECT_TRUE(a("0.0.0.0").is_unspecified());
    EXPECT_TRUE(a("::").is_unspecified());
    EXPECT_TRUE(InetAddr{}.is_unspecified());
    EXPECT_FALSE(a("10.0.0.1").is_unspecified());
}

TEST(InetPrefixTest, ContainsAtBitGranularityPerFamily) {
    const InetPrefix p4 = InetPrefix::masked(a("10.1.2.3"), 23);
    EXPECT_EQ(p4.addr, a("10.1.2.0"));
    EXPECT_TRUE(p4.contains(a("10.1.3.255")));
    EXPECT_FALSE(p4.contains(a("10.1.4.0")));
    EXPECT_FALSE(p4.contains(a("::ffff:10.1.4.0")));  // the same as 10.1.4.0
    const InetPrefix all4 = InetPrefix::masked(a("1.2.3.4"), 0);
    EXPECT_TRUE(all4.contains(a("255.255.255.255")));
    EXPECT_FALSE(all4.contains(a("2001:db8::1"))) << "0.0.0.0/0 holds no IPv6 address";
    const InetPrefix p6 = InetPrefix::masked(a("2001:db8:abcd:12ff::1"), 57);
    EXPECT_EQ(p6.addr, a("2001:db8:abcd:1280::"));
    EXPECT_TRUE(p6.contains(a("2001:db8:abcd:12ff:ffff::")));
    EXPECT_FALSE(p6.contains(a("2001:db8:abcd:1200::")));
    const InetPrefix all6 = InetPrefix::masked(a("2001:db8::"), 0);
    EXPECT_TRUE(all6.contains(a("ffff::")));
    EXPECT_FALSE(all6.contains(a("10.0.0.1"))) << "::/0 holds no IPv4 address";
    EXPECT_EQ(to_string(p6), "2001:db8:abcd:1280::/57");
    EXPECT_EQ(InetPrefix(*parse_ipv4_prefix("192.168.0.0/16")),
              InetPrefix::masked(a("192.168.9.9"), 16));
}

TEST(Af4Test, AddressReplacementKeepsTheHeaderChecksum) {
    Ipv4Hdr h{};
    h.version_ihl = 0x45;
    h.total_length = hton16(40);
    h.ttl = 64;
    h.protocol = kIpProtoTcp;
    h.saddr = parse_ipv4("10.1.1.2")->be;
    h.daddr = parse_ipv4("10.1.1.100")->be;
    h.checksum = ipv4_header_checksum(&h);
    const uint32_t d = Af4::src_dst_delta(h, a("10.2.2.100"), a("10.2.2.2"));
    Af4::put_src_dst(h, a("10.2.2.100"), a("10.2.2.2"), d);
    EXPECT_EQ(Af4::src(h), a("10.2.2.100"));
    EXPECT_EQ(Af4::dst(h), a("10.2.2.2"));
    EXPECT_EQ(h.checksum, ipv4_header_checksum(&h));
    EXPECT_EQ(d, Af4::addr_delta(a("10.1.1.2"), a("10.2.2.100")) +
                     Af4::addr_delta(a("10.1.1.100"), a("10.2.2.2")));
    EXPECT_TRUE(Af4::ttl_decrement(h));
    EXPECT_EQ(h.ttl, 63);
    EXPECT_EQ(h.checksum, ipv4_header_checksum(&h));
    h.ttl = 1;
    EXPECT_FALSE(Af4::ttl_decrement(h));
    EXPECT_EQ(h.ttl, 1);
}

}  // namespace
}  // namespace xvs::net
