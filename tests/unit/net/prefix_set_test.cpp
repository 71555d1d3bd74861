// Tests for net/prefix_set: interval merging and lookup at prefix boundaries (/0, /32, nested,
// overlapping, adjacent), against a brute-force reference; strict ACL prefix parsing.
#include "net/prefix_set.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace xvs::net {
namespace {

InetPrefix pfx(const char* text) {
    auto p = parse_acl_prefix(text);
    EXPECT_TRUE(p.ok()) << text << ": " << (p.ok() ? "" : p.error());
    return p.ok() ? *p : InetPrefix{};
}

InetAddr be(const char* text) {
    return *parse_inet(text);
}

TEST(PrefixSetTest, EmptyContainsNothing) {
    PrefixSet s;
    EXPECT_TRUE(s.empty());
    EXPECT_FALSE(s.contains(be("0.0.0.0")));
    EXPECT_FALSE(s.contains(be("255.255.255.255")));
}

// empty() is a flag the constructor sets (the admission path asks it for every new conn): a
// set of either family only, copied or built from nothing, must say so.
TEST(PrefixSetTest, EmptyFollowsTheIntervalsOfEitherFamily) {
    std::vector<InetPrefix> none;
    EXPECT_TRUE(PrefixSet(none).empty());
    std::vector<InetPrefix> v4{pfx("192.0.2.0/24")};
    std::vector<InetPrefix> v6{pfx("2001:db8::/32")};
    const PrefixSet s4(v4), s6(v6);
    EXPECT_FALSE(s4.empty());
    EXPECT_FALSE(s6.empty());
    PrefixSet copy;
    copy = s6;
    EXPECT_FALSE(copy.empty());
    EXPECT_TRUE(copy.contains(be("2001:db8::1")));
}

TEST(PrefixSetTest, SlashZeroContainsEverything) {
    std::vector<InetPrefix> v{pfx("0.0.0.0/0")};
    PrefixSet s(v);
    EXPECT_EQ(s.intervals(), 1u);
    for (const char* a : {"0.0.0.0", "10.1.2.3", "128.0.0.0", "255.255.255.255"})
        EXPECT_TRUE(s.contains(be(a))) << a;
}

TEST(PrefixSetTest, SlashThirtyTwoIsOneAddress) {
    std::vector<InetPrefix> v{pfx("192.0.2.7")};
    PrefixSet s(v);
    EXPECT_TRUE(s.contains(be("192.0.2.7")));
    EXPECT_FALSE(s.contains(be("192.0.2.6")));
    EXPECT_FALSE(s.contains(be("192.0.2.8")));
}

TEST(PrefixSetTest, PrefixBoundariesAreExact) {
    std::vector<InetPrefix> v{pfx("10.0.0.0/8"), pfx("192.168.4.0/22")};
    PrefixSet s(v);
    EXPECT_FALSE(s.contains(be("9.255.255.255")));
    EXPECT_TRUE(s.contains(be("10.0.0.0")));
    EXPECT_TRUE(s.contains(be("10.255.255.255")));
    EXPECT_FALSE(s.contains(be("11.0.0.0")));
    EXPECT_FALSE(s.contains(be("192.168.3.255")));
    EXPECT_TRUE(s.contains(be("192.168.4.0")));
    EXPECT_TRUE(s.contains(be("192.168.7.255")));
    EXPECT_FALSE(s.contains(be("192.168.8.0")));
}

TEST(PrefixSetTest, TopOfAddressSpaceDoesNotWrap) {
    std::vector<InetPrefix> v{pfx("255.255.255.255"), pfx("255.255.255.0/24"), pfx("0.0.0.0/32")};
    PrefixSet s(v);
    EXPECT_EQ(s.intervals(), 2u);
    EXPECT_TRUE(s.contains(be("255.255.255.255")));
    EXPECT_TRUE(s.contains(be("255.255.255.0")));
    EXPECT_FALSE(s.contains(be("255.255.254.255")));
    EXPECT_TRUE(s.contains(be("0.0.0.0")));
    EXPECT_FALSE(s.contains(be("0.0.0.1")));
}

TEST(PrefixSetTest, OverlappingNestedAndAdjacentMerge) {
    std::vector<InetPrefix> v{pfx("10.0.0.0/8"),  pfx("10.1.0.0/16"), pfx("10.1.2.3"),
                              pfx("10.1.0.0/16"), pfx("11.0.0.0/8"),  pfx("12.0.0.0/9"),
                              pfx("12.128.0.1")};
    PrefixSet s(v);
    // 10/8 + 11/8 + 12.0/9 are contiguous; 12.128.0.1 is a separate single address.
    EXPECT_EQ(s.intervals(), 2u);
    EXPECT_TRUE(s.contains(be("11.200.0.1")));
    EXPECT_TRUE(s.contains(be("12.127.255.255")));
    EXPECT_FALSE(s.contains(be("12.128.0.0")));
    EXPECT_TRUE(s.contains(be("12.128.0.1")));
    EXPECT_FALSE(s.contains(be("12.128.0.2")));
}

TEST(PrefixSetTest, AgreesWithBruteForce) {
    std::mt19937 rng(7);
    for (int round = 0; round < 50; ++round) {
        std::vector<InetPrefix> v;
        const int n = 1 + static_cast<int>(rng() % 20);
        for (int i = 0; i < n; ++i) {
            const uint8_t len = static_cast<uint8_t>(16 + rng() % 17);  // dense near 10.0/16
            const uint32_t mask = ~uint32_t(0) << (32 - len);
            const uint32_t addr = (0x0a000000u | (rng() & 0xffff)) & mask;
            v.push_back(Ipv4Prefix{Ipv4::from_host(addr), len});
        }
        PrefixSet s(v);
        for (uint32_t h = 0x09ffff00u; h < 0x0a010100u; h += 1 + rng() % 7) {
            bool expect = false;
            for (const auto& p : v) expect = expect || p.contains(Ipv4::from_host(h));
            ASSERT_EQ(s.contains(Ipv4::from_host(h)), expect) << to_string(Ipv4::from_host(h));
        }
    }
}

TEST(ParseAclPrefixTest, AcceptsAddressesAndPrefixes) {
    EXPECT_EQ(to_string(pfx("192.0.2.7")), "192.0.2.7/32");
    EXPECT_EQ(to_string(pfx("10.0.0.0/8")), "10.0.0.0/8");
    EXPECT_EQ(to_string(pfx("0.0.0.0/0")), "0.0.0.0/0");
}

TEST(ParseAclPrefixTest, AcceptsIpv6AddressesAndPrefixes) {
    EXPECT_EQ(to_string(pfx("2001:db8::7")), "2001:db8::7/128");
    EXPECT_EQ(to_string(pfx("[2001:db8::7]")), "2001:db8::7/128");
    EXPECT_EQ(to_string(pfx("2001:DB8::/32")), "2001:db8::/32");
    EXPECT_EQ(to_string(pfx("::/0")), "::/0");
    EXPECT_FALSE(pfx("2001:db8::/32").is_v4());
    PrefixSet s(std::vector<InetPrefix>{pfx("2001:db8::/32"), pfx("10.0.0.0/8")});
    EXPECT_TRUE(s.contains(be("2001:db8:ffff::1")));
    EXPECT_FALSE(s.contains(be("2001:db9::1")));
    EXPECT_TRUE(s.contains(be("10.2.3.4")));
    auto host_bits = parse_acl_prefix("2001:db8::1/64");
    ASSERT_FALSE(host_bits.ok());
    EXPECT_EQ(host_bits.error(),
              "prefix '2001:db8::1/64' has host bits set (did you mean 2001:db8::/64?)");
    for (const char* bad : {"2001:db8::/129", "2001:db8::zz", "[10.0.0.1]", "[2001:db8::1", "::/"})
        EXPECT_FALSE(parse_acl_prefix(bad).ok()) << bad;
}

TEST(ParseAclPrefixTest, RefusesBadInputWithActionableText) {
    auto host_bits = parse_acl_prefix("10.1.2.3/8");
    ASSERT_FALSE(host_bits.ok());
    EXPECT_EQ(host_bits.error(),
              "prefix '10.1.2.3/8' has host bits set (did you mean 10.0.0.0/8?)");
    for (const char* bad : {"10.0.0.0/33", "10.0.0/8", "default", "", "10.0.0.0/", "a.b.c.d"}) {
        auto r = parse_acl_prefix(bad);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_NE(r.error().find("bad address or prefix"), std::string::npos) << r.error();
    }
}

}  // namespace
}  // namespace xvs::net

