// Tests for IPv6 in xvs.conf (src/ctl/config_parser*.cpp, config_validate.cpp): keepalived's
// bare and bracketed IPv6 addresses, virtual_server_group and local_address_group ranges in
// the last 16-bit group, ip_defs addresses/routes/lists of IPv6, and the address-family rules
// of a service (FNAT64 only: IPv6 VIP, IPv4 local addresses and real servers) at file:line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ctl/config_parser.h"

namespace xvs::ctl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

net::InetAddr ip(const char* text) {
    auto a = net::parse_inet(text);
    EXPECT_TRUE(a) << text;
    return a.value_or(net::InetAddr{});
}

net::InetPrefix pfx(const char* text) {
    auto p = net::parse_inet_prefix(text);
    EXPECT_TRUE(p) << text;
    return p.value_or(net::InetPrefix{});
}

// Six lines: ports, a director address, local address groups of both families; test bodies
// start at line 7.
constexpr const char* kPrelude = R"(netif_defs {
    port wan0 { dev net_ring0 }
    port lan0 { dev net_ring1 }
}
ip_defs { address 10.10.1.1/24 dev wan0 }
local_address_group lips6 { 2001:db8:2::100-101 lan0 } local_address_group lips4 { 10.10.2.100-101 lan0 }
)";

ParseOutcome parse_body(const std::string& body) {
    return parse_config(std::string(kPrelude) + body, "t.conf");
}
std::vector<std::string> errors_of(const std::string& body) {
    return parse_body(body).errors;
}

