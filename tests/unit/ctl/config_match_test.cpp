// Tests for SNAT match services in xvs.conf (config_parser.cpp `virtual_server match NAME`,
// config_apply.cpp): DPVS keepalived's syntax parsed into MatchServer, every misuse refused at
// file:line with what to do, and a parsed configuration applied to (and reloaded into) a
// Director.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ctl/config_apply.h"
#include "ctl/config_check.h"
#include "ctl/config_parser.h"
#include "lb/director.h"

namespace xvs::ctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

net::Ipv4 ip(const char* text) {
    return *net::parse_ipv4(text);
}

// Lines 1-5; a body starts at line 6.
constexpr const char* kPrelude =
    R"(netif_defs { port wan0 { dev net_ring0 } port lan0 { dev net_ring1 } }
ip_defs {
    address 10.10.1.1/24 dev wan0
    address 10.10.2.1/24 dev lan0
}
)";

// DPVS's tutorial example, with our port names.
constexpr const char* kTwoMatches = R"(virtual_server match SNAT1 {
    protocol UDP
    lb_algo rr
    lb_kind SNAT
    src-range 10.10.2.0-10.10.2.254
    oif wan0
    real_server 10.10.1.1 0 {
        weight 4
    }
}
virtual_server match SNAT2 {
    protocol ICMP
    lb_algo wrr
    lb_kind SNAT
    src-range 10.10.2.1-10.10.2.254
    dst-range 10.10.1.0-10.10.1.254
    oif wan0
    iif lan0
    real_server 10.10.1.1 0 { weight 4 }
}
)";

ParseOutcome parse_body(const std::string& body) {
    return parse_config(std::string(kPrelude) + body, "t.conf");
}

std::string one_match(const std::string& inner) {
    return "virtual_server match M {\n" + inner + "}\n";
}

TEST(ConfigMatch, DpvsExampleParsesIntoMatchServers) {
    ParseOutcome out = parse_body(kTwoMatches);
    ASSERT_THAT(out.errors, IsEmpty());
    const Config& cfg = *out.config;
    EXPECT_THAT(cfg.virtual_servers, IsEmpty());
    ASSERT_EQ(cfg.match_servers.size(), 2u);
    const MatchServer& a = cfg.match_servers[0];
    EXPECT_EQ(a.name, "SNAT1");
    EXPECT_EQ(a.key.proto, 17);
    EXPECT_EQ(a.sched, "rr");
    EXPECT_EQ(a.fwd, lb::FwdMode::Snat);
    EXPECT_EQ(a.key.src.first, ip("10.10.2.0"));
    EXPECT_EQ(a.key.src.last, ip("10.10.2.254"));
    EXPECT_TRUE(a.key.dst.any());
    EXPECT_EQ(a.key.oif, "wan0");
    EXPECT_EQ(a.key.iif, "");
    ASSERT_EQ(a.real_servers.size(), 1u);
    EXPECT_EQ(a.real_servers[0].addr, ip("10.10.1.1"));
    EXPECT_EQ(a.real_servers[0].port, 0);
    EXPECT_EQ(a.real_servers[0].weight, 4u);
    EXPECT_EQ(a.loc.line, 6u);
    const MatchServer& b = cfg.match_servers[1];
    EXPECT_EQ(b.key.proto, 1);
    EXPECT_EQ(b.sched, "wrr");
    EXPECT_EQ(lb::to_string(b.key),
              "proto=icmp,src-range=10.10.2.1-10.10.2.254,dst-range=10.10.1.0-10.10.1.254,"
              "iif=lan0,oif=wan0");
}

