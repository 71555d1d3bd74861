// Tests for src/ctl/controller.cpp: requests built exactly as xvsadm builds them (its own
// parse_ipvsadm_args + build_request) and hand-written xvsctl/malformed ones, sent through
// Controller::handle_line, with the Director's model and the replies checked against
// docs/control-protocol.md. No EAL: no workers, ports without ethdev stats.
#include "ctl/controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <set>

#include "ctl/ipvsadm_args.h"
#include "ctl/xvsadm_main.h"
#include "stack/counters.h"

namespace xvs::ctl {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using std::chrono::seconds;

net::Ipv4 ip(const char* text) { return *net::parse_ipv4(text); }

lb::ServiceKey key(uint8_t proto, const char* vip, uint16_t port) {
    return lb::make_service_key(proto, ip(vip), port);
}

class ControllerTest : public ::testing::Test {
protected:
    ControllerTest() {
        uint16_t id = 0;
        for (const char* name : {"wan0", "lan0"}) {
            lb::PortEntry p;
            p.name = name;
            p.port_id = id;
            p.mac = net::MacAddr{{0x02, 0, 0, 0, 0, uint8_t(id + 1)}};
            EXPECT_TRUE(director_.port_add(p));
            PortInfoForCtl info;
            info.name = name;
            info.dev = std::string("net_ring") + std::to_string(id);
            info.port_id = id;
            info.mac = p.mac;
            info.has_stats = false;
            ports.push_back(info);
            ++id;
        }
        ctl_ = std::make_unique<Controller>(director_, std::vector<lb::Worker*>{}, ports,
                                            [this]() -> Result<void> {
                                                ++reloads_;
                                                return reload_result_;
                                            });
    }

    // Sends a raw request line, returns the parsed reply.
    json send_line(const std::string& line) {
        std::string reply = ctl_->handle_line(line);
        EXPECT_EQ(reply.find('\n'), std::string::npos) << "reply must be one line";
        json r = json::parse(reply, nullptr, false);
        EXPECT_FALSE(r.is_discarded()) << reply;
        EXPECT_TRUE(r.contains("ok") && r["ok"].is_boolean()) << reply;
        if (r.contains("ok") && r["ok"] == false) {
            EXPECT_TRUE(r.contains("error") && r["error"].is_string()) << reply;
        }
        return r;
    }
    json send(const json& req) { return send_line(req.dump()); }

    // The request xvsadm sends for this command line.
    static json xvsadm(std::vector<std::string> args) {
        auto cmd = parse_ipvsadm_args(args);
        EXPECT_TRUE(cmd) << (cmd ? "" : cmd.error());
        return cmd ? build_request(*cmd) : json{};
    }
    json run(std::vector<std::string> args) { return send(xvsadm(std::move(args))); }

    // "ok" or the error text.
    std::string outcome(const json& reply) {
        if (reply.value("ok", false)) return "ok";
        return reply.value("error", std::string("<no error text>"));
    }
    std::string run_outcome(std::vector<std::string> args) { return outcome(run(std::move(args))); }

    void add_web_service() {
        ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "wrr"}), "ok");
        ASSERT_EQ(run_outcome({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.2:8080", "-w", "3",
                               "--fullnat"}),
                  "ok");
        ASSERT_EQ(run_outcome({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.3:8080", "-w", "0",
                               "--fullnat", "-x", "100", "-y", "50"}),
                  "ok");
        ASSERT_EQ(run_outcome({"-P", "-t", "10.0.0.1:80", "-z", "192.168.1.100", "-F", "lan0"}),
                  "ok");
    }

    json list_one(const char* vip_port, const char* proto_flag = "-t") {
        json r = run({"-L", "-n", proto_flag, vip_port});
        EXPECT_EQ(outcome(r), "ok");
        EXPECT_EQ(r["services"].size(), 1u);
        return r["services"].size() == 1 ? r["services"][0] : json{};
    }

    lb::Director director_;
    std::vector<PortInfoForCtl> ports;
    std::unique_ptr<Controller> ctl_;
    Result<void> reload_result_{};
    int reloads_ = 0;
};

// --- services ---------------------------------------------------------------------------------

TEST_F(ControllerTest, AddServiceAsXvsadmSendsIt) {
    json req = xvsadm({"-A", "-t", "10.0.0.1:80", "-s", "rr"});
    ASSERT_EQ(req["cmd"], "add_service");
    EXPECT_EQ(outcome(send(req)), "ok");
    auto svc = director_.service_find(key(6, "10.0.0.1", 80));
    ASSERT_TRUE(svc);
    EXPECT_EQ(svc->sched_name, "rr");
    EXPECT_EQ(svc->fwd, lb::FwdMode::FullNat);
    // Committed: the workers' snapshot has it, with the VIP owned.
    const lb::Snapshot* snap = director_.snapshot();
    ASSERT_TRUE(snap->service(6, ip("10.0.0.1"), net::hton16(80)));
    ASSERT_TRUE(snap->stack.own(ip("10.0.0.1")));
    EXPECT_EQ(snap->stack.own(ip("10.0.0.1"))->kind, stack::AddrKind::Vip);

    // Default scheduler (xvsadm sends "wlc" when none is given), and UDP.
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.1:53"}), "ok");
    auto dns = director_.service_find(key(17, "10.0.0.1", 53));
    ASSERT_TRUE(dns);
    EXPECT_EQ(dns->sched_name, "wlc");
    EXPECT_EQ(director_.services().size(), 2u);
}

// check_show answers what the daemon's health manager shows (none set: no checks).
TEST_F(ControllerTest, CheckShowAsksTheHealthManager) {
    json r = send(json{{"cmd", "check_show"}});
    EXPECT_EQ(outcome(r), "ok");
    EXPECT_EQ(r["checks"], json::array());
    ctl_->set_check_show([] { return json::array({json{{"dest", "10.10.2.2:80"}}}); });
    r = send(json{{"cmd", "check_show"}});
    ASSERT_EQ(r["checks"].size(), 1u);
    EXPECT_EQ(r["checks"][0]["dest"], "10.10.2.2:80");
}

// feedback_show answers what the health manager's feedback hub shows (none set: empty lists).
TEST_F(ControllerTest, FeedbackShowAsksTheHealthManager) {
    json r = send(json{{"cmd", "feedback_show"}});
    EXPECT_EQ(outcome(r), "ok");
    EXPECT_EQ(r["feedback"]["servers"], json::array());
    ctl_->set_feedback_show([] { return json{{"listeners", json::array()}, {"servers", {1}}}; });
    r = send(json{{"cmd", "feedback_show"}});
    EXPECT_EQ(r["feedback"]["servers"].size(), 1u);
}

// announce_show answers the VIP announcer's state (none set: null, routing not configured);
// metrics_extra is appended to the metrics body.
TEST_F(ControllerTest, AnnounceShowAndMetricsExtra) {
    json r = send(json{{"cmd", "announce_show"}});
    EXPECT_EQ(outcome(r), "ok");
    EXPECT_TRUE(r["announce"].is_null());
    ctl_->set_announce_show([] { return json{{"vips", json::array({1})}}; });
    r = send(json{{"cmd", "announce_show"}});
    EXPECT_EQ(r["announce"]["vips"].size(), 1u);
    ctl_->set_metrics_extra([] { return std::string("xvs_route_announced{vip=\"10.10.1.100\"} 1\n"); });
    const std::string m = ctl_->metrics();
    EXPECT_EQ(m.substr(m.size() - 41), "xvs_route_announced{vip=\"10.10.1.100\"} 1\n");
}

TEST_F(ControllerTest, AddServiceErrors) {
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr"}), "ok");
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr"}), "Service already exists");
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.2:80", "-s", "fastest"}), "Scheduler not found");
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.2:80", "-s", "nosuch"}), "Scheduler not found");
    EXPECT_EQ(director_.services().size(), 1u);
}

TEST_F(ControllerTest, UnsupportedServiceFeaturesAreRefusedNotIgnored) {
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.1:53", "-s", "rr", "-j"}),
              "syn_proxy needs protocol TCP (SYN cookies are a TCP handshake)");
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.1:53", "-s", "rr", "--toa", "on"}),
              "toa on needs protocol TCP (UDP clients get UOA)");
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr", "--toa", "on", "--proxy-protocol",
                           "v2"}),
              "toa on cannot be combined with proxy_protocol v2");
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.1:53", "-s", "rr", "--proxy-protocol", "v1"}),
              "proxy_protocol v1 has no UDP form (use v2)");
    // Once accepted and never used: a flag rr has no use for, persistence engines, -M without -p.
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr", "-b", "flag-1"}),
              "scheduler flag flag-1 does not apply to scheduler rr (only sh and mh take -b "
              "sh-/mh-fallback,port)");
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr", "-p", "--pe", "sip"}),
              "persistence_engine sip (--pe sip) needs protocol UDP");
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.1:5060", "-s", "rr", "--pe", "sip"}),
              "persistence engine sip needs a persistent service: add -p [timeout] "
              "(persistence_timeout)");
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.1:5060", "-s", "rr", "-p", "--pe", "h323"}),
              "unknown persistence engine (--pe): the one there is is sip");
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr", "-M", "255.255.255.0"}),
              "the persistence netmask (-M) needs a persistent service: add -p [timeout] or "
              "remove -M");
    EXPECT_TRUE(director_.services().empty());
    // The "off" spellings are fine.
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr", "--toa", "off",
                           "--proxy-protocol", "off"}),
              "ok");
    // TOA is supported on TCP services, and edit_service switches it.
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80", "-s", "rr", "--toa", "on"}), "ok");
    EXPECT_TRUE(director_.service_find(key(6, "10.0.0.1", 80))->flags & lb::kSvcFlagToa);
    // And edit_service refuses the others the same way, leaving the service as it was.
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80", "-s", "wrr", "-b", "flag-2"}),
              "scheduler flag flag-2 does not apply to scheduler wrr (only sh and mh take -b "
              "sh-/mh-fallback,port)");
    EXPECT_EQ(director_.service_find(key(6, "10.0.0.1", 80))->sched_name, "rr");
}

TEST_F(ControllerTest, SynProxyIsAcceptedAndListed) {
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr", "-j"}), "ok");
    EXPECT_EQ(director_.service_find(key(6, "10.0.0.1", 80))->flags, lb::kSvcFlagSynProxy);
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80", "-s", "rr"}), "ok");
    EXPECT_EQ(director_.service_find(key(6, "10.0.0.1", 80))->flags, 0u);
}

