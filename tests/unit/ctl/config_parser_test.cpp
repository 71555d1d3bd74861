// Tests for src/ctl/config_parser.cpp: the DESIGN.md example, keepalived synonyms, lexing,
// includes, group expansion, warnings, and exact "file:line: message" errors.
#include "ctl/config_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <syslog.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "lb/sched/sched.h"

namespace xvs::ctl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

net::Ipv4 ip(const char* text) {
    return *net::parse_ipv4(text);
}

// The example of DESIGN.md "Configuration", with two lines commented out (metrics_listen,
// TCP_CHECK; DesignExampleVerbatimIsAccepted takes them in), so that the line numbers are
// DESIGN.md's.
constexpr const char* kDesignExample = R"(global_defs {
    log_level info
    control_socket /run/xvs/xvs.sock
    # metrics_listen 127.0.0.1:9469
}
netif_defs {
    eal_args "--no-huge -m 512 --no-pci --no-shconf"
    port wan0 { dev net_af_xdp0,iface=lb-wan }
    port lan0 { dev net_af_xdp1,iface=lb-lan }
}
worker_defs { workers 1 }
ip_defs {
    address 10.10.1.1/24 dev wan0        # director's own address, answers ARP and ping
    address 10.10.2.1/24 dev lan0
    route default via 10.10.1.254 dev wan0
}
ipvs_defs {
    timeouts { tcp 900 tcpfin 120 udp 300 }
    synproxy { mss 1452 wscale 7 sack on timestamp on defer off syn_retry 3 }
}
local_address_group lan_lips {
    10.10.2.100-10.10.2.103 lan0
}
virtual_server 10.10.1.100 80 {
    protocol TCP
    lb_algo wrr
    lb_kind FNAT
    laddr_group_name lan_lips
    syn_proxy
    toa on                      # or: proxy_protocol v2
    real_server 10.10.2.2 8080 { weight 1 } # TCP_CHECK { connect_timeout 3 } }
    real_server 10.10.2.3 8080 { weight 2 }
}
)";

// Six lines that make a virtual_server valid; test bodies start at line 7.
constexpr const char* kPrelude = R"(netif_defs {
    port wan0 { dev net_ring0 }
    port lan0 { dev net_ring1 }
}
ip_defs { address 10.10.1.1/24 dev wan0 }
local_address_group lips { 10.10.2.100-101 lan0 }
)";

ParseOutcome parse(const std::string& text) {
    return parse_config(text, "t.conf");
}
ParseOutcome parse_body(const std::string& body) {
    return parse(std::string(kPrelude) + body);
}
std::vector<std::string> errors_of(const std::string& body) {
    return parse_body(body).errors;
}

// A unique directory under TMPDIR, removed with everything in it.
class TempDir {
  public:
    TempDir() {
        static int counter = 0;
        path_ = std::filesystem::temp_directory_path() /
                ("xvs-config-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::string write(const std::string& rel, const std::string& text) const {
        auto file = path_ / rel;
        std::filesystem::create_directories(file.parent_path());
        std::ofstream(file) << text;
        return file.string();
    }
    std::string path() const { return path_.string(); }

  private:
    std::filesystem::path path_;
};

TEST(ConfigParser, DesignExampleParsesIntoModel) {
    ParseOutcome out = parse(kDesignExample);
    ASSERT_THAT(out.errors, IsEmpty());
    ASSERT_TRUE(out.config);
    const Config& cfg = *out.config;

    EXPECT_EQ(cfg.global.log_level, LogLevel::Info);
    EXPECT_EQ(cfg.global.control_socket, "/run/xvs/xvs.sock");

    EXPECT_EQ(cfg.netif.eal_args, "--no-huge -m 512 --no-pci --no-shconf");
    ASSERT_EQ(cfg.netif.ports.size(), 2u);
    EXPECT_EQ(cfg.netif.ports[0].name, "wan0");
    EXPECT_EQ(cfg.netif.ports[0].dev, "net_af_xdp0,iface=lb-wan");
    EXPECT_EQ(cfg.netif.ports[0].mtu, 1500u);
    EXPECT_EQ(cfg.netif.ports[1].name, "lan0");
    EXPECT_EQ(cfg.netif.ports[1].dev, "net_af_xdp1,iface=lb-lan");

    EXPECT_EQ(cfg.worker.workers, 1u);
    EXPECT_EQ(cfg.worker.poll_mode, PollMode::Adaptive);

    ASSERT_EQ(cfg.ip.addresses.size(), 2u);
    EXPECT_EQ(cfg.ip.addresses[0].addr, ip("10.10.1.1"));
    EXPECT_EQ(cfg.ip.addresses[0].prefix, *net::parse_ipv4_prefix("10.10.1.0/24"));
    EXPECT_EQ(cfg.ip.addresses[0].port, "wan0");
    EXPECT_EQ(cfg.ip.addresses[0].loc.line, 13u);
    EXPECT_EQ(cfg.ip.addresses[1].addr, ip("10.10.2.1"));
    EXPECT_EQ(cfg.ip.addresses[1].port, "lan0");
    ASSERT_EQ(cfg.ip.routes.size(), 1u);
    EXPECT_EQ(cfg.ip.routes[0].prefix.len, 0);
    EXPECT_EQ(cfg.ip.routes[0].gateway, ip("10.10.1.254"));
    EXPECT_EQ(cfg.ip.routes[0].port, "wan0");

    const lb::Timeouts dpvs = lb::Timeouts::dpvs_defaults();
    EXPECT_EQ(cfg.ipvs.timeouts.of(lb::TcpState::Established), 900u);
    EXPECT_EQ(cfg.ipvs.timeouts.of(lb::TcpState::FinWait), 120u);
    EXPECT_EQ(cfg.ipvs.timeouts.udp, 300u);
    EXPECT_EQ(cfg.ipvs.timeouts.of(lb::TcpState::SynSent), dpvs.of(lb::TcpState::SynSent));
    EXPECT_EQ(cfg.ipvs.timeouts.of(lb::TcpState::TimeWait), dpvs.of(lb::TcpState::TimeWait));

    EXPECT_TRUE(cfg.ipvs.synproxy_set);
    EXPECT_EQ(cfg.ipvs.synproxy.mss, 1452);
    EXPECT_EQ(cfg.ipvs.synproxy.wscale, 7);
    EXPECT_TRUE(cfg.ipvs.synproxy.sack);
    EXPECT_TRUE(cfg.ipvs.synproxy.timestamp);
    EXPECT_FALSE(cfg.ipvs.synproxy.defer_rs_syn);
    EXPECT_EQ(cfg.ipvs.synproxy.rs_syn_max_retry, 3);

    ASSERT_EQ(cfg.laddr_groups.size(), 1u);
    EXPECT_EQ(cfg.laddr_groups[0].name, "lan_lips");
    EXPECT_THAT(cfg.laddr_groups[0].addrs, ElementsAre(LocalAddress{ip("10.10.2.100"), "lan0"},
                                                       LocalAddress{ip("10.10.2.101"), "lan0"},
                                                       LocalAddress{ip("10.10.2.102"), "lan0"},
                                                       LocalAddress{ip("10.10.2.103"), "lan0"}));

    ASSERT_EQ(cfg.virtual_servers.size(), 1u);
    const VirtualServer& vs = cfg.virtual_servers[0];
    EXPECT_EQ(vs.proto, Proto::Tcp);
    EXPECT_EQ(vs.vip, ip("10.10.1.100"));
    EXPECT_EQ(vs.port, 80);
    EXPECT_EQ(vs.group, "");
    EXPECT_EQ(vs.sched, "wrr");
    EXPECT_EQ(vs.fwd, lb::FwdMode::FullNat);
    EXPECT_EQ(vs.laddr_group, "lan_lips");
    EXPECT_TRUE(vs.syn_proxy);
    EXPECT_TRUE(vs.toa);
    EXPECT_EQ(vs.proxy_protocol, ProxyProtocol::Off);
    EXPECT_EQ(vs.loc.file, "t.conf");
    EXPECT_EQ(vs.loc.line, 24u);
    ASSERT_EQ(vs.real_servers.size(), 2u);
    const RealServer& rs0 = vs.real_servers[0];
    EXPECT_EQ(rs0.addr, ip("10.10.2.2"));
    EXPECT_EQ(rs0.port, 8080);
    EXPECT_EQ(rs0.weight, 1u);
    EXPECT_EQ(vs.real_servers[1].addr, ip("10.10.2.3"));
    EXPECT_EQ(vs.real_servers[1].weight, 2u);
    EXPECT_THAT(out.warnings, IsEmpty());
    EXPECT_EQ(cfg.warnings, out.warnings);
}

// A byte that is not UTF-8 would end up in error messages and JSON replies (xvsd once aborted
// dumping one): the lexer refuses it with its line and column, and parses nothing of the file.
TEST(ConfigParser, InvalidUtf8IsRefusedWithLineAndColumn) {
    auto bad = parse_config_string("global_defs {\n    log_level info\n}\nvirtual_server 10.0.0.1 80 {\n    prot\xffocol TCP\n}\n", "x.conf");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), "x.conf:5: column 9: byte 0xFF is not valid UTF-8; the configuration must be UTF-8 text (retype the line)");
    auto nul = parse_config_string(std::string("global_defs {\n}\n") + '\0', "y.conf");
    ASSERT_FALSE(nul.ok());
    EXPECT_EQ(nul.error(), "y.conf:3: NUL byte in the configuration (binary file?)");
    auto ok = parse_config_string("global_defs {\n    log_level info   # caf\xc3\xa9\n}\n", "z.conf");
    EXPECT_TRUE(ok.ok()) << ok.error();
}

