// xvsadm end to end against a fake xvsd: a thread serving a unix socket in a temp dir records
// each request and answers with canned replies, so the JSON on the wire and the rendered
// output are both checked.
#include "ctl/xvsadm_main.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fake_xvsd.h"

namespace xvs::ctl {
namespace {

using nlohmann::json;

std::string read_data(const std::string& name) {
    std::string here = __FILE__;
    std::ifstream in(here.substr(0, here.rfind("/unit/")) + "/data/xvsadm/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

using fake::FakeXvsd;

struct RunResult {
    int rc;
    std::string out, err;
};

RunResult run(std::vector<std::string> args, const std::string& stdin_text = "") {
    args.insert(args.begin(), "xvsadm");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::istringstream in(stdin_text);
    std::ostringstream out, err;
    int rc = xvsadm_main(static_cast<int>(args.size()), argv.data(), in, out, err);
    return {rc, out.str(), err.str()};
}

std::vector<std::string> with_socket(const FakeXvsd& d, std::vector<std::string> args) {
    args.insert(args.begin(), {"--socket", d.path()});
    return args;
}

TEST(XvsadmSocket, AddServiceSendsTheCompleteService) {
    FakeXvsd d({R"({"ok":true})"});
    RunResult r = run(with_socket(d, {"-A", "-t", "207.175.44.110:443", "-s", "sh", "-p", "-b",
                                "sh-port"}));
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
    ASSERT_EQ(d.requests().size(), 1u);
    EXPECT_EQ(d.requests()[0], json::parse(R"({"cmd":"add_service","service":{
        "proto":"tcp","vip":"207.175.44.110","port":443,"sched":"sh","persistent":360,
        "netmask":"255.255.255.255","sched_flags":["sh-port"],"ops":false,"pe":"",
        "synproxy":false,"toa":false,"proxy_protocol":"off","uoa":"off","hash_target":"sip"}})"));
}

TEST(XvsadmSocket, ListRendersTheReply) {
    FakeXvsd d({read_data("list.json")});
    RunResult r = run(with_socket(d, {"-L", "-n"}));
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, read_data("list_n.txt"));
    ASSERT_EQ(d.requests().size(), 1u);
    EXPECT_EQ(d.requests()[0], json::parse(R"({"cmd":"list"})"));
}

TEST(XvsadmSocket, RequestsForEachCommand) {
    struct Case {
        std::vector<std::string> args;
        const char* request;
    };
    const Case cases[] = {
        {{"-E", "-u", "10.0.0.1:53", "-s", "rr", "-o"},
         R"({"cmd":"edit_service","service":{"proto":"udp","vip":"10.0.0.1","port":53,
             "sched":"rr","persistent":0,"netmask":"255.255.255.255","sched_flags":[],
             "ops":true,"pe":"","synproxy":false,"toa":false,"proxy_protocol":"off",
             "uoa":"off","hash_target":"sip"}})"},
        {{"-D", "-f", "7"}, R"({"cmd":"del_service","service":{"fwmark":7}})"},
        {{"-C"}, R"({"cmd":"clear"})"},
        {{"-a", "-t", "10.0.0.1:80", "-r", "192.168.10.1:8080", "-m", "-w", "3", "-x", "10"},
         R"({"cmd":"add_dest","service":{"proto":"tcp","vip":"10.0.0.1","port":80},
             "dest":{"addr":"192.168.10.1","port":8080,"fwd":"masq","weight":3,
                     "u_threshold":10,"l_threshold":0,"tun_type":"","tun_port":0}})"},
        {{"-e", "-t", "10.0.0.1:80", "-r", "192.168.10.1", "--fullnat"},
         R"({"cmd":"edit_dest","service":{"proto":"tcp","vip":"10.0.0.1","port":80},
             "dest":{"addr":"192.168.10.1","port":80,"fwd":"fullnat","weight":1,
                     "u_threshold":0,"l_threshold":0,"tun_type":"","tun_port":0}})"},
        {{"-d", "-t", "10.0.0.1:80", "-r", "192.168.10.1"},
         R"({"cmd":"del_dest","service":{"proto":"tcp","vip":"10.0.0.1","port":80},
             "dest":{"addr":"192.168.10.1","port":80}})"},
        {{"-Z"}, R"({"cmd":"zero"})"},
        {{"-Z", "-t", "10.0.0.1:80"},
         R"({"cmd":"zero","service":{"proto":"tcp","vip":"10.0.0.1","port":80}})"},
        {{"--set", "900", "0", "300"}, R"({"cmd":"set_timeout","tcp":900,"tcpfin":0,"udp":300})"},
        {{"-P", "-t", "10.0.0.1:80", "-z", "10.10.2.100", "-F", "lan0"},
         R"({"cmd":"add_laddr","service":{"proto":"tcp","vip":"10.0.0.1","port":80},
             "laddr":"10.10.2.100","ifname":"lan0"})"},
        {{"-Q", "-t", "10.0.0.1:80", "-z", "10.10.2.100"},
         R"({"cmd":"del_laddr","service":{"proto":"tcp","vip":"10.0.0.1","port":80},
             "laddr":"10.10.2.100"})"},
        {{"--reload"}, R"({"cmd":"reload"})"},
    };
    for (const auto& c : cases) {
        FakeXvsd d({R"({"ok":true})"});
        RunResult r = run(with_socket(d, c.args));
        EXPECT_EQ(r.rc, 0) << c.args[0] << ": " << r.err;
        EXPECT_EQ(r.out, "");
        ASSERT_EQ(d.requests().size(), 1u) << c.args[0];
        EXPECT_EQ(d.requests()[0], json::parse(c.request)) << c.args[0];
    }
}

