// Tests for src/ctl/bgp/announce.cpp: the quorum decision per VIP, and the Announcer keeping a
// (fake) BIRD in step: the file it writes, `configure` sent only on change, each announce and
// withdraw logged once, retries while BIRD is away, everything withdrawn at shutdown.
#include "ctl/bgp/announce.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fake_bird.h"

namespace xvs::ctl::bgp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

net::InetAddr addr(const char* text) { return *net::parse_inet(text); }

TEST(AnnounceDecide, QuorumPerVip) {
    const std::vector<ServiceStanding> services = {
        {addr("10.10.1.100"), 2, true},           // healthy
        {addr("10.10.1.101"), 0, std::nullopt},   // every real server gone or weight 0
        {addr("10.10.1.102"), 1, false},          // health quorum lost (a sorry server serves)
        {addr("10.10.1.103"), 0, true},           // port 80 without servers ...
        {addr("10.10.1.103"), 3, std::nullopt},   // ... but port 443 has some: announced
    };
    EXPECT_THAT(announce_decide(services, true),
                ElementsAre(VipDecision{addr("10.10.1.100"), true, "quorum"},
                            VipDecision{addr("10.10.1.101"), false,
                                        "no real server up with weight > 0"},
                            VipDecision{addr("10.10.1.102"), false, "quorum lost (health checks)"},
                            VipDecision{addr("10.10.1.103"), true, "quorum"}));
    // A stuck worker withdraws every VIP, whatever the real servers say.
    auto stuck = announce_decide(services, false);
    ASSERT_EQ(stuck.size(), 4u);
    EXPECT_EQ(stuck[0], (VipDecision{addr("10.10.1.100"), false, "a worker is stuck"}));
    EXPECT_EQ(stuck[1].why, "no real server up with weight > 0");
    EXPECT_THAT(announce_decide({}, true), IsEmpty());
}

std::string read_file(const std::string& path) {
    std::stringstream s;
    s << std::ifstream(path).rdbuf();
    return s.str();
}

struct AnnouncerTest : ::testing::Test {
    AnnouncerTest() {
        RoutingDefs conf;
        conf.bird_socket = bird.path();
        conf.bird_config = bird.dir() + "/xvs.conf";
        conf.bgp.present = true;
        conf.bgp.local_as = 65001;
        conf.bgp.neighbors.push_back(BgpNeighbor{addr("10.10.1.254"), 65000, 179, 0, false, "", 0});
        ann = std::make_unique<Announcer>(conf);
        ann->log_info = [this](const std::string& l) { infos.push_back(l); };
        ann->log_warning = [this](const std::string& l) { warnings.push_back(l); };
    }
    ~AnnouncerTest() override {
        ann.reset();
        ::unlink((bird.dir() + "/xvs.conf").c_str());
    }
    std::string file() { return read_file(bird.dir() + "/xvs.conf"); }
    static std::vector<VipDecision> up(std::initializer_list<const char*> vips) {
        std::vector<VipDecision> d;
        for (const char* v : vips) d.push_back(VipDecision{addr(v), true, "quorum"});
        return d;
    }

    test::FakeBird bird;
    std::unique_ptr<Announcer> ann;
    std::vector<std::string> infos, warnings;
    Announcer::Clock::time_point t0 = Announcer::Clock::now();
};

TEST_F(AnnouncerTest, ConfiguresBirdOnlyOnChangeAndLogsOnce) {
    ann->update(up({"10.10.1.100"}), t0);
    EXPECT_THAT(bird.commands(), ElementsAre("configure"));
    EXPECT_THAT(file(), HasSubstr("    route 10.10.1.100/32 via \"xvs-alive\";\n"));
    EXPECT_THAT(infos, ElementsAre("announce 10.10.1.100: quorum",
                                   HasSubstr("BIRD reconfigured (1 VIPs announced): Reading "
                                             "configuration from /etc/bird/bird.conf; "
                                             "Reconfigured")));
    infos.clear();
    ann->update(up({"10.10.1.100"}), t0 + std::chrono::seconds(1));  // nothing new
    EXPECT_EQ(bird.commands().size(), 1u);
    EXPECT_THAT(infos, IsEmpty());

    ann->update({VipDecision{addr("10.10.1.100"), false, "no real server up with weight > 0"}},
                t0 + std::chrono::seconds(2));
    EXPECT_EQ(bird.commands().size(), 2u);
    EXPECT_THAT(file(), Not(HasSubstr("route 10.10.1.100/32")));
    EXPECT_THAT(infos, ElementsAre("withdraw 10.10.1.100: no real server up with weight > 0",
                                   HasSubstr("BIRD reconfigured (0 VIPs announced)")));
    auto shown = ann->show();
    EXPECT_EQ(shown["vips"][0]["announce"], false);
    EXPECT_EQ(shown["vips"][0]["in_bird"], false);
    EXPECT_THAT(ann->metrics(), HasSubstr("xvs_route_announced{vip=\"10.10.1.100\"} 0\n"));

    infos.clear();
    ann->update(up({"10.10.1.100"}), t0 + std::chrono::seconds(3));
    ann->update({}, t0 + std::chrono::seconds(4));  // the service went (xvsadm -D)
    EXPECT_EQ(bird.commands().size(), 4u);
    EXPECT_THAT(infos, ElementsAre("announce 10.10.1.100: quorum", HasSubstr("(1 VIPs"),
                                   "withdraw 10.10.1.100: no service has it",
                                   HasSubstr("(0 VIPs")));
}

