// xvsctl end to end against a fake xvsd: every command's request on the wire, every usage
// error, the rendered output of each listing, and the exit codes.
#include "ctl/xvsctl_main.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "fake_xvsd.h"

namespace xvs::ctl {
namespace {

using fake::FakeXvsd;
using nlohmann::json;

struct RunResult {
    int rc;
    std::string out, err;
};

RunResult run(std::vector<std::string> args) {
    args.insert(args.begin(), "xvsctl");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::istringstream in;
    std::ostringstream out, err;
    int rc = xvsctl_main(static_cast<int>(args.size()), argv.data(), in, out, err);
    return {rc, out.str(), err.str()};
}

std::vector<std::string> with_socket(const FakeXvsd& d, std::vector<std::string> args) {
    args.insert(args.begin(), {"--socket", d.path()});
    return args;
}

// Runs `args` against a daemon answering `reply`; expects exit 0 and exactly `request`.
RunResult run_expecting(std::vector<std::string> args, const char* request,
                        const std::string& reply = R"({"ok":true})") {
    FakeXvsd d({reply});
    RunResult r = run(with_socket(d, args));
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.rc, 0) << joined << ": " << r.err;
    EXPECT_EQ(r.err, "") << joined;
    auto reqs = d.requests();
    EXPECT_EQ(reqs.size(), 1u) << joined;
    if (!reqs.empty()) {
        EXPECT_EQ(reqs[0], json::parse(request)) << joined;
    }
    return r;
}

TEST(Xvsctl, RequestForEveryCommandAndAbbreviation) {
    struct Case {
        std::vector<std::string> args;
        const char* request;
    };
    const char* links = R"({"ok":true,"links":[]})";
    const char* addrs = R"({"ok":true,"addrs":[]})";
    const char* routes = R"({"ok":true,"routes":[]})";
    const char* neighs = R"({"ok":true,"neighbours":[]})";
    const char* stats = R"({"ok":true,"workers":1,"counters":[]})";
    const char* conns = R"({"ok":true,"conns":[]})";
    struct Listing {
        std::vector<std::string> args;
        const char* request;
        const char* reply;
    };
    const Listing listings[] = {
        {{"link", "show"}, R"({"cmd":"link_show"})", links},
        {{"link"}, R"({"cmd":"link_show"})", links},
        {{"l", "s", "-s"}, R"({"cmd":"link_show"})", links},
        {{"-s", "link"}, R"({"cmd":"link_show"})", links},
        {{"link", "-s"}, R"({"cmd":"link_show"})", links},
        {{"addr", "show"}, R"({"cmd":"addr_show"})", addrs},
        {{"a"}, R"({"cmd":"addr_show"})", addrs},
        {{"address", "list"}, R"({"cmd":"addr_show"})", addrs},
        {{"route"}, R"({"cmd":"route_show"})", routes},
        {{"r", "lst"}, R"({"cmd":"route_show"})", routes},
        {{"neigh", "show"}, R"({"cmd":"neigh_show"})", neighs},
        {{"n"}, R"({"cmd":"neigh_show"})", neighs},
        {{"neighbor", "l"}, R"({"cmd":"neigh_show"})", neighs},
        {{"stats"}, R"({"cmd":"stats"})", stats},
        {{"s", "-a"}, R"({"cmd":"stats"})", stats},
        {{"stats", "show", "--all"}, R"({"cmd":"stats"})", stats},
        {{"stats", "--workers"}, R"({"cmd":"stats"})", stats},
        {{"conn", "show"}, R"({"cmd":"conn_show"})", conns},
        {{"c"}, R"({"cmd":"conn_show"})", conns},
        {{"conns", "show", "proto", "TCP", "client", "10.0.0.2", "vip", "10.10.1.100:80",
          "dest", "10.10.2.2:8080", "state", "established", "limit", "100"},
         R"({"cmd":"conn_show","proto":"tcp","client":"10.0.0.2","vip":"10.10.1.100:80",
             "dest":"10.10.2.2:8080","state":"ESTABLISHED","limit":100})",
         conns},
        {{"conn", "client", "10.0.0.2:51234"}, R"({"cmd":"conn_show","client":"10.0.0.2:51234"})",
         conns},
    };
    for (const auto& c : listings) run_expecting(c.args, c.request, c.reply);

    const Case changes[] = {
        {{"addr", "add", "10.10.3.1/24", "dev", "wan0"},
         R"({"cmd":"addr_add","addr":"10.10.3.1","prefix_len":24,"ifname":"wan0"})"},
        {{"a", "a", "dev", "lan0", "10.10.3.1"},
         R"({"cmd":"addr_add","addr":"10.10.3.1","prefix_len":32,"ifname":"lan0"})"},
        {{"addr", "del", "10.10.3.1/24", "dev", "wan0"},
         R"({"cmd":"addr_del","addr":"10.10.3.1","prefix_len":24,"ifname":"wan0"})"},
        {{"address", "delete", "10.10.3.1", "dev", "wan0"},
         R"({"cmd":"addr_del","addr":"10.10.3.1","ifname":"wan0"})"},
        {{"route", "add", "default", "via", "10.10.1.254", "dev", "wan0"},
         R"({"cmd":"route_add","prefix":"0.0.0.0/0","gateway":"10.10.1.254","ifname":"wan0"})"},
        {{"r", "a", "10.20.0.0/16", "dev", "lan0"},
         R"({"cmd":"route_add","prefix":"10.20.0.0/16","ifname":"lan0"})"},
        {{"route", "add", "192.0.2.7", "via", "10.10.1.254", "dev", "wan0"},
         R"({"cmd":"route_add","prefix":"192.0.2.7/32","gateway":"10.10.1.254","ifname":"wan0"})"},
        {{"route", "del", "default"}, R"({"cmd":"route_del","prefix":"0.0.0.0/0"})"},
        {{"r", "d", "10.20.0.0/16"}, R"({"cmd":"route_del","prefix":"10.20.0.0/16"})"},
    };
    for (const auto& c : changes) {
        RunResult r = run_expecting(c.args, c.request);
        EXPECT_EQ(r.out, "");
    }
}