TEST(XvsadmSocket, ConnectionsTimeoutAndLaddrListings) {
    {
        FakeXvsd d({read_data("conns.json")});
        RunResult r = run(with_socket(d, {"-Lnc"}));
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(r.out, read_data("conns.txt"));
        EXPECT_EQ(d.requests().at(0), json::parse(R"({"cmd":"conns"})"));
    }
    {
        FakeXvsd d({read_data("timeout.json")});
        RunResult r = run(with_socket(d, {"-L", "--timeout"}));
        EXPECT_EQ(r.out, read_data("timeout.txt"));
        EXPECT_EQ(d.requests().at(0), json::parse(R"({"cmd":"get_timeout"})"));
    }
    {
        FakeXvsd d({read_data("laddr.json")});
        RunResult r = run(with_socket(d, {"-G", "-t", "10.10.1.100:80"}));
        EXPECT_EQ(r.out, read_data("laddr.txt"));
        EXPECT_EQ(d.requests().at(0),
                  json::parse(R"({"cmd":"get_laddr","service":{"proto":"tcp",
                                  "vip":"10.10.1.100","port":80}})"));
    }
}

TEST(XvsadmSocket, DaemonErrorIsPrintedAndExits255) {
    FakeXvsd d({R"({"ok":false,"error":"Service already exists"})"});
    RunResult r = run(with_socket(d, {"-A", "-t", "10.0.0.1:80"}));
    EXPECT_EQ(r.rc, 255);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "Service already exists\n");
}

TEST(XvsadmSocket, ListingAMissingServiceExitsOneLikeIpvsadm) {
    FakeXvsd d({R"({"ok":false,"error":"No such service"})"});
    RunResult r = run(with_socket(d, {"-L", "-n", "-t", "10.0.0.1:81"}));
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "No such service\n");
}

TEST(XvsadmSocket, NoDaemon) {
    char tmpl[] = "/tmp/xvsadm_none.XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::string path = dir + "/xvs.sock";
    RunResult r = run({"--socket", path, "-L", "-n"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "Can't connect to xvsd: " + path + ": No such file or directory\n");
    ::rmdir(dir.c_str());
}

TEST(XvsadmSocket, SocketFromEnvironment) {
    FakeXvsd d({R"({"ok":true})"});
    ::setenv("XVS_SOCKET", d.path().c_str(), 1);
    RunResult r = run({"-C"});
    ::unsetenv("XVS_SOCKET");
    EXPECT_EQ(r.rc, 0) << r.err;
    ASSERT_EQ(d.requests().size(), 1u);
    EXPECT_EQ(d.requests()[0], json::parse(R"({"cmd":"clear"})"));
}

TEST(XvsadmSocket, MalformedReplyExitsOne) {
    FakeXvsd d({"this is not json"});
    RunResult r = run(with_socket(d, {"-C"}));
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "Malformed reply from xvsd\n");
}

TEST(XvsadmSocket, ParseErrorsNeverConnect) {
    FakeXvsd d({});
    RunResult r = run(with_socket(d, {"-A", "-t", "10.0.0.1:80", "-w", "2"}));
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "Illegal 'weight' option with the 'add-service' command\n");
    EXPECT_TRUE(d.requests().empty());
}

TEST(XvsadmSocket, HelpAndVersionNeedNoDaemon) {
    RunResult v = run({"--socket", "/nonexistent/xvs.sock", "-v"});
    EXPECT_EQ(v.rc, 0);
    EXPECT_EQ(v.out, std::string("xvsadm v") + kXvsadmVersion + " (compatible with ipvsadm v1.31)\n");
    RunResult h = run({"--socket", "/nonexistent/xvs.sock", "-h"});
    EXPECT_EQ(h.rc, 0);
    EXPECT_NE(h.out.find("Usage:\n  xvsadm -A|E virtual-service"), std::string::npos) << h.out;
    EXPECT_EQ(h.err, "");
}

