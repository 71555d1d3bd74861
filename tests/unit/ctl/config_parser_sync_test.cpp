// Tests for src/ctl/config_parser_sync.cpp: sync_defs keywords into SyncDefs, the defaults,
// and each refusal at its file:line with what to write instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ctl/config_parser.h"

namespace xvs::ctl {
namespace {

using ::testing::ElementsAre;

constexpr const char* kPorts = R"(netif_defs {
    port wan0 { dev net_ring0 }
    port lan0 { dev net_ring1 }
}
)";

ParseOutcome parse_sync(const std::string& body) {  // body starts at line 6
    return parse_config(std::string(kPorts) + "sync_defs {\n" + body + "}\n", "t.conf");
}

TEST(ConfigParserSync, AbsentMeansOff) {
    ParseOutcome out = parse_config(kPorts, "t.conf");
    ASSERT_TRUE(out.config);
    EXPECT_FALSE(out.config->sync.enabled);
}

TEST(ConfigParserSync, DefaultsAreIpvsOnes) {
    ParseOutcome out = parse_sync("");
    ASSERT_TRUE(out.config) << ::testing::PrintToString(out.errors);
    const SyncDefs& s = out.config->sync;
    EXPECT_TRUE(s.enabled);
    EXPECT_EQ(s.loc.line, 5);
    EXPECT_EQ(s.syncid, 0u);
    EXPECT_EQ(s.port, 8848);
    EXPECT_EQ(net::to_string(s.mcast_group), "224.0.0.81");
    EXPECT_TRUE(s.peers.empty());
    EXPECT_EQ(s.role, SyncRoleDef::Both);
    EXPECT_EQ(s.peer_timeout_ms, 3000u);
    EXPECT_EQ(s.heartbeat_ms, 1000u);
    EXPECT_TRUE(s.resync);
    EXPECT_EQ(s.max_message, 1472u);
}

TEST(ConfigParserSync, EveryKeywordIsApplied) {
    ParseOutcome out = parse_sync(
        "    syncid 7\n    source 10.10.2.21\n    mcast_group 239.1.2.3\n    port 9000\n"
        "    peer 10.10.2.22\n    peer 10.10.2.23\n    role backup\n    heartbeat 2\n"
        "    peer_timeout 5\n    resync off\n    max_message 9000\n    ring_size 1024\n"
        "    claim_dev lan0\n");
    ASSERT_TRUE(out.config) << ::testing::PrintToString(out.errors);
    const SyncDefs& s = out.config->sync;
    EXPECT_EQ(s.syncid, 7u);
    ASSERT_TRUE(s.source);
    EXPECT_EQ(net::to_string(*s.source), "10.10.2.21");
    EXPECT_EQ(net::to_string(s.mcast_group), "239.1.2.3");
    EXPECT_EQ(s.port, 9000);
    ASSERT_EQ(s.peers.size(), 2u);
    EXPECT_EQ(net::to_string(s.peers[1]), "10.10.2.23");
    EXPECT_EQ(s.role, SyncRoleDef::Backup);
    EXPECT_EQ(s.heartbeat_ms, 2000u);
    EXPECT_EQ(s.peer_timeout_ms, 5000u);
    EXPECT_FALSE(s.resync);
    EXPECT_EQ(s.max_message, 9000u);
    EXPECT_EQ(s.ring_size, 1024u);
    EXPECT_EQ(s.claim_dev, "lan0");
}

TEST(ConfigParserSync, RefusalsSayWhatToWrite) {
    auto errors = [](const std::string& line) { return parse_sync("    " + line + "\n").errors; };
    EXPECT_THAT(errors("syncid 256"), ElementsAre("t.conf:6: syncid: 256 out of range 0..255"));
    EXPECT_THAT(errors("mcast_group 10.1.1.1"),
                ElementsAre("t.conf:6: mcast_group: not an IPv4 multicast address (224.0.0.0/4)"));
    EXPECT_THAT(errors("peer 2001:db8::1"),
                ElementsAre("t.conf:6: peer: session sync runs over IPv4 (give the peer's IPv4 "
                            "kernel address)"));
    EXPECT_THAT(errors("role primary"),
                ElementsAre("t.conf:6: role: bad value 'primary' (master|backup|both)"));
    EXPECT_THAT(errors("port 0"), ElementsAre("t.conf:6: port: 0 is not a port (default 8848)"));
    EXPECT_THAT(errors("peer_timeout 1"),
                ElementsAre("t.conf:6: peer_timeout: peer_timeout (1 s) must be longer than "
                            "heartbeat (1 s), or a live peer is declared failed"));
    EXPECT_EQ(errors("claim_dev eth9").size(), 1u);
    EXPECT_THAT(errors("sync_id 1").at(0), ::testing::HasSubstr("t.conf:6:"));
}

TEST(ConfigParserSync, LvsSyncDaemonPointsToSyncDefs) {
    ParseOutcome out = parse_config("global_defs {\n    lvs_sync_daemon eth0 VI_1\n}\n", "t.conf");
    ASSERT_FALSE(out.config);
    ASSERT_EQ(out.errors.size(), 1u);
    EXPECT_THAT(out.errors[0], ::testing::HasSubstr("t.conf:2:"));
    EXPECT_THAT(out.errors[0], ::testing::HasSubstr("sync_defs"));
}

}  // namespace
}  // namespace xvs::ctl