TEST(Xvsctl, Ipv6Requests) {
    struct Case {
        std::vector<std::string> args;
        const char* request;
    };
    const Case changes[] = {
        {{"addr", "add", "2001:db8::1/64", "dev", "wan0"},
         R"({"cmd":"addr_add","addr":"2001:db8::1","prefix_len":64,"ifname":"wan0"})"},
        {{"addr", "add", "2001:DB8:0::7", "dev", "lan0"},
         R"({"cmd":"addr_add","addr":"2001:db8::7","prefix_len":128,"ifname":"lan0"})"},
        {{"addr", "del", "2001:db8::1", "dev", "wan0"},
         R"({"cmd":"addr_del","addr":"2001:db8::1","ifname":"wan0"})"},
        {{"route", "add", "default", "via", "2001:db8::fe", "dev", "wan0"},
         R"({"cmd":"route_add","prefix":"::/0","gateway":"2001:db8::fe","ifname":"wan0"})"},
        {{"route", "add", "2001:db8:100::/40", "via", "fe80::1", "dev", "wan0"},
         R"({"cmd":"route_add","prefix":"2001:db8:100::/40","gateway":"fe80::1","ifname":"wan0"})"},
        {{"route", "add", "2001:db8::9", "dev", "lan0"},
         R"({"cmd":"route_add","prefix":"2001:db8::9/128","ifname":"lan0"})"},
        {{"route", "del", "::/0"}, R"({"cmd":"route_del","prefix":"::/0"})"},
    };
    for (const auto& c : changes) run_expecting(c.args, c.request);
    run_expecting({"conn", "flush", "dest", "[2001:db8::2]:8080"},
                  R"({"cmd":"flush_dest","dest":"[2001:db8::2]:8080"})",
                  R"({"ok":true,"flushed":0})");
    run_expecting({"conn", "show", "client", "2001:DB8::7", "vip", "[2001:db8::100]:80", "dest",
                   "[2001:db8::2]"},
                  R"({"cmd":"conn_show","client":"2001:db8::7","vip":"[2001:db8::100]:80",
                      "dest":"2001:db8::2"})",
                  R"({"ok":true,"conns":[]})");
}

TEST(Xvsctl, Ipv6Listings) {
    RunResult addrs = run_expecting({"addr"}, R"({"cmd":"addr_show"})", R"({"ok":true,"addrs":[
        {"addr":"2001:db8::100","prefix_len":128,"ifname":"wan0","kind":"vip"},
        {"addr":"2001:db8::1","prefix_len":64,"ifname":"wan0","kind":"director"},
        {"addr":"10.10.1.1","prefix_len":24,"ifname":"wan0","kind":"director"}]})");
    EXPECT_EQ(addrs.out,
              "wan0  inet 10.10.1.1/24 director\n"
              "wan0  inet6 2001:db8::1/64 director\n"
              "wan0  inet6 2001:db8::100/128 vip\n");
    RunResult routes = run_expecting({"route"}, R"({"cmd":"route_show"})", R"({"ok":true,"routes":[
        {"prefix":"2001:db8::/64","gateway":null,"ifname":"wan0","connected":true},
        {"prefix":"::/0","gateway":"2001:db8::fe","ifname":"wan0","connected":false},
        {"prefix":"2001:db8::9/128","gateway":null,"ifname":"lan0","connected":false},
        {"prefix":"0.0.0.0/0","gateway":"10.10.1.254","ifname":"wan0","connected":false}]})");
    EXPECT_EQ(routes.out,
              "default via 10.10.1.254 dev wan0\n"
              "default via 2001:db8::fe dev wan0\n"
              "2001:db8::/64 dev wan0 proto kernel scope link\n"
              "2001:db8::9 dev lan0 scope link\n");
    RunResult neighs =
        run_expecting({"neigh"}, R"({"cmd":"neigh_show"})", R"({"ok":true,"neighbours":[
        {"addr":"2001:db8::fe","mac":"02:00:00:00:01:fe","ifname":"wan0","state":"REACHABLE","worker":0},
        {"addr":"10.10.1.254","mac":"02:00:00:00:01:fe","ifname":"wan0","state":"REACHABLE","worker":0},
        {"addr":"2001:db8::2","mac":null,"ifname":"lan0","state":"INCOMPLETE","worker":0}]})");
    EXPECT_EQ(neighs.out,
              "10.10.1.254 dev wan0 lladdr 02:00:00:00:01:fe REACHABLE\n"
              "2001:db8::2 dev lan0 INCOMPLETE\n"
              "2001:db8::fe dev wan0 lladdr 02:00:00:00:01:fe REACHABLE\n");
}