TEST(ConfigMatch, MisuseIsRefusedAtItsLine) {
    struct Case {
        std::string body;
        std::string error;
    };
    const Case cases[] = {
        {one_match("    protocol TCP\n    lb_kind FNAT\n    oif wan0\n"),
         "t.conf:8: virtual_server match 'M': lb_kind must be SNAT (a match service only "
         "masquerades; for FNAT write `virtual_server VIP PORT`)"},
        {one_match("    lb_kind SNAT\n    oif wan0\n"),
         "t.conf:6: virtual_server match 'M': protocol missing (TCP, UDP or ICMP)"},
        {one_match("    protocol TCP\n    lb_kind SNAT\n"),
         "t.conf:6: virtual_server match 'M': oif missing (the port whose address inside hosts "
         "are hidden behind, e.g. `oif wan0`)"},
        {one_match("    protocol TCP\n    oif dpdk1\n"),
         "t.conf:8: virtual_server match 'M' oif: unknown port 'dpdk1' (not defined in "
         "netif_defs)"},
        {one_match("    protocol TCP\n    oif wan0\n    src-range 10.0.0.9-10.0.0.1\n"),
         "t.conf:9: src-range: bad address range '10.0.0.9-10.0.0.1': the last address is below "
         "the first"},
        {one_match("    protocol GRE\n    oif wan0\n"),
         "t.conf:7: protocol: bad value 'GRE' (TCP|UDP|ICMP)"},
        {one_match("    protocol TCP\n    oif wan0\n    laddr_group_name lips\n"),
         "t.conf:9: 'laddr_group_name' is not for SNAT match services (it is about real servers "
         "behind a VIP): remove it"},
        {"virtual_server 10.10.1.100 80 {\n    protocol TCP\n    lb_kind NAT\n    oif wan0\n}\n",
         "t.conf:9: 'oif' is only for SNAT match services (`virtual_server match NAME`)"},
        {"virtual_server 10.10.1.100 80 {\n    protocol ICMP\n    lb_kind NAT\n}\n",
         "t.conf:7: protocol ICMP is only for SNAT match services (`virtual_server match NAME`)"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.body);
        EXPECT_THAT(parse_body(c.body).errors, ElementsAre(c.error));
    }
}

