// Tests for src/ctl/config_parser_health.cpp and the health checks of config_validate.cpp:
// keepalived checker blocks parsed into the typed model with inherited settings resolved,
// and every refusal at file:line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ctl/config_parser.h"
#include "ctl/health/http.h"

namespace xvs::ctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Six lines that make a virtual_server valid; test bodies start at line 7.
constexpr const char* kPrelude = R"(netif_defs {
    port wan0 { dev net_ring0 }
    port lan0 { dev net_ring1 }
}
ip_defs { address 10.10.1.1/24 dev wan0 }
local_address_group lips { 10.10.2.100-101 lan0 }
)";

ParseOutcome parse_body(const std::string& body) {
    return parse_config(std::string(kPrelude) + body, "t.conf");
}

TEST(ConfigHealth, KeepalivedServiceParsesWithInheritedSettings) {
    ParseOutcome out = parse_body(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    quorum 4
    hysteresis 1
    quorum_up "/bin/echo up 'two words'"
    quorum_down /bin/echo down
    alpha
    omega
    sorry_server 10.10.2.250 8080
    sorry_server_inhibit
    virtualhost www.example.org
    real_server 10.10.2.2 8080 {
        weight 3
        inhibit_on_failure
        connect_timeout 2
        notify_down "/usr/local/bin/down 10.10.2.2"
        TCP_CHECK { retry 4 bindto 10.10.2.9 }
        HTTP_GET {
            url { path /healthz digest 9e107d9d372bb6826bd81d3542a419d6 status_code 200 301-302 }
            url { path /other virtualhost other.example.org }
            nb_get_retry 2
            http_protocol 1.1
        }
        MISC_CHECK { misc_path "/bin/probe -x \"a b\"" misc_dynamic }
        DNS_CHECK { type AAAA name example.org connect_port 5353 }
        UDP_CHECK { payload 0a0B require_reply 0a max_reply_length 9 }
        SMTP_CHECK { helo_name lb1 }
        PING_CHECK { delay_loop 0.25 }
    }
    delay_loop 6
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const VirtualServer& vs = out.config->virtual_servers.at(0);
    EXPECT_EQ(vs.health.quorum, 4u);
    EXPECT_EQ(vs.health.hysteresis, 1u);
    EXPECT_THAT(vs.health.quorum_up, ElementsAre("/bin/echo", "up", "two words"));
    EXPECT_THAT(vs.health.quorum_down, ElementsAre("/bin/echo", "down"));
    EXPECT_TRUE(vs.health.alpha);
    EXPECT_TRUE(vs.health.omega);
    ASSERT_TRUE(vs.health.sorry);
    EXPECT_EQ(net::to_string(vs.health.sorry->addr), "10.10.2.250");
    EXPECT_EQ(vs.health.sorry->port, 8080);
    EXPECT_TRUE(vs.health.sorry_inhibit);
    const RealServer& rs = vs.real_servers.at(0);
    EXPECT_TRUE(rs.health.inhibit_on_failure);
    EXPECT_THAT(rs.health.notify_down, ElementsAre("/usr/local/bin/down", "10.10.2.2"));
    ASSERT_EQ(rs.health.checkers.size(), 7u);

    const CheckerConf& tcp = rs.health.checkers[0];
    EXPECT_EQ(tcp.type, CheckType::Tcp);
    EXPECT_EQ(tcp.delay_loop_ms, 6000u);       // the virtual server's, written after
    EXPECT_EQ(tcp.connect_timeout_ms, 2000u);  // the real server's
    EXPECT_EQ(tcp.retry, 4u);                  // its own
    EXPECT_EQ(tcp.delay_before_retry_ms, 1000u);
    EXPECT_EQ(net::to_string(*tcp.bindto), "10.10.2.9");
    EXPECT_EQ(tcp.line, 23u);

    const CheckerConf& http = rs.health.checkers[1];
    EXPECT_EQ(http.retry, 2u);
    EXPECT_EQ(http.delay_before_retry_ms, 3000u);  // HTTP's default
    EXPECT_TRUE(http.http11);
    ASSERT_EQ(http.urls.size(), 2u);
    EXPECT_EQ(http.urls[0].virtualhost, "www.example.org");
    EXPECT_EQ(http.urls[1].virtualhost, "other.example.org");
    ASSERT_TRUE(http.urls[0].digest);
    EXPECT_EQ(health::hex(http.urls[0].digest->data(), 16), "9e107d9d372bb6826bd81d3542a419d6");
    EXPECT_THAT(http.urls[0].status, ElementsAre(std::pair<uint16_t, uint16_t>{200, 200},
                                                 std::pair<uint16_t, uint16_t>{301, 302}));

    const CheckerConf& misc = rs.health.checkers[2];
    EXPECT_THAT(misc.misc_argv, ElementsAre("/bin/probe", "-x", "a b"));
    EXPECT_TRUE(misc.misc_dynamic);
    EXPECT_EQ(misc.misc_timeout_ms, 6000u);  // delay_loop by default

    const CheckerConf& dns = rs.health.checkers[3];
    EXPECT_EQ(dns.dns_type, 28);
    EXPECT_EQ(dns.dns_name, "example.org");
    EXPECT_EQ(dns.connect_port, 5353);

    const CheckerConf& udp = rs.health.checkers[4];
    EXPECT_EQ(udp.payload, std::string("\x0a\x0b"));
    EXPECT_TRUE(udp.require_reply);
    EXPECT_EQ(udp.reply, std::string("\x0a"));
    EXPECT_EQ(udp.max_reply_length, 9u);

    EXPECT_EQ(rs.health.checkers[5].helo_name, "lb1");
    EXPECT_EQ(rs.health.checkers[6].delay_loop_ms, 250u);
}

TEST(ConfigHealth, DefaultsAreKeepalivedsAndAChangedSettingIsAnotherCheck) {
    ParseOutcome out = parse_body(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    real_server 10.10.2.2 8080 { TCP_CHECK { } TCP_CHECK { connect_port 81 } }
}
)");
    ASSERT_THAT(out.errors, IsEmpty());
    const VirtualServer& vs = out.config->virtual_servers.at(0);
    EXPECT_EQ(vs.health.quorum, 1u);
    EXPECT_FALSE(vs.health.sorry);
    const auto& c = vs.real_servers.at(0).health.checkers;
    EXPECT_EQ(c[0].delay_loop_ms, 60000u);
    EXPECT_EQ(c[0].connect_timeout_ms, 5000u);
    EXPECT_EQ(c[0].retry, 1u);
    EXPECT_EQ(c[0].delay_before_retry_ms, 1000u);
    EXPECT_EQ(c[0].warmup_ms, 0u);
    EXPECT_FALSE(c[0].same_check(c[1]));
    CheckerConf moved = c[0];
    moved.line = 99;
    EXPECT_TRUE(c[0].same_check(moved));  // where it is written does not matter
}