TEST_F(AnnouncerTest, RetriesWhileBirdRefusesThenShutdownWithdraws) {
    bird.set_reply("0002-Reading configuration from /etc/bird/bird.conf\n"
                   "8002 /etc/bird/bird.conf:1:1 syntax error\n");
    ann->update(up({"10.10.1.100", "10.10.1.101"}), t0);
    EXPECT_THAT(warnings, ElementsAre(HasSubstr("BIRD refused its configuration (8002): Reading "
                                                "configuration from /etc/bird/bird.conf; "
                                                "/etc/bird/bird.conf:1:1 syntax error")));
    EXPECT_THAT(ann->metrics(), HasSubstr("xvs_route_announced{vip=\"10.10.1.100\"} 0\n"));
    EXPECT_THAT(ann->metrics(), HasSubstr("xvs_bird_reload_failures_total 1\n"));
    ann->update(up({"10.10.1.100", "10.10.1.101"}), t0 + std::chrono::milliseconds(500));
    EXPECT_EQ(bird.commands().size(), 1u);  // not before kRetry
    ann->update(up({"10.10.1.100", "10.10.1.101"}), t0 + std::chrono::seconds(2));
    EXPECT_EQ(bird.commands().size(), 2u);
    EXPECT_EQ(warnings.size(), 1u);  // the same failure is not logged again
    EXPECT_EQ(ann->show()["bird_pending"], true);

    bird.set_reply("0003 Reconfigured\n");
    ann->update(up({"10.10.1.100", "10.10.1.101"}), t0 + std::chrono::seconds(4));
    EXPECT_EQ(bird.commands().size(), 3u);
    EXPECT_THAT(ann->metrics(), HasSubstr("xvs_route_announced{vip=\"10.10.1.101\"} 1\n"));
    EXPECT_EQ(ann->show()["bird_pending"], false);

    infos.clear();
    ann->shutdown();
    EXPECT_EQ(bird.commands().size(), 4u);
    EXPECT_THAT(file(), Not(HasSubstr("route 10.10.1.10")));
    EXPECT_THAT(infos, ElementsAre("withdraw 10.10.1.100: xvsd stopping",
                                   "withdraw 10.10.1.101: xvsd stopping",
                                   "BIRD reconfigured (0 VIPs announced): Reconfigured"));
}

TEST_F(AnnouncerTest, ConfigurationChangeRewritesAndLivenessNameNeedsRestart) {
    ann->update(up({"10.10.1.100"}), t0);
    RoutingDefs next;
    next.bird_socket = bird.path();
    next.bird_config = bird.dir() + "/xvs.conf";
    next.liveness_interface = "other0";
    next.bgp.present = true;
    next.bgp.local_as = 65001;
    next.bgp.med = 7;
    next.bgp.neighbors.push_back(BgpNeighbor{addr("10.10.1.254"), 65000, 179, 0, false, "", 0});
    EXPECT_THAT(ann->configure(next), HasSubstr("liveness_interface changed: takes effect at the "
                                                "next restart (still xvs-alive)"));
    ann->update(up({"10.10.1.100"}), t0 + std::chrono::seconds(1));
    EXPECT_EQ(bird.commands().size(), 2u);
    EXPECT_THAT(file(), HasSubstr("    bgp_med = 7;\n"));
    EXPECT_THAT(file(), HasSubstr("via \"xvs-alive\""));
}

}  // namespace
}  // namespace xvs::ctl::bgp