// DESIGN.md's example as written (metrics_listen and TCP_CHECK in) is accepted as it stands.
TEST(ConfigParser, DesignExampleVerbatimIsAccepted) {
    std::string text = kDesignExample;
    text.replace(text.find("# metrics_listen"), 2, "");
    text.replace(text.find("} # TCP_CHECK"), 4, "");
    ParseOutcome out = parse(text);
    ASSERT_TRUE(out.config) << ::testing::PrintToString(out.errors);
    ASSERT_TRUE(out.config->global.metrics_listen);
    EXPECT_EQ(net::to_string(*out.config->global.metrics_listen), "127.0.0.1:9469");
}

// metrics_listen: on 127.0.0.1:9469 unless set; ADDR:PORT of either family, or off; anything
// else refused at its line.
TEST(ConfigParser, MetricsListen) {
    auto listen_of = [](const std::string& body) -> std::optional<std::string> {
        ParseOutcome out = parse("global_defs {\n" + body + "}\n");
        EXPECT_TRUE(out.config) << ::testing::PrintToString(out.errors);
        if (!out.config || !out.config->global.metrics_listen) return std::nullopt;
        return net::to_string(*out.config->global.metrics_listen);
    };
    EXPECT_EQ(listen_of(""), "127.0.0.1:9469");
    EXPECT_EQ(listen_of("    metrics_listen 10.10.2.9:9100\n"), "10.10.2.9:9100");
    EXPECT_EQ(listen_of("    metrics_listen [::1]:9469\n"), "[::1]:9469");
    EXPECT_EQ(listen_of("    metrics_listen off\n"), std::nullopt);
    for (const char* bad : {"9469", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", "localhost:9469", "::1:9469"}) {
        ParseOutcome out = parse(std::string("global_defs {\n    metrics_listen ") + bad + "\n}\n");
        EXPECT_FALSE(out.config) << bad;
        EXPECT_THAT(out.errors, ElementsAre(std::string("t.conf:2: metrics_listen: '") + bad +
                                            "' is not ADDR:PORT with a port 1..65535 (e.g. "
                                            "127.0.0.1:9469 or [::1]:9469), or off"))
            << bad;
    }
}

// status_allow: loopback (127.0.0.0/8, ::1) unless set; the statements together replace it,
// on one line or in a block, either family; a bad prefix or one with host bits set is refused
// at its line with what to write instead.
TEST(ConfigParser, StatusAllow) {
    auto allow_of = [](const std::string& body) {
        ParseOutcome out = parse("global_defs {\n" + body + "}\n");
        EXPECT_TRUE(out.config) << ::testing::PrintToString(out.errors);
        std::vector<std::string> list;
        if (out.config)
            for (const auto& p : out.config->global.status_allow) list.push_back(net::to_string(p));
        return list;
    };
    EXPECT_THAT(allow_of(""), ElementsAre("127.0.0.0/8", "::1/128"));
    EXPECT_THAT(allow_of("    status_allow 10.0.0.0/8 2001:db8::/32\n"),
                ElementsAre("10.0.0.0/8", "2001:db8::/32"));
    EXPECT_THAT(allow_of("    status_allow {\n        192.0.2.7\n        127.0.0.0/8 ::1\n    }\n"
                         "    status_allow 198.51.100.0/24\n"),
                ElementsAre("192.0.2.7/32", "127.0.0.0/8", "::1/128", "198.51.100.0/24"));
    ParseOutcome bad = parse("global_defs {\n    status_allow 127.0.0.0/8\n    status_allow 10.1.2.3/8 nonsense\n}\n");
    EXPECT_FALSE(bad.config);
    EXPECT_THAT(bad.errors,
                ElementsAre("t.conf:3: status_allow: prefix '10.1.2.3/8' has host bits set (did "
                            "you mean 10.0.0.0/8?)",
                            "t.conf:3: status_allow: bad address or prefix 'nonsense' (expected "
                            "A.B.C.D[/LEN], LEN 0..32, or an IPv6 address[/LEN], LEN 0..128)"));
    ParseOutcome empty = parse("global_defs {\n    status_allow\n}\n");
    EXPECT_THAT(empty.errors, ElementsAre("t.conf:2: status_allow: expected addresses or prefixes, "
                                          "or a '{ }' block of them"));
}

TEST(ConfigParser, ResultApiReturnsConfigOrJoinedErrors) {
    auto good = parse_config_string(kDesignExample, "x.conf");
    ASSERT_TRUE(good.ok()) << good.error();
    EXPECT_EQ(good->virtual_servers.size(), 1u);

    auto bad = parse_config_string("worker_defs { workers 0 }\nfoo\n", "x.conf");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(
        bad.error(),
        "x.conf:1: workers: 0 out of range 1..16\nx.conf:2: unknown keyword 'foo' at top level");
}

TEST(ConfigParser, DefaultsWhenSectionsOmitted) {
    ParseOutcome out = parse("");
    ASSERT_TRUE(out.config);
    EXPECT_EQ(out.config->global.log_level, LogLevel::Info);
    EXPECT_EQ(out.config->worker.workers, 1u);
    EXPECT_EQ(out.config->worker.poll_mode, PollMode::Adaptive);
    EXPECT_EQ(out.config->ipvs.timeouts.of(lb::TcpState::Established),
              lb::Timeouts::dpvs_defaults().of(lb::TcpState::Established));
}

TEST(ConfigParser, KeepalivedSynonymsAndVsOptions) {
    ParseOutcome out = parse_body(R"(virtual_server 10.10.1.100 443 {
    protocol UDP
    lvs_sched rr
    lvs_method FNAT
    laddr_group_name lips
    proxy_protocol v2
    real_server 10.10.2.2 443 {
        weight 100
        uthreshold 1000
        lthreshold 750
    }
    real_server 10.10.2.3 443 {
        upper_threshold 10
        lower_threshold 5
    }
    real_server 10.10.2.4 443
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const VirtualServer& vs = out.config->virtual_servers.at(0);
    EXPECT_EQ(vs.proto, Proto::Udp);
    EXPECT_EQ(vs.sched, "rr");
    EXPECT_EQ(vs.fwd, lb::FwdMode::FullNat);
    EXPECT_EQ(vs.proxy_protocol, ProxyProtocol::V2);
    ASSERT_EQ(vs.real_servers.size(), 3u);
    EXPECT_EQ(vs.real_servers[0].weight, 100u);
    EXPECT_EQ(vs.real_servers[0].upper_threshold, 1000u);
    EXPECT_EQ(vs.real_servers[0].lower_threshold, 750u);
    EXPECT_EQ(vs.real_servers[1].upper_threshold, 10u);
    EXPECT_EQ(vs.real_servers[1].lower_threshold, 5u);
    EXPECT_EQ(vs.real_servers[2].addr, ip("10.10.2.4"));
    EXPECT_EQ(vs.real_servers[2].weight, 1u);
    EXPECT_THAT(out.warnings, IsEmpty());
}

TEST(ConfigParser, ProtocolDefaultsToTcpWithWarningAndSchedToWlc) {
    ParseOutcome out = parse_body("virtual_server 10.10.1.100 80 { laddr_group_name lips }\n");
    ASSERT_THAT(out.errors, IsEmpty());
    EXPECT_EQ(out.config->virtual_servers.at(0).proto, Proto::Tcp);
    EXPECT_EQ(out.config->virtual_servers.at(0).sched, "wlc");
    EXPECT_EQ(out.config->virtual_servers.at(0).fwd, lb::FwdMode::FullNat);
    EXPECT_THAT(out.warnings, ElementsAre("t.conf:7: protocol not set, using TCP"));
}

TEST(ConfigParser, CommentsQuotesAndOddLayout) {
    ParseOutcome out = parse(R"(! keepalived-style comment
# hash comment
global_defs {   # trailing comment
    log_level debug   ! bang comment
    control_socket "/run/xvs dir/xvs.sock"
    lvs_timeouts tcp 600
}
netif_defs
{
    eal_args "-l 0 --file-prefix \"x\" # not a comment"
    port p0 { dev net_ring0 mtu 9000 }
}
worker_defs { workers 16 poll_mode busy }
ip_defs { route 192.168.0.0/16 dev p0
          address 10.0.0.1 dev p0 }
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const Config& cfg = *out.config;
    EXPECT_EQ(cfg.global.log_level, LogLevel::Debug);
    EXPECT_EQ(cfg.global.control_socket, "/run/xvs dir/xvs.sock");
    EXPECT_EQ(cfg.ipvs.timeouts.of(lb::TcpState::Established), 600u);
    EXPECT_EQ(cfg.netif.eal_args, "-l 0 --file-prefix \"x\" # not a comment");
    ASSERT_EQ(cfg.netif.ports.size(), 1u);
    EXPECT_EQ(cfg.netif.ports[0].mtu, 9000u);
    EXPECT_EQ(cfg.worker.workers, 16u);
    EXPECT_EQ(cfg.worker.poll_mode, PollMode::Busy);
    ASSERT_EQ(cfg.ip.routes.size(), 1u);
    EXPECT_EQ(cfg.ip.routes[0].prefix, *net::parse_ipv4_prefix("192.168.0.0/16"));
    EXPECT_FALSE(cfg.ip.routes[0].gateway);
    ASSERT_EQ(cfg.ip.addresses.size(), 1u);
    EXPECT_EQ(cfg.ip.addresses[0].prefix, *net::parse_ipv4_prefix("10.0.0.1/32"));
}

TEST(ConfigParser, ControlSocketGroupResolvedOrRefusedAtItsLine) {
    // "root" is group 0 on every Linux system.
    ParseOutcome ok = parse_body("global_defs { control_socket_group root }\n");
    ASSERT_THAT(ok.errors, IsEmpty());
    EXPECT_EQ(ok.config->global.control_socket_group, "root");
    EXPECT_EQ(ok.config->global.control_socket_gid, std::optional<uint32_t>(0));
    EXPECT_FALSE(parse_body("").config->global.control_socket_gid);  // default: root only

    EXPECT_THAT(errors_of("global_defs {\n    control_socket_group no_such_group_xvs\n}\n"),
                ElementsAre("t.conf:8: control_socket_group: no group 'no_such_group_xvs' on "
                            "this system (getent group lists them)"));
    EXPECT_THAT(errors_of("global_defs { control_socket_group }\n"),
                ElementsAre("t.conf:7: control_socket_group: missing value"));
}

TEST(ConfigParser, LogFacilityAppliedOrRefusedAtItsLine) {
    ParseOutcome ok = parse_body("global_defs {\n    log_facility local3\n}\n");
    ASSERT_THAT(ok.errors, IsEmpty());
    EXPECT_EQ(ok.config->global.log_facility, std::optional<int>(LOG_LOCAL3));
    EXPECT_EQ(parse_body("global_defs { log_facility daemon }\n").config->global.log_facility,
              std::optional<int>(LOG_DAEMON));
    EXPECT_FALSE(parse_body("").config->global.log_facility);  // default: decided by xvsd's flags
    EXPECT_THAT(errors_of("global_defs {\n    log_facility kern\n}\n"),
                ElementsAre("t.conf:8: log_facility: 'kern' is not a syslog facility: use daemon, "
                            "local0..local7 (or 0..7 for local0..local7)"));
    EXPECT_THAT(errors_of("global_defs { log_facility }\n"),
                ElementsAre("t.conf:7: log_facility: missing value"));
}

TEST(ConfigParser, TimeoutsByStateNameAndLvsTimeouts) {
    ParseOutcome out = parse(R"(global_defs { lvs_timeouts tcp 7200 tcpfin 60 udp 30 }
ipvs_defs {
    timeouts {
        syn_sent 5
        syn_recv 6
        time_wait 8
        close 9
        close_wait 10
        last_ack 11
        listen 12
        synack 13
        none 14
        established 100
        fin_wait 15
        icmp 45
    }
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const lb::Timeouts& t = out.config->ipvs.timeouts;
    EXPECT_EQ(t.of(lb::TcpState::SynSent), 5u);
    EXPECT_EQ(t.of(lb::TcpState::SynRecv), 6u);
    EXPECT_EQ(t.of(lb::TcpState::TimeWait), 8u);
    EXPECT_EQ(t.of(lb::TcpState::Close), 9u);
    EXPECT_EQ(t.of(lb::TcpState::CloseWait), 10u);
    EXPECT_EQ(t.of(lb::TcpState::LastAck), 11u);
    EXPECT_EQ(t.of(lb::TcpState::Listen), 12u);
    EXPECT_EQ(t.of(lb::TcpState::SynAck), 13u);
    EXPECT_EQ(t.of(lb::TcpState::None), 14u);
    EXPECT_EQ(t.of(lb::TcpState::Established), 100u);  // later statement wins
    EXPECT_EQ(t.of(lb::TcpState::FinWait), 15u);
    EXPECT_EQ(t.udp, 30u);
    EXPECT_EQ(t.icmp, 45u);  // SNAT echo conns; unset it is DPVS's 300
    EXPECT_EQ(parse("ipvs_defs { timeouts { udp 20 } }\n").config->ipvs.timeouts.icmp, 300u);
}

TEST(ConfigParser, VirtualServerGroupExpands) {
    ParseOutcome out = parse_body(R"(virtual_server_group WEB {
    203.0.113.10 80
    203.0.113.11-12 80   203.0.113.20-203.0.113.20 8080
}
virtual_server group WEB {
    protocol TCP
    laddr_group_name lips
    real_server 10.10.2.2 80 { weight 3 }
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const auto& vss = out.config->virtual_servers;
    ASSERT_EQ(vss.size(), 4u);
    EXPECT_EQ(vss[0].vip, ip("203.0.113.10"));
    EXPECT_EQ(vss[1].vip, ip("203.0.113.11"));
    EXPECT_EQ(vss[2].vip, ip("203.0.113.12"));
    EXPECT_EQ(vss[3].vip, ip("203.0.113.20"));
    EXPECT_EQ(vss[0].port, 80);
    EXPECT_EQ(vss[3].port, 8080);
    for (const VirtualServer& vs : vss) {
        EXPECT_EQ(vs.group, "WEB");
        EXPECT_EQ(vs.loc.line, 11u);
        ASSERT_EQ(vs.real_servers.size(), 1u);
        EXPECT_EQ(vs.real_servers[0].weight, 3u);
    }
}

TEST(ConfigParser, RangesEndingAtBroadcastTerminate) {
    ParseOutcome out = parse_body(
        "local_address_group top { 255.255.255.254-255 lan0 }\n"
        "virtual_server_group T { 255.255.255.250-255 80 }\n");
    ASSERT_THAT(out.errors, IsEmpty());
    EXPECT_EQ(out.config->laddr_groups.at(1).addrs.size(), 2u);
    EXPECT_EQ(out.config->vs_groups.at(0).entries.at(0).last, ip("255.255.255.255"));
    out = parse_body(
        "virtual_server_group T { 255.255.255.250-255 80 }\n"
        "virtual_server group T { laddr_group_name lips }\n");
    ASSERT_THAT(out.errors, IsEmpty());
    EXPECT_EQ(out.config->virtual_servers.size(), 6u);
    EXPECT_EQ(out.config->virtual_servers.back().vip, ip("255.255.255.255"));
}

TEST(ConfigParser, IgnoredKeepalivedKeywordsWarnOnce) {
    ParseOutcome out = parse(R"(global_defs {
    router_id LVS_1
    notification_email {
        ops@example.org
    }
    router_id LVS_2
    vrrp_garp_interval 1
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    EXPECT_THAT(out.warnings,
                ElementsAre("t.conf:2: 'router_id' ignored: it names the host in mail alerts; "
                            "xvs sends none (keepalived setting; warned once)",
                            "t.conf:3: 'notification_email' ignored: xvs sends no mail alerts "
                            "(keepalived setting; warned once)",
                            "t.conf:7: 'vrrp_garp_interval' ignored: it tunes keepalived's VRRP, "
                            "which xvs does not run (keepalived setting; warned once)"));
}

TEST(ConfigParser, VrrpBlocksAreRefused) {
    ParseOutcome out = parse(R"(vrrp_instance VI_1 {
    state MASTER
    virtual_ipaddress { 10.0.0.1 }
}
)");
    EXPECT_THAT(out.errors, ElementsAre("t.conf:1: 'vrrp_instance' is not supported yet (xvs "
                                        "does not implement VRRP): remove it"));
}

// Checker blocks are parsed (tests/unit/ctl/health/ has the details); a keepalived checker
// xvs does not run is refused as a whole (its nested blocks skipped, no cascade of errors).
TEST(ConfigParser, CheckerBlocksAreParsedAndUnknownCheckersRefused) {
    ParseOutcome out = parse_body(R"(virtual_server 10.10.1.100 80 {
    protocol TCP
    laddr_group_name lips
    real_server 10.10.2.2 80 {
        HTTP_GET {
            url { path /healthz status_code 200 }
            connect_timeout 3
            retry 3
        }
        MISC_CHECK { misc_path "/usr/local/bin/probe 10.10.2.2" misc_timeout 5 misc_dynamic }
        BFD_CHECK { name bfd1 }
        weight 2
    }
}
)");
    EXPECT_FALSE(out.config);
    EXPECT_THAT(out.errors, ElementsAre("t.conf:17: 'BFD_CHECK' is not supported yet (xvs runs no "
                                        "BFD: use TCP_CHECK, UDP_CHECK or PING_CHECK): remove it"));
}

TEST(ConfigParser, IncludeGlobRelativeAndNested) {
    TempDir dir;
    dir.write("conf.d/20-vs.conf",
              "virtual_server 10.10.1.100 80 {\n  laddr_group_name lips\n  include rs/*.conf\n}\n");
    dir.write("conf.d/rs/a.conf", "real_server 10.10.2.2 80 { weight 5 }\n");
    dir.write("conf.d/rs/b.conf", "real_server 10.10.2.3 80 { weight 6 }\n");
    dir.write("conf.d/10-net.conf", kPrelude);
    dir.write("conf.d/notes.txt", "this is not config\n");
    std::string main = dir.write("xvs.conf", "# main\ninclude conf.d/*.conf\n");

    ParseOutcome out = parse_config_path(main);
    ASSERT_THAT(out.errors, IsEmpty());
    const auto& vss = out.config->virtual_servers;
    ASSERT_EQ(vss.size(), 1u);
    EXPECT_EQ(vss[0].loc.file, dir.path() + "/conf.d/20-vs.conf");
    EXPECT_EQ(vss[0].loc.line, 1u);
    ASSERT_EQ(vss[0].real_servers.size(), 2u);
    EXPECT_EQ(vss[0].real_servers[0].weight, 5u);
    EXPECT_EQ(vss[0].real_servers[1].weight, 6u);
    EXPECT_EQ(vss[0].real_servers[1].loc.file, dir.path() + "/conf.d/rs/b.conf");
    EXPECT_EQ(out.config->netif.ports.size(), 2u);
    EXPECT_THAT(out.warnings,
                ElementsAre(dir.path() + "/conf.d/20-vs.conf:1: protocol not set, using TCP"));

    // Errors inside an included file name that file.
    dir.write("conf.d/rs/c.conf", "\nreal_server 10.10.2.4 80 { weight x }\n");
    out = parse_config_path(main);
    EXPECT_THAT(out.errors,
                ElementsAre(dir.path() + "/conf.d/rs/c.conf:2: weight: 'x' is not a number"));
}

TEST(ConfigParser, IncludeEmptyGlobWarnsButMissingFileIsError) {
    TempDir dir;
    std::string main = dir.write("xvs.conf", "include conf.d/*.conf\ninclude nothere.conf\n");
    ParseOutcome out = parse_config_path(main);
    EXPECT_THAT(out.errors,
                ElementsAre(main + ":2: include: file not found: " + dir.path() + "/nothere.conf"));
    EXPECT_THAT(out.warnings, ElementsAre(main + ":1: include: no file matches '" + dir.path() +
                                          "/conf.d/*.conf'"));
}

TEST(ConfigParser, IncludeOnlyReadsRegularFiles) {
    TempDir dir;
    dir.write("sub/x.conf", "");
    std::string main = dir.write("xvs.conf", "include /dev/null\ninclude sub\n");
    ParseOutcome out = parse_config_path(main);
    EXPECT_THAT(
        out.errors,
        ElementsAre(main + ":1: include: cannot read /dev/null: not a regular file",
                    main + ":2: include: cannot read " + dir.path() + "/sub: is a directory"));
    EXPECT_THAT(parse_config_path(dir.path()).errors,
                ElementsAre(dir.path() + ": cannot read configuration: is a directory"));
}

TEST(ConfigParser, IncludeDepthIsLimited) {
    TempDir dir;
    std::string main = dir.write("loop.conf", "\ninclude loop.conf\n");
    ParseOutcome out = parse_config_path(main);
    EXPECT_THAT(out.errors,
                ElementsAre(main + ":2: include: nesting deeper than 8 levels (include loop?)"));

    // Exactly 8 nested levels are fine.
    for (int i = 1; i <= 8; ++i)
        dir.write("l" + std::to_string(i) + ".conf",
                  i < 8 ? "include l" + std::to_string(i + 1) + ".conf\n"
                        : "worker_defs { workers 3 }\n");
    std::string top = dir.write("top.conf", "include l1.conf\n");
    out = parse_config_path(top);
    ASSERT_THAT(out.errors, IsEmpty());
    EXPECT_EQ(out.config->worker.workers, 3u);
}

TEST(ConfigParser, UnreadableMainFile) {
    ParseOutcome out = parse_config_path("/nonexistent/xvs.conf");
    EXPECT_THAT(
        out.errors,
        ElementsAre("/nonexistent/xvs.conf: cannot read configuration: No such file or directory"));
    EXPECT_FALSE(out.config);
}

// ---- bad configurations: exact messages -------------------------------------------------

TEST(ConfigParser, SynProxyDpvsNamesAndDefaults) {
    ParseOutcome out = parse_body("ipvs_defs {\n"
                                  "  synproxy {\n"
                                  "    synack_options {\n"
                                  "      mss 1400\n"
                                  "      ttl 50\n"
                                  "      sack off\n"
                                  "      wscale off\n"
                                  "      timestamp\n"
                                  "    }\n"
                                  "    defer_rs_syn\n"
                                  "    rs_syn_max_retry 5\n"
                                  "    max_ack_saved 4\n"
                                  "    ack_storm_thresh 20\n"
                                  "  }\n"
                                  "}\n");
    ASSERT_THAT(out.errors, IsEmpty());
    const lb::SynProxyConf& c = out.config->ipvs.synproxy;
    EXPECT_EQ(c.mss, 1400);
    EXPECT_EQ(c.ttl, 50);
    EXPECT_FALSE(c.sack);
    EXPECT_EQ(c.wscale, lb::kSynProxyNoWscale);
    EXPECT_TRUE(c.timestamp);
    EXPECT_TRUE(c.defer_rs_syn);
    EXPECT_EQ(c.rs_syn_max_retry, 5);
    EXPECT_EQ(c.max_ack_saved, 4);
    EXPECT_EQ(c.ack_storm_thresh, 20);
    // Omitted: DPVS's defaults.
    ParseOutcome plain = parse_body("");
    ASSERT_TRUE(plain.config);
    EXPECT_EQ(plain.config->ipvs.synproxy, lb::SynProxyConf{});
}

TEST(ConfigParserErrors, SynProxyBadValues) {
    EXPECT_THAT(errors_of("ipvs_defs { synproxy {\n mss 100\n wscale 15\n ttl 0\n"
                          " max_ack_saved 9\n bogus 1\n } }\n"),
                ElementsAre("t.conf:8: mss: 100 out of range 536..65535",
                            "t.conf:9: wscale: 15 out of range 0..14",
                            "t.conf:10: ttl: 0 out of range 1..255",
                            "t.conf:11: max_ack_saved: 9 out of range 1..8",
                            "t.conf:12: unknown keyword 'bogus' in synproxy"));
}

TEST(ConfigParserErrors, UnknownKeywordNamesItsBlock) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "    frobnicate 1\n}\n"),
                ElementsAre("t.conf:8: unknown keyword 'frobnicate' in virtual_server"));
    EXPECT_THAT(errors_of("global_defs {\n  nonsense yes\n}\nbogus { a b }\n"),
                ElementsAre("t.conf:8: unknown keyword 'nonsense' in global_defs",
                            "t.conf:10: unknown keyword 'bogus' at top level"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  real_server 10.10.2.2 80 { wieght 2 }\n}\n"),
                ElementsAre("t.conf:8: unknown keyword 'wieght' in real_server"));
}

TEST(ConfigParserErrors, MissingValue) {
    // A value on the next line does not belong to the keyword (keepalived is line based).
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "    lb_algo\n    wrr\n}\n"),
                ElementsAre("t.conf:8: lb_algo: missing value",
                            "t.conf:9: unknown keyword 'wrr' in virtual_server"));
    EXPECT_THAT(errors_of("worker_defs { workers }\n"),
                ElementsAre("t.conf:7: workers: missing value"));
}