TEST(ConfigIpv6, BareAndBracketedAddresses) {
    ParseOutcome out = parse_body(R"(virtual_server 2001:db8::100 80 {
    protocol TCP
    lb_kind FNAT
    laddr_group_name lips6
    real_server 2001:db8::10 8080 { weight 3 }
    real_server [2001:db8::11] 8080
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const Config& cfg = *out.config;
    ASSERT_EQ(cfg.virtual_servers.size(), 1u);
    const VirtualServer& vs = cfg.virtual_servers[0];
    EXPECT_EQ(vs.vip, ip("2001:db8::100"));
    EXPECT_FALSE(vs.vip.is_v4());
    EXPECT_EQ(vs.port, 80);
    ASSERT_EQ(vs.real_servers.size(), 2u);
    EXPECT_EQ(vs.real_servers[0].addr, ip("2001:db8::10"));
    EXPECT_EQ(vs.real_servers[0].weight, 3u);
    EXPECT_EQ(vs.real_servers[1].addr, ip("2001:db8::11"));
    EXPECT_EQ(vs.real_servers[1].loc.line, 12u);
    ASSERT_EQ(cfg.laddr_groups.size(), 2u);
    EXPECT_THAT(cfg.laddr_groups[0].addrs,
                ElementsAre(LocalAddress{ip("2001:db8:2::100"), "lan0"},
                            LocalAddress{ip("2001:db8:2::101"), "lan0"}));
}

TEST(ConfigIpv6, BracketedVipAndUppercaseAreTheSameAddress) {
    ParseOutcome out = parse_body(
        "virtual_server [2001:DB8::100] 80 { lb_kind DR }\n"
        "virtual_server 2001:db8:0:0::100 80 { lb_kind DR }\n");
    EXPECT_THAT(out.errors, ElementsAre("t.conf:8: duplicate virtual_server TCP "
                                        "[2001:db8::100]:80 (first at t.conf:7)"));
}

// keepalived's IPv6 range: the part after '-' is the last 16-bit group, in hex.
TEST(ConfigIpv6, VirtualServerGroupRangeInTheLastGroup) {
    ParseOutcome out = parse_body(R"(virtual_server_group V6 {
    ae00::2-9 80
    2001:db8::fe-101 443
    2001:db8::7-2001:db8::8 8080
    [2001:db8::1] 53
}
virtual_server group V6 { lb_kind DR }
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const Config& cfg = *out.config;
    const auto& e = cfg.vs_groups.at(0).entries;
    ASSERT_EQ(e.size(), 4u);
    EXPECT_EQ(e[0].first, ip("ae00::2"));
    EXPECT_EQ(e[0].last, ip("ae00::9"));
    EXPECT_EQ(e[1].last, ip("2001:db8::101"));
    EXPECT_EQ(e[2].last, ip("2001:db8::8"));
    EXPECT_EQ(e[3].first, e[3].last);
    // 8 + 4 (0xfe, 0xff, 0x100, 0x101) + 2 + 1
    ASSERT_EQ(cfg.virtual_servers.size(), 15u);
    EXPECT_EQ(cfg.virtual_servers[0].vip, ip("ae00::2"));
    EXPECT_EQ(cfg.virtual_servers[7].vip, ip("ae00::9"));
    EXPECT_EQ(cfg.virtual_servers[8].vip, ip("2001:db8::fe"));
    EXPECT_EQ(cfg.virtual_servers[10].vip, ip("2001:db8::100"));
    EXPECT_EQ(cfg.virtual_servers[11].vip, ip("2001:db8::101"));
    EXPECT_EQ(cfg.virtual_servers[11].port, 443);
    EXPECT_EQ(cfg.virtual_servers[14].vip, ip("2001:db8::1"));
    EXPECT_EQ(cfg.virtual_servers[14].group, "V6");
}

TEST(ConfigIpv6, LocalAddressRangeAcrossAByteOfTheLastGroup) {
    ParseOutcome out =
        parse_body("local_address_group g { 2001:db8:3::ff-2001:db8:3::102 lan0 }\n");
    ASSERT_THAT(out.errors, IsEmpty());
    const auto& addrs = out.config->laddr_groups.at(2).addrs;
    ASSERT_EQ(addrs.size(), 4u);
    EXPECT_EQ(addrs[0].addr, ip("2001:db8:3::ff"));
    EXPECT_EQ(addrs[1].addr, ip("2001:db8:3::100"));
    EXPECT_EQ(addrs[3].addr, ip("2001:db8:3::102"));
}

TEST(ConfigIpv6, BadRangesAreRefusedAtTheirLine) {
    const std::string forms =
        " (A.B.C.D or A.B.C.D-E within one /24, or an IPv6 X::Y or X::Y-Z within its last "
        "16-bit group, Z hex)";
    EXPECT_THAT(errors_of("local_address_group g {\n"
                          "  2001:db8::9-2 lan0\n"              // backwards
                          "  2001:db8::1-2001:db8:1::2 lan0\n"  // another /112
                          "  2001:db8::1-10000 lan0\n"          // more than 16 bits
                          "  2001:db8::1-10.0.0.1 lan0\n"       // family mix
                          "  2001:db8::1-xyz lan0\n"
                          "  2001:db8::5 lan0\n}\n"),
                ElementsAre("t.conf:8: local_address_group 'g': bad address range "
                            "'2001:db8::9-2'" +
                                forms,
                            "t.conf:9: local_address_group 'g': bad address range "
                            "'2001:db8::1-2001:db8:1::2'" +
                                forms,
                            "t.conf:10: local_address_group 'g': bad address range "
                            "'2001:db8::1-10000'" +
                                forms,
                            "t.conf:11: local_address_group 'g': bad address range "
                            "'2001:db8::1-10.0.0.1'" +
                                forms,
                            "t.conf:12: local_address_group 'g': bad address range "
                            "'2001:db8::1-xyz'" +
                                forms));
    EXPECT_THAT(errors_of("virtual_server_group G { 10.0.0.1-2001:db8::1 80 }\n"),
                ElementsAre("t.conf:7: virtual_server_group 'G': bad address range "
                            "'10.0.0.1-2001:db8::1'" +
                            forms));
}

TEST(ConfigIpv6, IpDefsAddressesRoutesAndLists) {
    ParseOutcome out = parse_body(R"(ip_defs {
    address 2001:db8:1::1/64 dev wan0
    address 2001:db8:9::1/48 dev lan0
    route 2001:db8:100::/40 via 2001:db8:1::fe dev wan0
    route default via 2001:db8:1::ff dev wan0
    route default via 10.10.1.254 dev wan0
    route 2001:db8:200::/48 dev lan0
    tunnel_source 2001:db8:9::1 dev lan0
}
virtual_server 2001:db8::100 80 {
    lb_kind DR
    blacklist 2001:db8:bad::/48 [2001:db8::666] 192.0.2.0/24
    whitelist { 2001:db8::/32 }
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const Config& cfg = *out.config;
    ASSERT_EQ(cfg.ip.addresses.size(), 3u);
    EXPECT_EQ(cfg.ip.addresses[1].addr, ip("2001:db8:1::1"));
    EXPECT_EQ(cfg.ip.addresses[1].prefix, pfx("2001:db8:1::/64"));
    EXPECT_EQ(cfg.ip.addresses[2].addr, ip("2001:db8:9::1"));
    EXPECT_EQ(cfg.ip.addresses[2].prefix, pfx("2001:db8:9::/48"));
    ASSERT_EQ(cfg.ip.routes.size(), 4u);
    EXPECT_EQ(cfg.ip.routes[0].prefix, pfx("2001:db8:100::/40"));
    EXPECT_EQ(cfg.ip.routes[0].gateway, ip("2001:db8:1::fe"));
    EXPECT_EQ(cfg.ip.routes[1].prefix, pfx("::/0"));  // default with an IPv6 gateway
    EXPECT_EQ(cfg.ip.routes[2].prefix, pfx("0.0.0.0/0"));
    EXPECT_FALSE(cfg.ip.routes[3].gateway);
    ASSERT_EQ(cfg.ip.tunnel_sources.size(), 1u);
    EXPECT_EQ(cfg.ip.tunnel_sources[0].addr, ip("2001:db8:9::1"));
    const VirtualServer& vs = cfg.virtual_servers.at(0);
    EXPECT_THAT(vs.blacklist, ElementsAre(pfx("2001:db8:bad::/48"), pfx("2001:db8::666/128"),
                                          pfx("192.0.2.0/24")));
    EXPECT_THAT(vs.whitelist, ElementsAre(pfx("2001:db8::/32")));
}

TEST(ConfigIpv6, IpDefsErrors) {
    EXPECT_THAT(errors_of("ip_defs {\n  address 2001:db8::1/129 dev wan0\n"
                          "  route 2001:db8::/64 via 10.10.1.254 dev wan0\n"
                          "  address 2001:db8:1::1/64 dev wan0\n"
                          "  address 2001:db8:1::1/64 dev lan0\n}\n"
                          "virtual_server 2001:db8::100 80 { laddr_group_name lips6\n"
                          "  blacklist 2001:db8::1/64\n}\n"),
                ElementsAre("t.conf:8: address: bad prefix '2001:db8::1/129'",
                            "t.conf:9: route 2001:db8::/64 via 10.10.1.254: the gateway is not "
                            "of the prefix's address family",
                            "t.conf:14: blacklist: prefix '2001:db8::1/64' has host bits set (did "
                            "you mean 2001:db8::/64?)",
                            "t.conf:11: address 2001:db8:1::1 already defined at t.conf:10"));
}

TEST(ConfigIpv6, Fnat64IsFullNatWithIpv4LocalAddressesAndRealServers) {
    ParseOutcome out = parse_body(R"(virtual_server 2001:db8::100 80 {
    lb_kind FNAT
    laddr_group_name lips4
    real_server 10.10.2.2 8080
    real_server 10.10.2.3 8080
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const VirtualServer& vs = out.config->virtual_servers.at(0);
    EXPECT_FALSE(vs.vip.is_v4());
    EXPECT_TRUE(vs.real_servers.at(0).addr.is_v4());
}

TEST(ConfigIpv6, FamilyMixesOtherThanFnat64AreRefusedAtTheirLine) {
    // NAT, DR and TUN forward in the VIP's family.
    for (const char* kind : {"NAT", "DR", "TUN"}) {
        EXPECT_THAT(errors_of(std::string("virtual_server 2001:db8::100 80 {\n  lb_kind ") + kind +
                              "\n  real_server 10.10.2.2 80\n}\n"),
                    ElementsAre("t.conf:9: virtual_server [2001:db8::100]:80: IPv4 real servers "
                                "behind an IPv6 VIP need lb_kind FNAT (FNAT64); " +
                                std::string(kind) + " forwards in the VIP's family"))
            << kind;
    }
    // No FNAT46.
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 {\n  laddr_group_name lips6\n"
                          "  real_server 2001:db8::10 80\n}\n"),
                ElementsAre("t.conf:9: virtual_server 10.10.1.100:80: IPv6 real servers behind "
                            "an IPv4 VIP are not supported (only FNAT64 mixes families: an IPv6 "
                            "VIP with IPv4 local addresses and real servers)"));
    // Real servers of both families in one service.
    EXPECT_THAT(errors_of("virtual_server 2001:db8::100 80 {\n  lb_kind DR\n"
                          "  real_server 2001:db8::10 80\n  real_server 10.10.2.2 80\n}\n"),
                ElementsAre("t.conf:10: virtual_server [2001:db8::100]:80: real_server "
                            "10.10.2.2:80 is IPv4 but the service's real servers are IPv6 (one "
                            "family per service)"));
    // FNAT64 with IPv6 local addresses: the local address is of the real servers' family.
    EXPECT_THAT(errors_of("virtual_server 2001:db8::100 80 {\n  laddr_group_name lips6\n"
                          "  real_server 10.10.2.2 80\n}\n"),
                ElementsAre("t.conf:6: local address 2001:db8:2::100 of local_address_group "
                            "'lips6' is IPv6 but virtual_server [2001:db8::100]:80 "
                            "(laddr_group_name) forwards to IPv4 real servers: a local address "
                            "is of the real servers' family"));
    // FNAT66 with IPv4 local addresses.
    EXPECT_THAT(errors_of("virtual_server 2001:db8::100 80 {\n  laddr_group_name lips4\n"
                          "  real_server 2001:db8::10 80\n}\n"),
                ElementsAre("t.conf:6: local address 10.10.2.100 of local_address_group "
                            "'lips4' is IPv4 but virtual_server [2001:db8::100]:80 "
                            "(laddr_group_name) forwards to IPv6 real servers: a local address "
                            "is of the real servers' family"));
}

TEST(ConfigIpv6, RealServerMessagesNameIpv6InBrackets) {
    EXPECT_THAT(errors_of("virtual_server 2001:db8::100 80 {\n  lb_kind DR\n"
                          "  real_server 2001:db8::10 80\n  real_server [2001:db8::10] 80\n"
                          "  real_server 2001:db8::zz 80\n}\n"),
                ElementsAre("t.conf:10: duplicate real_server [2001:db8::10]:80 (first at "
                            "t.conf:9)",
                            "t.conf:11: real_server: bad IP address '2001:db8::zz'"));
}

}  // namespace
}  // namespace xvs::ctl

