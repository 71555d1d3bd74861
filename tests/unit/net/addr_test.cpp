// Tests for net/addr: strict dotted-quad parsing (anything odd is rejected, never guessed at),
// prefix masking and endpoints, and printing that round-trips.
#include "net/addr.h"

#include <gtest/gtest.h>

#include <string>

namespace xvs::net {
namespace {

TEST(ParseIpv4Test, AcceptsDottedQuads) {
    struct Case {
        const char* text;
        uint32_t host;
    };
    const Case cases[] = {
        {"0.0.0.0", 0x00000000},  {"255.255.255.255", 0xffffffff},
        {"10.0.0.1", 0x0a000001}, {"192.168.1.254", 0xc0a801fe},
        {"1.2.3.4", 0x01020304},  {"172.16.255.0", 0xac10ff00},
    };
    for (const auto& c : cases) {
        const auto addr = parse_ipv4(c.text);
        ASSERT_TRUE(addr) << c.text;
        EXPECT_EQ(addr->host(), c.host) << c.text;
        EXPECT_EQ(to_string(*addr), c.text);
    }
}

TEST(ParseIpv4Test, StoresNetworkByteOrder) {
    const auto addr = parse_ipv4("1.2.3.4");
    ASSERT_TRUE(addr);
    const auto* bytes = reinterpret_cast<const uint8_t*>(&addr->be);
    EXPECT_EQ(bytes[0], 1);
    EXPECT_EQ(bytes[1], 2);
    EXPECT_EQ(bytes[2], 3);
    EXPECT_EQ(bytes[3], 4);
}

TEST(ParseIpv4Test, RejectsMalformed) {
    const char* bad[] = {
        "",           "1",          "1.2.3",     "1.2.3.4.5",  "1.2.3.4.",
        ".1.2.3",     "1..2.3",     "1.2..3",    "1.2.3.",     "...",
        "256.0.0.1",  "1.2.3.256",  "1.2.3.999", "1.2.3.1000", "4294967297.0.0.1",
        " 1.2.3.4",   "1.2.3.4 ",   "1. 2.3.4",  "1.2.3.4\n",  "x1.2.3.4",
        "1.2.3.4x",   "+1.2.3.4",   "-1.2.3.4",  "1.2.3.-4",   "0x1.2.3.4",
        "1.2.3.4/32", "1.2.3.4:80", "a.b.c.d",   "1,2,3,4",    "localhost",
    };
    for (const char* text : bad) EXPECT_FALSE(parse_ipv4(text)) << "'" << text << "'";
    // An embedded NUL must not end the parse early.
    EXPECT_FALSE(parse_ipv4(std::string_view("1.2.3.4\0junk", 12)));
    EXPECT_FALSE(parse_ipv4(std::string_view("1.2.3.4\0", 8)));
}

TEST(ParseIpv4Test, LeadingZerosAreNeverOctal) {
    // inet_aton reads 010 as octal 8; a strict parser may reject it or read decimal, never 8.
    const auto addr = parse_ipv4("010.0.0.1");
    if (addr) {
        EXPECT_EQ(addr->host(), 0x0a000001u);
    }
}

TEST(ParseIpv4PrefixTest, MasksHostBits) {
    const auto p = parse_ipv4_prefix("10.1.2.3/8");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->len, 8);
    EXPECT_EQ(to_string(p->addr), "10.0.0.0");
    EXPECT_EQ(to_string(*p), "10.0.0.0/8");

    const auto q = parse_ipv4_prefix("192.168.77.200/27");
    ASSERT_TRUE(q);
    EXPECT_EQ(to_string(*q), "192.168.77.192/27");
}

TEST(ParseIpv4PrefixTest, BareAddressIsSlash32) {
    const auto p = parse_ipv4_prefix("1.2.3.4");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->len, 32);
    EXPECT_EQ(to_string(*p), "1.2.3.4/32");
    EXPECT_EQ(parse_ipv4_prefix("1.2.3.4/32"), p);
}

