// Tests for src/ctl/config_check.cpp: `xvsd -t` gives start's verdict. A table of
// configurations goes through `xvsd -t` (config_check_main) and through Daemon::start, which
// refuses before the EAL; accepted ones are then applied to a Director as start does after
// the EAL is up, which must not refuse them. Every keyword of the keyword table is exercised.
#include "ctl/config_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ctl/config_apply.h"
#include "ctl/config_keywords.h"
#include "ctl/daemon.h"
#include "port/eal.h"

namespace xvs::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ConfigCheck : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("xvs-config-check-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    std::string write(const std::string& text) {
        std::string path = (dir_ / "xvs.conf").string();
        std::ofstream(path) << text;
        return path;
    }
    int run(const std::string& path) {
        out_.str("");
        err_.str("");
        return config_check_main(path, out_, err_);
    }

    std::filesystem::path dir_;
    std::ostringstream out_;
    std::ostringstream err_;
};

// Lines 1-6: ports, addresses and a local address group; a body starts at line 7.
constexpr const char* kPrelude =
    R"(netif_defs { eal_args "--no-huge" port wan0 { dev net_ring0 } port lan0 { dev net_ring1 } }
ip_defs {
    address 10.10.1.1/24 dev wan0
    address 10.10.2.1/24 dev lan0
}
local_address_group lips { 10.10.2.100-101 lan0 }
)";

// A virtual_server with `vs` in its block and `rs` in its real_server's: starts at line 7.
std::string service(const std::string& vs, const std::string& rs = "", const char* proto = "TCP") {
    return std::string(kPrelude) + "virtual_server 10.10.1.100 80 {\n    protocol " + proto +
           "\n    laddr_group_name lips\n    " + vs + "\n    real_server 10.10.2.2 8080 { " + rs +
           " }\n}\n";
}

struct Case {
    const char* name;
    std::string text;
    const char* refusal;  // nullptr = accepted; else a substring of the (only) error line
    unsigned line;        // of that error; 0 = no line (whole-file errors)
};