TEST(ConfigParserErrors, BadAddresses) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  real_server 10.10.2.256 80\n}\n"),
                ElementsAre("t.conf:8: real_server: bad IP address '10.10.2.256'"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1 80 { laddr_group_name lips }\n"),
                ElementsAre("t.conf:7: virtual_server: bad IP address '10.10.1'"));
    EXPECT_THAT(errors_of("ip_defs {\n  address 10.1.1.1/33 dev wan0\n  route 10.2.0.0/x dev wan0\n"
                          "  route default via 10.1.1.300 dev wan0\n}\n"),
                ElementsAre("t.conf:8: address: bad prefix '10.1.1.1/33'",
                            "t.conf:9: route: bad prefix '10.2.0.0/x'",
                            "t.conf:10: via: bad IP address '10.1.1.300'"));
}

TEST(ConfigParserErrors, DuplicateAddressesAndRoutes) {
    EXPECT_THAT(errors_of("ip_defs {\n  address 10.10.1.1/16 dev wan0\n"
                          "  route 10.20.0.0/16 via 10.10.1.254 dev wan0\n"
                          "  route 10.20.0.0/16 via 10.10.1.253 dev wan0\n}\n"),
                ElementsAre("t.conf:8: address 10.10.1.1 already defined at t.conf:5",
                            "t.conf:10: route 10.20.0.0/16 already defined at t.conf:9"));
}

