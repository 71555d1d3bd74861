// Tests for src/ctl/controller_status.cpp: the status document of a small controller state (a
// service with two dests added through the control protocol, the health manager's view of
// them and of a third real server its check removed), rates and history across two rate ticks.
// No EAL: no workers, ports without ethdev stats.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ctl/controller.h"
#include "ctl/status_page.h"

namespace xvs::ctl {
namespace {

using nlohmann::json;
using std::chrono::seconds;

class ControllerStatusTest : public ::testing::Test {
  protected:
    ControllerStatusTest() {
        lb::PortEntry p;
        p.name = "lan0";
        EXPECT_TRUE(director_.port_add(p));
        PortInfoForCtl info;
        info.name = "lan0";
        info.has_stats = false;
        ctl_ = std::make_unique<Controller>(director_, std::vector<lb::Worker*>{},
                                            std::vector<PortInfoForCtl>{info},
                                            [] { return Result<void>{}; });
        const json svc = {{"proto", "tcp"}, {"vip", "10.0.0.1"}, {"port", 80}};
        json add = svc;
        add["sched"] = "wrr";
        add["synproxy"] = true;
        EXPECT_EQ(ctl_->handle({{"cmd", "add_service"}, {"service", add}})["ok"], true);
        for (const char* addr : {"192.168.1.2", "192.168.1.3"}) {
            json r = ctl_->handle(
                {{"cmd", "add_dest"},
                 {"service", svc},
                 {"dest", {{"addr", addr}, {"port", 8080}, {"weight", 2}, {"fwd", "fullnat"}}}});
            EXPECT_EQ(r["ok"], true) << r.dump();
        }
        key_ = lb::make_service_key(6, *net::parse_ipv4("10.0.0.1"), 80);
    }
    health::DestHealth health(const char* addr, const char* state, const char* last) {
        health::DestHealth h;
        h.key = key_;
        h.addr = *net::parse_inet(addr);
        h.port = 8080;
        h.state = state;
        h.checked = true;
        h.last = last;
        h.last_time = 1764790000;
        return h;
    }
    lb::Dest& dest(size_t i) { return *director_.service_find(key_)->dests.at(i); }
    lb::ServiceWorkerState& service_stats() { return director_.service_find(key_)->workers[0]; }

    lb::Director director_;
    std::unique_ptr<Controller> ctl_;
    lb::ServiceKey key_;
};

TEST_F(ControllerStatusTest, ServicesDestsAndHealth) {
    ctl_->set_dest_health([this] {
        return std::vector<health::DestHealth>{
            health("192.168.1.2", "up", "TCP_CHECK: connected"),
            // Down without inhibit_on_failure: the Director no longer has it.
            health("192.168.1.9", "down", "TCP_CHECK: connect: Connection refused <x>")};
    });
    dest(1).stats[0].conns = 7;
    dest(1).stats[0].active = 2;
    dest(1).stats[1].inactive = 3;
    const json st = ctl_->status_json();
    ASSERT_EQ(st["services"].size(), 1u);
    const json& s = st["services"][0];
    EXPECT_EQ(s["name"], "TCP 10.0.0.1:80");
    EXPECT_EQ(s["kind"], "TCP");
    EXPECT_EQ(s["vip"], "10.0.0.1");
    EXPECT_EQ(s["port"], 80);
    EXPECT_EQ(s["sched"], "wrr");
    EXPECT_EQ(s["flags"], (json{"syn_proxy"}));
    EXPECT_EQ(s["active"], 2);
    EXPECT_EQ(s["inactive"], 3);
    ASSERT_EQ(s["dests"].size(), 3u);
    const json& d0 = s["dests"][0];
    EXPECT_EQ(d0["name"], "192.168.1.2:8080");
    EXPECT_EQ(d0["health"], "up");
    EXPECT_EQ(d0["checked"], true);
    EXPECT_EQ(d0["check"], "TCP_CHECK: connected");
    EXPECT_EQ(d0["in_service"], true);
    EXPECT_EQ(d0["weight"], 2);
    EXPECT_EQ(d0["fwd"], "FNAT");
    const json& d1 = s["dests"][1];
    EXPECT_EQ(d1["name"], "192.168.1.3:8080");
    EXPECT_EQ(d1["health"], "up");
    EXPECT_EQ(d1["checked"], false);  // no entry from the checks: shown without one
    EXPECT_EQ(d1["conns"], 7);
    const json& d2 = s["dests"][2];
    EXPECT_EQ(d2["name"], "192.168.1.9:8080");
    EXPECT_EQ(d2["health"], "down");
    EXPECT_EQ(d2["in_service"], false);
    EXPECT_EQ(d2["weight"], 0);
    EXPECT_EQ(d2["check_time"], 1764790000);
    EXPECT_EQ(st["pools"]["conns"], (json{{"used", 0}, {"capacity", 0}}));
    EXPECT_EQ(st["workers"], json::array());
    EXPECT_EQ(st["drops"]["reasons"], json::array());
    // The rendered page escapes the check result and marks the down server.
    const std::string page = status_page_html(st);
    EXPECT_THAT(page, ::testing::HasSubstr("Connection refused &lt;x&gt;"));
    EXPECT_THAT(page, ::testing::HasSubstr("data-dest=\"192.168.1.9:8080\" data-health=\"down\""));
}

TEST_F(ControllerStatusTest, RatesAndHistoryAcrossTicks) {
    const auto t0 = std::chrono::steady_clock::now();
    ctl_->estimate_rates(t0);
    EXPECT_EQ(ctl_->status_json()["history"]["t"].size(), 0u);  // the first tick is the baseline
    ctl_->estimate_rates(t0 + seconds(2));
    service_stats().conns = 20;
    service_stats().inpkts = 100;
    service_stats().outpkts = 60;
    ctl_->estimate_rates(t0 + seconds(4));
    const json st = ctl_->status_json();
    ASSERT_EQ(st["history"]["t"].size(), 2u);
    const json& h = st["services"][0]["history"];
    // The charts take each interval's own rate: 20 conns, 100 and 60 packets over 2 s.
    EXPECT_EQ(h["cps"], (json{0.0, 10.0}));
    EXPECT_EQ(h["inpps"], (json{0.0, 50.0}));
    EXPECT_EQ(h["outpps"], (json{0.0, 30.0}));
    // The tables take the smoothed estimate (a quarter of the way, as ipvsadm --rate).
    EXPECT_DOUBLE_EQ(st["services"][0]["cps"].get<double>(), 2.5);
    EXPECT_EQ(st["services"][0]["conns"], 20);
    EXPECT_EQ(st["period_s"], 2.0);
}

}  // namespace
}  // namespace xvs::ctl
