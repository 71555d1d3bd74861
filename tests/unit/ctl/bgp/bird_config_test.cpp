// Tests for src/ctl/bgp/bird_config.cpp: the BIRD 2 file for given settings and VIPs, byte for
// byte, and (where bird2 is installed) that BIRD's own parser takes it (`bird -p`).
#include "ctl/bgp/bird_config.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace xvs::ctl::bgp {
namespace {

net::InetAddr addr(const char* text) { return *net::parse_inet(text); }

RoutingDefs bgp_conf() {
    RoutingDefs r;
    r.router_id = addr("10.10.1.21");
    r.bgp.present = true;
    r.bgp.local_as = 65001;
    r.bgp.neighbors.push_back(BgpNeighbor{addr("10.10.1.254"), 65000, 179, 9, true, "s3cret", 2});
    r.bgp.neighbors.push_back(BgpNeighbor{addr("10.10.1.253"), 65002, 1179, 0, false, "", 0});
    r.bgp.source_address = addr("10.10.1.21");
    r.bgp.communities = {{65001, 100}, {0, 7}};
    r.bgp.med = 50;
    return r;
}

// BIRD's parser on `text` (bird -p): "" when it takes it, else its message; nullopt without
// bird2 installed.
std::optional<std::string> bird_parse(const std::string& text) {
    if (access("/usr/sbin/bird", X_OK) != 0) return std::nullopt;
    char dir[] = "/tmp/xvs_bird_test_XXXXXX";
    if (!mkdtemp(dir)) return "mkdtemp failed";
    const std::string path = std::string(dir) + "/bird.conf";
    std::ofstream(path) << text;
    // bird -p -c PATH, its output into a file (no shell: posix_spawn).
    const std::string out_path = std::string(dir) + "/out";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::string bird = "/usr/sbin/bird", p_opt = "-p", c_opt = "-c", conf = path;
    char* argv[] = {bird.data(), p_opt.data(), c_opt.data(), conf.data(), nullptr};
    pid_t pid = 0;
    std::string output;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv, environ) != 0) {
        output = "cannot run bird";
    } else {
        int status = 0;
        waitpid(pid, &status, 0);
        std::stringstream got;
        got << std::ifstream(out_path).rdbuf();
        output = got.str();
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) output.clear();
        else if (output.empty()) output = "bird -p failed";
    }
    posix_spawn_file_actions_destroy(&actions);
    unlink(out_path.c_str());
    unlink(path.c_str());
    rmdir(dir);
    return output;
}

TEST(BirdConfig, BgpWithEveryOptionExactText) {
    const std::vector<net::InetAddr> vips = {addr("10.10.1.101"), addr("2001:db8::100"),
                                             addr("10.10.1.100"), addr("10.10.1.101")};
    const std::string text = bird_config_text(bgp_conf(), vips);
    EXPECT_EQ(text, R"(# Written by xvsd (bgp_defs/ospf_defs of xvs.conf); replaced whole on every change.
# bird.conf includes it; do not edit.

router id 10.10.1.21;

protocol device xvs_device {
}

protocol static xvs_vips4 {
    ipv4;
    route 10.10.1.100/32 via "xvs-alive";
    route 10.10.1.101/32 via "xvs-alive";
}

protocol static xvs_vips6 {
    ipv6;
    route 2001:db8::100/128 via "xvs-alive";
}

filter xvs_bgp_export {
    if proto != "xvs_vips4" && proto != "xvs_vips6" then reject;
    bgp_med = 50;
    bgp_community.add((65001, 100));
    bgp_community.add((0, 7));
    accept;
}

protocol bfd xvs_bfd {
}

protocol bgp xvs_bgp1 {
    local as 65001;
    neighbor 10.10.1.254 port 179 as 65000;
    source address 10.10.1.21;
    hold time 9;
    multihop 2;
    bfd on;
    password "s3cret";
    ipv4 {
        import none;
        export filter xvs_bgp_export;
    };
}

protocol bgp xvs_bgp2 {
    local as 65001;
    neighbor 10.10.1.253 port 1179 as 65002;
    source address 10.10.1.21;
    ipv4 {
        import none;
        export filter xvs_bgp_export;
    };
}

)");
}