TEST(ConfigParserErrors, BadPorts) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 65536 { laddr_group_name lips }\n"
                          "virtual_server 10.10.1.101 http { laddr_group_name lips }\n"),
                ElementsAre("t.conf:7: virtual_server: bad port '65536' (0..65535)",
                            "t.conf:8: virtual_server: bad port 'http' (0..65535)"));
}

// Port 0 means "any port" only for persistent services (ipvsadm).
TEST(ConfigParserErrors, PortZeroNeedsPersistence) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 0 { laddr_group_name lips }\n"),
                ElementsAre("t.conf:7: virtual_server 10.10.1.100:0: port 0 (all ports) needs "
                            "persistence_timeout, as ipvsadm's: give the service's port or make "
                            "it persistent"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 0 { laddr_group_name lips "
                          "persistence_timeout 600 }\n"),
                IsEmpty());
}

TEST(ConfigParser, Persistence) {
    ParseOutcome out = parse(std::string(kPrelude) +
                             "virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                             "  persistence_timeout\n  persistence_granularity 255.255.255.0\n}\n"
                             "virtual_server 10.10.1.100 81 { laddr_group_name lips\n"
                             "  persistence_timeout 30\n}\n"
                             "ipvs_defs { expire_quiescent_template on }\n");
    ASSERT_TRUE(out.config) << testing::PrintToString(out.errors);
    const auto& v = out.config->virtual_servers;
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].persistence_timeout, 360u);  // no value: ipvsadm's default
    EXPECT_EQ(v[0].persist_prefix, 24u);
    EXPECT_EQ(v[1].persistence_timeout, 30u);
    EXPECT_EQ(v[1].persist_prefix, 255u);  // the whole address
    EXPECT_TRUE(out.config->ipvs.expire_quiescent_template);
}