// SNAT66: IPv6 ranges in DPVS's form ("[A-B]:P-Q", or "A-B" without ports); the family
// comes from the ranges, else from the WAN addresses, so an IPv4 and an IPv6 service with no
// ranges on the same oif are two services; a WAN address of the other family is refused.
TEST(ConfigMatch, Ipv6RangesAndFamily) {
    ParseOutcome out = parse_body(R"(virtual_server match V6 {
    protocol TCP
    src-range [2001:db8:2::1-2001:db8:2::ff]:1024-65535
    dst-range 2001:db8:9::-2001:db8:9::ffff
    oif wan0
    real_server 2001:db8:1::1 0
}
virtual_server match ANY4 {
    protocol UDP
    oif wan0
    real_server 10.10.1.1 0
}
virtual_server match ANY6 {
    protocol UDP
    oif wan0
    real_server 2001:db8:1::1 0
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const Config& cfg = *out.config;
    ASSERT_EQ(cfg.match_servers.size(), 3u);
    const MatchServer& v6 = cfg.match_servers[0];
    EXPECT_EQ(v6.key.family, 6);
    EXPECT_EQ(v6.key.src.first, *net::parse_inet("2001:db8:2::1"));
    EXPECT_EQ(v6.key.src.port_first, 1024);
    EXPECT_EQ(lb::to_string(v6.key),
              "proto=tcp,af=ipv6,src-range=[2001:db8:2::1-2001:db8:2::ff]:1024-65535,"
              "dst-range=2001:db8:9::-2001:db8:9::ffff,oif=wan0");
    EXPECT_EQ(cfg.match_servers[1].key.family, 4);
    EXPECT_EQ(cfg.match_servers[2].key.family, 6);

    EXPECT_THAT(parse_body(one_match("    protocol TCP\n    src-range 2001:db8::1-2001:db8::9\n"
                                     "    oif wan0\n    real_server 10.10.1.1 0\n"))
                    .errors,
                ElementsAre("t.conf:6: virtual_server match 'M': WAN address 10.10.1.1 (t.conf:10) "
                            "is IPv4 but the service translates IPv6 packets (its ranges' or first "
                            "WAN's family): one family per match service"));
    EXPECT_THAT(parse_body(one_match("    protocol TCP\n    src-range 2001:db8::1\n"
                                     "    dst-range 10.0.0.0-10.0.0.9\n    oif wan0\n"))
                    .errors,
                ElementsAre("t.conf:6: virtual_server match 'M': src-range is IPv6 but dst-range "
                            "is IPv4: one family per match service"));
}

TEST(ConfigMatch, DuplicatesByNameOrByMatchAreRefused) {
    const std::string m = "    protocol TCP\n    src-range 10.10.2.0-10.10.2.255\n    oif wan0\n";
    EXPECT_THAT(parse_body("virtual_server match A {\n" + m +
                           "}\nvirtual_server match A {\n    "
                           "protocol UDP\n    oif wan0\n}\n")
                    .errors,
                ElementsAre("t.conf:11: virtual_server match 'A' already defined at t.conf:6"));
    EXPECT_THAT(
        parse_body("virtual_server match A {\n" + m + "}\nvirtual_server match B {\n" + m + "}\n")
            .errors,
        ElementsAre("t.conf:11: virtual_server match 'B' matches the same packets as 'A' "
                    "at t.conf:6"));
}

// The Director's own refusals come back at the real_server's line (xvsd -t and start).
TEST(ConfigMatch, WanAddressMustBeADirectorAddressOnTheOif) {
    auto errors = [](const std::string& rs) {
        return config_load_text(
                   std::string(kPrelude) +
                       one_match("    protocol TCP\n    lb_kind SNAT\n    oif wan0\n" + rs),
                   "t.conf")
            .errors;
    };
    EXPECT_THAT(
        errors("    real_server 10.10.1.9 0\n"),
        ElementsAre("t.conf:10: real_server: WAN address 10.10.1.9 is not a director address: "
                    "add it first (ip_defs `address 10.10.1.9/LEN dev wan0`, or xvsctl addr add)"));
    EXPECT_THAT(
        errors("    real_server 10.10.2.1 0\n"),
        ElementsAre("t.conf:10: real_server: WAN address 10.10.2.1 is on port 'lan0', not on "
                    "oif 'wan0': use an address of port 'wan0'"));
    EXPECT_THAT(
        errors("    real_server 10.10.1.1 80\n"),
        ElementsAre("t.conf:10: real_server: WAN address 10.10.1.1:80: the port must be 0 (SNAT "
                    "takes ports from the address's pool)"));
    EXPECT_THAT(errors("    real_server 10.10.1.1 0\n"), IsEmpty());
}

TEST(ConfigMatch, SnatOnAVipServiceIsRefusedWithTheMatchSyntax) {
    auto out =
        config_load_text(std::string(kPrelude) +
                             "virtual_server 10.10.1.100 80 {\n    protocol TCP\n    lb_kind "
                             "SNAT\n    real_server 10.10.2.2 80\n}\n",
                         "t.conf");
    ASSERT_EQ(out.errors.size(), 1u);
    EXPECT_THAT(out.errors[0], HasSubstr("t.conf:6: lb_kind SNAT is only for match services: write "
                                         "`virtual_server match NAME {"));
}

TEST(ConfigMatch, ApplyAddsThenReloadEditsAndRemoves) {
    ParseOutcome out = config_load_text(std::string(kPrelude) + kTwoMatches, "t.conf");
    ASSERT_THAT(out.errors, IsEmpty());
    lb::Director d;
    ASSERT_TRUE(d.port_add({"wan0", 0, {}, 1500}));
    ASSERT_TRUE(d.port_add({"lan0", 1, {}, 1500}));
    auto rep = config_apply(d, *out.config);
    ASSERT_TRUE(rep) << rep.error();
    ASSERT_EQ(d.matches().size(), 2u);
    EXPECT_EQ(d.matches()[0]->match_name, "SNAT1");
    EXPECT_EQ(d.matches()[0]->dests.size(), 1u);
    EXPECT_EQ(d.snapshot()->matches.size(), 2u);

    // Reload: SNAT2 gone, SNAT1 with another scheduler and weight.
    std::string text = std::string(kPrelude) + kTwoMatches;
    text = text.substr(0, text.find("virtual_server match SNAT2"));
    text.replace(text.find("lb_algo rr"), 10, "lb_algo wrr");
    text.replace(text.find("weight 4"), 8, "weight 7");
    ParseOutcome again = config_load_text(text, "t.conf");
    ASSERT_THAT(again.errors, IsEmpty());
    rep = config_apply(d, *again.config);
    ASSERT_TRUE(rep) << rep.error();
    ASSERT_EQ(d.matches().size(), 1u);
    EXPECT_EQ(d.matches()[0]->sched_name, "wrr");
    EXPECT_EQ(d.matches()[0]->dests[0]->weight, 7);
    EXPECT_THAT(
        rep->changes,
        ElementsAre(HasSubstr("removed SNAT service proto=icmp"),
                    "SNAT service 'SNAT1' (proto=udp,src-range=10.10.2.0-10.10.2.254,oif=wan0) "
                    "scheduler wrr",
                    "WAN address 10.10.1.1 weight 7"));
}

}  // namespace
}  // namespace xvs::ctl