TEST(Xvsctl, SocketOptionForms) {
    FakeXvsd d({R"({"ok":true,"routes":[]})"});
    RunResult r = run({"--socket=" + d.path(), "route"});
    EXPECT_EQ(r.rc, 0) << r.err;
    ASSERT_EQ(d.requests().size(), 1u);

    FakeXvsd e({R"({"ok":true,"routes":[]})"});
    ::setenv("XVS_SOCKET", e.path().c_str(), 1);
    RunResult r2 = run({"route"});
    ::unsetenv("XVS_SOCKET");
    EXPECT_EQ(r2.rc, 0) << r2.err;
    EXPECT_EQ(e.requests().size(), 1u);
}

TEST(Xvsctl, UsageErrorsExitTwoAndNeverConnect) {
    struct Case {
        std::vector<std::string> args;
        const char* message;
    };
    const Case cases[] = {
        {{}, "no object given"},
        {{"--bogus"}, "unknown option \"--bogus\""},
        {{"--socket"}, "option \"--socket\" requires a path"},
        {{"--socket="}, "option \"--socket\" requires a path"},
        {{"frobnicate"}, "unknown object \"frobnicate\""},
        {{"link", "add"}, "\"link\" supports only \"show\""},
        {{"link", "show", "wan0"}, "unknown argument \"wan0\" for \"link show\""},
        {{"link", "flap"}, "unknown command \"flap\" for \"link\""},
        {{"addr", "show", "dev", "wan0"}, "unknown argument \"dev\" for \"address show\""},
        {{"addr", "add"}, "missing address for \"address add\""},
        {{"addr", "add", "10.10.3.1/24"}, "not enough information: \"dev\" argument is required"},
        {{"addr", "add", "10.10.3.1/24", "dev"}, "missing value after \"dev\""},
        {{"addr", "add", "10.10.3.300/24", "dev", "wan0"}, "invalid address \"10.10.3.300/24\""},
        {{"addr", "add", "10.10.3.1/33", "dev", "wan0"},
         "invalid prefix length in \"10.10.3.1/33\""},
        {{"addr", "add", "10.10.3.1/0", "dev", "wan0"},
         "prefix length of an address must be 1..32"},
        {{"addr", "add", "10.10.3.1/24", "dev", "wan0", "extra"},
         "unknown argument \"extra\" for \"address add\""},
        {{"addr", "add", "10.10.3.1/24", "dev", "wan0", "dev", "lan0"}, "duplicate \"dev\""},
        {{"addr", "del", "dev", "wan0"}, "missing address for \"address delete\""},
        {{"addr", "del", "10.10.3.1"}, "not enough information: \"dev\" argument is required"},
        {{"route", "add"}, "missing prefix for \"route add\""},
        {{"route", "add", "default", "via", "10.10.1.254"},
         "not enough information: \"dev\" argument is required"},
        {{"route", "add", "10.10.1.1/24", "dev", "wan0"},
         "invalid prefix \"10.10.1.1/24\" for its length (did you mean 10.10.1.0/24?)"},
        {{"route", "add", "10.10.1.0/40", "dev", "wan0"}, "invalid prefix \"10.10.1.0/40\""},
        {{"route", "add", "default", "via", "gw", "dev", "wan0"}, "invalid gateway \"gw\""},
        {{"route", "add", "default", "via"}, "missing value after \"via\""},
        {{"route", "del"}, "missing prefix for \"route delete\""},
        {{"route", "del", "default", "via", "10.10.1.254"},
         "unknown argument \"via\" for \"route delete\""},
        {{"route", "show", "table", "main"}, "unknown argument \"table\" for \"route show\""},
        {{"neigh", "flush"}, "unknown command \"flush\" for \"neigh\""},
        {{"neigh", "add"}, "\"neigh\" supports only \"show\""},
        {{"neigh", "show", "dev"}, "unknown argument \"dev\" for \"neigh show\""},
        {{"stats", "-x"}, "unknown argument \"-x\" for \"stats\""},
        {{"stats", "del"}, "\"stats\" supports only \"show\""},
        {{"conn", "show", "proto", "sctp"}, "invalid proto \"sctp\" (expected tcp, udp or icmp)"},
        {{"conn", "show", "client", "10.0.0"},
         "invalid client \"10.0.0\" (expected A.B.C.D, A.B.C.D:PORT, an IPv6 address or "
         "[IPV6]:PORT)"},
        {{"conn", "show", "vip", "10.0.0.1:99999"},
         "invalid vip \"10.0.0.1:99999\" (expected A.B.C.D, A.B.C.D:PORT, an IPv6 address or "
         "[IPV6]:PORT)"},
        {{"conn", "show", "state", "OPEN"}, "invalid state \"OPEN\""},
        {{"conn", "show", "limit", "0"}, "invalid limit \"0\" (expected 1..4294967295)"},
        {{"conn", "show", "limit", "-5"}, "invalid limit \"-5\" (expected 1..4294967295)"},
        {{"conn", "show", "dest"}, "missing value after \"dest\""},
        {{"conn", "show", "proto", "tcp", "proto", "udp"}, "duplicate \"proto\""},
        {{"conn", "show", "port", "80"}, "unknown argument \"port\" for \"conn show\""},
        {{"conn", "flush"}, "\"conn flush\" needs \"dest A.B.C.D:PORT\" (or [IPV6]:PORT)"},
        {{"conn", "flush", "dest", "10.10.2.2"},
         "invalid dest \"10.10.2.2\" (expected A.B.C.D:PORT or [IPV6]:PORT)"},
        {{"conn", "flush", "dest", "2001:db8::2:80"},
         "invalid dest \"2001:db8::2:80\" (expected A.B.C.D:PORT or [IPV6]:PORT)"},
        {{"addr", "add", "2001:db8::1/129", "dev", "wan0"},
         "invalid prefix length in \"2001:db8::1/129\""},
        {{"addr", "add", "2001:db8::1/0", "dev", "wan0"},
         "prefix length of an address must be 1..128"},
        {{"route", "add", "2001:db8::1/64", "dev", "wan0"},
         "invalid prefix \"2001:db8::1/64\" for its length (did you mean 2001:db8::/64?)"},
        {{"route", "add", "2001:db8::/64", "via", "10.10.1.254", "dev", "wan0"},
         "gateway 10.10.1.254 is not of the family of 2001:db8::/64"},
        {{"route", "add", "10.20.0.0/16", "via", "2001:db8::1", "dev", "wan0"},
         "gateway 2001:db8::1 is not of the family of 10.20.0.0/16"},
        {{"conn", "flush", "dest", "10.10.2.2:80", "vip"},
         "unknown argument \"vip\" for \"conn flush\""},
    };
    FakeXvsd d({});
    for (const auto& c : cases) {
        RunResult r = run(with_socket(d, c.args));
        std::string joined;
        for (const auto& a : c.args) joined += a + " ";
        EXPECT_EQ(r.rc, 2) << joined;
        EXPECT_EQ(r.out, "") << joined;
        EXPECT_EQ(r.err, std::string("xvsctl: ") + c.message +
                             "\nTry 'xvsctl --help' for more information.\n")
            << joined;
    }
    EXPECT_TRUE(d.requests().empty());
}