// keepalived persistence_engine sip: a UDP persistent service; without persistence_timeout
// refused at its line, on TCP refused by the service check, any other engine unknown.
TEST(ConfigParser, PersistenceEngineSip) {
    ParseOutcome out = parse(std::string(kPrelude) +
                             "virtual_server 10.10.1.100 5060 { protocol UDP laddr_group_name lips\n"
                             "  persistence_timeout 60\n  persistence_engine sip\n}\n");
    ASSERT_TRUE(out.config) << testing::PrintToString(out.errors);
    EXPECT_TRUE(out.config->virtual_servers.at(0).pe_sip);
    out = parse(std::string(kPrelude) +
                "virtual_server 10.10.1.100 5060 { protocol UDP laddr_group_name lips\n"
                "  persistence_engine sip\n}\n");
    ASSERT_EQ(out.errors.size(), 1u);
    EXPECT_THAT(out.errors[0], testing::HasSubstr("persistence_engine sip needs persistence_timeout"));
    out = parse(std::string(kPrelude) +
                "virtual_server 10.10.1.100 5060 { protocol UDP laddr_group_name lips\n"
                "  persistence_timeout 60\n  persistence_engine h323\n}\n");
    ASSERT_EQ(out.errors.size(), 1u);
    EXPECT_THAT(out.errors[0], testing::HasSubstr("persistence_engine: bad value 'h323' (sip)"));
}

TEST(ConfigParser, FwmarkDefsAndFwmarkServices) {
    ParseOutcome out =
        parse(std::string(kPrelude) +
              "fwmark_defs {\n  mark 1 {\n    10.10.1.100 80 tcp\n"
              "    10.10.1.100 443\n    10.10.1.104/30 8000-8099 udp\n  }\n}\n"
              "virtual_server fwmark 1 { laddr_group_name lips\n"
              "  persistence_timeout 300\n  real_server 10.10.2.2 0 { weight 1 }\n}\n");
    ASSERT_TRUE(out.config) << testing::PrintToString(out.errors);
    const auto& marks = out.config->fwmark.marks;
    ASSERT_EQ(marks.size(), 1u);
    EXPECT_EQ(marks[0].mark, 1u);
    ASSERT_EQ(marks[0].entries.size(), 3u);
    EXPECT_EQ(marks[0].entries[0].proto, 6);
    EXPECT_EQ(marks[0].entries[0].port_first, 80);
    EXPECT_EQ(marks[0].entries[0].port_last, 80);
    EXPECT_EQ(marks[0].entries[1].proto, 0);
    EXPECT_EQ(marks[0].entries[2].dst.len, 30);
    EXPECT_EQ(marks[0].entries[2].port_first, 8000);
    EXPECT_EQ(marks[0].entries[2].port_last, 8099);
    EXPECT_EQ(marks[0].entries[2].proto, 17);
    ASSERT_EQ(out.config->virtual_servers.size(), 1u);
    EXPECT_EQ(out.config->virtual_servers[0].fwmark, 1u);
    EXPECT_EQ(out.config->virtual_servers[0].persistence_timeout, 300u);
}

TEST(ConfigParserErrors, NumbersOutOfRange) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  real_server 10.10.2.2 80 { weight 65536 }\n"
                          "  real_server 10.10.2.3 80 { weight -1 }\n"
                          "  conn_rate_limit 4294967296\n}\n"
                          "netif_defs { port x { dev y mtu 67 } }\n"),
                ElementsAre("t.conf:8: weight: 65536 out of range 0..65535",
                            "t.conf:9: weight: '-1' is not a number",
                            "t.conf:10: conn_rate_limit: 4294967296 out of range 0..4294967295",
                            "t.conf:12: mtu: 67 out of range 68..9216"));
}

TEST(ConfigParserErrors, WorkersOutOfRange) {
    EXPECT_THAT(errors_of("worker_defs { workers 17 }\n"),
                ElementsAre("t.conf:7: workers: 17 out of range 1..16"));
    EXPECT_THAT(errors_of("worker_defs { workers 99999999999999999999999 poll_mode lazy }\n"),
                ElementsAre("t.conf:7: workers: 99999999999999999999999 out of range 1..16",
                            "t.conf:7: poll_mode: bad value 'lazy' (busy|adaptive)"));
}

TEST(ConfigParserErrors, UnbalancedBraces) {
    EXPECT_THAT(errors_of("worker_defs { workers 2 }\n}\n"),
                ElementsAre("t.conf:8: unexpected '}'"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  real_server 10.10.2.2 80 {\n    weight 1\n"),
                ElementsAre("t.conf:8: real_server: missing '}' at end of file",
                            "t.conf:7: virtual_server: missing '}' at end of file"));
    EXPECT_THAT(errors_of("global_defs log_level info\n"),
                ElementsAre("t.conf:7: global_defs: expected '{'"));
    EXPECT_THAT(errors_of("{ x }\n"), ElementsAre("t.conf:7: unexpected '{'"));
}

TEST(ConfigParserErrors, UnterminatedString) {
    EXPECT_THAT(
        errors_of("netif_defs { eal_args \"--no-huge\n}\n"),
        ElementsAre("t.conf:7: unterminated quoted string", "t.conf:7: eal_args: missing value"));
}

TEST(ConfigParserErrors, UnknownPortReferences) {
    EXPECT_THAT(errors_of("ip_defs {\n  address 10.9.0.1/24 dev wan9\n  route default via "
                          "10.9.0.254 dev lan9\n}\n"
                          "local_address_group g2 { 10.10.3.1 lan7 }\n"),
                ElementsAre("t.conf:8: address: unknown port 'wan9' (not defined in netif_defs)",
                            "t.conf:9: route: unknown port 'lan9' (not defined in netif_defs)",
                            "t.conf:11: local_address_group 'g2': unknown port 'lan7' (not defined "
                            "in netif_defs)"));
    EXPECT_THAT(errors_of("ip_defs { address 10.9.0.1/24 wan0 }\n"),
                ElementsAre("t.conf:7: address: unexpected 'wan0'",
                            "t.conf:7: address: missing 'dev PORT'"));
}

TEST(ConfigParserErrors, LocalAddressOverlaps) {
    EXPECT_THAT(
        errors_of("local_address_group other {\n  10.10.2.101-102 lan0\n"
                  "  10.10.1.100 lan0\n  10.10.1.1 wan0\n}\n"
                  "virtual_server 10.10.1.100 80 { laddr_group_name lips }\n"),
        ElementsAre("t.conf:8: local address 10.10.2.101 is already in local_address_group 'lips'",
                    "t.conf:9: local address 10.10.1.100 is also a virtual_server address",
                    "t.conf:10: local address 10.10.1.1 is also a director address (ip_defs)"));
}

TEST(ConfigParserErrors, BadLocalAddressRanges) {
    EXPECT_THAT(
        errors_of("local_address_group g {\n  10.10.3.1-10.10.4.2 lan0\n  10.10.3.9-3 lan0\n"
                  "  10.10.3.10\n}\n"),
        ElementsAre("t.conf:8: local_address_group 'g': bad address range '10.10.3.1-10.10.4.2' "
                    "(A.B.C.D or A.B.C.D-E within one /24, or an IPv6 X::Y or X::Y-Z within its "
                    "last 16-bit group, Z hex)",
                    "t.conf:9: local_address_group 'g': bad address range '10.10.3.9-3' "
                    "(A.B.C.D or A.B.C.D-E within one /24, or an IPv6 X::Y or X::Y-Z within its "
                    "last 16-bit group, Z hex)",
                    "t.conf:10: local_address_group 'g': missing port name after '10.10.3.10'",
                    "t.conf:7: local_address_group 'g': no address"));
}

TEST(ConfigParserErrors, DuplicateVirtualAndRealServers) {
    EXPECT_THAT(
        errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                  "  real_server 10.10.2.2 80\n  real_server 10.10.2.2 80 { weight 2 }\n}\n"
                  "virtual_server 10.10.1.100 80 { laddr_group_name lips }\n"
                  "virtual_server 10.10.1.100 80 { protocol UDP laddr_group_name lips }\n"),
        ElementsAre("t.conf:9: duplicate real_server 10.10.2.2:80 (first at t.conf:8)",
                    "t.conf:11: duplicate virtual_server TCP 10.10.1.100:80 (first at t.conf:7)"));
}

TEST(ConfigParserErrors, DuplicateAfterGroupExpansion) {
    EXPECT_THAT(
        errors_of("virtual_server_group G { 10.10.1.99-101 80 }\n"
                  "virtual_server group G { laddr_group_name lips }\n"
                  "virtual_server 10.10.1.100 80 { laddr_group_name lips }\n"),
        ElementsAre("t.conf:9: duplicate virtual_server TCP 10.10.1.100:80 (first at t.conf:8)"));
}

TEST(ConfigParserErrors, UnknownGroups) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name nope }\n"
                          "virtual_server group NOPE { laddr_group_name lips }\n"),
                ElementsAre("t.conf:7: laddr_group_name: unknown local_address_group 'nope'",
                            "t.conf:8: virtual_server: unknown virtual_server_group 'NOPE'"));
}