TEST_F(ControllerTest, OpsNeedsDrOrTunRealServers) {
    ASSERT_EQ(run_outcome({"-A", "-u", "10.0.0.1:53", "-s", "rr", "-o"}), "ok");
    auto svc = director_.service_find(key(17, "10.0.0.1", 53));
    EXPECT_TRUE(svc->flags & lb::kSvcFlagOps);
    EXPECT_EQ(run_outcome({"-a", "-u", "10.0.0.1:53", "-r", "192.168.1.2:53", "--fullnat"}),
              "real server 192.168.1.2: ops (one-packet scheduling) keeps no connection, so FNAT "
              "replies could not be translated back: use DR or TUN real servers");
    EXPECT_EQ(run_outcome({"-a", "-u", "10.0.0.1:53", "-r", "192.168.1.2:53", "-i"}), "ok");
    json r = send(xvsadm({"-L", "-n"}));
    ASSERT_EQ(outcome(r), "ok");
    EXPECT_EQ(r["services"][0]["ops"], true);
    // A NAT service cannot become ops, and ops off again is fine.
    ASSERT_EQ(run_outcome({"-A", "-u", "10.0.0.2:53", "-s", "rr"}), "ok");
    ASSERT_EQ(run_outcome({"-a", "-u", "10.0.0.2:53", "-r", "192.168.1.3:53", "-m"}), "ok");
    EXPECT_EQ(run_outcome({"-E", "-u", "10.0.0.2:53", "-s", "rr", "-o"}),
              "real server 192.168.1.3: ops (one-packet scheduling) keeps no connection, so NAT "
              "replies could not be translated back: use DR or TUN real servers");
    EXPECT_EQ(run_outcome({"-E", "-u", "10.0.0.1:53", "-s", "rr"}), "ok");
    EXPECT_FALSE(svc->flags & lb::kSvcFlagOps);
}

TEST_F(ControllerTest, EverySchedulerAndItsFlags) {
    uint16_t port = 1000;
    for (std::string_view name : lb::sched_names()) {
        const std::string vs = "10.0.0.1:" + std::to_string(++port);
        EXPECT_EQ(run_outcome({"-A", "-t", vs, "-s", std::string(name)}), "ok") << name;
    }
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.2:80", "-s", "sh", "-b", "sh-port,sh-fallback"}),
              "ok");
    EXPECT_EQ(director_.service_find(key(6, "10.0.0.2", 80))->sched_flags,
              lb::kSchedFlagFallback | lb::kSchedFlagPort);
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.2:53", "-s", "mh", "-b", "mh-port"}), "ok");
    json r = send(xvsadm({"-L", "-n"}));
    ASSERT_EQ(outcome(r), "ok");
    std::map<std::string, json> flags;
    for (const auto& s : r["services"])
        flags[s["sched"].get<std::string>() + s["proto"].get<std::string>()] = s["sched_flags"];
    EXPECT_EQ(flags["shtcp"], json({"sh-fallback", "sh-port"}));
    EXPECT_EQ(flags["mhudp"], json({"mh-port"}));
    // -E changes the flags (xvsadm itself refuses another scheduler's named flags).
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.2:80", "-s", "sh", "-b", "flag-2"}), "ok");
    EXPECT_EQ(director_.service_find(key(6, "10.0.0.2", 80))->sched_flags, lb::kSchedFlagPort);
    json bad = xvsadm({"-E", "-t", "10.0.0.2:80", "-s", "sh"});
    bad["service"]["sched_flags"] = json({"sh-port", "nosuch"});
    EXPECT_EQ(outcome(send(bad)),
              "invalid scheduler flag (sh-fallback, sh-port, mh-fallback, mh-port, flag-1..3)");
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.2:80", "-s", "mh", "-b", "flag-3"}),
              "scheduler flag flag-3 does not apply to scheduler mh (only sh and mh take -b "
              "sh-/mh-fallback,port)");
}

TEST_F(ControllerTest, MhTableSizeFromJsonIsCheckedAndKeptByEdit) {
    json req = xvsadm({"-A", "-t", "10.0.0.1:80", "-s", "mh"});
    req["service"]["mh_table_size"] = 65536;
    EXPECT_THAT(outcome(send(req)), StartsWith("mh table size 65536 must be a prime number"));
    req["service"]["mh_table_size"] = 251;
    ASSERT_EQ(outcome(send(req)), "ok");
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80", "-s", "mh", "-b", "mh-fallback"}), "ok");
    auto svc = director_.service_find(key(6, "10.0.0.1", 80));
    EXPECT_EQ(svc->mh_table_size, 251u);  // ipvsadm has no option for it: -E keeps it
    EXPECT_EQ(svc->sched_flags, lb::kSchedFlagFallback);
    EXPECT_EQ(director_.snapshot()->service(6, ip("10.0.0.1"), net::hton16(80))->plan.table.size(),
              251u);
}

TEST_F(ControllerTest, ProxyProtocolIsAcceptedAndListed) {
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr", "--proxy-protocol", "v1"}), "ok");
    EXPECT_EQ(director_.service_find(key(6, "10.0.0.1", 80))->flags, lb::kSvcFlagPpV1);
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.1:53", "-s", "rr", "--proxy-protocol", "v2"}), "ok");
    EXPECT_EQ(director_.service_find(key(17, "10.0.0.1", 53))->flags, lb::kSvcFlagPpV2);
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80", "-s", "rr", "--proxy-protocol", "v2"}), "ok");
    EXPECT_EQ(director_.service_find(key(6, "10.0.0.1", 80))->flags, lb::kSvcFlagPpV2);
    json r = send(xvsadm({"-L", "-n"}));
    ASSERT_EQ(outcome(r), "ok");
    std::set<std::string> pp;
    for (const auto& s : r["services"]) pp.insert(s["proto"].get<std::string>() + ":" + s["proxy_protocol"].get<std::string>());
    EXPECT_EQ(pp, (std::set<std::string>{"tcp:v2", "udp:v2"}));
    // Switching it off again.
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80", "-s", "rr", "--proxy-protocol", "off"}), "ok");
    EXPECT_EQ(director_.service_find(key(6, "10.0.0.1", 80))->flags, 0u);
}

TEST_F(ControllerTest, UoaIsAcceptedOnUdpAndListed) {
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.1:53", "-s", "rr", "--uoa", "opp"}), "ok");
    EXPECT_EQ(director_.service_find(key(17, "10.0.0.1", 53))->flags, lb::kSvcFlagUoaOpp);
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.1:54", "-s", "rr", "--uoa", "ipo"}), "ok");
    EXPECT_EQ(director_.service_find(key(17, "10.0.0.1", 54))->flags, lb::kSvcFlagUoaIpo);
    json r = send(xvsadm({"-L", "-n"}));
    ASSERT_EQ(outcome(r), "ok");
    std::set<std::string> uoa;
    for (const auto& s : r["services"])
        uoa.insert(std::to_string(s["port"].get<int>()) + ":" + s["uoa"].get<std::string>());
    EXPECT_EQ(uoa, (std::set<std::string>{"53:opp", "54:ipo"}));
    // -E replaces every attribute: ipo, then off again.
    EXPECT_EQ(run_outcome({"-E", "-u", "10.0.0.1:53", "-s", "rr", "--uoa", "ipo"}), "ok");
    EXPECT_EQ(director_.service_find(key(17, "10.0.0.1", 53))->flags, lb::kSvcFlagUoaIpo);
    EXPECT_EQ(run_outcome({"-E", "-u", "10.0.0.1:53", "-s", "rr"}), "ok");
    EXPECT_EQ(director_.service_find(key(17, "10.0.0.1", 53))->flags, 0u);
}

TEST_F(ControllerTest, UoaRefusals) {
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr", "--uoa", "opp"}),
              "uoa opp needs protocol UDP (TCP clients get toa or proxy_protocol)");
    EXPECT_EQ(run_outcome({"-A", "-u", "10.0.0.1:53", "-s", "rr", "--uoa", "ipo",
                           "--proxy-protocol", "v2"}),
              "uoa ipo cannot be combined with proxy_protocol v2");
    json req = xvsadm({"-A", "-u", "10.0.0.1:53", "-s", "rr"});
    req["service"]["uoa"] = "yes";
    EXPECT_EQ(outcome(send(req)), "'uoa' must be \"opp\", \"ipo\" or \"off\"");
    req["service"]["uoa"] = true;
    EXPECT_EQ(outcome(send(req)), "'uoa' must be \"opp\", \"ipo\" or \"off\"");
    EXPECT_TRUE(director_.services().empty());
}

TEST_F(ControllerTest, PersistentServices) {
    EXPECT_EQ(
        run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr", "-p", "300", "-M", "255.255.255.0"}),
        "ok");
    auto svc = director_.service_find(key(6, "10.0.0.1", 80));
    ASSERT_TRUE(svc);
    EXPECT_EQ(svc->persistence_s, 300u);
    EXPECT_EQ(svc->persist_prefix, 24u);
    EXPECT_EQ(director_.snapshot()->service(6, ip("10.0.0.1"), net::hton16(80))->persist_s, 300u);
    // -p alone is ipvsadm's 360 s; -E applies to new conns.
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80", "-s", "rr", "-p"}), "ok");
    EXPECT_EQ(svc->persistence_s, 360u);
    EXPECT_EQ(svc->persist_prefix, 32u);
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80", "-s", "rr"}), "ok");
    EXPECT_EQ(svc->persistence_s, 0u);
    // Port 0 is for persistent services only.
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:0", "-s", "rr", "-p", "60"}), "ok");
    json list = send(json{{"cmd", "list"}});
    bool found = false;
    for (const auto& s : list["services"])
        if (s.value("port", -1) == 80) {
            EXPECT_EQ(s["persistent"], 0);
            EXPECT_EQ(s["netmask"], "255.255.255.255");
            found = true;
        }
    EXPECT_TRUE(found);
}

TEST_F(ControllerTest, FwmarkServices) {
    json req = xvsadm({"-A", "-f", "1", "-s", "rr", "-p", "120"});
    ASSERT_EQ(req["service"]["fwmark"], 1);
    EXPECT_EQ(outcome(send(req)), "ok");
    auto svc = director_.service_find(lb::make_fwmark_key(1, false));
    ASSERT_TRUE(svc);
    EXPECT_EQ(svc->persistence_s, 120u);
    EXPECT_EQ(run_outcome({"-a", "-f", "1", "-r", "192.168.1.2:80", "-m"}), "ok");
    ASSERT_EQ(svc->dests.size(), 1u);
    EXPECT_EQ(run_outcome({"-L", "-n", "-f", "1"}), "ok");
    json list = send(json{{"cmd", "list"}});
    ASSERT_EQ(list["services"].size(), 1u);
    EXPECT_EQ(list["services"][0]["fwmark"], 1);
    EXPECT_EQ(list["services"][0]["persistent"], 120);
    EXPECT_EQ(run_outcome({"-D", "-f", "1"}), "ok");
    EXPECT_TRUE(director_.services().empty());
    EXPECT_EQ(run_outcome({"-D", "-f", "1"}), "No such service");
}

