// Tests for src/ctl/health/manager.cpp: checker verdicts reaching the Director (removal,
// inhibit_on_failure, misc_dynamic weights), quorum with hysteresis and the sorry server,
// alpha, reload keeping unchanged checkers' state, omega and notify scripts, check show.
// Real servers are driven by MISC_CHECKs whose exit code the test writes into a file.
#include "ctl/health/manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "ctl/config_apply.h"
#include "ctl/config_parser.h"
#include "ctl/xvsctl_format.h"

namespace xvs::ctl::health {
namespace {

using ::testing::HasSubstr;

constexpr const char* kPrelude = R"(netif_defs {
    port wan0 { dev net_ring0 }
    port lan0 { dev net_ring1 }
}
ip_defs { address 10.10.1.1/24 dev wan0
          address 10.10.2.1/24 dev lan0 }
local_address_group lips { 10.10.2.100-101 lan0 }
)";

class ManagerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("xvs-health-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
        ASSERT_TRUE(director_.port_add({"wan0", 0, net::MacAddr{}, 1500}));
        ASSERT_TRUE(director_.port_add({"lan0", 1, net::MacAddr{}, 1500}));
        mgr_ = std::move(*Manager::create(director_));
        mgr_->log = [this](const std::string& l) { log_.push_back(l); };
    }
    void TearDown() override {
        mgr_.reset();
        std::filesystem::remove_all(dir_);
    }

    // Sets the exit code of the check script `name`.
    void set(const std::string& name, int code) { std::ofstream(dir_ / name) << code << "\n"; }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    // A fast MISC_CHECK exiting with the code in file `name`.
    std::string misc(const std::string& name, bool dynamic = false) {
        return "MISC_CHECK { misc_path \"/bin/sh -c 'exit $(cat " + path(name) +
               ")'\" misc_timeout 1 delay_loop 0.05 retry 0" + (dynamic ? " misc_dynamic" : "") +
               " }";
    }

    Config load(const std::string& body) {
        ParseOutcome out = parse_config(std::string(kPrelude) + body, "t.conf");
        EXPECT_TRUE(out.config) << ::testing::PrintToString(out.errors);
        return out.config ? *out.config : Config{};
    }
    void start(const Config& cfg) {
        mgr_->configure(cfg);
        auto r = config_apply(director_, mgr_->effective(cfg));
        ASSERT_TRUE(r) << r.error();
    }
    // Runs the checks until pred holds (fails the test after 3 s).
    template <typename Pred>
    void until(Pred pred, const char* what) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        while (!pred() && std::chrono::steady_clock::now() < end) mgr_->run_once(10);
        EXPECT_TRUE(pred()) << "not reached: " << what << "\nlog:\n"
                            << ::testing::PrintToString(log_);
    }
    // The dests of service TCP vip:80 as "addr:port=weight", in order.
    std::vector<std::string> dests(const char* vip = "10.10.1.100") {
        std::vector<std::string> out;
        auto svc = director_.service_find(lb::make_service_key(6, *net::parse_inet(vip), 80));
        if (!svc) return {"<no service>"};
        for (const auto& d : svc->dests)
            out.push_back(net::to_string(net::InetEndpoint{d->addr, d->port}) + "=" +
                          std::to_string(d->weight.load()));
        std::sort(out.begin(), out.end());
        return out;
    }
    using V = std::vector<std::string>;

    std::filesystem::path dir_;
    lb::Director director_;
    std::unique_ptr<Manager> mgr_;
    std::vector<std::string> log_;
};