TEST(ConfigParserErrors, FullNatNeedsLaddrGroup) {
    EXPECT_THAT(
        errors_of("virtual_server 10.10.1.100 80 { lb_kind FNAT }\n"),
        ElementsAre(
            "t.conf:7: virtual_server: laddr_group_name missing (required for lb_kind FNAT)"));
}

TEST(ConfigParserErrors, IncludeNotFound) {
    EXPECT_THAT(errors_of("include /nonexistent-xvs-dir/x.conf\ninclude\n"),
                ElementsAre("t.conf:7: include: file not found: /nonexistent-xvs-dir/x.conf",
                            "t.conf:8: include: missing file pattern"));
}

TEST(ConfigParserErrors, ToaAndProxyProtocolConflict) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  toa on\n  proxy_protocol v1\n}\n"),
                ElementsAre("t.conf:9: toa on cannot be combined with proxy_protocol v1"));
    // toa off with proxy_protocol is fine.
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  toa off\n  proxy_protocol v2\n}\n"),
                IsEmpty());
}

TEST(ConfigParserErrors, Schedulers) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  lb_algo lc\n  lvs_sched mh\n  lb_algo fastest\n}\n"),
                ElementsAre("t.conf:10: lb_algo: unknown scheduler 'fastest'"));
    for (const char* name : {"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq",
                             "fo", "ovf", "mh", "twos", "conhash"}) {
        EXPECT_THAT(errors_of(std::string("virtual_server 10.10.1.100 80 { laddr_group_name "
                                          "lips\n  lb_algo ") +
                              name + "\n}\n"),
                    IsEmpty())
            << name;
    }
}

TEST(ConfigParserErrors, SchedulerFlagsMustFitTheScheduler) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  sh-port\n  lb_algo rr\n  mh-fallback\n  flag-1\n}\n"),
                ElementsAre("t.conf:8: 'sh-port' does not apply to lb_algo rr (sh-* need lb_algo "
                            "sh, mh-* need lb_algo mh)",
                            "t.conf:10: 'mh-fallback' does not apply to lb_algo rr (sh-* need "
                            "lb_algo sh, mh-* need lb_algo mh)",
                            "t.conf:11: 'flag-1' does not apply to lb_algo rr (sh-* need lb_algo "
                            "sh, mh-* need lb_algo mh)"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  lb_algo sh\n  mh-port\n  flag-3\n}\n"),
                ElementsAre("t.conf:9: 'mh-port' does not apply to lb_algo sh (sh-* need lb_algo "
                            "sh, mh-* need lb_algo mh)",
                            "t.conf:10: 'flag-3' does not apply to lb_algo sh (sh-* need lb_algo "
                            "sh, mh-* need lb_algo mh)"));
}

TEST(ConfigParserErrors, MhTableSizeMustBeAPrimeForMh) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  lb_algo mh\n  mh_table_size 65536\n}\n"),
                ElementsAre("t.conf:9: mh_table_size 65536 is not a prime (Maglev needs one: e.g. "
                            "251, 4093, 65537, 131071)"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  lb_algo wlc\n  mh_table_size 251\n}\n"),
                ElementsAre("t.conf:9: mh_table_size applies to lb_algo mh only (lb_algo is wlc)"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  lb_algo mh\n  mh_table_size 1\n}\n"),
                ElementsAre("t.conf:9: mh_table_size: 1 out of range 2..16777216"));
}

// DPVS's `hash_target sip|qid` and xvs's quic_cid_len: qid is for UDP conhash services, the
// length only with qid; each refusal at its line.
TEST(ConfigParserErrors, HashTargetQidOnlyForUdpConhash) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 443 { laddr_group_name lips\n"
                          "  protocol TCP\n  lb_algo conhash\n  hash_target qid\n}\n"),
                ElementsAre("t.conf:10: hash_target qid (QUIC connection ID) needs protocol UDP: "
                            "add `protocol UDP` or use hash_target sip"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 443 { laddr_group_name lips\n"
                          "  protocol UDP\n  lb_algo wlc\n  hash_target qid\n}\n"),
                ElementsAre("t.conf:10: hash_target applies to lb_algo conhash only (lb_algo is "
                            "wlc)"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 443 { laddr_group_name lips\n"
                          "  protocol UDP\n  lb_algo conhash\n  quic_cid_len 8\n}\n"),
                ElementsAre("t.conf:10: quic_cid_len is the QUIC connection-ID length for "
                            "hash_target qid: add `hash_target qid` or remove it"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 443 { laddr_group_name lips\n"
                          "  protocol UDP\n  lb_algo conhash\n  hash_target qid\n"
                          "  quic_cid_len 21\n}\n"),
                ElementsAre("t.conf:11: quic_cid_len: 21 out of range 1..20"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 443 { laddr_group_name lips\n"
                          "  protocol UDP\n  lb_algo conhash\n  hash_target cid\n}\n"),
                ElementsAre(testing::HasSubstr("t.conf:10: hash_target")));
}

TEST(ConfigParserErrors, ForwardingMethods) {
    EXPECT_THAT(
        errors_of("virtual_server 10.10.1.100 80 { lb_kind DR }\n"
                  "virtual_server 10.10.1.101 80 { lvs_method NAT }\n"
                  "virtual_server 10.10.1.102 80 { lb_kind BRIDGE }\n"
                  "virtual_server 10.10.1.103 80 { lb_kind TUN type gre }\n"
                  "virtual_server 10.10.1.104 80 { lb_kind TUN type gue }\n"
                  "virtual_server 10.10.1.105 80 { lb_kind DR port 80 }\n"
                  "virtual_server 10.10.1.106 80 { lb_kind TUN port 6080 }\n"
                  "virtual_server 10.10.1.107 80 { lvs_method TUN type gue port 6080 csum }\n"),
        ElementsAre(
            "t.conf:9: lb_kind: bad value 'BRIDGE' (FNAT|NAT|DR|TUN|SNAT)",
            "t.conf:9: virtual_server: laddr_group_name missing (required for lb_kind FNAT)",
            "t.conf:10: lb_kind TUN type gre is not supported: use type ipip or gue",
            "t.conf:11: lb_kind TUN type gue needs a port (keepalived: `port 6080`)",
            "t.conf:12: lb_kind DR: unexpected 'port' (type and port are for TUN)",
            "t.conf:12: lb_kind DR: unexpected '80' (type and port are for TUN)",
            "t.conf:13: lb_kind TUN: port is only for type gue",
            "t.conf:14: lvs_method TUN csum is not supported: xvs sends GUE with UDP checksum 0; "
            "remove it"));
}

TEST(ConfigParser, ForwardingMethodsAndTunnelType) {
    ParseOutcome out = parse_body(
        "virtual_server 10.10.1.100 80 { lb_kind NAT }\n"
        "virtual_server 10.10.1.101 80 { lvs_method dr }\n"
        "virtual_server 10.10.1.102 80 { lb_kind TUN }\n"
        "virtual_server 10.10.1.103 80 { lvs_method TUN type gue port 6080 }\n");
    ASSERT_TRUE(out.config) << ::testing::PrintToString(out.errors);
    const auto& v = out.config->virtual_servers;
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(v[0].fwd, lb::FwdMode::Nat);
    EXPECT_EQ(v[1].fwd, lb::FwdMode::Dr);
    EXPECT_EQ(v[2].fwd, lb::FwdMode::Tun);
    EXPECT_EQ(v[2].tun_type, lb::TunType::Ipip);
    EXPECT_EQ(v[3].tun_type, lb::TunType::Gue);
    EXPECT_EQ(v[3].tun_port, 6080);
}

// xvs's `nat_tunnel` (issue 20) turns lb_kind NAT into NatTun, before or after it.
TEST(ConfigParser, NatTunnel) {
    ParseOutcome out = parse_body(
        "virtual_server 10.10.1.100 53 { lb_kind NAT\n nat_tunnel ipip\n laddr_group_name lips }\n"
        "virtual_server 10.10.1.101 53 { nat_tunnel gue port 6080\n lb_kind NAT\n"
        " laddr_group_name lips }\n");
    ASSERT_TRUE(out.config) << ::testing::PrintToString(out.errors);
    const auto& v = out.config->virtual_servers;
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].fwd, lb::FwdMode::NatTun);
    EXPECT_EQ(v[0].tun_type, lb::TunType::Ipip);
    EXPECT_EQ(v[1].fwd, lb::FwdMode::NatTun);
    EXPECT_EQ(v[1].tun_type, lb::TunType::Gue);
    EXPECT_EQ(v[1].tun_port, 6080);
}

TEST(ConfigParserErrors, NatTunnel) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 53 { lb_kind DR\n nat_tunnel ipip }\n"
                          "virtual_server 10.10.1.101 53 { lb_kind NAT\n nat_tunnel gue }\n"
                          "virtual_server 10.10.1.102 53 { lb_kind NAT\n nat_tunnel ipip port 1 }\n"
                          "virtual_server 10.10.1.103 53 { lb_kind NAT\n nat_tunnel gre }\n"),
                ElementsAre("t.conf:8: nat_tunnel needs lb_kind NAT (it carries NAT over a "
                            "tunnel; this virtual server has lb_kind DR)",
                            "t.conf:10: nat_tunnel gue needs a port (`nat_tunnel gue port 6080`)",
                            "t.conf:12: nat_tunnel: port is only for gue",
                            "t.conf:14: nat_tunnel: bad value 'gre' (ipip|gue)"));
}