TEST(BirdConfig, NothingAnnouncedLeavesEmptyStaticProtocols) {
    RoutingDefs r;
    r.liveness_interface = "xvs-live1";
    r.bgp.present = true;
    r.bgp.local_as = 4200000000u;
    r.bgp.neighbors.push_back(BgpNeighbor{addr("10.10.1.254"), 65000, 179, 0, false, "", 0});
    r.bgp.next_hop = addr("10.10.1.5");
    const std::string text = bird_config_text(r, {});
    EXPECT_EQ(text, R"(# Written by xvsd (bgp_defs/ospf_defs of xvs.conf); replaced whole on every change.
# bird.conf includes it; do not edit.

protocol device xvs_device {
}

protocol static xvs_vips4 {
    ipv4;
}

protocol static xvs_vips6 {
    ipv6;
}

filter xvs_bgp_export {
    if proto != "xvs_vips4" && proto != "xvs_vips6" then reject;
    accept;
}

protocol bgp xvs_bgp1 {
    local as 4200000000;
    neighbor 10.10.1.254 port 179 as 65000;
    ipv4 {
        import none;
        export filter xvs_bgp_export;
        next hop address 10.10.1.5;
    };
}

)");
    if (auto err = bird_parse(text)) {
        EXPECT_EQ(*err, "") << text;
    }
    const std::vector<net::InetAddr> one = {addr("10.10.1.100")};
    EXPECT_NE(bird_config_text(r, one).find("    route 10.10.1.100/32 via \"xvs-live1\";\n"),
              std::string::npos);
}

TEST(BirdConfig, OspfExactText) {
    RoutingDefs r;
    r.router_id = addr("10.10.1.22");
    r.ospf.present = true;
    r.ospf.area = "0.0.0.1";
    r.ospf.metric = 20;
    r.ospf.interfaces = {OspfInterface{"xe-wan", 10, 1, 4}, OspfInterface{"lb-lan", {}, {}, {}}};
    const std::vector<net::InetAddr> vips = {addr("10.10.1.100")};
    const std::string text = bird_config_text(r, vips);
    EXPECT_EQ(text, R"(# Written by xvsd (bgp_defs/ospf_defs of xvs.conf); replaced whole on every change.
# bird.conf includes it; do not edit.

router id 10.10.1.22;

protocol device xvs_device {
}

protocol static xvs_vips4 {
    ipv4;
    route 10.10.1.100/32 via "xvs-alive";
}

protocol static xvs_vips6 {
    ipv6;
}

filter xvs_ospf_export {
    if proto != "xvs_vips4" && proto != "xvs_vips6" then reject;
    ospf_metric2 = 20;
    accept;
}

protocol ospf v2 xvs_ospf {
    ipv4 {
        import none;
        export filter xvs_ospf_export;
    };
    area 0.0.0.1 {
        interface "xe-wan" {
            cost 10;
            hello 1;
            dead 4;
        };
        interface "lb-lan" {
        };
    };
}

)");
    if (auto err = bird_parse(text)) {
        EXPECT_EQ(*err, "") << text;
    }
}

TEST(BirdConfig, BirdTakesTheBgpFile) {
    const std::vector<net::InetAddr> vips = {addr("10.10.1.100"), addr("2001:db8::100")};
    const std::string text = bird_config_text(bgp_conf(), vips);
    auto err = bird_parse(text);
    if (!err) GTEST_SKIP() << "bird2 is not installed";
    EXPECT_EQ(*err, "") << text;
    // And the check can fail: BIRD refuses a broken file.
    EXPECT_NE(bird_parse(text + "protocol bgp {\n"), std::optional<std::string>(""));
}

TEST(BirdConfig, FileWriteAtomicReplacesTheFileWhole) {
    char dir[] = "/tmp/xvs_bird_write_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string path = std::string(dir) + "/xvs.conf";
    ASSERT_TRUE(file_write_atomic(path, "first\n"));
    ASSERT_TRUE(file_write_atomic(path, "second\n"));
    std::stringstream got;
    got << std::ifstream(path).rdbuf();
    EXPECT_EQ(got.str(), "second\n");
    EXPECT_NE(access((path + ".tmp").c_str(), F_OK), 0);  // no temporary left behind
    unlink(path.c_str());
    rmdir(dir);
    auto r = file_write_atomic("/nonexistent-dir/xvs.conf", "x");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("cannot write /nonexistent-dir/xvs.conf.tmp"), std::string::npos);
}

}  // namespace
}  // namespace xvs::ctl::bgp