TEST(Xvsctl, HelpAndVersionNeedNoDaemon) {
    for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
             {"-h"}, {"--help"}, {"help"}, {"addr", "help"}, {"route", "help"}}) {
        args.insert(args.begin(), {"--socket", "/nonexistent/xvs.sock"});
        RunResult r = run(args);
        EXPECT_EQ(r.rc, 0) << args[2];
        EXPECT_EQ(r.out, xvsctl_usage_text());
        EXPECT_EQ(r.err, "");
    }
    RunResult v = run({"-v"});
    EXPECT_EQ(v.rc, 0);
    EXPECT_EQ(v.out, std::string("xvsctl v") + kXvsctlVersion + "\n");
    EXPECT_EQ(run({"--version"}).out, v.out);
}

const char* kLinks = R"({"ok":true,"links":[
  {"name":"lan0","dev":"net_af_xdp1,iface=lb-lan","mac":"02:00:00:00:00:02","mtu":9000,
   "port_id":1,"up":false,
   "stats":{"ipackets":5,"opackets":0,"ibytes":300,"obytes":0,"imissed":0,"ierrors":0,
            "oerrors":0,"rx_nombuf":0,"tx_refused":0}},
  {"name":"wan0","dev":"net_af_xdp0,iface=lb-wan","mac":"02:00:00:00:00:01","mtu":1500,
   "port_id":0,"up":true,
   "stats":{"ipackets":1234567,"opackets":1200000,"ibytes":98765432100,"obytes":87654321,
            "imissed":12,"ierrors":3,"oerrors":1,"rx_nombuf":7,"tx_refused":2}}]})";

TEST(Xvsctl, LinkShow) {
    RunResult r = run_expecting({"link", "show"}, R"({"cmd":"link_show"})", kLinks);
    EXPECT_EQ(r.out,
              "0: wan0: <UP> mtu 1500 dev net_af_xdp0,iface=lb-wan\n"
              "    link/ether 02:00:00:00:00:01\n"
              "1: lan0: <NO-CARRIER> mtu 9000 dev net_af_xdp1,iface=lb-lan\n"
              "    link/ether 02:00:00:00:00:02\n");
}