TEST(ConfigHealth, ErrorsNameFileAndLine) {
    ParseOutcome out = parse_body(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    delay_loop fast
    sorry_server 10.10.2.2 8080
    real_server 10.10.2.2 8080 {
        HTTP_GET { connect_timeout 3 }
        MISC_CHECK { misc_timeout 2 }
        TCP_CHECK { url { path / } }
        TCP_CHECK { bindto 2001:db8::9 }
        PING_CHECK { connect_port 7 }
        HTTP_GET { url { digest 1234 status_code 700 regex ok } }
        UDP_CHECK { payload xyz bind_port 99 }
        DNS_CHECK { type WKS }
        SMTP_CHECK { host { connect_ip 10.10.2.3 } }
        BFD_CHECK { }
    }
}
)");
    EXPECT_FALSE(out.config);
    EXPECT_THAT(
        out.errors,
        ElementsAre(
            "t.conf:9: delay_loop: 'fast' is not a number of seconds (e.g. 3 or 0.5)",
            "t.conf:12: HTTP_GET: no url block (e.g. `url { path /healthz status_code 200 }`)",
            "t.conf:13: MISC_CHECK: misc_path missing (the command to run)",
            "t.conf:14: unknown keyword 'url' in TCP_CHECK",
            "t.conf:17: digest: '1234' is not an MD5 digest (32 hex digits, as genhash prints)",
            "t.conf:17: status_code: '700' is not an HTTP status or range (100..599, e.g. 200-299)",
            "t.conf:17: 'regex' is not supported yet (body regular expressions are not "
            "implemented: use digest): remove it",
            "t.conf:18: payload: 'xyz' is not hex bytes (e.g. 0a1b2c)",
            "t.conf:18: 'bind_port' is not supported yet (checks leave from an ephemeral port): "
            "remove it",
            "t.conf:19: type: bad value 'WKS' (A|NS|CNAME|SOA|PTR|MX|TXT|AAAA)",
            "t.conf:20: 'host' is not supported yet (the multi-host form is not supported: write "
            "one SMTP_CHECK per host with connect_ip): remove it",
            "t.conf:21: 'BFD_CHECK' is not supported yet (xvs runs no BFD: use TCP_CHECK, "
            "UDP_CHECK or PING_CHECK): remove it",
            // Cross checks, once the block is read (config_validate.cpp).
            "t.conf:15: TCP_CHECK of real_server 10.10.2.2:8080: bindto 2001:db8::9 is IPv6 but "
            "the check goes to 10.10.2.2 (IPv4): give a source of the target's family",
            "t.conf:16: PING_CHECK of real_server 10.10.2.2:8080: connect_port has no meaning "
            "for an ICMP echo: remove it",
            "t.conf:10: virtual_server 10.10.1.100:80: sorry_server 10.10.2.2:8080 is also a "
            "real_server (at t.conf:11): a sorry server stands in for the real servers"));
}