TEST_F(ManagerTest, DownRemovesInhibitZeroesMiscDynamicSetsTheWeight) {
    set("a", 0);
    set("b", 0);
    set("c", 0);
    const Config cfg = load(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    real_server 10.10.2.2 80 { weight 5 )" +
                            misc("a") + R"( }
    real_server 10.10.2.3 80 { weight 5 inhibit_on_failure )" +
                            misc("b") + R"( }
    real_server 10.10.2.4 80 { weight 5 )" +
                            misc("c", true) + R"( }
    real_server 10.10.2.5 80 { weight 1 }
}
)");
    start(cfg);
    EXPECT_EQ(mgr_->checker_count(), 3u);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=5", "10.10.2.3:80=5", "10.10.2.4:80=5", "10.10.2.5:80=1"}));
    const uint64_t gen = director_.snapshot()->generation;

    set("a", 1);
    until([&] { return dests().size() == 3; }, "10.10.2.2 removed");
    EXPECT_EQ(dests(), (V{"10.10.2.3:80=5", "10.10.2.4:80=5", "10.10.2.5:80=1"}));
    EXPECT_GT(director_.snapshot()->generation, gen);  // committed: the workers see it
    set("b", 1);
    until([&] { return dests()[0] == "10.10.2.3:80=0"; }, "10.10.2.3 inhibited");
    set("c", 12);  // misc_dynamic: weight 12 - 2
    until([&] { return dests()[1] == "10.10.2.4:80=10"; }, "10.10.2.4 weight 10");
    set("c", 0);  // exit 0: the configured weight again
    until([&] { return dests()[1] == "10.10.2.4:80=5"; }, "10.10.2.4 weight 5");
    set("a", 0);
    until([&] { return dests().size() == 4; }, "10.10.2.2 back");
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=5", "10.10.2.3:80=0", "10.10.2.4:80=5", "10.10.2.5:80=1"}));

    // check show, and xvsctl's table of it.
    const nlohmann::json show = mgr_->show();
    ASSERT_EQ(show.size(), 3u);
    const auto b = std::find_if(show.begin(), show.end(),
                                [](const auto& j) { return j["dest"] == "10.10.2.3:80"; });
    ASSERT_NE(b, show.end());
    EXPECT_EQ((*b)["state"], "down");
    EXPECT_EQ((*b)["dest_state"], "inhibited");
    EXPECT_EQ((*b)["weight"], 0);
    EXPECT_EQ((*b)["type"], "MISC_CHECK");
    EXPECT_EQ((*b)["service"], "TCP 10.10.1.100:80");
    EXPECT_EQ((*b)["last"], "exit 1");
    auto table = format_checks(show, (*b)["time"].get<int64_t>() + 3);
    ASSERT_TRUE(table);
    EXPECT_THAT(*table, HasSubstr("SERVICE"));
    EXPECT_THAT(*table,
                HasSubstr("10.10.2.3:80  MISC_CHECK  down (inhibited)  0       exit 1 (3s ago)"));
}

TEST_F(ManagerTest, QuorumWithHysteresisBringsTheSorryServer) {
    set("a", 0);
    set("b", 0);
    const Config cfg = load(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    quorum 3
    hysteresis 1
    sorry_server 10.10.2.250 80
    quorum_down "/bin/sh -c 'echo down >> )" +
                            path("q") + R"('"
    quorum_up "/bin/sh -c 'echo up >> )" +
                            path("q") + R"('"
    real_server 10.10.2.2 80 { weight 2 )" +
                            misc("a") + R"( }
    real_server 10.10.2.3 80 { weight 2 )" +
                            misc("b") + R"( }
}
)");
    start(cfg);
    const std::string owner = "TCP 10.10.1.100:80";
    EXPECT_EQ(mgr_->quorum_up(owner), true);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=2", "10.10.2.3:80=2"}));
    set("a", 1);  // live 2: 2 + 1 is not below 3, the quorum holds
    until(
        [&] {
            return mgr_->rs_alive(owner, {*net::parse_inet("10.10.2.2"), 80}) == false;
        },
        "a down");
    EXPECT_EQ(mgr_->quorum_up(owner), true);
    EXPECT_EQ(dests(), (V{"10.10.2.3:80=2"}));
    set("b", 1);  // live 0: lost, the sorry server replaces them
    until([&] { return mgr_->quorum_up(owner) == false; }, "quorum lost");
    EXPECT_EQ(dests(), (V{"10.10.2.250:80=1"}));
    set("b", 0);  // live 2: below 3 + 1, still lost; b stays out while the sorry server serves
    until(
        [&] {
            return mgr_->rs_alive(owner, {*net::parse_inet("10.10.2.3"), 80}) == true;
        },
        "b up");
    EXPECT_EQ(mgr_->quorum_up(owner), false);
    EXPECT_EQ(dests(), (V{"10.10.2.250:80=1"}));
    set("a", 0);  // live 4: gained
    until([&] { return mgr_->quorum_up(owner) == true; }, "quorum gained");
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=2", "10.10.2.3:80=2"}));
    until(
        [&] {
            std::ifstream in(path("q"));
            std::string all((std::istreambuf_iterator<char>(in)), {});
            return all == "down\nup\n";
        },
        "quorum_down then quorum_up ran");
}