TEST(ConfigParserErrors, FwmarkNeedsItsMark) {
    EXPECT_THAT(errors_of("virtual_server fwmark 5 { laddr_group_name lips }\n"
                          "virtual_server_group F { fwmark 6 }\n"
                          "fwmark_defs { mark 7 { 10.10.1.100 80 sctp\n 10.10.1.x } }\n"),
                ElementsAre("t.conf:8: 'fwmark' is not supported yet (a group of marks: write "
                            "one `virtual_server fwmark N` per mark, or put the addresses into "
                            "one mark of fwmark_defs): remove it",
                            "t.conf:9: fwmark_defs mark 7: unexpected 'sctp' (an entry is "
                            "VIP[/LEN] [PORT|PORT-PORT] [tcp|udp])",
                            "t.conf:10: fwmark_defs mark 7: bad address '10.10.1.x' (VIP or "
                            "VIP/LEN)",
                            "t.conf:9: fwmark_defs mark 7: no entry",
                            "t.conf:7: virtual_server fwmark 5: no `mark 5` in fwmark_defs (xvs "
                            "marks packets itself: define which VIPs and ports carry the mark "
                            "there)"));
}

TEST(ConfigParserErrors, NoNetifPortForVirtualServer) {
    ParseOutcome out = parse("\nvirtual_server 10.0.0.1 80 { lb_kind FNAT }\n");
    EXPECT_THAT(
        out.errors,
        ElementsAre(
            "t.conf:2: virtual_server: laddr_group_name missing (required for lb_kind FNAT)",
            "t.conf:2: no port defined in netif_defs"));
    EXPECT_FALSE(out.config);
}

TEST(ConfigParserErrors, ProtocolAndToggles) {
    EXPECT_THAT(
        errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                  "  protocol SCTP\n  protocol ICMP\n  toa yes\n  proxy_protocol v3\n"
                  "  persistence_granularity 255.255.255.0\n}\n"),
        ElementsAre(
            "t.conf:8: protocol SCTP not supported",
            "t.conf:9: protocol ICMP is only for SNAT match services (`virtual_server match NAME`)",
            "t.conf:10: toa: bad value 'yes' (on|off)",
            "t.conf:11: proxy_protocol: bad value 'v3' (v1|v2|off)",
            "t.conf:12: persistence_granularity without persistence_timeout has "
            "no effect: add persistence_timeout or remove it"));
}

TEST(ConfigParserErrors, DuplicateDefinitions) {
    EXPECT_THAT(
        errors_of(
            "netif_defs { port wan0 { dev net_ring5 } port p9 { mtu 1500 } }\n"
            "local_address_group lips { 10.10.2.200 lan0 }\n"
            "virtual_server_group G { 10.0.0.1 80 }\nvirtual_server_group G { 10.0.0.2 80 }\n"),
        ElementsAre("t.conf:7: port 'wan0' already defined at t.conf:2",
                    "t.conf:7: port 'p9': dev missing",
                    "t.conf:8: local_address_group 'lips' already defined at t.conf:6",
                    "t.conf:10: virtual_server_group 'G' already defined at t.conf:9"));
}

TEST(ConfigParserErrors, ManyErrorsCollectedInOneRun) {
    ParseOutcome out = parse(R"(global_defs {
    log_level loud
}
worker_defs { workers 0 }
netif_defs { port p0 { dev net_ring0 } }
virtual_server 10.0.0.1 80 {
    lb_algo fastest
    laddr_group_name missing
    real_server 10.0.0.300 80
    real_server 10.0.1.1 80 { weight 1000000 }
}
}
)");
    EXPECT_THAT(
        out.errors,
        ElementsAre("t.conf:2: log_level: bad value 'loud' (debug|info|warning|error)",
                    "t.conf:4: workers: 0 out of range 1..16",
                    "t.conf:7: lb_algo: unknown scheduler 'fastest'",
                    "t.conf:9: real_server: bad IP address '10.0.0.300'",
                    "t.conf:10: weight: 1000000 out of range 0..65535", "t.conf:12: unexpected '}'",
                    "t.conf:8: laddr_group_name: unknown local_address_group 'missing'"));
    EXPECT_FALSE(out.config);
}

TEST(ConfigParser, SchedulerFlagsTableSizeAndOps) {
    ParseOutcome out = parse_body(R"(virtual_server 10.10.1.100 53 { laddr_group_name lips
  protocol UDP
  lb_algo mh
  mh-port
  flag-1
  mh_table_size 251
  ops
}
virtual_server 10.10.1.100 80 { laddr_group_name lips
  lb_algo sh
  sh-fallback
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    ASSERT_TRUE(out.config);
    const auto& vss = out.config->virtual_servers;
    ASSERT_EQ(vss.size(), 2u);
    EXPECT_EQ(vss[0].sched, "mh");
    EXPECT_EQ(vss[0].sched_flags, lb::kSchedFlagFallback | lb::kSchedFlagPort);
    EXPECT_EQ(vss[0].mh_table_size, 251u);
    EXPECT_TRUE(vss[0].ops);
    EXPECT_EQ(vss[1].sched_flags, lb::kSchedFlagFallback);
    EXPECT_EQ(vss[1].mh_table_size, 0u);
    EXPECT_FALSE(vss[1].ops);
}

TEST(ConfigParser, HashTargetQidWithConnectionIdLength) {
    ParseOutcome out = parse_body(R"(virtual_server 10.10.1.100 443 { laddr_group_name lips
  protocol UDP
  lb_algo conhash
  hash_target qid
  quic_cid_len 8
}
virtual_server 10.10.1.100 444 { laddr_group_name lips
  protocol UDP
  lb_algo conhash
  hash_target sip
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    ASSERT_TRUE(out.config);
    const auto& vss = out.config->virtual_servers;
    ASSERT_EQ(vss.size(), 2u);
    EXPECT_TRUE(vss[0].hash_qid);
    EXPECT_EQ(vss[0].quic_cid_len, 8);
    EXPECT_FALSE(vss[1].hash_qid);
    EXPECT_EQ(vss[1].quic_cid_len, 0);
}

TEST(ConfigParser, UoaPerUdpServiceAndMaxTrail) {
    ParseOutcome out = parse_body(R"(ipvs_defs { uoa_max_trail 5 }
virtual_server 10.10.1.100 53 { laddr_group_name lips
  protocol UDP
  uoa opp
}
virtual_server 10.10.1.100 54 { laddr_group_name lips
  protocol UDP
  uoa ipo
}
virtual_server 10.10.1.100 55 { laddr_group_name lips
  protocol UDP
  uoa ipo
  uoa off
  proxy_protocol v2
}
virtual_server 10.10.1.100 56 { laddr_group_name lips
  protocol UDP
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    ASSERT_TRUE(out.config);
    const auto& vss = out.config->virtual_servers;
    ASSERT_EQ(vss.size(), 4u);
    EXPECT_EQ(vss[0].uoa, Uoa::Opp);
    EXPECT_EQ(vss[1].uoa, Uoa::Ipo);
    EXPECT_EQ(vss[2].uoa, Uoa::Off);  // the later statement wins
    EXPECT_EQ(vss[3].uoa, Uoa::Off);  // off unless asked for
    EXPECT_EQ(out.config->ipvs.uoa_max_trail, 5u);
    EXPECT_EQ(parse("").config->ipvs.uoa_max_trail, 3u);  // DPVS's default
    EXPECT_EQ(parse("ipvs_defs { uoa_max_trail 0 }\n").config->ipvs.uoa_max_trail, 0u);
}

TEST(ConfigParser, ExpireNodestConnIsASwitchOffByDefault) {
    EXPECT_FALSE(parse("").config->ipvs.expire_nodest_conn);  // IPVS's default
    EXPECT_TRUE(parse("ipvs_defs { expire_nodest_conn }\n").config->ipvs.expire_nodest_conn);
    EXPECT_TRUE(parse("ipvs_defs { expire_nodest_conn on }\n").config->ipvs.expire_nodest_conn);
    EXPECT_FALSE(parse("ipvs_defs { expire_nodest_conn off }\n").config->ipvs.expire_nodest_conn);
}

TEST(ConfigParser, RescheduleRefusedIsASwitchOnByDefault) {
    EXPECT_TRUE(parse("").config->ipvs.reschedule_refused);
    EXPECT_FALSE(parse("ipvs_defs { reschedule_refused off }\n").config->ipvs.reschedule_refused);
    EXPECT_TRUE(parse("ipvs_defs { reschedule_refused on }\n").config->ipvs.reschedule_refused);
    EXPECT_THAT(errors_of("ipvs_defs { reschedule_refused maybe }\n"),
                ElementsAre("t.conf:7: unknown keyword 'maybe' in ipvs_defs"));  // a bare switch is on
}

TEST(ConfigParserErrors, UoaNeedsUdpAndExcludesProxyProtocol) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  protocol TCP\n  uoa opp\n}\n"),
                ElementsAre("t.conf:9: uoa opp needs protocol UDP (TCP clients get toa or "
                            "proxy_protocol)"));
    // No protocol means TCP.
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n  uoa ipo\n}\n"),
                ElementsAre("t.conf:8: uoa ipo needs protocol UDP (TCP clients get toa or "
                            "proxy_protocol)"));
    // Reported at the later of the two statements.
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 53 { laddr_group_name lips\n"
                          "  protocol UDP\n  uoa opp\n  proxy_protocol v2\n}\n"),
                ElementsAre("t.conf:10: uoa opp cannot be combined with proxy_protocol v2"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 53 { laddr_group_name lips\n"
                          "  protocol UDP\n  proxy_protocol v2\n  uoa ipo\n}\n"),
                ElementsAre("t.conf:10: uoa ipo cannot be combined with proxy_protocol v2"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 53 { laddr_group_name lips\n"
                          "  protocol UDP\n  uoa yes\n  uoa\n}\n"),
                ElementsAre("t.conf:9: uoa: bad value 'yes' (opp|ipo|off)",
                            "t.conf:10: uoa: missing value"));
    EXPECT_THAT(errors_of("ipvs_defs {\n  uoa_max_trail 256\n  uoa_max_trail many\n}\n"),
                ElementsAre("t.conf:8: uoa_max_trail: 256 out of range 0..255",
                            "t.conf:9: uoa_max_trail: 'many' is not a number"));
}