TEST(ConfigHealth, SorryServerInhibitNeedsASorryServer) {
    ParseOutcome out = parse_body(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    sorry_server_inhibit
}
)");
    EXPECT_THAT(
        out.errors,
        ElementsAre("t.conf:7: virtual_server: sorry_server_inhibit without a sorry_server"));
}

// xvs's passive_check: a virtual_server's is the default of its real servers that have a
// checker; a real_server's own wins; without a checker to bring it back it is refused.
TEST(ConfigHealth, PassiveCheckInheritedByCheckedRealServersOnly) {
    ParseOutcome out = parse_body(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    passive_check { failures 4 window 1.5 }
    real_server 10.10.2.2 8080 { TCP_CHECK { } }
    real_server 10.10.2.3 8080 { passive_check { failures 2 } TCP_CHECK { } }
    real_server 10.10.2.4 8080 { weight 1 }
}
)");
    ASSERT_TRUE(out.config) << ::testing::PrintToString(out.errors);
    const auto& rs = out.config->virtual_servers[0].real_servers;
    ASSERT_TRUE(rs[0].health.passive);
    EXPECT_EQ(rs[0].health.passive->failures, 4u);
    EXPECT_EQ(rs[0].health.passive->window_ms, 1500u);
    ASSERT_TRUE(rs[1].health.passive);
    EXPECT_EQ(rs[1].health.passive->failures, 2u);
    EXPECT_EQ(rs[1].health.passive->window_ms, 2000u);  // the default, not the vs's
    EXPECT_FALSE(rs[2].health.passive);                 // no checker: never judged passively
}

TEST(ConfigHealth, PassiveCheckErrors) {
    ParseOutcome out = parse_body(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    real_server 10.10.2.2 8080 {
        passive_check { failures 0 window 0.01 retries 3 }
    }
}
)");
    EXPECT_FALSE(out.config);
    EXPECT_THAT(out.errors,
                ElementsAre(HasSubstr("t.conf:10: failures"), HasSubstr("t.conf:10: window"),
                            "t.conf:10: unknown keyword 'retries' in passive_check",
                            "t.conf:10: passive_check: real server 10.10.2.2:8080 has no checker "
                            "to bring it back up: add one (e.g. TCP_CHECK)"));
}

TEST(ConfigHealth, ScriptSplitFollowsKeepalived) {
    EXPECT_THAT(script_split("/bin/a  b\t'c d' \"e \\\"f\\\"\" g\\ h"),
                ElementsAre("/bin/a", "b", "c d", "e \"f\"", "g h"));
    EXPECT_THAT(script_split(""), IsEmpty());
}

}  // namespace
}  // namespace xvs::ctl