TEST(Xvsctl, LinkShowStats) {
    RunResult r = run_expecting({"link", "show", "-s"}, R"({"cmd":"link_show"})", kLinks);
    EXPECT_EQ(r.out,
              "0: wan0: <UP> mtu 1500 dev net_af_xdp0,iface=lb-wan\n"
              "    link/ether 02:00:00:00:00:01\n"
              "    RX:       bytes packets errors missed nombuf\n"
              "        98765432100 1234567      3     12      7\n"
              "    TX:    bytes packets errors refused\n"
              "        87654321 1200000      1       2\n"
              "1: lan0: <NO-CARRIER> mtu 9000 dev net_af_xdp1,iface=lb-lan\n"
              "    link/ether 02:00:00:00:00:02\n"
              "    RX: bytes packets errors missed nombuf\n"
              "          300       5      0      0      0\n"
              "    TX: bytes packets errors refused\n"
              "            0       0      0       0\n");
}

TEST(Xvsctl, AddrShow) {
    RunResult r = run_expecting({"addr"}, R"({"cmd":"addr_show"})", R"({"ok":true,"addrs":[
        {"addr":"10.10.2.100","prefix_len":32,"ifname":"lan0","kind":"lip"},
        {"addr":"10.10.1.100","prefix_len":32,"ifname":"wan0","kind":"vip"},
        {"addr":"10.10.1.1","prefix_len":24,"ifname":"wan0","kind":"director"},
        {"addr":"10.10.2.1","prefix_len":24,"ifname":"lan0","kind":"director"},
        {"addr":"192.0.2.1","prefix_len":28,"ifname":"mgmt10","kind":"director"}]})");
    EXPECT_EQ(r.out,
              "lan0    inet 10.10.2.1/24 director\n"
              "lan0    inet 10.10.2.100/32 lip\n"
              "mgmt10  inet 192.0.2.1/28 director\n"
              "wan0    inet 10.10.1.1/24 director\n"
              "wan0    inet 10.10.1.100/32 vip\n");
}

TEST(Xvsctl, RouteShow) {
    RunResult r = run_expecting({"route", "show"}, R"({"cmd":"route_show"})", R"({"ok":true,"routes":[
        {"prefix":"10.10.2.0/24","gateway":null,"ifname":"lan0","connected":true},
        {"prefix":"10.20.0.0/16","gateway":"10.10.2.254","ifname":"lan0","connected":false},
        {"prefix":"0.0.0.0/0","gateway":"10.10.1.254","ifname":"wan0","connected":false},
        {"prefix":"10.10.1.0/24","gateway":null,"ifname":"wan0","connected":true},
        {"prefix":"192.0.2.7/32","gateway":null,"ifname":"wan0","connected":false}]})");
    EXPECT_EQ(r.out,
              "default via 10.10.1.254 dev wan0\n"
              "10.10.1.0/24 dev wan0 proto kernel scope link\n"
              "10.10.2.0/24 dev lan0 proto kernel scope link\n"
              "10.20.0.0/16 via 10.10.2.254 dev lan0\n"
              "192.0.2.7 dev wan0 scope link\n");
}

TEST(Xvsctl, NeighShowOneWorker) {
    RunResult r = run_expecting({"neigh"}, R"({"cmd":"neigh_show"})", R"({"ok":true,"neighbours":[
        {"addr":"10.10.2.3","mac":null,"ifname":"lan0","state":"INCOMPLETE","worker":0},
        {"addr":"10.10.2.2","mac":"02:00:00:00:02:02","ifname":"lan0","state":"REACHABLE","worker":0},
        {"addr":"10.10.1.254","mac":"02:00:00:00:01:fe","ifname":"wan0","state":"PERMANENT","worker":0}]})");
    EXPECT_EQ(r.out,
              "10.10.1.254 dev wan0 lladdr 02:00:00:00:01:fe PERMANENT\n"
              "10.10.2.2 dev lan0 lladdr 02:00:00:00:02:02 REACHABLE\n"
              "10.10.2.3 dev lan0 INCOMPLETE\n");
}

TEST(Xvsctl, NeighShowNamesWorkersWhenThereAreSeveral) {
    RunResult r = run_expecting({"neigh", "show"}, R"({"cmd":"neigh_show"})", R"({"ok":true,"neighbours":[
        {"addr":"10.10.2.2","mac":"02:00:00:00:02:02","ifname":"lan0","state":"STALE","worker":1},
        {"addr":"10.10.2.2","mac":"02:00:00:00:02:02","ifname":"lan0","state":"REACHABLE","worker":0},
        {"addr":"10.10.2.9","mac":null,"ifname":"lan0","state":"FAILED","worker":1}]})");
    EXPECT_EQ(r.out,
              "10.10.2.2 dev lan0 lladdr 02:00:00:00:02:02 REACHABLE worker 0\n"
              "10.10.2.2 dev lan0 lladdr 02:00:00:00:02:02 STALE worker 1\n"
              "10.10.2.9 dev lan0 FAILED worker 1\n");
}