std::vector<Case> cases() {
    std::vector<Case> c = {
        {"minimal", service(""), nullptr, 0},
        // A sorry server the Director would refuse (DR off-link) is refused at its line.
        {"sorry_server_dr_off_link",
         std::string(kPrelude) +
             "virtual_server 10.10.1.100 80 {\n    protocol TCP\n    lb_kind DR\n"
             "    sorry_server 192.0.2.250 80\n    real_server 10.10.2.2 80 { }\n}\n",
         "DR real server 192.0.2.250 is not on a directly connected network", 10},
        // keepalived's health checking as written in a keepalived.conf (ctl/health/).
        {"keepalived_checks",
         service("delay_loop 6\n    quorum 2\n    hysteresis 1\n    alpha\n    omega\n"
                 "    quorum_up \"/bin/true up\"\n    sorry_server 10.10.2.9 80\n"
                 "    sorry_server_inhibit",
                 "weight 3 inhibit_on_failure notify_down /bin/true\n"
                 "        TCP_CHECK { connect_timeout 3 retry 2 delay_before_retry 1 }\n"
                 "        HTTP_GET { url { path /healthz status_code 200-299 } }\n"
                 "        MISC_CHECK { misc_path \"/bin/true x\" misc_timeout 2 misc_dynamic }"),
         nullptr, 0},
        {"tcp_synproxy_toa", service("syn_proxy\n    toa on"), nullptr, 0},
        {"tcp_proxy_protocol", service("proxy_protocol v1"), nullptr, 0},
        {"udp_uoa", service("uoa opp", "weight 3", "UDP"), nullptr, 0},
        {"thresholds_acl",
         service("conn_rate_limit 100\n    blacklist 192.0.2.0/24", "uthreshold 10 lthreshold 5"),
         nullptr, 0},
        {"workers_1", std::string(kPrelude) + "worker_defs { workers 1 poll_mode busy }\n", nullptr,
         0},
        {"keepalived_mail_warned",
         "global_defs { router_id A smtp_server 1.2.3.4 }\n" + std::string(kPrelude), nullptr, 0},
        // Which CPUs exist depends on the machine: CPU 1023 is on none we run on.
        {"workers_on_a_missing_cpu",
         std::string(kPrelude) + "worker_defs {\n    workers 1\n    cpus 1023\n}\n",
         "cpus: CPU 1023 is not one xvsd may run on", 9},
        // One worker polls one queue: net_af_packet without qpairs= has exactly one.
        {"af_packet_one_worker",
         "netif_defs {\n    port wan0 { dev net_af_packet0,iface=a }\n"
         "    port lan0 { dev net_ring1 }\n}\nip_defs {\n    address 10.10.1.1/24 dev wan0\n"
         "}\nworker_defs { workers 1 }\n",
         nullptr, 0},
        {"af_packet_more_queues_than_workers",
         "netif_defs {\n    port wan0 { dev net_af_packet0,iface=a,qpairs=2 }\n"
         "    port lan0 { dev net_ring1 }\n}\nip_defs {\n    address 10.10.1.1/24 dev wan0\n"
         "}\nworker_defs { workers 1 }\n",
         "port wan0: net_af_packet0 has qpairs=2 but xvsd runs 1 worker, each on its own queue "
         "pair: set qpairs=1 in its dev", 2},
        {"syn_proxy_on_udp", service("syn_proxy", "", "UDP"), "syn_proxy needs protocol TCP", 7},
        {"toa_on_udp", service("toa on", "", "UDP"), "toa on needs protocol TCP", 7},
        {"no_port", "worker_defs { workers 1 }\n", "no port defined in netif_defs", 0},
        // Accepted by the parser before, refused by the Director only once the EAL was up.
        {"vip_is_director_address",
         std::string(kPrelude) + "virtual_server 10.10.1.1 80 {\n    protocol TCP\n"
                                 "    laddr_group_name lips\n}\n",
         "is already a director address", 7},
        // TUN outer source (ip_defs tunnel_source): a director address of that very port.
        {"tunnel_source",
         std::string(kPrelude) + "ip_defs {\n    address 10.10.2.5/24 dev lan0\n"
                                 "    tunnel_source 10.10.2.5 dev lan0\n}\n",
         nullptr, 0},
        {"tunnel_source_not_a_director_address",
         std::string(kPrelude) + "ip_defs {\n    tunnel_source 10.10.2.100 dev lan0\n}\n",
         "tunnel_source 10.10.2.100 dev lan0: 10.10.2.100 is not a director address (VIPs and "
         "local addresses do not qualify): add it (ip_defs `address 10.10.2.100/LEN dev lan0`) "
         "or use one of port 'lan0': 10.10.2.1",
         8},
        {"tunnel_source_of_another_port",
         std::string(kPrelude) + "ip_defs {\n    tunnel_source 10.10.1.1 dev lan0\n}\n",
         "10.10.1.1 is on port 'wan0', not on 'lan0' (the outer source must be an address of "
         "the port the tunnel leaves by): use one of port 'lan0': 10.10.2.1",
         8},
        {"tunnel_source_twice_for_a_port",
         std::string(kPrelude) + "ip_defs {\n    tunnel_source 10.10.2.1 dev lan0\n"
                                 "    tunnel_source 10.10.2.1 dev lan0\n}\n",
         "tunnel_source for port 'lan0' already set at ", 9},
        {"tunnel_source_without_dev",
         std::string(kPrelude) + "ip_defs {\n    tunnel_source 10.10.2.1\n}\n",
         "tunnel_source: missing 'dev PORT'", 8},
    };
    // Every keyword that used to be accepted without effect, each refused at its line.
    const std::pair<const char*, const char*> vs_keywords[] = {
        {"sorry_server_lvs_method", "NAT"},
        {"ha_suspend", ""},
    };
    for (const auto& [kw, val] : vs_keywords)
        c.push_back({kw, service(std::string(kw) + " " + val), "is not supported yet", 10});
    const std::pair<const char*, const char*> rs_keywords[] = {
        {"BFD_CHECK", "{ name b }"},
        {"FILE_CHECK", "{ file /tmp/x }"},
    };
    for (const auto& [kw, val] : rs_keywords)
        c.push_back({kw, service("", std::string(kw) + " " + val), "is not supported yet", 11});
    c.push_back({"metrics_listen",
                 std::string(kPrelude) + "global_defs {\n    metrics_listen 127.0.0.1:0\n}\n",
                 "metrics_listen: '127.0.0.1:0' is not ADDR:PORT with a port 1..65535", 8});
    c.push_back({"lvs_sync_daemon",
                 std::string(kPrelude) + "global_defs { lvs_sync_daemon eth0 VI_1 }\n",
                 "'lvs_sync_daemon' is not supported yet", 7});
    c.push_back({"vrrp_instance", std::string(kPrelude) + "vrrp_instance VI_1 { state MASTER }\n",
                 "'vrrp_instance' is not supported yet (xvs does not implement VRRP)", 7});
    return c;
}