TEST_F(ManagerTest, SorryServerInhibitAndAlpha) {
    set("a", 1);
    const Config cfg = load(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    alpha
    sorry_server 10.10.2.250 80
    sorry_server_inhibit
    real_server 10.10.2.2 80 { weight 4 inhibit_on_failure )" +
                            misc("a") + R"( }
}
)");
    // alpha: the real server starts down, so the quorum (1) is lost from the start.
    start(cfg);
    EXPECT_EQ(dests(), (V{"10.10.2.250:80=1", "10.10.2.2:80=0"}));
    set("a", 0);
    until([&] { return dests() == V{"10.10.2.250:80=0", "10.10.2.2:80=4"}; }, "a up, sorry at 0");
}

TEST_F(ManagerTest, ReloadKeepsUnchangedCheckersAndRestartsChangedOnes) {
    set("a", 1);
    set("b", 1);
    const std::string vs_head = "virtual_server 10.10.1.100 80 {\n    laddr_group_name lips\n";
    const Config cfg = load(vs_head + "    real_server 10.10.2.2 80 { " + misc("a") +
                            " }\n    real_server 10.10.2.3 80 { " + misc("b") + " }\n}\n");
    start(cfg);
    const std::string owner = "TCP 10.10.1.100:80";
    until([&] { return dests().empty(); }, "both down");
    // b's checker changes (another script), a's stays: its down state survives the reload even
    // before any new attempt, while b's new checker starts afresh (up, no alpha).
    set("b2", 0);
    const Config next =
        load("\n" + vs_head + "    real_server 10.10.2.2 80 { weight 3 " + misc("a") +
             " }\n    real_server 10.10.2.3 80 { " + misc("b2") + " }\n}\n");
    // What the daemon applies before the checkers take next: the same as once they did.
    const Config preview = mgr_->effective_for(next);
    EXPECT_EQ(mgr_->rs_alive(owner, {*net::parse_inet("10.10.2.3"), 80}), false);  // untouched
    mgr_->configure(next);
    EXPECT_EQ(mgr_->rs_alive(owner, {*net::parse_inet("10.10.2.2"), 80}), false);
    EXPECT_EQ(mgr_->rs_alive(owner, {*net::parse_inet("10.10.2.3"), 80}), true);
    ASSERT_EQ(preview.virtual_servers.size(), 1u);
    const auto& pr = preview.virtual_servers[0].real_servers;
    const Config eff = mgr_->effective(next);
    const auto& er = eff.virtual_servers[0].real_servers;
    ASSERT_EQ(pr.size(), er.size());
    for (size_t i = 0; i < pr.size(); ++i) {
        EXPECT_EQ(pr[i].addr, er[i].addr);
        EXPECT_EQ(pr[i].weight, er[i].weight);
    }
    ASSERT_TRUE(config_apply(director_, preview));
    EXPECT_EQ(dests(), (V{"10.10.2.3:80=1"}));
    set("a", 0);
    until([&] { return dests().size() == 2; }, "a back with its new weight");
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=3", "10.10.2.3:80=1"}));
    // A removed service stops its checks.
    mgr_->configure(load("virtual_server 10.10.1.101 80 { laddr_group_name lips }\n"));
    EXPECT_EQ(mgr_->checker_count(), 0u);
}

TEST_F(ManagerTest, NotifyScriptsAndOmegaAtShutdown) {
    set("a", 0);
    const Config cfg = load(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    omega
    quorum 0
    quorum_down "/bin/sh -c 'echo quorum_down >> )" +
                            path("n") + R"('"
    real_server 10.10.2.2 80 {
        notify_up "/bin/sh -c 'echo up >> )" +
                            path("n") + R"('"
        notify_down "/bin/sh -c 'echo down >> )" +
                            path("n") + R"('"
        )" + misc("a") + R"(
    }
}
)");
    start(cfg);
    set("a", 1);
    until([&] { return dests().empty(); }, "down");
    set("a", 0);
    until([&] { return dests().size() == 1; }, "up");
    mgr_->run_once(50);
    mgr_->shutdown(3000);
    std::ifstream in(path("n"));
    std::string all((std::istreambuf_iterator<char>(in)), {});
    // notify_down and notify_up on the changes (quorum 0 is never lost); omega: notify_down
    // and quorum_down at the end (their order is the scripts' race).
    EXPECT_EQ(all.substr(0, 8), "down\nup\n");
    EXPECT_THAT(all.substr(8), HasSubstr("down\n"));
    EXPECT_THAT(all.substr(8), HasSubstr("quorum_down\n"));
}