const char* kStats = R"({"ok":true,"workers":2,"counters":[
    {"name":"rx_packets","value":1234567,"drop":false,"description":"frames received"},
    {"name":"tx_packets","value":1234000,"drop":false,"description":"frames sent"},
    {"name":"arp_replies_sent","value":0,"drop":false,"description":"ARP replies sent for own addresses"},
    {"name":"drop_ip_checksum","value":0,"drop":true,"description":"IPv4 header checksum wrong"},
    {"name":"drop_no_service","value":42,"drop":true,"description":"TCP/UDP to a VIP port with no virtual service"}]})";

TEST(Xvsctl, StatsShowsNonZeroCounters) {
    RunResult r = run_expecting({"stats"}, R"({"cmd":"stats"})", kStats);
    EXPECT_EQ(r.out,
              "Counters (sum of 2 workers):\n"
              "  rx_packets       1234567  # frames received\n"
              "  tx_packets       1234000  # frames sent\n"
              "Drops:\n"
              "  drop_no_service       42  # TCP/UDP to a VIP port with no virtual service\n");
}

TEST(Xvsctl, StatsAllShowsEveryCounter) {
    RunResult r = run_expecting({"stats", "-a"}, R"({"cmd":"stats"})", kStats);
    EXPECT_EQ(r.out,
              "Counters (sum of 2 workers):\n"
              "  rx_packets        1234567  # frames received\n"
              "  tx_packets        1234000  # frames sent\n"
              "  arp_replies_sent        0  # ARP replies sent for own addresses\n"
              "Drops:\n"
              "  drop_ip_checksum        0  # IPv4 header checksum wrong\n"
              "  drop_no_service        42  # TCP/UDP to a VIP port with no virtual service\n");
}

TEST(Xvsctl, StatsWithNothingToShow) {
    RunResult r = run_expecting({"stats"}, R"({"cmd":"stats"})", R"({"ok":true,"workers":1,"counters":[
        {"name":"rx_packets","value":0,"drop":false,"description":"frames received"},
        {"name":"drop_ip_ttl","value":0,"drop":true,"description":"IPv4 TTL zero"}]})");
    EXPECT_EQ(r.out, "Counters (sum of 1 worker): none\nDrops: none\n");
}

// `sync show`: a peer heard only by its conn updates has not said its role yet; it must not
// read as the defaults ("role both, backup") until its first heartbeat.
TEST(Xvsctl, SyncShowPeerRoleOnlyOnceAnnounced) {
    const char* reply = R"({"ok":true,"sync":{"syncid":7,"role":"both","active":true,"node_id":1,
        "port":8848,"claim_dev":0,"claimed":[],"stats":{"messages_sent":3},"peers":[
        {"addr":"10.0.0.2","node_id":0,"announced":false,"role":"unknown","active":false,
         "state":"alive","last_seen_ms":20,"conns_received":4,"laddrs":[]},
        {"addr":"10.0.0.3","node_id":9,"announced":true,"role":"backup","active":true,
         "state":"alive","last_seen_ms":500,"conns_received":0,"laddrs":["10.0.1.3"]}]}})";
    RunResult r = run_expecting({"sync"}, R"({"cmd":"sync","action":"show"})", reply);
    EXPECT_NE(r.out.find("  10.0.0.2 alive, role not announced yet, last heard 20 ms ago, 4 conns "
                         "received\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("  10.0.0.3 alive, role backup, active, last heard 500 ms ago, 0 conns "
                         "received, local addresses 10.0.1.3\n"),
              std::string::npos)
        << r.out;
}

// `stats --workers`: the total next to each worker's own counter, so a test (or an operator)
// sees that both workers carry traffic; counters without per_worker (an older xvsd) get "-".
TEST(Xvsctl, StatsPerWorkerColumns) {
    const char* reply = R"({"ok":true,"workers":2,"counters":[
        {"name":"rx_packets","value":1500,"per_worker":[1000,500],"drop":false,"description":"frames received"},
        {"name":"redirect_out","value":7,"per_worker":[0,7],"drop":false,"description":"x"},
        {"name":"tx_packets","value":0,"per_worker":[0,0],"drop":false,"description":"frames sent"},
        {"name":"drop_no_service","value":3,"drop":true,"description":"no service"}]})";
    RunResult r = run_expecting({"stats", "--workers"}, R"({"cmd":"stats"})", reply);
    EXPECT_EQ(r.out,
              "Counters (2 workers):\n"
              "                   total    w0   w1\n"
              "  rx_packets        1500  1000  500\n"
              "  redirect_out         7     0    7\n"
              "Drops:\n"
              "                   total    w0   w1\n"
              "  drop_no_service      3     -    -\n");
    r = run_expecting({"s", "-w", "-a"}, R"({"cmd":"stats"})", reply);
    EXPECT_NE(r.out.find("  tx_packets           0     0    0\n"), std::string::npos) << r.out;
}

