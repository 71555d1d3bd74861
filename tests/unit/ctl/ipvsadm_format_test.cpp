// ipvsadm output layouts: each golden case is a daemon reply (tests/data/xvsadm/*.json), an
// ipvsadm command line and the exact expected output (*.txt, trailing spaces included).
#include "ctl/ipvsadm_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace xvs::ctl {
namespace {

std::string data_path(const std::string& name) {
    std::string here = __FILE__;  // tests/unit/ctl/ipvsadm_format_test.cpp
    return here.substr(0, here.rfind("/unit/")) + "/data/xvsadm/" + name;
}

std::string read_file(const std::string& name) {
    std::ifstream in(data_path(name), std::ios::binary);
    EXPECT_TRUE(in.good()) << data_path(name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

struct Golden {
    const char* reply;
    const char* args;
    const char* expected;
};

class IpvsadmFormatGolden : public testing::TestWithParam<Golden> {};

TEST_P(IpvsadmFormatGolden, RendersExactly) {
    const Golden& g = GetParam();
    auto cmd = parse_ipvsadm_args(words(g.args));
    ASSERT_TRUE(cmd.ok()) << cmd.error();
    auto reply = nlohmann::json::parse(read_file(g.reply));
    auto text = render_reply(*cmd, reply);
    ASSERT_TRUE(text.ok()) << text.error();
    EXPECT_EQ(*text, read_file(g.expected));
}

INSTANTIATE_TEST_SUITE_P(
    Goldens, IpvsadmFormatGolden,
    testing::Values(
        Golden{"list.json", "-L -n", "list_n.txt"},
        Golden{"list.json", "-L", "list_n.txt"},  // never resolves names
        Golden{"list.json", "-L -n --stats", "list_stats.txt"},
        Golden{"list.json", "-L -n --stats --exact", "list_stats_exact.txt"},
        Golden{"list.json", "-L -n --rate", "list_rate.txt"},
        Golden{"list.json", "-L -n --thresholds", "list_thresholds.txt"},
        Golden{"list.json", "-S -n", "save.txt"},
        Golden{"save_dpvs.json", "-L -n", "list_dpvs.txt"},
        Golden{"save_dpvs.json", "-S", "save_dpvs.txt"},
        Golden{"conns.json", "-L -n -c", "conns.txt"},
        Golden{"conns_fullnat.json", "-lnc", "conns_fullnat.txt"},
        Golden{"timeout.json", "-L --timeout", "timeout.txt"},
        Golden{"laddr.json", "-G -t 10.10.1.100:80", "laddr.txt"},
        // Admission control: empty lists and no rate leave the lines above alone.
        Golden{"acl.json", "-L -n", "list_acl.txt"},
        Golden{"acl.json", "-L -n --thresholds", "list_acl_thresholds.txt"},
        Golden{"acl.json", "-S -n", "save_acl.txt"}, Golden{"acl.json", "-B", "blklst.txt"},
        Golden{"acl.json", "--get-whtlst -n", "whtlst.txt"},
        // IPv6 in ipvsadm's bracketed form; IPv6 names are never truncated.
        Golden{"list6.json", "-L -n", "list6_n.txt"}, Golden{"list6.json", "-S -n", "save6.txt"},
        Golden{"list6.json", "-B", "blklst6.txt"}, Golden{"conns6.json", "-L -n -c", "conns6.txt"},
        // A mark's IPv4 and IPv6 services: "FWM  1" before "FWM  1 IPv6" (ipvsadm's), "-f 1 -6".
        Golden{"list_fwm6.json", "-L -n", "list_fwm6_n.txt"},
        Golden{"list_fwm6.json", "-S -n", "save_fwm6.txt"}),
    [](const testing::TestParamInfo<Golden>& info) {
        std::string name = std::string(info.param.expected);
        name = name.substr(0, name.find('.')) + "_" + std::to_string(info.index);
        return name;
    });

TEST(IpvsadmFormat, LargeNumbers) {
    EXPECT_EQ(format_largenum(0, false), "        0");
    EXPECT_EQ(format_largenum(99999999, false), " 99999999");
    EXPECT_EQ(format_largenum(100000000, false), "  100000K");
    EXPECT_EQ(format_largenum(999999999, false), "  999999K");
    EXPECT_EQ(format_largenum(1000000000, false), "    1000M");
    EXPECT_EQ(format_largenum(99999999999ULL, false), "   99999M");
    EXPECT_EQ(format_largenum(100000000000ULL, false), "     100G");
    EXPECT_EQ(format_largenum(99999999999999ULL, false), "   99999G");
    EXPECT_EQ(format_largenum(100000000000000ULL, false), "     100T");
    EXPECT_EQ(format_largenum(12345678, true), " 12345678");
    EXPECT_EQ(format_largenum(123456789, true), " 123456789");
}

TEST(IpvsadmFormat, OneServiceListHasNoBanner) {
    auto cmd = parse_ipvsadm_args(words("-L -n -t 207.175.44.110:53"));
    ASSERT_TRUE(cmd.ok());
    auto reply = nlohmann::json::parse(read_file("list.json"));
    // The daemon returns just the asked service.
    reply["services"] = nlohmann::json::array({reply["services"][0]});
    auto text = render_reply(*cmd, reply);
    ASSERT_TRUE(text.ok()) << text.error();
    EXPECT_EQ(*text,
              "Prot LocalAddress:Port Scheduler Flags\n"
              "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n"
              "UDP  207.175.44.110:53 rr ops\n"
              "  -> 192.168.10.3:53              Tunnel  1      0          0         \n");
}

// inhibit_on_failure holds a down real server at weight 0: its line alone gets a trailing
// word; the others, and every other view, stay ipvsadm's byte for byte.
TEST(IpvsadmFormat, InhibitedServerMarkedAtTheEndOfItsLineOnly) {
    auto reply = nlohmann::json::parse(read_file("list.json"));
    reply["services"] = nlohmann::json::array({reply["services"][0]});
    reply["services"][0]["dests"][0]["weight"] = 0;
    reply["services"][0]["dests"][0]["inhibited"] = true;
    auto cmd = parse_ipvsadm_args(words("-L -n -t 207.175.44.110:53"));
    ASSERT_TRUE(cmd.ok());
    auto text = render_reply(*cmd, reply);
    ASSERT_TRUE(text.ok()) << text.error();
    EXPECT_EQ(*text,
              "Prot LocalAddress:Port Scheduler Flags\n"
              "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n"
              "UDP  207.175.44.110:53 rr ops\n"
              "  -> 192.168.10.3:53              Tunnel  0      0          0          inhibited\n");
    cmd = parse_ipvsadm_args(words("-L -n --stats -t 207.175.44.110:53"));
    ASSERT_TRUE(cmd.ok());
    text = render_reply(*cmd, reply);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(text->find("inhibited"), std::string::npos) << *text;
}

TEST(IpvsadmFormat, EmptyTableStillPrintsHeaders) {
    auto text = format_list({}, ListFormat{}, uint64_t{1} << 20);
    EXPECT_EQ(text,
              "IP Virtual Server version 1.2.1 (size=1048576)\n"
              "Prot LocalAddress:Port Scheduler Flags\n"
              "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n");
}

TEST(IpvsadmFormat, PersistentConnColumns) {
    auto cmd = parse_ipvsadm_args(words("-L -n --persistent-conn"));
    ASSERT_TRUE(cmd.ok());
    auto reply = nlohmann::json::parse(read_file("list.json"));
    auto text = render_reply(*cmd, reply);
    ASSERT_TRUE(text.ok());
    EXPECT_NE(text->find("Prot LocalAddress:Port            Weight    PersistConn ActiveConn "
                         "InActConn \n"),
              std::string::npos)
        << *text;
    EXPECT_NE(text->find("  -> 192.168.10.1:443             100       7           0          0"
                         "         \n"),
              std::string::npos)
        << *text;
}

TEST(IpvsadmFormat, NoSortKeepsDaemonOrder) {
    auto cmd = parse_ipvsadm_args(words("-L -n --nosort"));
    ASSERT_TRUE(cmd.ok());
    auto text = render_reply(*cmd, nlohmann::json::parse(read_file("list.json")));
    ASSERT_TRUE(text.ok());
    EXPECT_LT(text->find("UDP  207.175.44.110:53"), text->find("TCP  207.175.44.110:80"));
}

// Every line -S prints must be accepted by -R and describe the same thing.
TEST(IpvsadmFormat, SaveRoundTripsThroughRestoreParsing) {
    for (const char* file : {"save.txt", "save_dpvs.txt", "save_acl.txt", "save6.txt"}) {
        std::istringstream in(read_file(file));
        for (std::string line; std::getline(in, line);) {
            auto cmd = parse_ipvsadm_args(split_restore_line(line));
            EXPECT_TRUE(cmd.ok()) << line << ": " << (cmd.ok() ? "" : cmd.error());
        }
    }
    auto svc = parse_ipvsadm_args(
        words("-A -t 10.10.1.100:80 -s wrr -p 600 -M 255.255.255.0 -j --toa on "
              "--proxy-protocol v2"));
    ASSERT_TRUE(svc.ok());
    auto services = decode_services(nlohmann::json::parse(read_file("save_dpvs.json")));
    ASSERT_TRUE(services.ok()) << services.error();
    const ServiceEntry& s = services->front();
    EXPECT_EQ(svc->svc.sched, s.opts.sched);
    EXPECT_EQ(svc->svc.persistent, s.opts.persistent);
    EXPECT_EQ(svc->svc.netmask, s.opts.netmask);
    EXPECT_EQ(svc->svc.synproxy, s.opts.synproxy);
    EXPECT_EQ(svc->svc.toa, s.opts.toa);
    EXPECT_EQ(svc->svc.proxy_protocol, s.opts.proxy_protocol);
    // The UDP service's --uoa line restores what the reply says.
    auto udp = parse_ipvsadm_args(words("-A -u 10.10.1.100:53 -s wlc --uoa opp"));
    ASSERT_TRUE(udp.ok());
    const ServiceEntry& u = (*services)[4];
    ASSERT_EQ(u.key.proto, Proto::Udp);
    EXPECT_EQ(u.opts.uoa, Uoa::Opp);
    EXPECT_EQ(udp->svc.uoa, u.opts.uoa);
}

// A SNAT match service's -S lines come back as the same key (-H text <-> reply "match").
TEST(IpvsadmFormat, MatchServiceSaveLinesRestoreTheSameKey) {
    auto services = decode_services(nlohmann::json::parse(read_file("save_dpvs.json")));
    ASSERT_TRUE(services.ok()) << services.error();
    const ServiceEntry& m = (*services)[1];
    ASSERT_TRUE(m.key.match);
    auto add = parse_ipvsadm_args(words("-A -H " + lb::to_string(*m.key.match) + " -s wrr"));
    ASSERT_TRUE(add.ok()) << add.error();
    EXPECT_EQ(add->service, m.key);
    auto dest = parse_ipvsadm_args(
        words("-a -H " + lb::to_string(*m.key.match) + " -r 10.10.1.1:0 -J -w 4"));
    ASSERT_TRUE(dest.ok()) << dest.error();
    EXPECT_EQ(dest->dest.fwd, lb::FwdMode::Snat);
    EXPECT_EQ(dest->dest.addr, (net::InetEndpoint{*net::parse_ipv4("10.10.1.1"), 0}));
}

// -S of IPv6 services, read back by -R's parser, names the same services, real servers, local
// addresses and list entries as the reply it was made from.
TEST(IpvsadmFormat, Ipv6SaveRestoresTheSameRules) {
    auto services = decode_services(nlohmann::json::parse(read_file("list6.json")));
    ASSERT_TRUE(services.ok()) << services.error();
    std::vector<ServiceKey> keys;
    std::vector<net::InetEndpoint> dests;
    std::vector<net::InetAddr> laddrs;
    std::vector<net::InetPrefix> acls;
    std::istringstream in(read_file("save6.txt"));
    for (std::string line; std::getline(in, line);) {
        auto cmd = parse_ipvsadm_args(split_restore_line(line));
        ASSERT_TRUE(cmd.ok()) << line << ": " << cmd.error();
        switch (cmd->kind) {
            case CommandKind::AddService:
                keys.push_back(*cmd->service);
                break;
            case CommandKind::AddDest:
                dests.push_back(cmd->dest.addr);
                break;
            case CommandKind::AddLaddr:
                laddrs.push_back(cmd->laddr);
                break;
            case CommandKind::AddBlacklist:
            case CommandKind::AddWhitelist:
                acls.push_back(cmd->acl);
                break;
            default:
                ADD_FAILURE() << line;
        }
    }
    std::vector<ServiceKey> want_keys;
    std::vector<net::InetEndpoint> want_dests;
    std::vector<net::InetAddr> want_laddrs;
    std::vector<net::InetPrefix> want_acls;
    // -S's order: IPv4 before IPv6, each by address.
    for (const char* vip : {"10.10.1.100", "2001:db8::64", "2001:db8::100",
                            "2001:db8:1234:5678:9abc:def0:1234:5678"}) {
        for (const ServiceEntry& s : *services) {
            if (!(s.key.vip == *net::parse_inet(vip))) continue;
            want_keys.push_back(s.key);
            auto ds = s.dests;
            std::sort(ds.begin(), ds.end(), [](const DestEntry& a, const DestEntry& b) {
                return net::addr_less(a.opts.addr.addr, b.opts.addr.addr);
            });
            for (const DestEntry& d : ds) want_dests.push_back(d.opts.addr);
            for (const LaddrEntry& l : s.laddrs) want_laddrs.push_back(l.addr);
            for (const auto& p : s.opts.blacklist) want_acls.push_back(p);
            for (const auto& p : s.opts.whitelist) want_acls.push_back(p);
        }
    }
    EXPECT_EQ(keys, want_keys);
    EXPECT_EQ(dests, want_dests);
    EXPECT_EQ(laddrs, want_laddrs);
    EXPECT_EQ(acls, want_acls);
    ASSERT_EQ(keys.size(), 4u);
    EXPECT_FALSE(keys[2].vip.is_v4());
    EXPECT_EQ(keys[3].proto, Proto::Udp);
}

TEST(IpvsadmFormat, MalformedReplyIsAnError) {
    auto cmd = parse_ipvsadm_args(words("-L -n"));
    ASSERT_TRUE(cmd.ok());
    auto no_services = render_reply(*cmd, nlohmann::json{{"ok", true}});
    ASSERT_FALSE(no_services.ok());
    EXPECT_EQ(no_services.error().rfind("Malformed reply from xvsd: ", 0), 0u);
    auto bad_addr = render_reply(
        *cmd, nlohmann::json::parse(
                  R"({"ok":true,"services":[{"proto":"tcp","vip":"1.2.3","port":80}]})"));
    ASSERT_FALSE(bad_addr.ok());
    EXPECT_EQ(bad_addr.error(), "Malformed reply from xvsd: bad address in 'vip'");
    auto bad_type = render_reply(
        *cmd, nlohmann::json::parse(
                  R"({"ok":true,"services":[{"proto":"tcp","vip":"1.2.3.4","port":"x"}]})"));
    EXPECT_FALSE(bad_type.ok());
}

TEST(IpvsadmFormat, ChangeCommandsPrintNothing) {
    auto cmd = parse_ipvsadm_args(words("-A -t 10.0.0.1:80"));
    ASSERT_TRUE(cmd.ok());
    auto text = render_reply(*cmd, nlohmann::json{{"ok", true}});
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(*text, "");
}

// -S of lists and rate, read back by -R, gives the same commands the lists came from.
TEST(IpvsadmFormat, AclSaveLinesRestoreAsListCommands) {
    auto services = decode_services(nlohmann::json::parse(read_file("acl.json")));
    ASSERT_TRUE(services.ok()) << services.error();
    std::istringstream in(format_save(*services, ListFormat{}));
    std::vector<Command> cmds;
    for (std::string line; std::getline(in, line);) {
        auto cmd = parse_ipvsadm_args(split_restore_line(line));
        ASSERT_TRUE(cmd.ok()) << line << ": " << cmd.error();
        cmds.push_back(*cmd);
    }
    ASSERT_EQ(cmds.size(), 7u);
    EXPECT_EQ(cmds[0].kind, CommandKind::AddService);
    EXPECT_EQ(cmds[0].svc.conn_rate, 500u);
    EXPECT_EQ(cmds[2].kind, CommandKind::AddBlacklist);
    EXPECT_EQ(net::to_string(cmds[2].acl), "10.0.0.0/8");
    EXPECT_EQ(cmds[3].kind, CommandKind::AddBlacklist);
    EXPECT_EQ(net::to_string(cmds[3].acl), "192.0.2.7/32");
    EXPECT_EQ(cmds[5].dest.u_threshold, 100u);
    EXPECT_EQ(cmds[5].dest.l_threshold, 50u);
    EXPECT_EQ(cmds[6].kind, CommandKind::AddWhitelist);
    EXPECT_EQ(cmds[6].service->proto, Proto::Udp);
    EXPECT_EQ(net::to_string(cmds[6].acl), "198.51.100.0/24");
}

TEST(IpvsadmFormat, EmptyListsPrintOnlyTheHeader) {
    EXPECT_EQ(format_acl({}, false), "PROTO    VIP:VPORT                      BLACKLIST                     \n");
}

}  // namespace
}  // namespace xvs::ctl