TEST_F(ManagerTest, GroupServicesShareTheirCheckers) {
    set("a", 0);
    const Config cfg = load(R"(virtual_server_group web { 10.10.1.100-102 80 }
virtual_server group web {
    laddr_group_name lips
    real_server 10.10.2.2 80 { )" +
                            misc("a") + R"( }
}
)");
    start(cfg);
    EXPECT_EQ(mgr_->checker_count(), 1u);  // one checker for the three VIPs
    set("a", 1);
    until([&] { return dests("10.10.1.102").empty(); }, "down on every VIP of the group");
    EXPECT_TRUE(dests("10.10.1.100").empty());
    EXPECT_TRUE(dests("10.10.1.101").empty());
    // The status page's view: the real server once per VIP, down, with its checker's result.
    const std::vector<DestHealth> health = mgr_->dest_health();
    ASSERT_EQ(health.size(), 3u);
    for (const char* vip : {"10.10.1.100", "10.10.1.101", "10.10.1.102"}) {
        const auto key = lb::make_service_key(6, *net::parse_inet(vip), 80);
        const auto it = std::find_if(health.begin(), health.end(),
                                     [&](const DestHealth& h) { return h.key == key; });
        ASSERT_NE(it, health.end()) << vip;
        EXPECT_EQ(net::to_string(net::InetEndpoint{it->addr, it->port}), "10.10.2.2:80");
        EXPECT_EQ(it->state, "down");
        EXPECT_TRUE(it->checked);
        EXPECT_EQ(it->last, "MISC_CHECK: exit 1");
        EXPECT_GT(it->last_time, 0);
    }
}

// A reload whose apply fails (here: an FNAT virtual server without local addresses) must leave
// the checkers on the running configuration: the daemon calls configure() only after
// config_apply(effective_for(next)) succeeded, and effective_for changes nothing.
TEST_F(ManagerTest, FailingReloadLeavesTheCheckersUnchanged) {
    set("a", 0);
    set("a2", 0);
    const Config cfg = load(
        "virtual_server 10.10.1.100 80 {\n    laddr_group_name lips\n"
        "    real_server 10.10.2.2 80 { " +
        misc("a") + " }\n}\n");
    start(cfg);
    const nlohmann::json before = mgr_->show();
    Config next = load(
        "virtual_server 10.10.1.100 80 {\n    laddr_group_name lips\n"
        "    real_server 10.10.2.2 80 { " +
        misc("a2") +
        " }\n"
        "    real_server 10.10.2.3 80 { " +
        misc("a2") +
        " }\n}\n"
        "virtual_server 10.10.1.101 80 {\n    laddr_group_name lips\n}\n");
    // What the parser's checks cannot see but the apply refuses (on the daemon: live state).
    next.virtual_servers.back().laddr_group.clear();
    const auto applied = config_apply(director_, mgr_->effective_for(next));
    ASSERT_FALSE(applied);
    EXPECT_THAT(applied.error(), HasSubstr("laddr_group_name"));
    EXPECT_EQ(mgr_->checker_count(), 1u);
    const nlohmann::json after = mgr_->show();
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0]["dest"], before[0]["dest"]);
    // Still the running checker (script a): it takes a down, which a2 would not have.
    set("a", 1);
    until([&] { return dests().empty(); }, "10.10.2.2 down by the running checker");
}

