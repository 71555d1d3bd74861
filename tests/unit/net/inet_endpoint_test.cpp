// Tests for the text forms of src/net/addr.h that the control plane reads and prints for both
// families: InetEndpoint ("a.b.c.d:port", "[v6]:port"), parse_inet_prefix, strip_brackets and
// the family order of addr_less.
#include <gtest/gtest.h>

#include "net/addr.h"

namespace xvs::net {
namespace {

InetAddr a(const char* t) {
    auto r = parse_inet(t);
    EXPECT_TRUE(r) << t;
    return r ? *r : InetAddr{};
}

TEST(InetEndpointTest, BothFamiliesRoundTrip) {
    auto v4 = parse_inet_endpoint("10.0.0.1:80");
    ASSERT_TRUE(v4);
    EXPECT_EQ(v4->addr, a("10.0.0.1"));
    EXPECT_EQ(v4->port, 80);
    EXPECT_EQ(to_string(*v4), "10.0.0.1:80");
    auto v6 = parse_inet_endpoint("[2001:DB8:0::1]:65535");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->addr, a("2001:db8::1"));
    EXPECT_EQ(v6->port, 65535);
    EXPECT_EQ(to_string(*v6), "[2001:db8::1]:65535");
    EXPECT_EQ(to_string(InetEndpoint{a("::"), 0}), "[::]:0");
    EXPECT_EQ(endpoint_host(a("fe80::1")), "[fe80::1]");
    EXPECT_EQ(endpoint_host(a("192.0.2.1")), "192.0.2.1");
}

TEST(InetEndpointTest, RefusesAmbiguousAndMalformed) {
    for (const char* bad : {"2001:db8::1:80", "[2001:db8::1]", "[2001:db8::1]:", "[2001:db8::1]80",
                            "[10.0.0.1]:80", "10.0.0.1", "10.0.0.1:65536", "[2001:db8::1:80",
                            "2001:db8::1]:80", "[]:80", ":80", "[2001:db8::zz]:80"})
        EXPECT_FALSE(parse_inet_endpoint(bad)) << bad;
}

TEST(InetPrefixParseTest, MasksAndBoundsPerFamily) {
    auto p6 = parse_inet_prefix("2001:db8::1/64");
    ASSERT_TRUE(p6);
    EXPECT_EQ(to_string(*p6), "2001:db8::/64");
    auto host6 = parse_inet_prefix("2001:db8::1");
    ASSERT_TRUE(host6);
    EXPECT_EQ(host6->len, 128);
    auto p4 = parse_inet_prefix("10.1.2.3/8");
    ASSERT_TRUE(p4);
    EXPECT_EQ(to_string(*p4), "10.0.0.0/8");
    EXPECT_EQ(parse_inet_prefix("10.1.2.3")->len, 32);
    EXPECT_EQ(to_string(*parse_inet_prefix("::/0")), "::/0");
    for (const char* bad : {"10.0.0.0/33", "2001:db8::/129", "default", "2001:db8::/", "/64", ""})
        EXPECT_FALSE(parse_inet_prefix(bad)) << bad;
}

TEST(StripBracketsTest, OnlyAroundIpv6) {
    EXPECT_EQ(strip_brackets("[2001:db8::1]"), "2001:db8::1");
    EXPECT_EQ(strip_brackets("2001:db8::1"), "2001:db8::1");
    EXPECT_EQ(strip_brackets("[10.0.0.1]"), "[10.0.0.1]");
    EXPECT_EQ(strip_brackets("[2001:db8::1"), "[2001:db8::1");
}

TEST(AddrLessTest, Ipv4BeforeIpv6ThenNumeric) {
    EXPECT_TRUE(addr_less(a("255.255.255.255"), a("::")));
    EXPECT_FALSE(addr_less(a("::"), a("0.0.0.0")));
    EXPECT_TRUE(addr_less(a("10.0.0.9"), a("10.0.0.10")));
    EXPECT_TRUE(addr_less(a("2001:db8::ff"), a("2001:db8::100")));
    EXPECT_FALSE(addr_less(a("2001:db8::1"), a("2001:db8::1")));
    EXPECT_EQ(family_bits(a("10.0.0.1")), 32u);
    EXPECT_EQ(family_bits(a("::1")), 128u);
}

}  // namespace
}  // namespace xvs::net