TEST(Xvsctl, ConnShowWithFilters) {
    RunResult r = run_expecting(
        {"conn", "show", "proto", "tcp", "vip", "10.10.1.100:80", "limit", "2"},
        R"({"cmd":"conn_show","proto":"tcp","vip":"10.10.1.100:80","limit":2})",
        R"({"ok":true,"conns":[
          {"proto":"tcp","expire_seconds":891,"state":"ESTABLISHED","client":"10.0.0.2:51234",
           "vip":"10.10.1.100:80","dest":"10.10.2.2:8080","lip":"10.10.2.100:1025"},
          {"proto":"tcp","expire_seconds":59,"state":"SYN_RECV","client":"10.0.0.3:40000",
           "vip":"10.10.1.100:80","dest":"10.10.2.3:8080"}]})");
    EXPECT_EQ(r.out,
              "IPVS connection entries\n"
              "pro expire state       source             virtual            local              destination\n"
              "TCP 14:51  ESTABLISHED 10.0.0.2:51234     10.10.1.100:80     10.10.2.100:1025   10.10.2.2:8080\n"
              "TCP 00:59  SYN_RECV    10.0.0.3:40000     10.10.1.100:80     -                  10.10.2.3:8080\n");
}

TEST(Xvsctl, ConnFlushDest) {
    RunResult r = run_expecting({"conn", "flush", "dest", "10.10.2.2:8080"},
                                R"({"cmd":"flush_dest","dest":"10.10.2.2:8080"})",
                                R"({"ok":true,"flushed":3})");
    EXPECT_EQ(r.out, "3 connections expired\n");
}

// `check show` (and `ch`): the health checkers, one line each; time 0 = never run yet.
TEST(Xvsctl, CheckShow) {
    RunResult r = run_expecting(
        {"ch", "s"}, R"({"cmd":"check_show"})",
        R"({"ok":true,"checks":[{"service":"TCP 10.10.1.100:80","dest":"10.10.2.2:8080",)"
        R"("type":"TCP_CHECK","state":"up","dest_state":"up","weight":3,"last":"not run yet",)"
        R"("time":0}]})");
    EXPECT_EQ(r.out,
              "SERVICE             DEST            CHECK      STATE  WEIGHT  LAST RESULT\n"
              "TCP 10.10.1.100:80  10.10.2.2:8080  TCP_CHECK  up     3       not run yet\n");
    run_expecting({"check"}, R"({"cmd":"check_show"})", R"({"ok":true,"checks":[]})");
    FakeXvsd d({R"({"ok":true,"checks":{}})"});
    RunResult bad = run(with_socket(d, {"check", "show"}));
    EXPECT_EQ(bad.rc, 1);
    EXPECT_EQ(bad.err, "Malformed reply from xvsd: 'checks' is not an array\n");
}

// `announce show` (and `an s`): BIRD's state, then one line per VIP; null: not configured.
TEST(Xvsctl, AnnounceShow) {
    RunResult r = run_expecting(
        {"an", "s"}, R"({"cmd":"announce_show"})",
        R"({"ok":true,"announce":{"bird_socket":"/run/bird/bird.ctl","bird_config":"/etc/bird/xvs.conf",)"
        R"("liveness_interface":"xvs-alive","liveness_up":true,"protocols":["bgp"],)"
        R"("bird":"Reconfigured","bird_pending":false,"vips":[{"vip":"10.10.1.100",)"
        R"("announce":true,"why":"quorum","in_bird":true},{"vip":"10.10.1.101","announce":false,)"
        R"("why":"no real server up with weight > 0","in_bird":false}]}})");
    EXPECT_EQ(r.out,
              "BIRD /run/bird/bird.ctl, file /etc/bird/xvs.conf, liveness interface xvs-alive "
              "(up); bgp\n"
              "BIRD: Reconfigured\n"
              "VIP                                      STATE      IN BIRD  WHY\n"
              "10.10.1.100                              announced  yes      quorum\n"
              "10.10.1.101                              withdrawn  no       no real server up "
              "with weight > 0\n");
    RunResult none = run_expecting({"announce", "show"}, R"({"cmd":"announce_show"})",
                                   R"({"ok":true,"announce":null})");
    EXPECT_EQ(none.out, "routing not configured (no bgp_defs or ospf_defs)\n");
    FakeXvsd d({R"({"ok":true,"announce":{"vips":[]}})"});
    RunResult bad = run(with_socket(d, {"announce", "show"}));
    EXPECT_EQ(bad.rc, 1);
    EXPECT_NE(bad.err.find("Malformed reply from xvsd: 'announce'"), std::string::npos) << bad.err;
}