namespace xvs::ctl {
namespace {

// IPv6 firewall marks (IPVS's -f N -6): a mark's entries of either family; a mark has a
// service per family, the family keepalived's (`ip_family`, else the first real server's).
constexpr const char* kMarks = R"(fwmark_defs {
    mark 1 { 10.10.1.100 80 tcp
             2001:db8:1::100 80 tcp
             2001:db8:1::200/126 443
             2001:db8:1::300/120 }
    mark 2 { 2001:db8:1::400 }
    mark 3 { 10.10.1.101 }
}
)";  // eight lines: bodies after it start at line 15

TEST(ConfigIpv6, FwmarkEntriesOfBothFamiliesAndAServicePerFamily) {
    ParseOutcome out = parse_body(std::string(kMarks) + R"(virtual_server fwmark 1 {
    laddr_group_name lips4
    persistence_timeout 300
    real_server 10.10.2.2 0
}
virtual_server fwmark 1 {
    lb_kind DR
    persistence_timeout 300
    persistence_granularity 64
    real_server 2001:db8:2::2 0
}
virtual_server fwmark 2 {
    ip_family inet6
    laddr_group_name lips4
    real_server 10.10.2.3 0
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const Config& cfg = *out.config;
    const auto& e = cfg.fwmark.marks.at(0).entries;
    ASSERT_EQ(e.size(), 4u);
    EXPECT_EQ(e[1].dst, pfx("2001:db8:1::100/128"));
    EXPECT_EQ(e[1].proto, 6);
    EXPECT_EQ(e[2].dst, pfx("2001:db8:1::200/126"));
    EXPECT_EQ(e[2].port_first, 443);
    EXPECT_EQ(e[3].dst.len, 120);
    ASSERT_EQ(cfg.virtual_servers.size(), 3u);
    // The family is the vip's: 0.0.0.0 or ::, as lb::make_fwmark_key has it.
    EXPECT_EQ(cfg.virtual_servers[0].vip, net::InetAddr::v4(0));
    EXPECT_EQ(cfg.virtual_servers[1].vip, net::InetAddr{});
    EXPECT_EQ(cfg.virtual_servers[1].persist_prefix, 64);
    // ip_family inet6 with IPv4 real servers: FNAT64 of the mark's IPv6 packets.
    EXPECT_EQ(cfg.virtual_servers[2].vip, net::InetAddr{});
    EXPECT_TRUE(cfg.virtual_servers[2].real_servers.at(0).addr.is_v4());
}

TEST(ConfigIpv6, FwmarkFamilyErrorsAtTheirLine) {
    EXPECT_THAT(
        errors_of(std::string(kMarks) +
                  "virtual_server fwmark 1 {\n lb_kind DR\n real_server 2001:db8:2::2 0\n}\n"
                  "virtual_server fwmark 1 {\n ip_family inet6\n lb_kind DR\n}\n"
                  "virtual_server fwmark 2 {\n lb_kind DR\n real_server 10.10.2.2 0\n}\n"
                  "virtual_server fwmark 3 {\n lb_kind DR\n ip_family inet6\n}\n"
                  "virtual_server fwmark 1 {\n lb_kind DR\n ip_family inet\n"
                  " real_server 2001:db8:2::3 0\n}\n"
                  "virtual_server fwmark 2 {\n lb_kind DR\n ip_family inet6\n"
                  " real_server 10.10.2.2 0\n}\n"
                  "virtual_server 10.10.1.102 80 {\n lb_kind DR\n ip_family inet6\n}\n"
                  "virtual_server fwmark 1 {\n lb_kind DR\n ip_family ipv6\n}\n"),
        ElementsAre(
            "t.conf:43: ip_family inet6 but the virtual address 10.10.1.102 is IPv4: ip_family "
            "is for fwmark services; remove it",
            "t.conf:47: ip_family: bad value 'ipv6' (inet or inet6)",
            "t.conf:19: duplicate virtual_server fwmark 1 (IPv6) (first at t.conf:15)",
            "t.conf:23: virtual_server fwmark 2 (IPv4): mark 2 of fwmark_defs (at t.conf:12) has "
            "no IPv4 entry, so no packet would reach it: add one there, or set `ip_family "
            "inet6` (the family comes from ip_family, else the first real server)",
            "t.conf:27: virtual_server fwmark 3 (IPv6): mark 3 of fwmark_defs (at t.conf:13) has "
            "no IPv6 entry, so no packet would reach it: add one there, or set `ip_family "
            "inet` (the family comes from ip_family, else the first real server)",
            "t.conf:45: duplicate virtual_server fwmark 1 (IPv4) (first at t.conf:31)",
            "t.conf:34: virtual_server fwmark 1 (IPv4): IPv6 real servers behind an IPv4 "
            "service are not supported (only FNAT64 mixes families: an IPv6 VIP with IPv4 "
            "local addresses and real servers)",
            "t.conf:39: virtual_server fwmark 2 (IPv6): IPv4 real servers behind an IPv6 "
            "service need lb_kind FNAT (FNAT64); DR forwards in the VIP's family"));
}

// Every address of an entry becomes a VIP (ARP/NDP): at most 256, refused at the entry's line.
TEST(ConfigIpv6, FwmarkPrefixOfMoreThan256AddressesRefusedAtItsLine) {
    EXPECT_THAT(errors_of("fwmark_defs { mark 7 {\n 10.10.0.0/23 80 tcp\n"
                          " 2001:db8::/119\n 2001:db8::/120\n 10.10.1.0/24\n } }\n"),
                ElementsAre("t.conf:8: fwmark_defs mark 7: '10.10.0.0/23' stands for more than "
                            "256 addresses (/24 or longer): each becomes a VIP xvs answers "
                            "ARP/NDP for; split it or use a virtual_server per VIP",
                            "t.conf:9: fwmark_defs mark 7: '2001:db8::/119' stands for more than "
                            "256 addresses (/120 or longer): each becomes a VIP xvs answers "
                            "ARP/NDP for; split it or use a virtual_server per VIP"));
}

}  // namespace
}  // namespace xvs::ctl