// A mark has an IPv4 and an IPv6 service (ipvsadm -f N, -f N -6): "af" in the key tells them
// apart in every command and in the list reply; -M of the IPv6 one is a prefix length.
TEST_F(ControllerTest, FwmarkServicesPerFamily) {
    ASSERT_EQ(run_outcome({"-A", "-f", "1", "-s", "rr"}), "ok");
    json req = xvsadm({"-A", "-f", "1", "-6", "-s", "wrr", "-p", "120", "-M", "64"});
    ASSERT_EQ(req["service"]["af"], "ipv6");
    EXPECT_EQ(outcome(send(req)), "ok");
    EXPECT_EQ(run_outcome({"-A", "-f", "1", "-6", "-s", "rr"}), "Service already exists");
    auto v4 = director_.service_find(lb::make_fwmark_key(1, false));
    auto v6 = director_.service_find(lb::make_fwmark_key(1, true));
    ASSERT_TRUE(v4 && v6);
    EXPECT_EQ(v6->sched_name, "wrr");
    EXPECT_EQ(v6->persist_prefix, 64u);
    EXPECT_EQ(run_outcome({"-a", "-f", "1", "-6", "-r", "[2001:db8::2]:80", "-m"}), "ok");
    EXPECT_NE(run_outcome({"-a", "-f", "1", "-6", "-r", "192.168.1.2:80", "-m"}), "ok");
    EXPECT_EQ(run_outcome({"-a", "-f", "1", "-r", "[2001:db8::2]:80", "-m"}),
              "real server 2001:db8::2 is IPv6 behind IPv4 firewall-mark service 1 (IPv4): xvs "
              "translates IPv6 to IPv4 only (FNAT64), not back; use an IPv4 real server");
    ASSERT_EQ(v6->dests.size(), 1u);
    EXPECT_TRUE(v4->dests.empty());
    EXPECT_EQ(run_outcome({"-e", "-f", "1", "-6", "-r", "[2001:db8::2]:80", "-m", "-w", "5"}),
              "ok");
    EXPECT_EQ(v6->dests[0]->weight.load(), 5);
    EXPECT_EQ(run_outcome({"-E", "-f", "1", "-6", "-s", "lc", "-p", "60", "-M", "48"}), "ok");
    EXPECT_EQ(v6->sched_name, "lc");
    EXPECT_EQ(v6->persist_prefix, 48u);
    EXPECT_EQ(v4->sched_name, "rr");
    json list = send(json{{"cmd", "list"}});
    ASSERT_EQ(list["services"].size(), 2u);
    for (const auto& s : list["services"]) {
        EXPECT_EQ(s["fwmark"], 1);
        EXPECT_EQ(s["netmask"], s["af"] == "ipv6" ? "48" : "255.255.255.255");
    }
    EXPECT_EQ(run_outcome({"-d", "-f", "1", "-6", "-r", "[2001:db8::2]:80"}), "ok");
    EXPECT_TRUE(v6->dests.empty());
    EXPECT_EQ(run_outcome({"-D", "-f", "1", "-6"}), "ok");
    EXPECT_FALSE(director_.service_find(lb::make_fwmark_key(1, true)));
    EXPECT_TRUE(director_.service_find(lb::make_fwmark_key(1, false)));
    EXPECT_EQ(run_outcome({"-D", "-f", "1", "-6"}), "No such service");
    EXPECT_EQ(
        outcome(send(json{{"cmd", "del_service"}, {"service", {{"fwmark", 1}, {"af", "ipv5"}}}})),
        "Invalid argument: 'af' must be ipv4 or ipv6");
}

TEST_F(ControllerTest, EditService) {
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr"}), "ok");
    uint64_t gen = director_.snapshot()->generation;
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80", "-s", "wlc"}), "ok");
    EXPECT_EQ(director_.service_find(key(6, "10.0.0.1", 80))->sched_name, "wlc");
    EXPECT_GT(director_.snapshot()->generation, gen);
    EXPECT_EQ(director_.snapshot()->service(6, ip("10.0.0.1"), net::hton16(80))->sched->name,
              "wlc");
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80", "-s", "nosuch"}), "Scheduler not found");
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.9:80", "-s", "rr"}), "No such service");
}

TEST_F(ControllerTest, DelServiceAndClear) {
    EXPECT_EQ(run_outcome({"-D", "-t", "10.0.0.1:80"}), "No such service");
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80"}), "ok");
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.2:80"}), "ok");
    ASSERT_EQ(run_outcome({"-A", "-u", "10.0.0.2:80"}), "ok");
    EXPECT_EQ(run_outcome({"-D", "-u", "10.0.0.1:80"}), "No such service");  // proto matters
    EXPECT_EQ(run_outcome({"-D", "-t", "10.0.0.1:80"}), "ok");
    EXPECT_EQ(director_.services().size(), 2u);
    EXPECT_EQ(director_.snapshot()->service(6, ip("10.0.0.1"), net::hton16(80)), nullptr);
    EXPECT_EQ(director_.snapshot()->stack.own(ip("10.0.0.1")), nullptr);

    json req = xvsadm({"-C"});
    ASSERT_EQ(req, json({{"cmd", "clear"}}));
    EXPECT_EQ(outcome(send(req)), "ok");
    EXPECT_TRUE(director_.services().empty());
    EXPECT_EQ(director_.snapshot()->services.size(), 0u);
    EXPECT_EQ(run({"-L", "-n"})["services"], json::array());
}

// --- dests ------------------------------------------------------------------------------------