// passive_check: connection failures the workers count on the dest mark it down at once (not
// when failures are outnumbered by successes); only its active check brings it back.
TEST_F(ManagerTest, PassiveFailuresMarkDownAndOnlyTheActiveCheckBringsBack) {
    set("a", 0);
    set("b", 0);
    auto slow = [&](const std::string& name) {  // first attempt at once, the next 1.5 s later
        return "MISC_CHECK { misc_path \"/bin/sh -c 'exit $(cat " + path(name) +
               ")'\" misc_timeout 1 delay_loop 1.5 retry 0 }";
    };
    const Config cfg = load(R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    passive_check { failures 3 window 1 }
    real_server 10.10.2.2 80 {
        notify_down "/bin/sh -c 'echo down >> )" +
                            path("n") + R"('"
        )" + slow("a") + R"(
    }
    real_server 10.10.2.3 80 { )" +
                            slow("b") + R"( }
    real_server 10.10.2.4 80 { weight 1 }
}
)");
    ASSERT_TRUE(cfg.virtual_servers[0].real_servers[0].health.passive);
    EXPECT_EQ(cfg.virtual_servers[0].real_servers[0].health.passive->failures, 3u);
    EXPECT_EQ(cfg.virtual_servers[0].real_servers[0].health.passive->window_ms, 1000u);
    EXPECT_FALSE(cfg.virtual_servers[0].real_servers[2].health.passive);  // no checker
    start(cfg);
    until([&] { return mgr_->attempts() >= 2; }, "first checks done");
    auto svc = director_.service_find(lb::make_service_key(6, *net::parse_inet("10.10.1.100"), 80));
    ASSERT_TRUE(svc);
    auto dest = [&](const char* a) {
        for (const auto& d : svc->dests)
            if (d->addr == *net::parse_inet(a)) return d;
        return std::shared_ptr<lb::Dest>{};
    };
    auto run_for = [&](int ms) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        while (std::chrono::steady_clock::now() < end) mgr_->run_once(10);
    };
    run_for(250);  // baselines read
    // b: 6 failures but 20 conns accepted: it stays.
    dest("10.10.2.3")->stats[0].conn_ok = 20;
    dest("10.10.2.3")->stats[0].conn_fail = 6;
    // a: 2 failures, below 3.
    const auto a = dest("10.10.2.2");
    a->stats[0].conn_fail = 2;
    run_for(250);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=1", "10.10.2.3:80=1", "10.10.2.4:80=1"}));
    const uint64_t attempts = mgr_->attempts();
    a->stats[0].conn_fail = 4;  // 4 within 1 s: down
    until([&] { return dests().size() == 2; }, "10.10.2.2 removed by passive checking");
    EXPECT_EQ(dests(), (V{"10.10.2.3:80=1", "10.10.2.4:80=1"}));
    EXPECT_EQ(mgr_->attempts(), attempts);  // no active check was involved
    const std::string owner = "TCP 10.10.1.100:80";
    EXPECT_EQ(mgr_->rs_alive(owner, {*net::parse_inet("10.10.2.2"), 80}), false);
    EXPECT_THAT(::testing::PrintToString(log_), HasSubstr("passive: 4 failed connections"));
    const nlohmann::json show = mgr_->show();
    const auto j = std::find_if(show.begin(), show.end(),
                                [](const auto& x) { return x["dest"] == "10.10.2.2:80"; });
    ASSERT_NE(j, show.end());
    EXPECT_EQ((*j)["state"], "down");
    EXPECT_THAT((*j)["last"].get<std::string>(), HasSubstr("passive: 4 failed"));
    until(
        [&] {
            std::ifstream in(path("n"));
            std::string all((std::istreambuf_iterator<char>(in)), {});
            return all == "down\n";
        },
        "notify_down ran");
    // Down, nothing passive brings it back; its MISC_CHECK (exit 0) does, at its next attempt.
    until([&] { return dests().size() == 3; }, "10.10.2.2 back through its active check");
    EXPECT_GT(mgr_->attempts(), attempts);
    EXPECT_EQ(mgr_->rs_alive(owner, {*net::parse_inet("10.10.2.2"), 80}), true);
}

}  // namespace
}  // namespace xvs::ctl::health

namespace xvs::ctl::health {
namespace {

// A mark's IPv4 and IPv6 services are services of their own: each real server's checks reach
// the dest of its own service (the fwmark key of the service's family), not the other's.
TEST_F(ManagerTest, FwmarkServicesOfBothFamiliesEachGetTheirChecks) {
    set("a", 0);
    set("b", 0);
    const Config cfg = load(R"(fwmark_defs { mark 1 { 10.10.1.100 80 tcp
                             2001:db8:1::100 80 tcp } }
virtual_server fwmark 1 {
    laddr_group_name lips
    real_server 10.10.2.2 80 { )" +
                            misc("a") + R"( }
}
virtual_server fwmark 1 {
    lb_kind NAT
    real_server 2001:db8:2::2 80 { )" +
                            misc("b") + R"( }
}
)");
    start(cfg);
    EXPECT_EQ(mgr_->checker_count(), 2u);
    auto count = [&](bool v6) {
        auto svc = director_.service_find(lb::make_fwmark_key(1, v6));
        return svc ? svc->dests.size() : size_t{99};
    };
    EXPECT_EQ(count(false), 1u);
    EXPECT_EQ(count(true), 1u);
    set("b", 1);
    until([&] { return count(true) == 0; }, "2001:db8:2::2 removed from FWM 1 IPv6");
    EXPECT_EQ(count(false), 1u);
    set("a", 1);
    until([&] { return count(false) == 0; }, "10.10.2.2 removed from FWM 1");
    set("b", 0);
    until([&] { return count(true) == 1; }, "2001:db8:2::2 back in FWM 1 IPv6");
    EXPECT_EQ(count(false), 0u);
}

}  // namespace
}  // namespace xvs::ctl::health