// `feedback show` (and `f s`): listener counters, then one line per real server.
TEST(Xvsctl, FeedbackShow) {
    RunResult r = run_expecting(
        {"f", "s"}, R"({"cmd":"feedback_show"})",
        R"({"ok":true,"feedback":{"listeners":[{"listen":"*","port":7070,"received":9,)"
        R"("accepted":6,"rejected":3,"bad_size":0,"bad_magic":0,"bad_version":0,"bad_mac":2,)"
        R"("replayed":1,"stale":0,"unknown_source":0}],"servers":[{"service":"TCP 10.10.1.100:80",)"
        R"("dest":"10.10.2.2:8080","state":"reporting","configured":100,"weight":30,"load":0.7,)"
        R"("cpu":70.0,"mem":20.5,"loadavg":1.5,"established":12,"age_ms":310},)"
        R"({"service":"TCP 10.10.1.100:80","dest":"10.10.2.3:8080","state":"waiting",)"
        R"("configured":100,"weight":100}]}})");
    EXPECT_EQ(r.out,
              "listener *:7070: received 9 accepted 6 rejected 3 (bad_size 0 bad_magic 0 "
              "bad_version 0 bad_mac 2 replayed 1 stale 0 unknown_source 0)\n"
              "SERVICE             DEST            STATE      CONF  WEIGHT  LOAD  CPU%  MEM%  "
              "LOADAVG  ESTAB  CUSTOM%  AGE\n"
              "TCP 10.10.1.100:80  10.10.2.2:8080  reporting  100   30      0.7   70    20.5  "
              "1.5      12     -        310ms\n"
              "TCP 10.10.1.100:80  10.10.2.3:8080  waiting    100   100     -     -     -     "
              "-        -      -        -\n");
    FakeXvsd d({R"({"ok":true,"feedback":[]})"});
    RunResult bad = run(with_socket(d, {"feedback", "show"}));
    EXPECT_EQ(bad.rc, 1);
    EXPECT_EQ(bad.err, "Malformed reply from xvsd: 'feedback' lacks listeners or servers\n");
}

TEST(Xvsctl, NoDaemonExitsOne) {
    char tmpl[] = "/tmp/xvsctl_none.XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::string path = dir + "/xvs.sock";
    RunResult r = run({"--socket", path, "link", "show"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "Can't connect to xvsd: " + path + ": No such file or directory\n");
    ::rmdir(dir.c_str());
}

TEST(Xvsctl, DaemonRefusalExits255WithItsText) {
    const std::pair<std::vector<std::string>, const char*> cases[] = {
        {{"addr", "add", "10.10.3.1/24", "dev", "eth9"}, "No such device"},
        {{"addr", "del", "10.10.3.1", "dev", "wan0"}, "No such address"},
        {{"route", "del", "10.99.0.0/16"}, "No such route"},
        {{"route", "add", "default", "via", "10.10.1.254", "dev", "wan0"}, "File exists"},
        {{"addr", "del", "10.10.1.100", "dev", "wan0"}, "Invalid argument"},
    };
    for (const auto& [args, error] : cases) {
        FakeXvsd d({std::string(R"({"ok":false,"error":")") + error + "\"}"});
        RunResult r = run(with_socket(d, args));
        EXPECT_EQ(r.rc, 255) << error;
        EXPECT_EQ(r.out, "");
        EXPECT_EQ(r.err, std::string(error) + "\n");
    }
}

TEST(Xvsctl, MalformedRepliesExitOne) {
    const std::pair<std::vector<std::string>, const char*> cases[] = {
        {{"link"}, R"({"ok":true})"},
        {{"link"}, R"({"ok":true,"links":[{"name":"wan0"}]})"},
        {{"addr"}, R"({"ok":true,"addrs":[{"addr":"10.0.0.1","prefix_len":40,"ifname":"x","kind":"director"}]})"},
        {{"addr"}, R"({"ok":true,"addrs":[{"addr":"10.0.0.1","prefix_len":24,"ifname":"x","kind":"alias"}]})"},
        {{"route"}, R"({"ok":true,"routes":[{"prefix":"10.0.0.0","gateway":null,"ifname":"x","connected":false}]})"},
        {{"neigh"}, R"({"ok":true,"neighbours":[{"addr":"10.0.0.1","mac":null,"ifname":"x","state":"STALE","worker":-1}]})"},
        {{"stats"}, R"({"ok":true,"workers":1,"counters":[{"name":"x","value":"7","drop":false,"description":""}]})"},
        {{"stats", "-w"}, R"({"ok":true,"workers":1,"counters":[{"name":"x","value":1,"per_worker":["1"],"drop":false,"description":""}]})"},
        {{"stats"}, R"({"ok":true,"workers":1,"counters":[{"name":"x","value":1,"per_worker":7,"drop":false,"description":""}]})"},
        {{"conn"}, R"({"ok":true,"conns":{}})"},
        {{"route"}, "not json"},
    };
    for (const auto& [args, reply] : cases) {
        FakeXvsd d({reply});
        RunResult r = run(with_socket(d, args));
        EXPECT_EQ(r.rc, 1) << reply;
        EXPECT_EQ(r.out, "") << reply;
        EXPECT_TRUE(r.err.starts_with("Malformed reply from xvsd")) << reply << ": " << r.err;
    }
}

}  // namespace
}  // namespace xvs::ctl