TEST_F(ControllerTest, AddEditDelDest) {
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "wrr"}), "ok");
    json req = xvsadm({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.2:8080", "-w", "3",
                       "--fullnat"});
    ASSERT_EQ(req["dest"]["fwd"], "fullnat");
    EXPECT_EQ(outcome(send(req)), "ok");
    auto svc = director_.service_find(key(6, "10.0.0.1", 80));
    ASSERT_EQ(svc->dests.size(), 1u);
    lb::Dest* dest = svc->dests[0].get();
    EXPECT_EQ(dest->addr, ip("192.168.1.2"));
    EXPECT_EQ(dest->port, 8080);
    EXPECT_EQ(dest->weight.load(), 3);
    EXPECT_EQ(dest->fwd, lb::FwdMode::FullNat);
    EXPECT_EQ(outcome(send(req)), "Destination already exists");

    // Dest port defaults to the service port (xvsadm resolves it).
    EXPECT_EQ(run_outcome({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.3", "--fullnat"}), "ok");
    ASSERT_EQ(svc->dests.size(), 2u);
    EXPECT_EQ(svc->dests[1]->port, 80);
    EXPECT_EQ(svc->dests[1]->weight.load(), 1);

    EXPECT_EQ(run_outcome({"-e", "-t", "10.0.0.1:80", "-r", "192.168.1.2:8080", "-w", "7",
                           "--fullnat", "-x", "1000", "-y", "500"}),
              "ok");
    EXPECT_EQ(svc->dests[0].get(), dest) << "edit keeps the object (and its connections)";
    EXPECT_EQ(dest->weight.load(), 7);
    EXPECT_EQ(dest->upper_threshold, 1000u);
    EXPECT_EQ(dest->lower_threshold, 500u);
    const lb::ServiceView* v = director_.snapshot()->service(6, ip("10.0.0.1"), net::hton16(80));
    ASSERT_EQ(v->plan.weights.size(), 2u);
    EXPECT_EQ(v->plan.weights[0], 7);

    EXPECT_EQ(run_outcome({"-e", "-t", "10.0.0.1:80", "-r", "192.168.1.9:8080", "-w", "7",
                           "--fullnat"}),
              "No such destination");
    EXPECT_EQ(run_outcome({"-d", "-t", "10.0.0.1:80", "-r", "192.168.1.2:9999"}),
              "No such destination");
    EXPECT_EQ(run_outcome({"-a", "-t", "10.0.0.9:80", "-r", "192.168.1.2", "--fullnat"}),
              "No such service");
    EXPECT_EQ(run_outcome({"-d", "-t", "10.0.0.9:80", "-r", "192.168.1.2"}), "No such service");

    json del = xvsadm({"-d", "-t", "10.0.0.1:80", "-r", "192.168.1.2:8080"});
    EXPECT_EQ(del["dest"], json({{"addr", "192.168.1.2"}, {"port", 8080}}));
    EXPECT_EQ(outcome(send(del)), "ok");
    ASSERT_EQ(svc->dests.size(), 1u);
    EXPECT_EQ(svc->dests[0]->addr, ip("192.168.1.3"));
    v = director_.snapshot()->service(6, ip("10.0.0.1"), net::hton16(80));
    ASSERT_EQ(v->plan.dests.size(), 1u);
    EXPECT_EQ(v->plan.dests[0], svc->dests[0].get());
}

TEST_F(ControllerTest, ForwardingMethodsPerDest) {
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80"}), "ok");
    // xvsadm's default is -g (DR), as ipvsadm's; a DR server must be on a connected network.
    json req = xvsadm({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.2"});
    ASSERT_EQ(req["dest"]["fwd"], "dr");
    EXPECT_THAT(outcome(send(req)), HasSubstr("is not on a directly connected network"));
    EXPECT_EQ(run_outcome({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.2:8080", "-m"}), "ok");
    EXPECT_EQ(run_outcome({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.3", "-i", "--tun-type",
                           "gue", "--tun-port", "6080"}),
              "ok");
    const auto& dests = director_.service_find(key(6, "10.0.0.1", 80))->dests;
    ASSERT_EQ(dests.size(), 2u);
    EXPECT_EQ(dests[0]->fwd.load(), lb::FwdMode::Nat);
    EXPECT_EQ(dests[0]->port, 8080);  // NAT maps ports
    EXPECT_EQ(dests[1]->fwd.load(), lb::FwdMode::Tun);
    EXPECT_EQ(dests[1]->tun_type.load(), lb::TunType::Gue);
    EXPECT_EQ(dests[1]->tun_port.load(), 6080);
    // The listing carries the method and the tunnel (xvsadm -L / -S read these).
    const json list = send(xvsadm({"-L", "-n"}));
    const std::string text = list.dump();
    EXPECT_NE(text.find("\"fwd\":\"masq\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"tun_type\":\"gue\""), std::string::npos) << text;
    // edit_dest replaces all attributes, the method included (for new conns).
    EXPECT_EQ(run_outcome({"-e", "-t", "10.0.0.1:80", "-r", "192.168.1.2:8080", "--fullnat"}), "ok");
    EXPECT_EQ(dests[0]->fwd.load(), lb::FwdMode::FullNat);
    EXPECT_THAT(run_outcome({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.9", "--snat"}),
                HasSubstr("lb_kind SNAT is only for match services"));
}

TEST_F(ControllerTest, IllegalWeightIsInvalidArgument) {
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80"}), "ok");
    json req = xvsadm({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.2", "--fullnat"});
    req["dest"]["weight"] = 70000;
    EXPECT_THAT(outcome(send(req)), StartsWith("Invalid argument"));
    req["dest"]["weight"] = -1;
    EXPECT_THAT(outcome(send(req)), StartsWith("Invalid argument"));
}

// --- list and zero ----------------------------------------------------------------------------

TEST_F(ControllerTest, ListHasEveryProtocolField) {
    add_web_service();
    json req = xvsadm({"-L", "-n"});
    ASSERT_EQ(req, json({{"cmd", "list"}}));
    json r = send(req);
    ASSERT_EQ(outcome(r), "ok");
    ASSERT_EQ(r["services"].size(), 1u);
    const json& s = r["services"][0];
    std::set<std::string> fields;
    for (auto& [k, v] : s.items()) fields.insert(k);
    EXPECT_EQ(fields, (std::set<std::string>{
                          "proto",     "vip",         "port",           "sched",  "persistent",
                          "netmask",   "sched_flags", "mh_table_size",  "ops",    "pe",
                          "synproxy",  "toa",         "proxy_protocol", "uoa",    "conn_rate",
                          "blacklist", "whitelist",   "stats",          "laddrs", "dests",
                          "hash_target", "quic_cid_len"}));
    EXPECT_EQ(s["proto"], "tcp");
    EXPECT_EQ(s["vip"], "10.0.0.1");
    EXPECT_EQ(s["port"], 80);
    EXPECT_EQ(s["sched"], "wrr");
    EXPECT_EQ(s["persistent"], 0);
    EXPECT_EQ(s["netmask"], "255.255.255.255");
    EXPECT_EQ(s["sched_flags"], json::array());
    EXPECT_EQ(s["ops"], false);
    EXPECT_EQ(s["pe"], "");
    EXPECT_EQ(s["synproxy"], false);
    EXPECT_EQ(s["toa"], false);
    EXPECT_EQ(s["proxy_protocol"], "off");
    EXPECT_EQ(s["uoa"], "off");
    const std::set<std::string> stat_fields{"conns", "inpkts", "outpkts", "inbytes", "outbytes",
                                            "cps",   "inpps",  "outpps",  "inbps",   "outbps"};
    std::set<std::string> got;
    for (auto& [k, v] : s["stats"].items()) {
        got.insert(k);
        EXPECT_TRUE(v.is_number_unsigned()) << k;
        EXPECT_EQ(v, 0) << k;
    }
    EXPECT_EQ(got, stat_fields);
    EXPECT_EQ(s["laddrs"], json::parse(R"([{"addr":"192.168.1.100","ifname":"lan0"}])"));

    ASSERT_EQ(s["dests"].size(), 2u);
    const json& d0 = s["dests"][0];
    fields.clear();
    for (auto& [k, v] : d0.items()) fields.insert(k);
    EXPECT_EQ(fields, (std::set<std::string>{"addr", "port", "fwd", "weight", "u_threshold",
                                             "l_threshold", "tun_type", "tun_port", "active",
                                             "inactive", "persistconns", "stats"}));
    EXPECT_EQ(d0["addr"], "192.168.1.2");
    EXPECT_EQ(d0["port"], 8080);
    EXPECT_EQ(d0["fwd"], "fullnat");
    EXPECT_EQ(d0["weight"], 3);
    EXPECT_EQ(d0["u_threshold"], 0);
    EXPECT_EQ(d0["l_threshold"], 0);
    EXPECT_EQ(d0["tun_type"], "");
    EXPECT_EQ(d0["tun_port"], 0);
    EXPECT_EQ(d0["active"], 0);
    EXPECT_EQ(d0["inactive"], 0);
    EXPECT_EQ(d0["persistconns"], 0);
    got.clear();
    for (auto& [k, v] : d0["stats"].items()) got.insert(k);
    EXPECT_EQ(got, stat_fields);
    const json& d1 = s["dests"][1];
    EXPECT_EQ(d1["addr"], "192.168.1.3");
    EXPECT_EQ(d1["weight"], 0);
    EXPECT_EQ(d1["u_threshold"], 100);
    EXPECT_EQ(d1["l_threshold"], 50);
}

TEST_F(ControllerTest, BlackAndWhiteListsAsXvsadmSendsThem) {
    add_web_service();
    json req = xvsadm({"-U", "-t", "10.0.0.1:80", "-k", "192.0.2.0/24"});
    EXPECT_EQ(req, json::parse(R"({"cmd":"add_blacklist","prefix":"192.0.2.0/24",
        "service":{"proto":"tcp","vip":"10.0.0.1","port":80}})"));
    EXPECT_EQ(outcome(send(req)), "ok");
    EXPECT_EQ(run_outcome({"-U", "-t", "10.0.0.1:80", "-k", "198.51.100.7"}), "ok");
    EXPECT_EQ(run_outcome({"-O", "-t", "10.0.0.1:80", "--whtlst", "203.0.113.0/24"}), "ok");
    EXPECT_EQ(run_outcome({"-U", "-t", "10.0.0.1:80", "-k", "192.0.2.0/24"}),
              "192.0.2.0/24 is already in the blacklist");
    EXPECT_EQ(run_outcome({"-Y", "-t", "10.0.0.1:80", "--whtlst", "203.0.114.0/24"}),
              "203.0.114.0/24 is not in the whitelist");
    EXPECT_EQ(run_outcome({"-U", "-t", "10.0.0.9:80", "-k", "192.0.2.1"}), "No such service");
    json s = list_one("10.0.0.1:80");
    EXPECT_EQ(s["blacklist"], json::parse(R"(["192.0.2.0/24","198.51.100.7/32"])"));
    EXPECT_EQ(s["whitelist"], json::parse(R"(["203.0.113.0/24"])"));
    // Committed: the workers' view holds the compiled sets.
    const lb::ServiceView* view = director_.snapshot()->service(6, ip("10.0.0.1"), net::hton16(80));
    ASSERT_TRUE(view);
    EXPECT_TRUE(view->blacklist.contains(ip("192.0.2.200")));
    EXPECT_FALSE(view->blacklist.contains(ip("192.0.3.1")));
    EXPECT_TRUE(view->whitelist.contains(ip("203.0.113.5")));
    EXPECT_EQ(run_outcome({"-V", "-t", "10.0.0.1:80", "-k", "192.0.2.0/24"}), "ok");
    view = director_.snapshot()->service(6, ip("10.0.0.1"), net::hton16(80));
    EXPECT_FALSE(view->blacklist.contains(ip("192.0.2.200")));
    // Hand-written requests with a bad prefix are refused with the reason.
    json bad = send(json::parse(R"({"cmd":"add_whitelist","prefix":"10.1.2.3/8",
        "service":{"proto":"tcp","vip":"10.0.0.1","port":80}})"));
    EXPECT_EQ(outcome(bad), "Invalid argument: 'prefix': prefix '10.1.2.3/8' has host bits set "
                            "(did you mean 10.0.0.0/8?)");
}

TEST_F(ControllerTest, ConnRateAndThresholdChecks) {
    EXPECT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "--conn-rate", "250"}), "ok");
    EXPECT_EQ(list_one("10.0.0.1:80")["conn_rate"], 250);
    EXPECT_EQ(director_.snapshot()->service(6, ip("10.0.0.1"), net::hton16(80))->conn_rate, 250u);
    EXPECT_EQ(run_outcome({"-E", "-t", "10.0.0.1:80"}), "ok");
    EXPECT_EQ(list_one("10.0.0.1:80")["conn_rate"], 0);
    EXPECT_EQ(run_outcome({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.2:8080", "--fullnat",
                           "-x", "10", "-y", "20"}),
              "lower threshold 20 is higher than upper threshold 10");
    EXPECT_EQ(run_outcome({"-a", "-t", "10.0.0.1:80", "-r", "192.168.1.2:8080", "--fullnat",
                           "-y", "5"}),
              "lower threshold 5 is higher than upper threshold 0");
}

TEST_F(ControllerTest, ListOneServiceAndActiveCounts) {
    add_web_service();
    ASSERT_EQ(run_outcome({"-A", "-u", "10.0.0.1:53", "-s", "rr"}), "ok");
    EXPECT_EQ(run({"-L", "-n"})["services"].size(), 2u);
    json s = list_one("10.0.0.1:53", "-u");
    EXPECT_EQ(s["proto"], "udp");
    EXPECT_EQ(s["dests"], json::array());
    EXPECT_EQ(s["laddrs"], json::array());
    EXPECT_EQ(run_outcome({"-L", "-n", "-t", "10.0.0.9:80"}), "No such service");

    auto svc = director_.service_find(key(6, "10.0.0.1", 80));
    svc->dests[0]->stats[0].active = 4;
    svc->dests[0]->stats[1].active = 1;  // summed over workers
    svc->dests[0]->stats[0].inactive = 2;
    s = list_one("10.0.0.1:80");
    EXPECT_EQ(s["dests"][0]["active"], 5);
    EXPECT_EQ(s["dests"][0]["inactive"], 2);
}

TEST_F(ControllerTest, ZeroKeepsABaselineWithoutTouchingWorkerCounters) {
    add_web_service();
    ASSERT_EQ(run_outcome({"-A", "-u", "10.0.0.1:53", "-s", "rr"}), "ok");
    auto svc = director_.service_find(key(6, "10.0.0.1", 80));
    auto dns = director_.service_find(key(17, "10.0.0.1", 53));
    lb::Dest& dest = *svc->dests[0];
    svc->workers[0].conns = 3;
    svc->workers[0].inpkts = 10;
    svc->workers[0].outpkts = 8;
    svc->workers[0].inbytes = 1000;
    svc->workers[0].outbytes = 800;
    svc->workers[1].inpkts = 5;  // summed over workers
    dest.stats[0].conns = 3;
    dest.stats[0].inpkts = 15;
    dest.stats[0].outbytes = 800;
    dns->workers[0].inpkts = 4;

    json s = list_one("10.0.0.1:80");
    EXPECT_EQ(s["stats"]["conns"], 3);
    EXPECT_EQ(s["stats"]["inpkts"], 15);
    EXPECT_EQ(s["stats"]["outpkts"], 8);
    EXPECT_EQ(s["stats"]["inbytes"], 1000);
    EXPECT_EQ(s["stats"]["outbytes"], 800);
    EXPECT_EQ(s["dests"][0]["stats"]["inpkts"], 15);
    EXPECT_EQ(s["dests"][0]["stats"]["outbytes"], 800);

    // Zero one service: its totals and its dests' read 0, the other service is untouched, and
    // the worker-owned counters are not written by the control thread.
    json req = xvsadm({"-Z", "-t", "10.0.0.1:80"});
    ASSERT_EQ(req["cmd"], "zero");
    ASSERT_EQ(outcome(send(req)), "ok");
    EXPECT_EQ(svc->workers[0].inpkts, 10u);
    EXPECT_EQ(dest.stats[0].inpkts, 15u);
    s = list_one("10.0.0.1:80");
    for (const char* f : {"conns", "inpkts", "outpkts", "inbytes", "outbytes"}) {
        EXPECT_EQ(s["stats"][f], 0) << f;
        EXPECT_EQ(s["dests"][0]["stats"][f], 0) << f;
    }
    EXPECT_EQ(list_one("10.0.0.1:53", "-u")["stats"]["inpkts"], 4);

    // Traffic after zero shows as the delta.
    svc->workers[0].inpkts += 6;
    svc->workers[0].conns += 1;
    dest.stats[0].inpkts += 6;
    dest.stats[0].inbytes += 360;
    s = list_one("10.0.0.1:80");
    EXPECT_EQ(s["stats"]["inpkts"], 6);
    EXPECT_EQ(s["stats"]["conns"], 1);
    EXPECT_EQ(s["stats"]["outpkts"], 0);
    EXPECT_EQ(s["dests"][0]["stats"]["inpkts"], 6);
    EXPECT_EQ(s["dests"][0]["stats"]["inbytes"], 360);

    // Zero everything.
    ASSERT_EQ(run_outcome({"-Z"}), "ok");
    EXPECT_EQ(list_one("10.0.0.1:80")["stats"]["inpkts"], 0);
    EXPECT_EQ(list_one("10.0.0.1:53", "-u")["stats"]["inpkts"], 0);
    EXPECT_EQ(run_outcome({"-Z", "-t", "10.0.0.9:80"}), "No such service");
}

TEST_F(ControllerTest, ServiceReaddedAfterZeroStartsFromZero) {
    // A zero baseline belongs to the object it was taken for. Once that service is deleted and
    // freed, a new one (which the allocator may place at the same address) must not inherit
    // it, or its totals would wrap around to ~2^64.
    for (int round = 0; round < 4; ++round) {
        ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr"}), "ok");
        auto svc = director_.service_find(key(6, "10.0.0.1", 80));
        svc->workers[0].inpkts = 1000;
        svc->workers[0].conns = 50;
        ASSERT_EQ(run_outcome({"-Z"}), "ok");
        svc.reset();
        ASSERT_EQ(run_outcome({"-D", "-t", "10.0.0.1:80"}), "ok");
        // Workers move past every snapshot: the deleted service is really freed.
        director_.worker_quiescent(0, director_.snapshot()->generation);
        director_.reclaim();
        ASSERT_EQ(director_.retired_count(), 0u);

        ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80", "-s", "rr"}), "ok");
        director_.service_find(key(6, "10.0.0.1", 80))->workers[0].inpkts = 7;
        json s = list_one("10.0.0.1:80");
        EXPECT_EQ(s["stats"]["inpkts"], 7) << "round " << round;
        EXPECT_EQ(s["stats"]["conns"], 0) << "round " << round;
        ASSERT_EQ(run_outcome({"-D", "-t", "10.0.0.1:80"}), "ok");
        director_.worker_quiescent(0, director_.snapshot()->generation);
        director_.reclaim();
    }
}

// --- rates ------------------------------------------------------------------------------------

TEST_F(ControllerTest, EstimateRatesMovesAQuarterTowardTheIntervalRate) {
    add_web_service();
    auto svc = director_.service_find(key(6, "10.0.0.1", 80));
    lb::Dest& dest = *svc->dests[0];
    svc->workers[0].conns = 100;
    svc->workers[0].inpkts = 1000;
    svc->workers[0].outpkts = 500;
    svc->workers[0].inbytes = 100000;
    svc->workers[0].outbytes = 50000;
    dest.stats[0].inpkts = 1000;

    const auto t0 = std::chrono::steady_clock::now();
    ctl_->estimate_rates(t0);  // primes: no rate yet
    json s = list_one("10.0.0.1:80");
    for (const char* f : {"cps", "inpps", "outpps", "inbps", "outbps"}) EXPECT_EQ(s["stats"][f], 0);

    // Over the next 2 s: 40 conns, 800 in / 400 out packets, 80000 / 40000 bytes.
    svc->workers[0].conns += 40;
    svc->workers[0].inpkts += 800;
    svc->workers[0].outpkts += 400;
    svc->workers[0].inbytes += 80000;
    svc->workers[0].outbytes += 40000;
    dest.stats[0].inpkts += 800;
    ctl_->estimate_rates(t0 + seconds(2));
    s = list_one("10.0.0.1:80");
    // Interval rates 20 cps, 400/200 pps, 40000/20000 Bps; a quarter step from 0.
    EXPECT_EQ(s["stats"]["cps"], 5);
    EXPECT_EQ(s["stats"]["inpps"], 100);
    EXPECT_EQ(s["stats"]["outpps"], 50);
    EXPECT_EQ(s["stats"]["inbps"], 10000);
    EXPECT_EQ(s["stats"]["outbps"], 5000);
    EXPECT_EQ(s["dests"][0]["stats"]["inpps"], 100);
    EXPECT_EQ(s["dests"][1]["stats"]["inpps"], 0);

    // Same traffic again: 100 + (400 - 100) / 4 = 175 pps; rates keep rising toward 400.
    svc->workers[0].inpkts += 800;
    ctl_->estimate_rates(t0 + seconds(4));
    s = list_one("10.0.0.1:80");
    EXPECT_EQ(s["stats"]["inpps"], 175);
    EXPECT_GT(s["stats"]["inpps"].get<uint64_t>(), 0u);
    EXPECT_LT(s["stats"]["inpps"].get<uint64_t>(), 400u);
    // No new connections in that interval: cps decays, 5 - 5/4 = 3.75.
    EXPECT_EQ(s["stats"]["cps"], 4);

    // Rates are not affected by zero (they are per second, not totals).
    ASSERT_EQ(run_outcome({"-Z"}), "ok");
    EXPECT_EQ(list_one("10.0.0.1:80")["stats"]["inpps"], 175);
}

// --- timeouts ---------------------------------------------------------------------------------

TEST_F(ControllerTest, SetAndGetTimeout) {
    json get = xvsadm({"-L", "--timeout"});
    ASSERT_EQ(get, json({{"cmd", "get_timeout"}}));
    json r = send(get);
    const lb::Timeouts dflt = lb::Timeouts::dpvs_defaults();
    EXPECT_EQ(r["tcp"], dflt.of(lb::TcpState::Established));
    EXPECT_EQ(r["tcpfin"], dflt.of(lb::TcpState::FinWait));
    EXPECT_EQ(r["udp"], dflt.udp);

    json set = xvsadm({"--set", "900", "120", "300"});
    ASSERT_EQ(set, json({{"cmd", "set_timeout"}, {"tcp", 900}, {"tcpfin", 120}, {"udp", 300}}));
    EXPECT_EQ(outcome(send(set)), "ok");
    r = send(get);
    EXPECT_EQ(r["tcp"], 900);
    EXPECT_EQ(r["tcpfin"], 120);
    EXPECT_EQ(r["udp"], 300);
    EXPECT_EQ(director_.snapshot()->timeouts.of(lb::TcpState::Established), 900u);

    // 0 leaves a value unchanged.
    EXPECT_EQ(run_outcome({"--set", "0", "60", "0"}), "ok");
    r = send(get);
    EXPECT_EQ(r["tcp"], 900);
    EXPECT_EQ(r["tcpfin"], 60);
    EXPECT_EQ(r["udp"], 300);
    // Other TCP states are not touched by --set.
    EXPECT_EQ(director_.timeouts().of(lb::TcpState::SynRecv), dflt.of(lb::TcpState::SynRecv));

    EXPECT_THAT(outcome(send({{"cmd", "set_timeout"}, {"tcp", "900"}})),
                StartsWith("Invalid argument"));
    EXPECT_EQ(send(get)["tcp"], 900);
}

// --- local addresses --------------------------------------------------------------------------

TEST_F(ControllerTest, LocalAddresses) {
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80"}), "ok");
    json add = xvsadm({"-P", "-t", "10.0.0.1:80", "-z", "192.168.1.100", "-F", "lan0"});
    ASSERT_EQ(add, json::parse(R"({"cmd":"add_laddr","service":{"proto":"tcp","vip":"10.0.0.1",
              "port":80},"laddr":"192.168.1.100","ifname":"lan0"})"));
    EXPECT_EQ(outcome(send(add)), "ok");
    EXPECT_EQ(outcome(send(add)), "Local address already exists");
    EXPECT_EQ(run_outcome({"-P", "-t", "10.0.0.1:80", "-z", "192.168.1.101", "-F", "lan0"}), "ok");
    EXPECT_EQ(run_outcome({"-P", "-t", "10.0.0.1:80", "-z", "192.168.1.102", "-F", "eth9"}),
              "No such device");
    EXPECT_EQ(run_outcome({"-P", "-t", "10.0.0.9:80", "-z", "192.168.1.102", "-F", "lan0"}),
              "No such service");

    const stack::OwnAddr* o = director_.snapshot()->stack.own(ip("192.168.1.100"));
    ASSERT_TRUE(o);
    EXPECT_EQ(o->kind, stack::AddrKind::Lip);
    EXPECT_EQ(o->port, 1);

    json get = xvsadm({"-G", "-t", "10.0.0.1:80"});
    ASSERT_EQ(get["cmd"], "get_laddr");
    auto svc = director_.service_find(key(6, "10.0.0.1", 80));
    svc->laddrs[0]->workers[0].refs = 3;
    json r = send(get);
    ASSERT_EQ(outcome(r), "ok");
    EXPECT_EQ(r["laddrs"], json::parse(R"([
        {"addr":"192.168.1.100","ifname":"lan0","conflicts":0,"conns":3},
        {"addr":"192.168.1.101","ifname":"lan0","conflicts":0,"conns":0}])"));
    svc->laddrs[0]->workers[0].refs = 0;
    EXPECT_EQ(run_outcome({"-G", "-t", "10.0.0.9:80"}), "No such service");

    json del = xvsadm({"-Q", "-t", "10.0.0.1:80", "-z", "192.168.1.100", "-F", "lan0"});
    ASSERT_EQ(del["cmd"], "del_laddr");
    EXPECT_EQ(outcome(send(del)), "ok");
    EXPECT_EQ(outcome(send(del)), "No such local address");
    EXPECT_EQ(send(get)["laddrs"].size(), 1u);
    EXPECT_EQ(director_.snapshot()->stack.own(ip("192.168.1.100")), nullptr);
    EXPECT_EQ(list_one("10.0.0.1:80")["laddrs"],
              json::parse(R"([{"addr":"192.168.1.101","ifname":"lan0"}])"));
}

TEST_F(ControllerTest, LocalAddressReaddedWhileInUseKeepsItsPortPools) {
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80"}), "ok");
    ASSERT_EQ(run_outcome({"-P", "-t", "10.0.0.1:80", "-z", "192.168.1.100", "-F", "lan0"}), "ok");
    auto svc = director_.service_find(key(6, "10.0.0.1", 80));
    lb::LocalAddr* lip = svc->laddrs[0].get();
    lip->workers[0].refs = 1;  // a connection still uses it
    ASSERT_EQ(run_outcome({"-Q", "-t", "10.0.0.1:80", "-z", "192.168.1.100"}), "ok");
    ASSERT_EQ(run_outcome({"-P", "-t", "10.0.0.1:80", "-z", "192.168.1.100", "-F", "lan0"}), "ok");
    ASSERT_EQ(svc->laddrs.size(), 1u);
    EXPECT_EQ(svc->laddrs[0].get(), lip) << "a fresh pool could hand out ports still in use";
    EXPECT_EQ(director_.snapshot()->stack.own(ip("192.168.1.100"))->lip, lip);
    lip->workers[0].refs = 0;
}

// --- reload and version -----------------------------------------------------------------------

TEST_F(ControllerTest, ReloadCallsTheDaemonAndPropagatesItsError) {
    json req = xvsadm({"--reload"});
    ASSERT_EQ(req, json({{"cmd", "reload"}}));
    EXPECT_EQ(outcome(send(req)), "ok");
    EXPECT_EQ(reloads_, 1);
    reload_result_ = make_error("/etc/xvs/xvs.conf:12: lb_kind NAT is not supported yet (only FNAT)");
    EXPECT_EQ(outcome(send(req)), "/etc/xvs/xvs.conf:12: lb_kind NAT is not supported yet (only FNAT)");
    EXPECT_EQ(reloads_, 2);
}

TEST_F(ControllerTest, ReloadWithoutAHandlerIsNotSupported) {
    Controller bare(director_, {}, ports, nullptr);
    json r = json::parse(bare.handle_line(R"({"cmd":"reload"})"));
    EXPECT_EQ(r["ok"], false);
    EXPECT_THAT(r["error"].get<std::string>(), StartsWith("Operation not supported"));
}

TEST_F(ControllerTest, Version) {
    json r = send({{"cmd", "version"}});
    ASSERT_EQ(outcome(r), "ok");
    EXPECT_THAT(r["version"].get<std::string>(), StartsWith("xvsd "));
}

// --- xvsctl: addresses, routes, stats, links --------------------------------------------------

TEST_F(ControllerTest, Addresses) {
    json r = send({{"cmd", "addr_show"}});
    ASSERT_EQ(outcome(r), "ok");
    EXPECT_EQ(r["addrs"], json::array());

    EXPECT_EQ(outcome(send({{"cmd", "addr_add"}, {"addr", "10.0.0.254"}, {"prefix_len", 24},
                            {"ifname", "wan0"}})),
              "ok");
    EXPECT_EQ(outcome(send({{"cmd", "addr_add"}, {"addr", "10.0.0.254"}, {"prefix_len", 24},
                            {"ifname", "wan0"}})),
              "File exists");
    EXPECT_EQ(outcome(send({{"cmd", "addr_add"}, {"addr", "10.0.0.253"}, {"prefix_len", 24},
                            {"ifname", "eth9"}})),
              "No such device");
    ASSERT_EQ(director_.addresses().size(), 1u);
    EXPECT_EQ(director_.addresses()[0].prefix_len, 24);
    const stack::OwnAddr* o = director_.snapshot()->stack.own(ip("10.0.0.254"));
    ASSERT_TRUE(o);
    EXPECT_EQ(o->kind, stack::AddrKind::Director);

    // addr_show lists director addresses, VIPs and LIPs with their kind.
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80"}), "ok");
    ASSERT_EQ(run_outcome({"-P", "-t", "10.0.0.1:80", "-z", "192.168.1.100", "-F", "lan0"}), "ok");
    r = send({{"cmd", "addr_show"}});
    std::set<std::string> shown;
    for (const auto& a : r["addrs"]) {
        shown.insert(a["addr"].get<std::string>() + "/" + std::to_string(a["prefix_len"].get<int>()) +
                     " " + a["ifname"].get<std::string>() + " " + a["kind"].get<std::string>());
    }
    EXPECT_EQ(shown, (std::set<std::string>{"10.0.0.254/24 wan0 director", "10.0.0.1/32 wan0 vip",
                                            "192.168.1.100/32 lan0 lip"}));

    EXPECT_EQ(outcome(send({{"cmd", "addr_del"}, {"addr", "10.0.0.9"}})), "No such address");
    EXPECT_EQ(outcome(send({{"cmd", "addr_del"}, {"addr", "10.0.0.254"}})), "ok");
    EXPECT_TRUE(director_.addresses().empty());
    EXPECT_EQ(director_.snapshot()->stack.own(ip("10.0.0.254")), nullptr);
    EXPECT_THAT(outcome(send({{"cmd", "addr_add"}, {"addr", "10.0.0.254"}, {"ifname", "wan0"}})),
                StartsWith("Invalid argument"));  // prefix_len missing
}

TEST_F(ControllerTest, Routes) {
    ASSERT_EQ(outcome(send({{"cmd", "addr_add"}, {"addr", "10.0.0.254"}, {"prefix_len", 24},
                            {"ifname", "wan0"}})),
              "ok");
    EXPECT_EQ(outcome(send({{"cmd", "route_add"}, {"prefix", "0.0.0.0/0"}, {"gateway", "10.0.0.1"},
                            {"ifname", "wan0"}})),
              "ok");
    EXPECT_EQ(outcome(send({{"cmd", "route_add"}, {"prefix", "192.168.0.0/16"},
                            {"gateway", nullptr}, {"ifname", "lan0"}})),
              "ok");
    EXPECT_EQ(outcome(send({{"cmd", "route_add"}, {"prefix", "192.168.0.0/16"},
                            {"ifname", "lan0"}})),
              "File exists");
    EXPECT_EQ(outcome(send({{"cmd", "route_add"}, {"prefix", "172.16.0.0/12"},
                            {"ifname", "eth9"}})),
              "No such device");
    EXPECT_THAT(outcome(send({{"cmd", "route_add"}, {"prefix", "172.16.0.0/33"},
                              {"ifname", "lan0"}})),
                StartsWith("Invalid argument"));

    json r = send({{"cmd", "route_show"}});
    ASSERT_EQ(outcome(r), "ok");
    EXPECT_EQ(r["routes"], json::parse(R"([
        {"prefix":"10.0.0.0/24","gateway":null,"ifname":"wan0","connected":true},
        {"prefix":"0.0.0.0/0","gateway":"10.0.0.1","ifname":"wan0","connected":false},
        {"prefix":"192.168.0.0/16","gateway":null,"ifname":"lan0","connected":false}])"));

    const stack::StackView& sv = director_.snapshot()->stack;
    auto hop = sv.route_lookup(ip("8.8.8.8"));
    EXPECT_TRUE(hop.found);
    EXPECT_EQ(hop.addr, ip("10.0.0.1"));
    EXPECT_EQ(hop.port, 0);
    hop = sv.route_lookup(ip("192.168.7.7"));
    EXPECT_EQ(hop.addr, ip("192.168.7.7"));
    EXPECT_EQ(hop.port, 1);

    EXPECT_EQ(outcome(send({{"cmd", "route_del"}, {"prefix", "172.16.0.0/12"}})), "No such route");
    EXPECT_EQ(outcome(send({{"cmd", "route_del"}, {"prefix", "0.0.0.0/0"}})), "ok");
    EXPECT_FALSE(director_.snapshot()->stack.route_lookup(ip("8.8.8.8")).found);
    EXPECT_EQ(send({{"cmd", "route_show"}})["routes"].size(), 2u);
}

TEST_F(ControllerTest, StatsListsEveryCounterWithItsDropFlag) {
    json r = send({{"cmd", "stats"}});
    ASSERT_EQ(outcome(r), "ok");
    EXPECT_EQ(r["workers"], 0);
    ASSERT_EQ(r["counters"].size(), stack::kCounterCount);
    for (size_t i = 0; i < stack::kCounterCount; ++i) {
        const json& c = r["counters"][i];
        EXPECT_EQ(c["name"], std::string(stack::kCounterInfo[i].name));
        EXPECT_EQ(c["drop"], stack::kCounterInfo[i].is_drop) << c["name"];
        EXPECT_EQ(c["value"], 0);
        EXPECT_EQ(c["description"], std::string(stack::kCounterInfo[i].description));
    }
    // Spot checks against the list itself.
    EXPECT_EQ(r["counters"][0]["name"], "rx_packets");
    EXPECT_EQ(r["counters"][0]["drop"], false);
    bool saw_no_route = false;
    for (const auto& c : r["counters"])
        if (c["name"] == "drop_no_route") saw_no_route = c["drop"] == true;
    EXPECT_TRUE(saw_no_route);
}

TEST_F(ControllerTest, LinkShowWithoutEthdevStats) {
    json r = send({{"cmd", "link_show"}});
    ASSERT_EQ(outcome(r), "ok");
    ASSERT_EQ(r["links"].size(), 2u);
    EXPECT_EQ(r["links"][1]["name"], "lan0");
    EXPECT_EQ(r["links"][1]["dev"], "net_ring1");
    EXPECT_EQ(r["links"][1]["mac"], "02:00:00:00:00:02");
    EXPECT_EQ(r["links"][1]["mtu"], 1500);
    EXPECT_EQ(r["links"][1]["stats"]["ipackets"], 0);
}

TEST_F(ControllerTest, ConnsWithoutWorkersIsEmpty) {
    json r = run({"-L", "-n", "-c"});
    ASSERT_EQ(outcome(r), "ok");
    EXPECT_EQ(r["conns"], json::array());
}

// --- malformed requests -----------------------------------------------------------------------

TEST_F(ControllerTest, UnknownCommand) {
    EXPECT_EQ(outcome(send({{"cmd", "frobnicate"}})), "Unknown command");
}

TEST_F(ControllerTest, MalformedRequestsAreInvalidArgument) {
    const std::vector<std::string> bad = {
        "",
        "not json",
        "{\"cmd\":\"list\"",  // truncated
        "[1,2,3]",
        "\"list\"",
        "{}",                                 // no cmd
        R"({"cmd":42})",                      // cmd not a string
        R"({"cmd":"add_service"})",           // no service
        R"({"cmd":"add_service","service":"10.0.0.1:80"})",
        R"({"cmd":"add_service","service":{"proto":"tcp","vip":"10.0.0.1"}})",   // no port
        R"({"cmd":"add_service","service":{"proto":"sctp","vip":"10.0.0.1","port":80}})",
        R"({"cmd":"add_service","service":{"proto":"tcp","vip":"10.0.0.300","port":80}})",
        R"({"cmd":"add_service","service":{"proto":"tcp","vip":"10.0.0.1","port":"80"}})",
        R"({"cmd":"add_service","service":{"proto":"tcp","vip":"10.0.0.1","port":-1}})",
        R"({"cmd":"add_service","service":{"proto":"tcp","vip":"10.0.0.1","port":65536}})",
        R"({"cmd":"add_service","service":{"proto":"tcp","vip":"10.0.0.1","port":80.5}})",
        R"({"cmd":"add_service","service":{"proto":"tcp","vip":"10.0.0.1","port":80,"sched":5}})",
        R"({"cmd":"add_service","service":{"proto":"tcp","vip":1,"port":80}})",
        R"({"cmd":"del_service","service":{"proto":"tcp","vip":"10.0.0.1"}})",
        R"({"cmd":"add_dest","service":{"proto":"tcp","vip":"10.0.0.1","port":80}})",
        R"({"cmd":"add_dest","service":{"proto":"tcp","vip":"10.0.0.1","port":80},"dest":{"port":80}})",
        R"({"cmd":"add_dest","service":{"proto":"tcp","vip":"10.0.0.1","port":80},"dest":{"addr":"192.168.1.2","port":80,"fwd":"bogus"}})",
        R"({"cmd":"add_dest","service":{"proto":"tcp","vip":"10.0.0.1","port":80},"dest":{"addr":"192.168.1.2","port":80,"weight":"3"}})",
        R"({"cmd":"del_dest","service":{"proto":"tcp","vip":"10.0.0.1","port":80},"dest":{"addr":"192.168.1.2"}})",
        R"({"cmd":"add_laddr","service":{"proto":"tcp","vip":"10.0.0.1","port":80},"ifname":"lan0"})",
        R"({"cmd":"add_laddr","service":{"proto":"tcp","vip":"10.0.0.1","port":80},"laddr":"192.168.1.100"})",
        R"({"cmd":"set_timeout","tcp":-5})",
        R"({"cmd":"list","service":{"proto":"tcp"}})",
        R"({"cmd":"zero","service":{"vip":"10.0.0.1","port":80}})",
        R"({"cmd":"addr_add","addr":"10.0.0.1","prefix_len":33,"ifname":"wan0"})",
        R"({"cmd":"addr_del"})",
        R"({"cmd":"route_add","prefix":"10.0.0.0/8"})",
        R"({"cmd":"route_add","prefix":"banana","ifname":"wan0"})",
        R"({"cmd":"route_add","prefix":"10.0.0.0/8","gateway":"x","ifname":"wan0"})",
    };
    // Make the service exist so failures are about the request shape, not about lookups.
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80"}), "ok");
    for (const auto& line : bad) {
        json r = send_line(line);
        EXPECT_EQ(r["ok"], false) << line;
        EXPECT_THAT(r.value("error", std::string()), StartsWith("Invalid argument")) << line;
    }
    // Nothing changed.
    EXPECT_EQ(director_.services().size(), 1u);
    EXPECT_TRUE(director_.service_find(key(6, "10.0.0.1", 80))->dests.empty());
    EXPECT_TRUE(director_.addresses().empty());
    EXPECT_TRUE(director_.routes().empty());
}

TEST_F(ControllerTest, UnknownRequestFieldsAreIgnored) {
    json req = xvsadm({"-A", "-t", "10.0.0.1:80", "-s", "rr"});
    req["future_field"] = {{"x", 1}};
    req["service"]["also_new"] = true;
    EXPECT_EQ(outcome(send(req)), "ok");
}

// --- SNAT match services ------------------------------------------------------------------

TEST_F(ControllerTest, MatchServicesAsDpvsIpvsadmWritesThem) {
    ASSERT_TRUE(director_.address_add(ip("10.10.1.1"), 24, "wan0"));
    ASSERT_TRUE(director_.address_add(ip("10.10.2.1"), 24, "lan0"));
    const std::string m = "proto=tcp,src-range=10.10.2.0-10.10.2.255,oif=wan0";
    EXPECT_EQ(run_outcome({"-A", "-s", "rr", "-H", m}), "ok");
    EXPECT_EQ(run_outcome({"-A", "-s", "rr", "-H", m}), "Service already exists");
    EXPECT_EQ(run_outcome({"-a", "-H", m, "-r", "10.10.1.1:0", "-w", "100", "-J"}), "ok");
    EXPECT_EQ(run_outcome({"-a", "-H", m, "-r", "10.10.1.1:0", "-J"}),
              "Destination already exists");
    ASSERT_EQ(director_.matches().size(), 1u);
    const auto& svc = director_.matches()[0];
    EXPECT_EQ(svc->sched_name, "rr");
    ASSERT_EQ(svc->dests.size(), 1u);
    EXPECT_EQ(svc->dests[0]->fwd, lb::FwdMode::Snat);
    EXPECT_EQ(svc->dests[0]->weight, 100);
    ASSERT_EQ(director_.snapshot()->matches.size(), 1u);
    EXPECT_EQ(director_.snapshot()->matches[0]->wan.size(), 1u);

    // What the data plane cannot do with it is refused with what to do instead.
    EXPECT_EQ(
        run_outcome({"-a", "-H", m, "-r", "10.10.1.1:0", "-m"}),
        "a match service forwards by SNAT only: add its WAN address with -J (--snat), not -m");
    EXPECT_EQ(run_outcome({"-a", "-H", m, "-r", "10.10.1.7:0", "-J"}),
              "WAN address 10.10.1.7 is not a director address: add it first (ip_defs `address "
              "10.10.1.7/LEN dev wan0`, or xvsctl addr add)");
    EXPECT_EQ(run_outcome({"-a", "-H", m, "-r", "10.10.2.1:0", "-J"}),
              "WAN address 10.10.2.1 is on port 'lan0', not on oif 'wan0': use an address of port "
              "'wan0'");
    EXPECT_EQ(
        run_outcome({"-a", "-H", m, "-r", "10.10.1.1:80", "-J"}),
        "WAN address 10.10.1.1:80: the port must be 0 (SNAT takes ports from the address's pool)");
    EXPECT_EQ(
        run_outcome({"-A", "-H", "proto=udp,src-range=10.10.2.0-10.10.2.255"}),
        "match proto=udp,src-range=10.10.2.0-10.10.2.255: oif missing (the port whose address "
        "the inside hosts are hidden behind, e.g. oif=wan0)");
    EXPECT_EQ(run_outcome({"-A", "-H", "proto=udp,oif=dpdk9"}), "oif: no such port 'dpdk9'");
    EXPECT_EQ(run_outcome({"-A", "-H", "proto=icmp,src-range=10.0.0.1:80,oif=wan0"}),
              "match proto=icmp,src-range=10.0.0.1:80,oif=wan0: ICMP has no ports: give address "
              "ranges only");
    EXPECT_EQ(run_outcome({"-A", "-H", "proto=udp,oif=wan0", "-j"}),
              "syn_proxy is not for SNAT match services");
    EXPECT_THAT(run_outcome({"-A", "-t", "10.0.0.1:80"}), "ok");
    EXPECT_THAT(run_outcome({"-a", "-t", "10.0.0.1:80", "-r", "10.10.2.5:80", "-J"}),
                StartsWith("lb_kind SNAT is only for match services"));
    EXPECT_THAT(
        outcome(send({{"cmd", "addr_del"}, {"addr", "10.10.1.1"}})),
        HasSubstr("is the WAN address of SNAT service proto=tcp,src-range=10.10.2.0-10.10.2.255,"
                  "oif=wan0: remove it there first"));

    // Listed and saved with its match key, edited, then removed.
    json list = run({"-L", "-n", "-H", m});
    ASSERT_EQ(outcome(list), "ok");
    ASSERT_EQ(list["services"].size(), 1u);
    EXPECT_EQ(list["services"][0]["match"]["oif"], "wan0");
    EXPECT_EQ(list["services"][0]["dests"][0]["fwd"], "snat");
    json all = run({"-L", "-n"});
    EXPECT_EQ(all["services"].size(), 2u);  // the VIP service and the match service
    EXPECT_EQ(run_outcome({"-E", "-H", m, "-s", "wrr"}), "ok");
    EXPECT_EQ(svc->sched_name, "wrr");
    EXPECT_EQ(run_outcome({"-e", "-H", m, "-r", "10.10.1.1:0", "-w", "5", "-J"}), "ok");
    EXPECT_EQ(svc->dests[0]->weight, 5);
    EXPECT_EQ(run_outcome({"-Z", "-H", m}), "ok");
    EXPECT_EQ(run_outcome({"-d", "-H", m, "-r", "10.10.1.1:0"}), "ok");
    EXPECT_EQ(run_outcome({"-d", "-H", m, "-r", "10.10.1.1:0"}), "No such destination");
    EXPECT_EQ(outcome(send({{"cmd", "addr_del"}, {"addr", "10.10.1.1"}})), "ok");
    EXPECT_EQ(run_outcome({"-D", "-H", m}), "ok");
    EXPECT_EQ(run_outcome({"-D", "-H", m}), "No such service");
    EXPECT_TRUE(director_.matches().empty());
    EXPECT_EQ(run_outcome({"-P", "-H", m, "-z", "10.10.2.9", "-F", "lan0"}),
              "Invalid argument: SNAT match services have no local addresses or client lists");
}

// --- IPv6 ---------------------------------------------------------------------------------

// Decoding of IPv6 fields needs no Director support.
TEST_F(ControllerTest, Ipv6FieldsAreDecodedAndCheckedBeforeTheDirector) {
    EXPECT_EQ(outcome(send({{"cmd", "addr_add"},
                            {"addr", "2001:db8::zz"},
                            {"prefix_len", 64},
                            {"ifname", "wan0"}})),
              "Invalid argument: 'addr' is not an IP address");
    EXPECT_EQ(outcome(send({{"cmd", "addr_add"},
                            {"addr", "2001:db8::1"},
                            {"prefix_len", 129},
                            {"ifname", "wan0"}})),
              "Invalid argument: 'prefix_len' out of range");
    EXPECT_EQ(
        outcome(send({{"cmd", "route_add"},
                      {"prefix", "2001:db8::/64"},
                      {"gateway", "10.0.0.1"},
                      {"ifname", "wan0"}})),
        "Invalid argument: 'gateway' 10.0.0.1 is not of the family of 'prefix' 2001:db8::/64");
    EXPECT_EQ(
        outcome(send({{"cmd", "route_add"}, {"prefix", "2001:db8::/129"}, {"ifname", "wan0"}})),
        "Invalid argument: 'prefix' is not an IP prefix");
    EXPECT_EQ(outcome(send({{"cmd", "flush_dest"}, {"dest", "[2001:db8::10]:80"}})),
              "No such destination");
    EXPECT_EQ(outcome(send({{"cmd", "flush_dest"}, {"dest", "2001:db8::10:80"}})),
              "Invalid argument: 'dest' is not A.B.C.D:PORT or [IPV6]:PORT");
    // Client lists hold either family (an FNAT64 service's clients are IPv6).
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80"}), "ok");
    EXPECT_EQ(run_outcome({"-U", "-t", "10.0.0.1:80", "-k", "2001:db8:bad::/48"}), "ok");
    EXPECT_EQ(run_outcome({"-O", "-t", "10.0.0.1:80", "--whtlst", "2001:db8::7"}), "ok");
    json s = list_one("10.0.0.1:80");
    EXPECT_EQ(s["blacklist"], json::parse(R"(["2001:db8:bad::/48"])"));
    EXPECT_EQ(s["whitelist"], json::parse(R"(["2001:db8::7/128"])"));
    EXPECT_EQ(run_outcome({"-V", "-t", "10.0.0.1:80", "-k", "2001:db8:bad::/48"}), "ok");
}

TEST_F(ControllerTest, Ipv6ServiceRealServersAndLocalAddresses) {
    ASSERT_EQ(run_outcome({"-A", "-t", "[2001:db8::100]:80", "-s", "rr"}), "ok");
    ASSERT_EQ(run_outcome({"-a", "-t", "[2001:db8::100]:80", "-r", "[2001:db8:2::10]:8080",
                           "--fullnat", "-w", "2"}),
              "ok");
    ASSERT_EQ(
        run_outcome({"-P", "-t", "[2001:db8::100]:80", "-z", "2001:db8:2::100", "-F", "lan0"}),
        "ok");
    json s = list_one("[2001:db8::100]:80");
    EXPECT_EQ(s["vip"], "2001:db8::100");
    EXPECT_EQ(s["port"], 80);
    ASSERT_EQ(s["dests"].size(), 1u);
    EXPECT_EQ(s["dests"][0]["addr"], "2001:db8:2::10");
    EXPECT_EQ(s["dests"][0]["port"], 8080);
    EXPECT_EQ(s["laddrs"], json::parse(R"([{"addr":"2001:db8:2::100","ifname":"lan0"}])"));
    // An IPv4 real server or local address next to IPv6 ones: one family per service.
    // (The Director words these refusals; the tests check that it refuses.)
    EXPECT_NE(run_outcome({"-a", "-t", "[2001:db8::100]:80", "-r", "10.0.0.2:80", "--fullnat"}),
              "ok");
    EXPECT_NE(run_outcome({"-P", "-t", "[2001:db8::100]:80", "-z", "192.168.1.100", "-F", "lan0"}),
              "ok");
    EXPECT_EQ(run_outcome({"-d", "-t", "[2001:db8::100]:80", "-r", "[2001:db8:2::10]:8080"}), "ok");
    EXPECT_EQ(run_outcome({"-Q", "-t", "[2001:db8::100]:80", "-z", "2001:db8:2::100"}), "ok");
    EXPECT_EQ(run_outcome({"-D", "-t", "[2001:db8::100]:80"}), "ok");
    EXPECT_TRUE(director_.services().empty());
}

TEST_F(ControllerTest, Fnat64TakesIpv4RealServersAndLocalAddressesOnlyWithFullNat) {
    ASSERT_EQ(outcome(send({{"cmd", "addr_add"},
                            {"addr", "192.168.1.254"},
                            {"prefix_len", 24},
                            {"ifname", "lan0"}})),
              "ok");
    ASSERT_EQ(run_outcome({"-A", "-t", "[2001:db8::64]:80"}), "ok");
    EXPECT_EQ(run_outcome({"-a", "-t", "[2001:db8::64]:80", "-r", "192.168.1.2:80", "--fullnat"}),
              "ok");
    EXPECT_EQ(run_outcome({"-P", "-t", "[2001:db8::64]:80", "-z", "192.168.1.100", "-F", "lan0"}),
              "ok");
    EXPECT_NE(run_outcome({"-a", "-t", "[2001:db8::64]:80", "-r", "192.168.1.3:80", "-m"}), "ok");
    EXPECT_NE(run_outcome({"-P", "-t", "[2001:db8::64]:80", "-z", "2001:db8::200", "-F", "lan0"}),
              "ok");
    // No FNAT46.
    ASSERT_EQ(run_outcome({"-A", "-t", "10.0.0.1:80"}), "ok");
    EXPECT_NE(run_outcome({"-a", "-t", "10.0.0.1:80", "-r", "[2001:db8::10]:80", "--fullnat"}),
              "ok");
}

TEST_F(ControllerTest, Ipv6AddressesAndRoutes) {
    ASSERT_EQ(outcome(send({{"cmd", "addr_add"},
                            {"addr", "2001:db8::1"},
                            {"prefix_len", 64},
                            {"ifname", "wan0"}})),
              "ok");
    EXPECT_EQ(outcome(send({{"cmd", "route_add"},
                            {"prefix", "::/0"},
                            {"gateway", "2001:db8::fe"},
                            {"ifname", "wan0"}})),
              "ok");
    json r = send({{"cmd", "route_show"}});
    EXPECT_EQ(r["routes"], json::parse(R"([
        {"prefix":"2001:db8::/64","gateway":null,"ifname":"wan0","connected":true},
        {"prefix":"::/0","gateway":"2001:db8::fe","ifname":"wan0","connected":false}])"));
    json a = send({{"cmd", "addr_show"}});
    ASSERT_EQ(a["addrs"].size(), 1u);
    EXPECT_EQ(a["addrs"][0]["addr"], "2001:db8::1");
    EXPECT_EQ(a["addrs"][0]["prefix_len"], 64);
    EXPECT_EQ(outcome(send({{"cmd", "route_del"}, {"prefix", "::/0"}})), "ok");
    EXPECT_EQ(outcome(send({{"cmd", "addr_del"}, {"addr", "2001:db8::1"}})), "ok");
}

}  // namespace
}  // namespace xvs::ctl

namespace xvs::ctl {
namespace {

// The metrics body: per service and dest totals since they were added (a Prometheus counter
// never goes back, so ipvsadm -Z does not touch them), weights and conn gauges, local
// addresses; every line is a comment or `name{labels} value`.
TEST_F(ControllerTest, MetricsCarryRawTotalsWeightsAndLocalAddresses) {
    add_web_service();
    auto svc = director_.service_find(key(6, "10.0.0.1", 80));
    svc->workers[0].conns = 3;
    svc->workers[0].inpkts = 10;
    svc->workers[1].inpkts = 5;
    svc->workers[0].outbytes = 800;
    svc->dests[0]->stats[0].inbytes = 1500;
    ASSERT_EQ(run_outcome({"-Z"}), "ok");
    const std::string m = ctl_->metrics();
    const std::string s = "{service=\"TCP 10.0.0.1:80\"";
    const std::string d = s + ",dest=\"192.168.1.2:8080\"";
    const std::string d2 = s + ",dest=\"192.168.1.3:8080\"";
    for (const std::string& line : std::vector<std::string>{
             "xvs_service_connections_total" + s + "} 3", "xvs_service_packets_total" + s +
              ",direction=\"in\"} 15", "xvs_service_bytes_total" + s + ",direction=\"out\"} 800",
          "xvs_dest_bytes_total" + d + ",direction=\"in\"} 1500",
          "xvs_service_rate" + s + ",kind=\"cps\"} 0", "xvs_dest_weight" + d + "} 3",
          "xvs_dest_weight" + d2 + "} 0", "xvs_dest_active_connections" + d + "} 0",
          "xvs_dest_inhibited" + d + "} 0", "xvs_laddr_connections{laddr=\"192.168.1.100\"} 0",
          "xvs_port_up{port=\"wan0\"} 0", "xvs_port_packets_total{port=\"lan0\",direction=\"rx\"} 0",
          "xvs_workers 0"})
        EXPECT_NE(m.find("\n" + line + "\n"), std::string::npos) << line << "\n" << m;
    // Every family once, every sample line well formed.
    std::istringstream in(m);
    std::set<std::string> types;
    const std::regex sample(R"(^[a-z_]+(\{([a-z_]+="([^"\\]|\\.)*",?)+\})? [0-9.e+-]+$)");
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("# TYPE ")) {
            EXPECT_TRUE(types.insert(line.substr(7, line.find(' ', 7) - 7)).second) << line;
        } else if (!line.starts_with("# HELP ")) {
            EXPECT_TRUE(std::regex_match(line, sample)) << line;
        }
    }
    EXPECT_GE(types.size(), 20u);

    // An inhibited dest (health manager's verdict) reads 1.
    ctl_->set_inhibited([](const lb::ServiceKey&, const net::InetAddr& a, uint16_t) {
        return a == net::InetAddr(ip("192.168.1.3"));
    });
    EXPECT_NE(ctl_->metrics().find("\nxvs_dest_inhibited" + d2 + "} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace xvs::ctl
