// Tests for the size keywords of src/ctl/config_parser.cpp and config_validate.cpp:
// `ipvs_defs { conn_table_size N }` and `netif_defs { mbufs_per_port N }` (issue 10 part 4):
// applied, range-checked at file:line, and a pool too small for the RX/TX rings refused with
// the minimum; `netif_defs { xdp_offload N }`, refused without a port running xvs's XDP
// program.
#include <gtest/gtest.h>

#include "ctl/config_parser.h"

namespace xvs::ctl {
namespace {

TEST(ConfigSizes, DefaultsWhenOmitted) {
    auto cfg = parse_config_string("", "x.conf");
    ASSERT_TRUE(cfg.ok()) << cfg.error();
    EXPECT_EQ(cfg->ipvs.conn_table_size, 1u << 20);
    EXPECT_EQ(cfg->netif.mbufs_per_port, 0u);  // the daemon uses mbufs_per_port_default
    EXPECT_EQ(mbufs_per_port_default(1), 8191u);
    EXPECT_GE(mbufs_per_port_default(4), mbufs_per_port_min(4));
}

TEST(ConfigSizes, Applied) {
    auto cfg = parse_config_string(
        "ipvs_defs { conn_table_size 4096 }\nnetif_defs { mbufs_per_port 3000 }\n", "x.conf");
    ASSERT_TRUE(cfg.ok()) << cfg.error();
    EXPECT_EQ(cfg->ipvs.conn_table_size, 4096u);
    EXPECT_EQ(cfg->netif.mbufs_per_port, 3000u);
}

TEST(ConfigSizes, RangesRefusedAtFileLine) {
    auto cfg = parse_config_string(
        "ipvs_defs {\n conn_table_size 100\n}\nipvs_defs { conn_table_size 99999999999 }\n"
        "netif_defs { mbufs_per_port 0 }\nipvs_defs { conn_table_size many }\n",
        "x.conf");
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.error(),
              "x.conf:2: conn_table_size: 100 out of range 1024..67108864\n"
              "x.conf:4: conn_table_size: 99999999999 out of range 1024..67108864\n"
              "x.conf:5: mbufs_per_port: 0 out of range 1..16777216\n"
              "x.conf:6: conn_table_size: 'many' is not a number");
}

TEST(ConfigSizes, MbufsTooFewForTheRingsRefusedWithTheMinimum) {
    // One worker: RX 1024 + TX 1024 + burst + caches + neighbour queue = 2752.
    auto cfg = parse_config_string("netif_defs {\n  mbufs_per_port 2000\n}\n", "x.conf");
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.error(),
              "x.conf:2: mbufs_per_port 2000 cannot fill the RX/TX rings of 1 worker(s): use at "
              "least 2752");
    EXPECT_TRUE(parse_config_string("netif_defs { mbufs_per_port 2752 }", "x.conf").ok());
    // The minimum grows with the workers, whichever section comes first.
    auto two = parse_config_string(
        "netif_defs { mbufs_per_port 2752 }\nworker_defs { workers 2 }\n", "x.conf");
    ASSERT_FALSE(two.ok());
    EXPECT_NE(two.error().find("use at least 5248"), std::string::npos) << two.error();
}

TEST(ConfigSizes, XdpOffloadNeedsAPortWithXvsXdpProgram) {
    auto cfg = parse_config_string(
        "netif_defs {\n port wan0 { dev net_af_xdp0,iface=a }\n xdp_offload 16\n}\n", "x.conf");
    ASSERT_TRUE(cfg.ok()) << cfg.error();
    EXPECT_EQ(cfg->netif.xdp_offload, 16u);
    EXPECT_EQ(parse_config_string("", "x.conf")->netif.xdp_offload, 0u) << "off by default";

    auto packet = parse_config_string(
        "netif_defs {\n port wan0 { dev net_af_packet0,iface=a }\n xdp_offload 16\n}\n", "x.conf");
    ASSERT_FALSE(packet.ok());
    EXPECT_NE(packet.error().find("x.conf:3: xdp_offload: no port runs xvs's XDP program"),
              std::string::npos)
        << packet.error();
    auto own_prog = parse_config_string(
        "netif_defs {\n port wan0 { dev net_af_xdp0,iface=a\n exception off }\n"
        " xdp_offload 1\n}\n",
        "x.conf");
    EXPECT_FALSE(own_prog.ok()) << "exception off: no xvs program on the port";
    auto range = parse_config_string("netif_defs { xdp_offload 1000001 }", "x.conf");
    ASSERT_FALSE(range.ok());
    EXPECT_NE(range.error().find("out of range 0..1000000"), std::string::npos) << range.error();
}

}  // namespace
}  // namespace xvs::ctl