TEST(ParseIpv4PrefixTest, ZeroLengthAndDefault) {
    const auto any = parse_ipv4_prefix("1.2.3.4/0");
    ASSERT_TRUE(any);
    EXPECT_EQ(any->len, 0);
    EXPECT_EQ(any->addr.be, 0u);
    const auto def = parse_ipv4_prefix("default");
    ASSERT_TRUE(def);
    EXPECT_EQ(def, parse_ipv4_prefix("0.0.0.0/0"));
    EXPECT_EQ(to_string(*def), "0.0.0.0/0");
    EXPECT_TRUE(def->contains(*parse_ipv4("255.255.255.255")));
    EXPECT_TRUE(def->contains(*parse_ipv4("0.0.0.0")));
}

TEST(ParseIpv4PrefixTest, RejectsMalformed) {
    const char* bad[] = {
        "1.2.3.4/33", "1.2.3.4/64",  "1.2.3.4/",    "1.2.3.4/-1", "1.2.3.4/+8",  "1.2.3.4/ 8",
        "1.2.3.4/8 ", "1.2.3.4/8/8", "1.2.3/8",     "/8",         "256.0.0.0/8", "Default",
        "default/0",  " default",    "1.2.3.4/0x8", "",
    };
    for (const char* text : bad) EXPECT_FALSE(parse_ipv4_prefix(text)) << "'" << text << "'";
}

TEST(Ipv4PrefixTest, ContainsRespectsLength) {
    const auto p = *parse_ipv4_prefix("10.20.0.0/16");
    EXPECT_TRUE(p.contains(*parse_ipv4("10.20.0.0")));
    EXPECT_TRUE(p.contains(*parse_ipv4("10.20.255.255")));
    EXPECT_FALSE(p.contains(*parse_ipv4("10.21.0.0")));
    EXPECT_FALSE(p.contains(*parse_ipv4("10.19.255.255")));

    const auto host = *parse_ipv4_prefix("10.0.0.1/32");
    EXPECT_TRUE(host.contains(*parse_ipv4("10.0.0.1")));
    EXPECT_FALSE(host.contains(*parse_ipv4("10.0.0.0")));

    const auto odd = *parse_ipv4_prefix("10.0.0.0/31");
    EXPECT_TRUE(odd.contains(*parse_ipv4("10.0.0.1")));
    EXPECT_FALSE(odd.contains(*parse_ipv4("10.0.0.2")));
}

TEST(ParseIpv4EndpointTest, Accepts) {
    const auto ep = parse_ipv4_endpoint("10.0.0.1:8080");
    ASSERT_TRUE(ep);
    EXPECT_EQ(ep->addr, *parse_ipv4("10.0.0.1"));
    EXPECT_EQ(ep->port, 8080);  // host order
    EXPECT_EQ(to_string(*ep), "10.0.0.1:8080");

    EXPECT_EQ(parse_ipv4_endpoint("0.0.0.0:0")->port, 0);
    EXPECT_EQ(parse_ipv4_endpoint("255.255.255.255:65535")->port, 65535);
}

TEST(ParseIpv4EndpointTest, RejectsMalformed) {
    const char* bad[] = {
        "10.0.0.1",
        "10.0.0.1:",
        ":80",
        "10.0.0.1:65536",
        "10.0.0.1:-1",
        "10.0.0.1: 80",
        "10.0.0.1:80 ",
        "10.0.0.1:80:1",
        "10.0.0.1:8o",
        "10.0.0:80",
        "256.0.0.1:80",
        "10.0.0.1:0x50",
        "",
        ":",
        "10.0.0.1::80",
        "[10.0.0.1]:80",
        "10.0.0.1:99999999999",
    };
    for (const char* text : bad) EXPECT_FALSE(parse_ipv4_endpoint(text)) << "'" << text << "'";
}

}  // namespace
}  // namespace xvs::net