// Daemon::start's verdict on a configuration it refuses: the error, with the EAL never started.
std::string start_refusal(const std::string& path) {
    Daemon daemon(path);
    auto r = daemon.start();
    EXPECT_FALSE(port::eal_running()) << "start brought the EAL up for " << path;
    return r ? "<started>" : r.error();
}

TEST_F(ConfigCheck, TestAndStartGiveTheSameVerdict) {
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.name);
        const std::string path = write(c.text);
        const int rc = run(path);
        if (!c.refusal) {
            EXPECT_EQ(rc, 0) << err_.str();
            EXPECT_EQ(out_.str(), "configuration file " + path + " is ok\n");
            // Start's own config step after the EAL: config_load, then config_apply on a
            // Director with the ports. Neither may refuse what -t accepted.
            ParseOutcome loaded = config_load(path);
            ASSERT_TRUE(loaded.config) << ::testing::PrintToString(loaded.errors);
            lb::Director director(loaded.config->worker.workers);
            uint16_t id = 0;
            for (const PortDef& p : loaded.config->netif.ports)
                ASSERT_TRUE(director.port_add({p.name, id++, net::MacAddr{}, 1500}));
            auto applied = config_apply(director, *loaded.config);
            EXPECT_TRUE(applied) << applied.error();
            continue;
        }
        EXPECT_EQ(rc, 1);
        EXPECT_EQ(out_.str(), "");
        const std::string where = c.line ? path + ":" + std::to_string(c.line) + ": " : path + ": ";
        EXPECT_EQ(err_.str().rfind(where, 0), 0u) << err_.str();
        EXPECT_THAT(err_.str(), HasSubstr(c.refusal));
        EXPECT_THAT(err_.str(), HasSubstr("configuration file " + path + " has 1 error\n"));
        // Start refuses with exactly the lines -t printed, before the EAL.
        const std::string test_lines = err_.str().substr(0, err_.str().rfind("configuration file"));
        EXPECT_EQ(start_refusal(path) + "\n", test_lines);
    }
}

