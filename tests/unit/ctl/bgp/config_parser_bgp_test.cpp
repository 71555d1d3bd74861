// Tests for src/ctl/bgp/config_parser_bgp.cpp: bgp_defs and ospf_defs parsed into
// ctl::RoutingDefs, and every refusal at file:line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ctl/config_parser.h"

namespace xvs::ctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Two lines of ports; test bodies start at line 3.
constexpr const char* kPrelude = R"(netif_defs { port wan0 { dev net_ring0 } }
ip_defs { address 10.10.1.1/24 dev wan0 }
)";

ParseOutcome parse_body(const std::string& body) {
    return parse_config(std::string(kPrelude) + body, "t.conf");
}

net::InetAddr addr(const char* text) { return *net::parse_inet(text); }

TEST(ConfigBgp, FullBgpSectionParses) {
    ParseOutcome out = parse_body(R"(bgp_defs {
    bird_socket /run/bird/lb1.ctl
    bird_config /etc/bird/lb1-xvs.conf
    router_id 10.10.1.21
    liveness_interface xvs-live1
    local_as 65001
    neighbor 10.10.1.254 remote_as 65000 port 1179 hold_time 9 bfd password s3cret multihop 2
    neighbor 10.10.1.253 remote_as 65002
    next_hop 10.10.1.21
    source_address 10.10.1.21
    community 65001:100 65001:200
    community 0:65535
    med 50
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const RoutingDefs& r = out.config->routing;
    EXPECT_TRUE(r.enabled());
    EXPECT_EQ(r.bird_socket, "/run/bird/lb1.ctl");
    EXPECT_EQ(r.bird_config, "/etc/bird/lb1-xvs.conf");
    EXPECT_EQ(r.router_id, addr("10.10.1.21"));
    EXPECT_EQ(r.liveness_interface, "xvs-live1");
    EXPECT_EQ(r.bgp.local_as, 65001u);
    ASSERT_EQ(r.bgp.neighbors.size(), 2u);
    EXPECT_EQ(r.bgp.neighbors[0], (BgpNeighbor{addr("10.10.1.254"), 65000, 1179, 9, true,
                                               "s3cret", 2}));
    EXPECT_EQ(r.bgp.neighbors[1], (BgpNeighbor{addr("10.10.1.253"), 65002, 179, 0, false, "", 0}));
    EXPECT_EQ(r.bgp.next_hop, addr("10.10.1.21"));
    EXPECT_EQ(r.bgp.source_address, addr("10.10.1.21"));
    EXPECT_THAT(r.bgp.communities, ElementsAre(BgpCommunity{65001, 100}, BgpCommunity{65001, 200},
                                               BgpCommunity{0, 65535}));
    EXPECT_EQ(r.bgp.med, 50u);
    EXPECT_FALSE(r.ospf.present);
}

TEST(ConfigBgp, DefaultsWithoutRouting) {
    ParseOutcome out = parse_body("");
    ASSERT_THAT(out.errors, IsEmpty());
    const RoutingDefs& r = out.config->routing;
    EXPECT_FALSE(r.enabled());
    EXPECT_EQ(r.bird_socket, "/run/bird/bird.ctl");
    EXPECT_EQ(r.bird_config, "/etc/bird/xvs.conf");
    EXPECT_EQ(r.liveness_interface, "xvs-alive");
}

TEST(ConfigBgp, OspfSectionParsesAndSharesSettingsWithBgp) {
    ParseOutcome out = parse_body(R"(ospf_defs {
    bird_socket /run/b.ctl
    area 0.0.0.1
    metric 30
    interface xe-wan cost 10 hello 1 dead 4
    interface xe-lan
}
bgp_defs {
    bird_socket /run/b.ctl
    local_as 65001
    neighbor 10.10.1.254 remote_as 65000
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const RoutingDefs& r = out.config->routing;
    EXPECT_EQ(r.bird_socket, "/run/b.ctl");
    EXPECT_TRUE(r.ospf.present);
    EXPECT_EQ(r.ospf.area, "0.0.0.1");
    EXPECT_EQ(r.ospf.metric, 30u);
    EXPECT_THAT(r.ospf.interfaces,
                ElementsAre(OspfInterface{"xe-wan", 10, 1, 4}, OspfInterface{"xe-lan", {}, {}, {}}));
}

TEST(ConfigBgp, RefusalsAtFileAndLine) {
    ParseOutcome out = parse_body(R"(bgp_defs {
    local_as 0
    neighbor 10.10.1.254 remote_as 65000 hold_time 2
    neighbor 10.10.1.253 port 179
    neighbor 10.10.1.252 remote_as 1 color blue
    neighbor 10.10.1.254 remote_as 65000
    community 65536:1 7
    next_hop 2001:db8::5
    router_id 2001:db8::9
    bird_socket relative/path
    liveness_interface a/b
    withdraw_delay 5
}
)");
    EXPECT_THAT(out.errors,
                ElementsAre(HasSubstr("t.conf:4: local_as: 0 out of range 1..4294967295"),
                            HasSubstr("t.conf:5: hold_time: 2 is below 3 (0 or 3..65535)"),
                            HasSubstr("t.conf:6: neighbor 10.10.1.253: remote_as N missing"),
                            HasSubstr("t.conf:7: neighbor: unknown option 'color'"),
                            HasSubstr("t.conf:7: neighbor: unknown option 'blue'"),
                            HasSubstr("t.conf:9: community: '65536:1' is not ASN:VALUE"),
                            HasSubstr("t.conf:9: community: '7' is not ASN:VALUE"),
                            HasSubstr("t.conf:11: router_id: '2001:db8::9' is not an IPv4"),
                            HasSubstr("t.conf:12: bird_socket: 'relative/path' is not an absolute"),
                            HasSubstr("t.conf:13: liveness_interface: bad interface name 'a/b'"),
                            HasSubstr("t.conf:14: unknown keyword 'withdraw_delay' in bgp_defs"),
                            HasSubstr("t.conf:3: bgp_defs: local_as missing"),
                            HasSubstr("t.conf:3: bgp_defs: next_hop 2001:db8::5 is not of the "
                                      "family of neighbor 10.10.1.254")));
}

TEST(ConfigBgp, DuplicatesAndMissingPartsAreRefused) {
    ParseOutcome out = parse_body(R"(bgp_defs {
    local_as 65001
    neighbor 10.10.1.254 remote_as 65000
    neighbor 10.10.1.254 remote_as 65000
    bird_config /a.conf
}
bgp_defs {
}
ospf_defs {
    bird_config /b.conf
    area x
    interface xe-wan hello 4 dead 4
    interface xe-wan cost 0
}
)");
    EXPECT_THAT(out.errors,
                ElementsAre(HasSubstr("t.conf:6: neighbor 10.10.1.254 given twice"),
                            HasSubstr("t.conf:9: bgp_defs given twice: write one block"),
                            HasSubstr("t.conf:12: bird_config /b.conf differs from /a.conf given at "
                                      "t.conf:7: give it once"),
                            HasSubstr("t.conf:13: area: 'x' is not a number or A.B.C.D"),
                            HasSubstr("t.conf:14: interface xe-wan: dead 4 must be longer than "
                                      "hello 4"),
                            HasSubstr("t.conf:15: cost: 0 out of range 1..65535"),
                            HasSubstr("t.conf:11: ospf_defs: no interface")));
}

}  // namespace
}  // namespace xvs::ctl