namespace xvs::net {
namespace {

TEST(PrefixSetTest, Ipv6AndIpv4KeepToTheirFamily) {
    std::vector<InetPrefix> v{InetPrefix::masked(be("2001:db8::"), 32),
                              InetPrefix::masked(be("2001:db8:1::"), 48),  // nested: merges
                              InetPrefix::masked(be("fe80::"), 10), pfx("10.0.0.0/8")};
    PrefixSet s(v);
    EXPECT_EQ(s.intervals(), 3u);
    EXPECT_TRUE(s.contains(be("2001:db8:ffff::1")));
    EXPECT_FALSE(s.contains(be("2001:db9::")));
    EXPECT_TRUE(s.contains(be("febf:ffff::")));
    EXPECT_FALSE(s.contains(be("fec0::")));
    EXPECT_TRUE(s.contains(be("10.200.0.1")));
    EXPECT_FALSE(s.contains(be("::ffff:11.0.0.1")));  // = 11.0.0.1
    EXPECT_FALSE(s.contains(be("::a00:1"))) << "IPv4-compatible form is IPv6, not 10.0.0.1";
}

TEST(PrefixSetTest, Ipv6SlashZeroAndAdjacentRangesMerge) {
    std::vector<InetPrefix> all{InetPrefix::masked(be("::"), 0)};
    PrefixSet s(all);
    EXPECT_EQ(s.intervals(), 1u);
    EXPECT_TRUE(s.contains(be("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")));
    EXPECT_TRUE(s.contains(be("::")));
    EXPECT_FALSE(s.contains(be("0.0.0.0")));
    std::vector<InetPrefix> adj{InetPrefix::masked(be("2001:db8::"), 33),
                                InetPrefix::masked(be("2001:db8:8000::"), 33)};
    EXPECT_EQ(PrefixSet(adj).intervals(), 1u);
}

}  // namespace
}  // namespace xvs::net