TEST(XvsadmSocket, RestoreSendsOneRequestPerLineAndContinuesPastRefusals) {
    FakeXvsd d({R"({"ok":true})", R"({"ok":false,"error":"Destination already exists"})",
                R"({"ok":true})"});
    RunResult r = run(with_socket(d, {"-R"}), "# saved by ipvsadm -S\n"
                                        "ipvsadm -A -t 10.0.0.1:80 -s rr\n"
                                        "\n"
                                        "-a -t 10.0.0.1:80 -r 192.168.10.1:80 -m -w 1\n"
                                        "xvsadm -a -t 10.0.0.1:80 -r 192.168.10.2:80 -m -w 2\n");
    EXPECT_EQ(r.rc, 255);
    EXPECT_EQ(r.err, "Destination already exists\n");
    auto reqs = d.requests();
    ASSERT_EQ(reqs.size(), 3u);
    EXPECT_EQ(reqs[0]["cmd"], "add_service");
    EXPECT_EQ(reqs[1]["cmd"], "add_dest");
    EXPECT_EQ(reqs[2]["dest"]["addr"], "192.168.10.2");
    EXPECT_EQ(reqs[2]["dest"]["weight"], 2);
}

TEST(XvsadmSocket, RestoreStopsAtTheFirstBadLine) {
    FakeXvsd d({R"({"ok":true})"});
    RunResult r = run(with_socket(d, {"--restore"}), "-A -t 10.0.0.1:80\n"
                                               "-A -t 10.0.0.2:80 -w 5\n"
                                               "-A -t 10.0.0.3:80\n");
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "Illegal 'weight' option with the 'add-service' command\n");
    EXPECT_EQ(d.requests().size(), 1u);
}

TEST(XvsadmSocket, SaveOutputRestoresToTheSameRequests) {
    FakeXvsd d({read_data("save_dpvs.json")});
    RunResult saved = run(with_socket(d, {"-S", "-n"}));
    ASSERT_EQ(saved.rc, 0) << saved.err;
    EXPECT_EQ(saved.out, read_data("save_dpvs.txt"));

    FakeXvsd d2({});
    RunResult restored = run(with_socket(d2, {"-R"}), saved.out);
    EXPECT_EQ(restored.rc, 0) << restored.err;
    auto reqs = d2.requests();
    ASSERT_EQ(reqs.size(), 16u);
    EXPECT_EQ(reqs[0], json::parse(R"({"cmd":"add_service","service":{"proto":"tcp",
        "vip":"10.10.1.100","port":80,"sched":"wrr","persistent":600,"netmask":"255.255.255.0",
        "sched_flags":[],"ops":false,"pe":"","synproxy":true,"toa":true,
        "proxy_protocol":"v2","uoa":"off","hash_target":"sip"}})"));
    EXPECT_EQ(reqs[3]["cmd"], "add_laddr");
    EXPECT_EQ(reqs[5]["service"]["proto"], "udp");
    EXPECT_EQ(reqs[5]["service"]["uoa"], "opp");
    EXPECT_EQ(reqs[7]["service"]["sched"], "conhash");
    EXPECT_EQ(reqs[7]["service"]["hash_target"], "qid");
    EXPECT_EQ(reqs[10]["dest"], json::parse(R"({"addr":"10.10.2.9","port":0,"fwd":"tunnel",
        "weight":3,"u_threshold":0,"l_threshold":0,"tun_type":"gue","tun_port":6080})"));
    // SNAT match services (-H ... -J) after the others.
    EXPECT_EQ(reqs[13]["cmd"], "add_service");
    EXPECT_EQ(reqs[13]["service"]["match"], json::parse(R"({"proto":"tcp","af":"ipv4",
        "src_range":"10.10.2.0-10.10.2.254","dst_range":"","iif":"","oif":"wan0"})"));
    EXPECT_EQ(reqs[13]["service"]["sched"], "rr");
    EXPECT_EQ(reqs[15]["cmd"], "add_dest");
    EXPECT_EQ(reqs[15]["service"], json::parse(R"({"match":{"proto":"tcp","af":"ipv4",
        "src_range":"10.10.2.0-10.10.2.254","dst_range":"","iif":"","oif":"wan0"}})"));
    EXPECT_EQ(reqs[15]["dest"]["addr"], "10.10.1.3");
    EXPECT_EQ(reqs[15]["dest"]["port"], 0);
    EXPECT_EQ(reqs[15]["dest"]["fwd"], "snat");
}

}  // namespace
}  // namespace xvs::ctl