// --- admission control ----------------------------------------------------------------------

TEST(ConfigParser, BlackWhiteListsAndConnRate) {
    ParseOutcome out = parse_body("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                                  "    blacklist {\n"
                                  "        10.0.0.0/8 192.0.2.7\n"
                                  "        198.51.100.0/24\n"
                                  "    }\n"
                                  "    whitelist 203.0.113.0/24 0.0.0.0/0\n"
                                  "    conn_rate_limit 1000\n"
                                  "    real_server 10.10.2.2 80 { uthreshold 200 lthreshold 150 }\n"
                                  "    real_server 10.10.2.3 80 { upper_threshold 10 }\n"
                                  "}\n");
    ASSERT_THAT(out.errors, IsEmpty());
    const VirtualServer& vs = out.config->virtual_servers.at(0);
    std::vector<std::string> black, white;
    for (const auto& p : vs.blacklist) black.push_back(net::to_string(p));
    for (const auto& p : vs.whitelist) white.push_back(net::to_string(p));
    EXPECT_THAT(black, ElementsAre("10.0.0.0/8", "192.0.2.7/32", "198.51.100.0/24"));
    EXPECT_THAT(white, ElementsAre("203.0.113.0/24", "0.0.0.0/0"));
    EXPECT_EQ(vs.conn_rate_limit, 1000u);
    EXPECT_EQ(vs.real_servers.at(0).upper_threshold, 200u);
    EXPECT_EQ(vs.real_servers.at(0).lower_threshold, 150u);
    EXPECT_EQ(vs.real_servers.at(1).upper_threshold, 10u);
    EXPECT_EQ(vs.real_servers.at(1).lower_threshold, 0u);
}

// DPVS keepalived's named blacklist: deny_address_group + daddr_group_name (any order).
TEST(ConfigParser, DpvsDenyAddressGroupJoinsTheBlacklist) {
    ParseOutcome out = parse_body("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                                  "    blacklist 192.0.2.7\n"
                                  "    daddr_group_name bad_guys\n"
                                  "}\n"
                                  "deny_address_group bad_guys {\n"
                                  "    192.0.2.7\n"
                                  "    203.0.113.0/24\n"
                                  "}\n");
    ASSERT_THAT(out.errors, IsEmpty());
    std::vector<std::string> black;
    for (const auto& p : out.config->virtual_servers.at(0).blacklist) black.push_back(net::to_string(p));
    EXPECT_THAT(black, ElementsAre("192.0.2.7/32", "203.0.113.0/24"));
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "    daddr_group_name nobody\n}\n"
                          "deny_address_group twice { 10.0.0.0/8 }\n"
                          "deny_address_group twice { 10.1.0.0/16 }\n"),
                ElementsAre("t.conf:11: deny_address_group 'twice' already defined at t.conf:10",
                            "t.conf:8: daddr_group_name: unknown deny_address_group 'nobody'"));
}

TEST(ConfigParser, EmptyListBlockIsAnEmptyList) {
    ParseOutcome out = parse_body("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                                  "    whitelist { }\n}\n");
    ASSERT_THAT(out.errors, IsEmpty());
    EXPECT_THAT(out.config->virtual_servers.at(0).whitelist, IsEmpty());
}

TEST(ConfigParserErrors, BadListEntriesNameFileLineAndFix) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "    blacklist {\n"
                          "        10.1.2.3/8\n"
                          "        10.0.0.0/33 bogus\n"
                          "    }\n"
                          "    whitelist\n"
                          "    conn_rate_limit -5\n"
                          "}\n"),
                ElementsAre("t.conf:9: blacklist: prefix '10.1.2.3/8' has host bits set (did you "
                            "mean 10.0.0.0/8?)",
                            "t.conf:10: blacklist: bad address or prefix '10.0.0.0/33' (expected "
                            "A.B.C.D[/LEN], LEN 0..32, or an IPv6 address[/LEN], LEN 0..128)",
                            "t.conf:10: blacklist: bad address or prefix 'bogus' (expected "
                            "A.B.C.D[/LEN], LEN 0..32, or an IPv6 address[/LEN], LEN 0..128)",
                            "t.conf:12: whitelist: expected addresses or prefixes, or a '{ }' "
                            "block of them",
                            "t.conf:13: conn_rate_limit: '-5' is not a number"));
    ParseOutcome dup = parse_body("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                                  "    blacklist { 192.0.2.7 192.0.2.7/32 }\n}\n");
    EXPECT_THAT(dup.errors, IsEmpty());
    EXPECT_THAT(dup.warnings, ::testing::Contains("t.conf:8: blacklist: 192.0.2.7/32 listed twice"));
}

TEST(ConfigParserErrors, LowerThresholdAboveUpper) {
    EXPECT_THAT(errors_of("virtual_server 10.10.1.100 80 { laddr_group_name lips\n"
                          "  real_server 10.10.2.2 80 { uthreshold 10 lthreshold 11 }\n"
                          "  real_server 10.10.2.3 80 { lthreshold 1 }\n"
                          "  real_server 10.10.2.4 80 { uthreshold 10 lthreshold 10 }\n"
                          "}\n"),
                ElementsAre("t.conf:8: real_server 10.10.2.2:80: lthreshold 11 is higher than "
                            "uthreshold 10",
                            "t.conf:9: real_server 10.10.2.3:80: lthreshold 1 is higher than "
                            "uthreshold 0"));
}

TEST(ConfigParser, FragDefs) {
    ParseOutcome out = parse("");
    ASSERT_TRUE(out.config);
    EXPECT_EQ(out.config->frag, FragDefs{});
    out = parse_body(
        "frag_defs {\n max_datagrams 16\n max_fragments 8\n max_datagram_size 9000\n"
        " timeout_ms 1500\n}\n");
    ASSERT_TRUE(out.config) << (out.errors.empty() ? "" : out.errors[0]);
    EXPECT_EQ(out.config->frag.max_datagrams, 16u);
    EXPECT_EQ(out.config->frag.max_fragments, 8u);
    EXPECT_EQ(out.config->frag.max_datagram_size, 9000u);
    EXPECT_EQ(out.config->frag.timeout_ms, 1500u);
    EXPECT_EQ(parse_body("frag_defs { max_datagrams 0 }\n").config->frag.max_datagrams, 0u);
    for (const char* bad :
         {"frag_defs { max_fragments 1 }\n", "frag_defs { max_datagram_size 70000 }\n",
          "frag_defs { timeout_ms 10 }\n", "frag_defs { max_datagrams 5000 }\n",
          "frag_defs { reassemble yes }\n"}) {
        const auto errors = errors_of(bad);
        ASSERT_EQ(errors.size(), 1u) << bad;
        EXPECT_NE(errors[0].find("t.conf:7"), std::string::npos) << errors[0];
    }
}

}  // namespace
}  // namespace xvs::ctl

namespace xvs::ctl {
namespace {

TEST(ConfigParser, PortExceptionPathPerPmd) {
    ParseOutcome out = parse(R"(netif_defs {
    port a { dev net_af_xdp0,iface=lb-wan }
    port b { dev net_af_packet1,iface=lb-lan exception tap xvs-lan }
    port c { dev net_af_xdp2,iface=x exception off }
    port d { dev net_ring0 }
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const auto& p = out.config->netif.ports;
    ASSERT_EQ(p.size(), 4u);
    EXPECT_EQ(p[0].exception_kind(), ExceptionKind::Xdp);  // the default on net_af_xdp
    EXPECT_EQ(p[1].exception_kind(), ExceptionKind::Tap);
    EXPECT_EQ(p[1].exception_tap, "xvs-lan");
    EXPECT_EQ(p[2].exception_kind(), ExceptionKind::Off);
    EXPECT_EQ(p[3].exception_kind(), ExceptionKind::Off);  // the default elsewhere
}

TEST(ConfigParserErrors, PortExceptionRefusals) {
    EXPECT_THAT(errors_of("netif_defs { port a { dev net_af_packet0,iface=x exception xdp } }\n"
                          "netif_defs { port b { dev net_ring0 exception tap } }\n"
                          "netif_defs { port c { dev net_ring1 exception tap a/b } }\n"
                          "netif_defs { port d { dev net_ring2 exception kni } }\n"),
                ElementsAre("t.conf:7: port 'a': exception xdp needs a net_af_xdp device (use "
                            "exception tap NAME)",
                            "t.conf:8: exception: missing value",
                            "t.conf:9: exception tap: bad interface name 'a/b' (1..15 "
                            "characters, no '/', ',' or '=')",
                            "t.conf:10: exception: bad value 'kni' (xdp|tap|off)"));
}

}  // namespace
}  // namespace xvs::ctl