// Each refused or ignored keyword of the table, in its block: refused with file:line and
// "remove it", or accepted with one warning; applied ones are handled by the grammar (no
// "unknown keyword", no table/parser disagreement).
TEST_F(ConfigCheck, EveryKeywordOfTheTableIsRefusedWarnedOrApplied) {
    using keywords::KeywordClass;
    for (const keywords::Keyword& k : keywords::kKeywords) {
        std::string name(k.name);
        if (name.ends_with('*')) name = name.substr(0, name.size() - 1) + "x";
        SCOPED_TRACE(std::string(k.block) + " " + name);
        std::string text;
        unsigned line = 0;
        const std::string stmt = name + " 1";
        if (k.block == "top") {
            text = std::string(kPrelude) + stmt + "\n";
            line = 7;
        } else if (k.block == "virtual_server") {
            text = service(stmt);
            line = 10;
        } else if (k.block == "real_server") {
            text = service("", stmt);
            line = 11;
        } else if (k.block == "checker" || k.block.ends_with("_CHECK") || k.block == "HTTP_GET" ||
                   k.block == "url") {
            // Inside a checker of the real server (what a checker type needs besides).
            const std::string type = k.block == "checker" ? "TCP_CHECK"
                                     : k.block == "url"   ? "HTTP_GET"
                                                          : std::string(k.block);
            std::string inner = k.block == "url" ? "url {\n    " + stmt + "\n}" : stmt;
            if (k.block == "HTTP_GET") inner += "\n    url { path / }";
            if (k.block == "MISC_CHECK") inner += "\n    misc_path /bin/true";
            text = service("", type + " {\n    " + inner + "\n}");
            line = k.block == "url" ? 13 : 12;
        } else if (k.block == "virtual_server_group") {
            text = std::string(kPrelude) + "virtual_server_group G {\n    " + stmt + "\n}\n";
            line = 8;
        } else if (k.block == "port") {
            text = std::string(kPrelude) + "netif_defs { port p9 {\n    " + stmt + "\n} }\n";
            line = 8;
        } else {
            text = std::string(kPrelude) + std::string(k.block) + " {\n    " + stmt + "\n}\n";
            if (k.block == "timeouts" || k.block == "synproxy")
                text = std::string(kPrelude) + "ipvs_defs { " + std::string(k.block) + " {\n    " +
                       stmt + "\n} }\n";
            line = 8;
        }
        const std::string path = write(text);
        const int rc = run(path);
        const std::string at = path + ":" + std::to_string(line) + ": ";
        switch (k.cls) {
            case KeywordClass::Refused:
                EXPECT_EQ(rc, 1);
                EXPECT_EQ(err_.str(),
                          at + "'" + name + "' is not supported yet (" + std::string(k.note) +
                              "): remove it\nconfiguration file " + path + " has 1 error\n");
                break;
            case KeywordClass::Ignored:
                EXPECT_EQ(rc, 0) << err_.str();
                EXPECT_EQ(err_.str(), "warning: " + at + "'" + name +
                                          "' ignored: " + std::string(k.note) +
                                          " (keepalived setting; warned once)\n");
                break;
            case KeywordClass::Applied:
                // `name 1` may be a bad value for it; what matters is that the grammar knows it.
                EXPECT_THAT(err_.str(), Not(HasSubstr("unknown keyword '" + name + "'")));
                EXPECT_THAT(err_.str(), Not(HasSubstr("internal error"))) << err_.str();
                break;
        }
    }
}

TEST_F(ConfigCheck, IgnoredKeywordWarnsOnceWhereverItRecurs) {
    std::string text = service("smtp_alert", "smtp_alert");
    const std::string path = write(text);
    EXPECT_EQ(run(path), 0) << err_.str();
    EXPECT_EQ(err_.str(), "warning: " + path +
                              ":10: 'smtp_alert' ignored: xvs sends no mail alerts (keepalived "
                              "setting; warned once)\n");
}

TEST_F(ConfigCheck, ErrorsReturnOneWithEveryLine) {
    std::string path = write("worker_defs { workers 0 }\n\nglobal_defs { log_level loud }\n");
    EXPECT_EQ(run(path), 1);
    EXPECT_EQ(out_.str(), "");
    EXPECT_EQ(err_.str(), path + ":1: workers: 0 out of range 1..16\n" + path +
                              ":3: log_level: bad value 'loud' (debug|info|warning|error)\n"
                              "configuration file " +
                              path + " has 2 errors\n");
}

TEST_F(ConfigCheck, MissingFileReturnsOne) {
    std::string path = (dir_ / "absent.conf").string();
    EXPECT_EQ(run(path), 1);
    EXPECT_EQ(out_.str(), "");
    EXPECT_EQ(err_.str(), path +
                              ": cannot read configuration: No such file or directory\n"
                              "configuration file " +
                              path + " has 1 error\n");
}

}  // namespace
}  // namespace xvs::ctl

namespace xvs::ctl {
namespace {

// README's configuration section is written from the table: every refused or warned keyword
// is named there (tests run in tests/, see tests/CMakeLists.txt).
TEST(ConfigKeywords, ReadmeNamesEveryRefusedAndIgnoredKeyword) {
    std::ifstream in("../README.md");  // from tests/ (ctest)
    if (!in) in.open("README.md");     // from the repository root
    ASSERT_TRUE(in) << "README.md not found from " << std::filesystem::current_path();
    std::stringstream text;
    text << in.rdbuf();
    for (const keywords::Keyword& k : keywords::kKeywords) {
        if (k.cls == keywords::KeywordClass::Applied) continue;
        EXPECT_THAT(text.str(), HasSubstr("`" + std::string(k.name) + "`"))
            << k.block << " " << k.name;
    }
}

}  // namespace
}  // namespace xvs::ctl
