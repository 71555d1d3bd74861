// ipvsadm argv parsing: each command, its defaults, and ipvsadm's validation messages.
#include "ctl/ipvsadm_args.h"

#include <gtest/gtest.h>

#include <sstream>

namespace xvs::ctl {
namespace {

std::vector<std::string> words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

Result<Command> parse(const std::string& line) { return parse_ipvsadm_args(words(line)); }

// The message a bad command line prints (and kArgsErrorExit is its exit status).
std::string error_of(const std::string& line) {
    auto r = parse(line);
    EXPECT_FALSE(r.ok()) << line;
    return r.ok() ? std::string("<parsed>") : r.error();
}

net::Ipv4 ip(const char* s) { return *net::parse_ipv4(s); }

net::InetAddr ip6(const char* s) {
    auto a = net::parse_inet(s);
    EXPECT_TRUE(a && !a->is_v4()) << s;
    return a.value_or(net::InetAddr{});
}

// IPv6 as ipvsadm writes it: "[addr]:port", "[addr]" for a real server without a port.
TEST(IpvsadmArgs, Ipv6ServicesAndServersInBrackets) {
    auto svc = parse("-A -t [2001:db8::100]:80 -s rr");
    ASSERT_TRUE(svc.ok()) << svc.error();
    EXPECT_EQ(*svc->service, (ServiceKey{Proto::Tcp, ip6("2001:db8::100"), 80, 0}));
    auto udp = parse("-A -u [2001:DB8:0::53]:domain");
    ASSERT_TRUE(udp.ok()) << udp.error();
    EXPECT_EQ(*udp->service, (ServiceKey{Proto::Udp, ip6("2001:db8::53"), 53, 0}));
    auto rs = parse("-a -t [2001:db8::100]:80 -r [2001:db8::10]:8080 -m -w 3");
    ASSERT_TRUE(rs.ok()) << rs.error();
    EXPECT_EQ(rs->dest.addr, (net::InetEndpoint{ip6("2001:db8::10"), 8080}));
    EXPECT_EQ(rs->dest.fwd, lb::FwdMode::Nat);
    auto no_port = parse("-a -t [2001:db8::100]:80 -r [2001:db8::10]");
    ASSERT_TRUE(no_port.ok()) << no_port.error();
    EXPECT_EQ(no_port->dest.addr, (net::InetEndpoint{ip6("2001:db8::10"), 80}));
    // FNAT64: an IPv4 real server behind an IPv6 service parses (the daemon decides).
    auto fnat64 = parse("-a -t [2001:db8::100]:80 -r 10.0.0.2:80 --fullnat");
    ASSERT_TRUE(fnat64.ok()) << fnat64.error();
    EXPECT_TRUE(fnat64->dest.addr.addr.is_v4());
    auto del = parse("-d -t [2001:db8::100]:80 -r [2001:db8::10]:8080");
    ASSERT_TRUE(del.ok()) << del.error();
    EXPECT_EQ(del->dest.addr.port, 8080);
}

TEST(IpvsadmArgs, Ipv6LocalAddressesAndLists) {
    auto laddr = parse("-P -t [2001:db8::100]:80 -z 2001:db8::200 -F lan0");
    ASSERT_TRUE(laddr.ok()) << laddr.error();
    EXPECT_EQ(laddr->laddr, ip6("2001:db8::200"));
    auto bracketed = parse("-Q -t [2001:db8::100]:80 -z [2001:db8::200]");
    ASSERT_TRUE(bracketed.ok()) << bracketed.error();
    EXPECT_EQ(bracketed->laddr, ip6("2001:db8::200"));
    auto black = parse("-U -t [2001:db8::100]:80 -k 2001:db8:bad::/48");
    ASSERT_TRUE(black.ok()) << black.error();
    EXPECT_EQ(black->acl, *net::parse_inet_prefix("2001:db8:bad::/48"));
    auto host = parse("-O -t [2001:db8::100]:80 --whtlst 2001:db8::7");
    ASSERT_TRUE(host.ok()) << host.error();
    EXPECT_EQ(host->acl.len, 128);
    EXPECT_EQ(error_of("-U -t [2001:db8::100]:80 -k 2001:db8::1/64"),
              "illegal blacklist entry: prefix '2001:db8::1/64' has host bits set (did you mean "
              "2001:db8::/64?)");
}

TEST(IpvsadmArgs, Ipv6WithoutBracketsOrMalformedIsRefused) {
    for (const char* bad :
         {"-A -t 2001:db8::100:80", "-A -t [2001:db8::100:80", "-A -t [2001:db8::100]80",
          "-A -t [10.0.0.1]:80", "-A -t [2001:db8::zz]:80", "-A -t [2001:db8::1]:65536"})
        EXPECT_EQ(error_of(bad), "illegal virtual server address[:port] specified") << bad;
    EXPECT_EQ(error_of("-a -t [2001:db8::100]:80 -r 2001:db8::10"),
              "illegal real server address[:port] specified");
    EXPECT_EQ(error_of("-P -t [2001:db8::100]:80 -z 2001:db8::zz -F lan0"),
              "illegal local address");
}

TEST(IpvsadmArgs, ParseErrorsExitWithTwo) { EXPECT_EQ(kArgsErrorExit, 2); }

TEST(IpvsadmArgs, NoArgumentsListsTheTable) {
    auto r = parse("");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->kind, CommandKind::List);
    EXPECT_FALSE(r->service);
}

TEST(IpvsadmArgs, AddServiceDefaults) {
    auto r = parse("-A -t 207.175.44.110:80");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->kind, CommandKind::AddService);
    EXPECT_EQ(*r->service, (ServiceKey{Proto::Tcp, ip("207.175.44.110"), 80, 0}));
    EXPECT_EQ(r->svc.sched, "wlc");
    EXPECT_EQ(r->svc.persistent, 0u);
    EXPECT_EQ(r->svc.netmask, ip("255.255.255.255"));
}

TEST(IpvsadmArgs, AddServiceLongFormsAndOptions) {
    auto r = parse("--add-service --udp-service 10.0.0.1:53 --scheduler rr --persistent 600 "
                   "--netmask 255.255.255.0 --ops");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->service->proto, Proto::Udp);
    EXPECT_EQ(r->svc.sched, "rr");
    EXPECT_EQ(r->svc.persistent, 600u);
    EXPECT_EQ(r->svc.netmask, ip("255.255.255.0"));
    EXPECT_TRUE(r->svc.ops);
}

// -M of an IPv6 service is a prefix length 1..128 (ipvsadm's atoi branch and message); the
// family is the service's, whichever order -t and -M come in.
TEST(IpvsadmArgs, NetmaskOfAnIpv6ServiceIsAPrefixLength) {
    auto r = parse("-A -t [2001:db8::1]:80 -p 60 -M 64");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->svc.netmask6, 64);
    EXPECT_EQ(r->svc.netmask, ip("255.255.255.255"));
    auto before = parse("-A -p 60 -M 48 -u [2001:db8::1]:53");
    ASSERT_TRUE(before.ok()) << before.error();
    EXPECT_EQ(before->svc.netmask6, 48);
    EXPECT_EQ(parse("-A -t [2001:db8::1]:80 -p 60").value().svc.netmask6, 128);
    for (const char* bad : {"0", "129", "255.255.255.0", "64x"}) {
        auto e = parse(std::string("-A -t [2001:db8::1]:80 -p 60 -M ") + bad);
        ASSERT_FALSE(e.ok()) << bad;
        EXPECT_NE(e.error().find("illegal ipv6 netmask specified"), std::string::npos) << e.error();
    }
    // An IPv4 service still wants a netmask, as ipvsadm.
    auto v4 = parse("-A -t 10.0.0.1:80 -p 60 -M 24");
    ASSERT_FALSE(v4.ok());
    EXPECT_NE(v4.error().find("illegal virtual server persistent mask specified"),
              std::string::npos);
}

// DPVS's --hash-target sip|qid, with its messages: conhash only, qid on UDP only.
TEST(IpvsadmArgs, HashTargetIsDpvsConhashOption) {
    auto r = parse("-A -u 10.0.0.1:443 -s conhash --hash-target qid");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_TRUE(r->svc.hash_qid);
    auto sip = parse("-E -t 10.0.0.1:443 --hash-target sip -s conhash");
    ASSERT_TRUE(sip.ok()) << sip.error();
    EXPECT_FALSE(sip->svc.hash_qid);
    EXPECT_FALSE(parse("-A -u 10.0.0.1:443 -s conhash").value().svc.hash_qid);
    auto e = parse("-A -u 10.0.0.1:443 -s rr --hash-target qid");
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().find("hash target can only be set when schedule is conhash"),
              std::string::npos);
    e = parse("-A -t 10.0.0.1:443 -s conhash --hash-target qid");
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().find("qid hash can only be set in udp service"), std::string::npos);
    e = parse("-A -u 10.0.0.1:443 -s conhash --hash-target cid");
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().find("hash target not support"), std::string::npos);
    e = parse("-a -u 10.0.0.1:443 -r 10.0.0.2 --hash-target qid");
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().find("Illegal 'hash-target' option"), std::string::npos) << e.error();
}

TEST(IpvsadmArgs, PersistentWithoutValueIs360AndAllowsPortZero) {
    auto r = parse("-A -t 10.0.0.1:0 -p -s sh");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->svc.persistent, 360u);
    EXPECT_EQ(r->svc.sched, "sh");
    auto attached = parse("-A -t 10.0.0.1:80 -p30");
    ASSERT_TRUE(attached.ok());
    EXPECT_EQ(attached->svc.persistent, 30u);
}

TEST(IpvsadmArgs, PersistentRange) {
    EXPECT_TRUE(parse("-A -t 10.0.0.1:80 -p 2678400").ok());
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 -p 2678401"), "invalid timeout value `2678401' specified");
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 -p 0"), "invalid timeout value `0' specified");
}

TEST(IpvsadmArgs, ZeroPortNeedsPersistence) {
    EXPECT_EQ(error_of("-A -t 10.0.0.1:0"), "Zero port specified for non-persistent service");
    EXPECT_EQ(error_of("-E -u 10.0.0.1"), "Zero port specified for non-persistent service");
}

TEST(IpvsadmArgs, IllegalVirtualServerAddress) {
    EXPECT_EQ(error_of("-A -t 10.0.0:80"), "illegal virtual server address[:port] specified");
    EXPECT_EQ(error_of("-A -t 10.0.0.1:65536"), "illegal virtual server address[:port] specified");
    EXPECT_EQ(error_of("-D -u www.example.org:53"),
              "illegal virtual server address[:port] specified");
}

TEST(IpvsadmArgs, ServicePortByName) {
    auto r = parse("-A -t 10.0.0.1:http");
    if (!r.ok()) GTEST_SKIP() << "no /etc/services entry for http";
    EXPECT_EQ(r->service->port, 80);
}

TEST(IpvsadmArgs, FwmarkService) {
    auto r = parse("-A -f 7 -s rr");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->service->fwmark, 7u);
    EXPECT_EQ(error_of("-A -f 0"), "invalid fwmark value `0' specified");
    EXPECT_EQ(error_of("-A -f x1"), "invalid fwmark value `x1' specified");
}

// -6 selects a mark's IPv6 service (ipvsadm -f N -6), in either order; -M is then a prefix
// length as for an IPv6 VIP; -6 without -f is refused as ipvsadm refuses it.
TEST(IpvsadmArgs, FwmarkIpv6Service) {
    auto r = parse("-A -f 7 -6 -s rr -p 300 -M 64");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->service->fwmark, 7u);
    EXPECT_TRUE(r->service->fwmark_v6);
    EXPECT_EQ(r->svc.netmask6, 64);
    EXPECT_FALSE(parse("-A -f 7 -s rr").value().service->fwmark_v6);
    auto before = parse("-a -6 -f 7 -r [2001:db8::10]:80 -g");
    ASSERT_TRUE(before.ok()) << before.error();
    EXPECT_TRUE(before->service->fwmark_v6);
    EXPECT_EQ(before->dest.addr.addr, net::parse_inet("2001:db8::10").value());
    for (const char* line :
         {"-D -f 7 -6", "-E -f 7 -6 -s wrr", "-d -f 7 -6 -r [2001:db8::10]",
          "-e -f 7 -6 -r [2001:db8::10]:80 -w 2", "-L -n -f 7 -6", "-Z -f 7 -6"}) {
        auto c = parse(line);
        ASSERT_TRUE(c.ok()) << line << ": " << c.error();
        EXPECT_TRUE(c->service->fwmark_v6) << line;
    }
    EXPECT_EQ(error_of("-A -f 7 -6 -p 300 -M 255.255.255.0"), "illegal ipv6 netmask specified");
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 -6"),
              "-6 must follow -f (it selects the IPv6 service of a firewall mark)");
    EXPECT_EQ(error_of("-L -n -6"),
              "-6 must follow -f (it selects the IPv6 service of a firewall mark)");
}

TEST(IpvsadmArgs, SchedFlags) {
    auto r = parse("-A -t 10.0.0.1:443 -s sh -b sh-port,sh-fallback");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->svc.sched_flags, (std::vector<std::string>{"sh-fallback", "sh-port"}));
    // flag-N takes the scheduler's own names; the flag may come before -s.
    auto mh = parse("-A -t 10.0.0.1:443 -b flag-2 -s mh");
    ASSERT_TRUE(mh.ok()) << mh.error();
    EXPECT_EQ(mh->svc.sched_flags, (std::vector<std::string>{"mh-port"}));
    EXPECT_EQ(error_of("-A -t 10.0.0.1:443 -s rr -b sh-port"), "incompatible scheduler flag `sh-port'");
    EXPECT_EQ(error_of("-A -t 10.0.0.1:443 -s sh -b sh-bogus"), "invalid scheduler flag `sh-bogus'");
}

TEST(IpvsadmArgs, OnePacketSchedulingIsUdpOnly) {
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 -o"),
              "One-Packet Scheduling is only for UDP virtual services");
}

TEST(IpvsadmArgs, DpvsServiceExtensions) {
    auto r = parse("-A -t 10.0.0.1:80 -s wrr -j --toa on --proxy-protocol v2");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_TRUE(r->svc.synproxy);
    EXPECT_TRUE(r->svc.toa);
    EXPECT_EQ(r->svc.proxy_protocol, ProxyProtocol::V2);
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 --toa maybe"), "toa must be on or off");
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 --proxy-protocol v3"),
              "proxy-protocol must be v1, v2 or off");
}

TEST(IpvsadmArgs, UoaOption) {
    auto r = parse("-A -u 10.0.0.1:53 -s rr --uoa ipo");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->svc.uoa, Uoa::Ipo);
    r = parse("-E -u 10.0.0.1:53 -s rr --uoa opp");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->svc.uoa, Uoa::Opp);
    r = parse("-E -u 10.0.0.1:53 --uoa=off");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->svc.uoa, Uoa::Off);
    EXPECT_EQ(parse("-A -u 10.0.0.1:53")->svc.uoa, Uoa::Off);  // off unless asked for
    EXPECT_EQ(error_of("-A -u 10.0.0.1:53 --uoa on"), "uoa must be opp, ipo or off");
    // A service option: not on dest, list or delete commands.
    EXPECT_FALSE(parse("-a -u 10.0.0.1:53 -r 10.0.0.2 --uoa opp").ok());
    EXPECT_FALSE(parse("-D -u 10.0.0.1:53 --uoa opp").ok());
    EXPECT_FALSE(parse("-L --uoa opp").ok());
}

TEST(IpvsadmArgs, EditAndDeleteService) {
    auto e = parse("-E -t 10.0.0.1:80 -s lc");
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->kind, CommandKind::EditService);
    auto d = parse("--delete-service -t 10.0.0.1:80");
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->kind, CommandKind::DelService);
    EXPECT_EQ(error_of("-D -t 10.0.0.1:80 -s rr"),
              "Illegal 'scheduler' option with the 'delete-service' command");
    EXPECT_EQ(error_of("-D"),
              "You need to supply the 'service-address' option for the 'delete-service' command");
}

TEST(IpvsadmArgs, Clear) {
    auto r = parse("-C");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->kind, CommandKind::Clear);
    EXPECT_EQ(error_of("--clear -t 10.0.0.1:80"),
              "Illegal 'service-address' option with the 'flush' command");
}

TEST(IpvsadmArgs, AddServerDefaultsToRouteWeightOneAndServicePort) {
    auto r = parse("-a -t 10.0.0.1:80 -r 192.168.10.1");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->kind, CommandKind::AddDest);
    EXPECT_EQ(r->dest.fwd, lb::FwdMode::Dr);
    EXPECT_EQ(r->dest.weight, 1u);
    EXPECT_EQ(r->dest.addr, (net::InetEndpoint{ip("192.168.10.1"), 80}));
}

TEST(IpvsadmArgs, MasqueradingKeepsTheMappedPort) {
    auto r = parse("-a -t 10.0.0.1:80 -r 192.168.10.1:8080 -m -w 5 -x 100 -y 50");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->dest.fwd, lb::FwdMode::Nat);
    EXPECT_EQ(r->dest.addr.port, 8080);
    EXPECT_EQ(r->dest.weight, 5u);
    EXPECT_EQ(r->dest.u_threshold, 100u);
    EXPECT_EQ(r->dest.l_threshold, 50u);
}

TEST(IpvsadmArgs, RouteAndTunnelForceTheServicePort) {
    auto g = parse("-a -t 10.0.0.1:80 -r 192.168.10.1:8080 -g");
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->dest.addr.port, 80);
    auto i = parse("-e -u 10.0.0.1:53 -r 192.168.10.3:5353 --ipip");
    ASSERT_TRUE(i.ok());
    EXPECT_EQ(i->kind, CommandKind::EditDest);
    EXPECT_EQ(i->dest.addr.port, 53);
    EXPECT_EQ(i->dest.fwd, lb::FwdMode::Tun);
    EXPECT_EQ(i->dest.tun_type, "ipip");
}

TEST(IpvsadmArgs, FullNatAndSnatMapPorts) {
    auto f = parse("-a -t 10.0.0.1:80 -r 192.168.10.1:8080 --fullnat");
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->dest.fwd, lb::FwdMode::FullNat);
    EXPECT_EQ(f->dest.addr.port, 8080);
    auto s = parse("-a -t 10.0.0.1:80 -r 192.168.10.1 --snat");
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->dest.fwd, lb::FwdMode::Snat);
}

// DPVS's SNAT syntax: -H MATCH selects a match service, -J (--snat) the SNAT method.
TEST(IpvsadmArgs, MatchServicesAsDpvsWritesThem) {
    const std::string m = "proto=tcp,src-range=192.168.100.0-192.168.100.254,oif=dpdk1";
    auto a = parse("-A -s rr -H " + m);
    ASSERT_TRUE(a.ok()) << a.error();
    EXPECT_EQ(a->kind, CommandKind::AddService);
    ASSERT_TRUE(a->service && a->service->match);
    const lb::MatchKey& k = *a->service->match;
    EXPECT_EQ(k.proto, 6);
    EXPECT_EQ(k.src.first, *net::parse_ipv4("192.168.100.0"));
    EXPECT_EQ(k.src.last, *net::parse_ipv4("192.168.100.254"));
    EXPECT_TRUE(k.dst.any());
    EXPECT_EQ(k.oif, "dpdk1");
    EXPECT_EQ(a->svc.sched, "rr");

    auto d = parse("-a -H " + m + " -r 123.1.2.3:0 -w 100 -J");
    ASSERT_TRUE(d.ok()) << d.error();
    EXPECT_EQ(d->kind, CommandKind::AddDest);
    EXPECT_EQ(d->dest.fwd, lb::FwdMode::Snat);
    EXPECT_EQ(d->dest.addr.port, 0);
    EXPECT_EQ(d->dest.weight, 100u);
    EXPECT_EQ(parse("-a --match=" + m + " -r 123.1.2.3:0 --snat")->dest.fwd, lb::FwdMode::Snat);

    auto full = parse(
        "-D -H proto=icmp,src-range=10.0.0.1-10.0.0.9,dst-range=0.0.0.0-0.0.0.0:1-1024,"
        "iif=,oif=wan0");
    ASSERT_TRUE(full.ok()) << full.error();
    EXPECT_EQ(full->service->match->dst.port_last, 1024);
    EXPECT_EQ(full->service->match->iif, "");  // DPVS's -S writes empty fields

    EXPECT_EQ(error_of("-A -H proto=gre,oif=wan0"),
              "illegal match specified: proto must be tcp, udp or icmp, not 'gre'");
    EXPECT_EQ(error_of("-A -H src-range=10.0.0.1,oif=wan0"),
              "illegal match specified: proto=tcp|udp|icmp missing");
    EXPECT_EQ(error_of("-A -H proto=tcp,color=red"),
              "illegal match specified: unknown match key 'color' (proto, af, src-range, "
              "dst-range, iif, oif)");
    EXPECT_TRUE(parse("-A -H af=ipv4,proto=udp,oif=wan0").ok());
    auto v6 = parse("-A -H af=ipv6,proto=udp,oif=wan0");
    ASSERT_TRUE(v6.ok()) << v6.error();
    EXPECT_EQ(v6->service->match->family, 6);
    auto r6 = parse("-A -H proto=tcp,src-range=[2001:db8::1-2001:db8::9]:80-90,dst-range=::-::");
    ASSERT_TRUE(r6.ok()) << r6.error();
    EXPECT_EQ(r6->service->match->family, 6);
    EXPECT_EQ(r6->service->match->src.port_last, 90);
    EXPECT_EQ(lb::to_string(r6->service->match->src), "[2001:db8::1-2001:db8::9]:80-90");
    EXPECT_EQ(error_of("-A -H af=ipv4,proto=tcp,src-range=2001:db8::1-2001:db8::9"),
              "illegal match specified: af=ipv4 but the ranges are IPv6");
    EXPECT_EQ(error_of("-A -H proto=tcp,src-range=2001:db8::1,dst-range=10.0.0.1"),
              "illegal match specified: src-range is IPv6 but dst-range is IPv4: one family per "
              "match service");
    EXPECT_EQ(error_of("-A -H proto=tcp,src-range=[2001:db8::1]80"),
              "illegal match specified: src-range: bad address range '[2001:db8::1]80': ':PORT' "
              "expected after ']'");
    EXPECT_EQ(error_of("-A -H proto=tcp,src-range=[10.0.0.1]:80"),
              "illegal match specified: src-range: bad address range '[10.0.0.1]:80' (IPv6: A or "
              "A-B, in brackets when ports follow: [A-B]:P-Q)");
    EXPECT_EQ(error_of("-A -H proto=tcp,src-range=10.0.0.9-10.0.0.1"),
              "illegal match specified: src-range: bad address range '10.0.0.9-10.0.0.1': the last "
              "address is below the first");
    EXPECT_EQ(error_of("-A -H proto=tcp -t 10.0.0.1:80"),
              "multiple 'service-address' options specified");
}

TEST(IpvsadmArgs, GueTunnelNeedsPort) {
    auto r = parse("-a -t 10.0.0.1:80 -r 192.168.10.1 -i --tun-type gue --tun-port 6080");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->dest.tun_port, 6080);
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 -i --tun-type gue"),
              "GUE tunnels need a destination port (--tun-port)");
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 -m --tun-type ipip"),
              "--tun-type is only for the tunneling (-i, --nat-tunnel) forwarding methods");
}

// NatTun (issue 20): its own forwarding switch, IPIP by default, GUE with a port; it maps ports
// as NAT does.
TEST(IpvsadmArgs, NatTunnel) {
    auto r = parse("-a -t 10.0.0.1:80 -r 192.168.10.1:8080 --nat-tunnel");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->dest.fwd, lb::FwdMode::NatTun);
    EXPECT_EQ(r->dest.tun_type, "ipip");
    EXPECT_EQ(r->dest.addr.port, 8080);
    r = parse("-a -u 10.0.0.1:53 -r 192.168.10.1:5353 --nat-tunnel --tun-type gue --tun-port 6080");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->dest.tun_type, "gue");
    EXPECT_EQ(r->dest.tun_port, 6080);
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 --nat-tunnel --tun-type gue"),
              "GUE tunnels need a destination port (--tun-port)");
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 --nat-tunnel -m"),
              "multiple 'forwarding-method' options specified");
}

TEST(IpvsadmArgs, WeightRange) {
    auto r = parse("-a -t 10.0.0.1:80 -r 192.168.10.1 -w 0");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->dest.weight, 0u);
    EXPECT_TRUE(parse("-a -t 10.0.0.1:80 -r 192.168.10.1 -w 65535").ok());
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 -w 65536"), "illegal weight specified");
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 -w -1"), "illegal weight specified");
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 -w 1x"), "illegal weight specified");
}

TEST(IpvsadmArgs, Thresholds) {
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 -x abc"), "illegal u_threshold specified");
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 -y -5"), "illegal l_threshold specified");
}

TEST(IpvsadmArgs, IllegalRealServerAddress) {
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10:80"),
              "illegal real server address[:port] specified");
}

TEST(IpvsadmArgs, DeleteServer) {
    auto r = parse("-d -t 10.0.0.1:80 -r 192.168.10.1:8080");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->kind, CommandKind::DelDest);
    EXPECT_EQ(r->dest.addr.port, 8080);  // -d keeps the given port
    EXPECT_EQ(error_of("-d -t 10.0.0.1:80 -r 192.168.10.1 -w 3"),
              "Illegal 'weight' option with the 'delete-server' command");
    EXPECT_EQ(error_of("-d -t 10.0.0.1:80"),
              "You need to supply the 'real-server' option for the 'delete-server' command");
}

TEST(IpvsadmArgs, ServerOptionsAreIllegalOnServices) {
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 -r 192.168.10.1"),
              "Illegal 'real-server' option with the 'add-service' command");
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 -m"),
              "Illegal 'forwarding-method' option with the 'add-service' command");
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 -s rr"),
              "Illegal 'scheduler' option with the 'add-server' command");
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 -n"),
              "Illegal 'numeric' option with the 'add-service' command");
}

TEST(IpvsadmArgs, MultipleCommandsAndOptions) {
    EXPECT_EQ(error_of("-A -a -t 10.0.0.1:80"), "multiple commands specified");
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 -u 10.0.0.1:80"),
              "multiple 'service-address' options specified");
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 192.168.10.1 -g -m"),
              "multiple 'forwarding-method' options specified");
}

TEST(IpvsadmArgs, UnknownOptionGivesTheUsageHint) {
    EXPECT_EQ(error_of("-A --frobnicate"),
              "--frobnicate: unknown option\nTry `xvsadm -h' or 'xvsadm --help' for more "
              "information.");
    EXPECT_EQ(error_of("-K"),
              "-K: unknown option\nTry `xvsadm -h' or 'xvsadm --help' for more information.");
    EXPECT_EQ(error_of("-A -t"),
              "-t: missing argument\nTry `xvsadm -h' or 'xvsadm --help' for more information.");
    EXPECT_EQ(error_of("-n"), "Try `xvsadm -h' or 'xvsadm --help' for more information.");
}

TEST(IpvsadmArgs, UnexpectedArgument) {
    EXPECT_EQ(error_of("-C now"), "unexpected argument now");
}

TEST(IpvsadmArgs, ListVariants) {
    auto r = parse("-Ln --stats --exact");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->kind, CommandKind::List);
    EXPECT_TRUE(r->format.numeric);
    EXPECT_TRUE(r->format.stats);
    EXPECT_TRUE(r->format.exact);
    auto one = parse("-l -t 10.0.0.1:80 --rate");
    ASSERT_TRUE(one.ok());
    EXPECT_TRUE(one->service);
    EXPECT_TRUE(one->format.rate);
    auto c = parse("--list --connection -n");
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(c->format.connections);
    auto t = parse("-L --timeout");
    ASSERT_TRUE(t.ok());
    EXPECT_TRUE(t->format.timeout);
}

TEST(IpvsadmArgs, ListConflicts) {
    EXPECT_EQ(error_of("-L -c --stats"), "options conflicts in the list command");
    EXPECT_EQ(error_of("-L --timeout --rate"), "options conflicts in the list command");
    EXPECT_EQ(error_of("-L -c --timeout"),
              "The option 'timeout' is not allowed with the option 'connection'");
    EXPECT_EQ(error_of("-L -c -t 10.0.0.1:80"),
              "The option 'service-address' is not allowed with the option 'connection'");
    EXPECT_EQ(error_of("-L -s rr"), "Illegal 'scheduler' option with the 'list' command");
}

TEST(IpvsadmArgs, ZeroSaveRestore) {
    auto z = parse("-Z");
    ASSERT_TRUE(z.ok());
    EXPECT_EQ(z->kind, CommandKind::Zero);
    EXPECT_FALSE(z->service);
    auto zs = parse("--zero -u 10.0.0.1:53");
    ASSERT_TRUE(zs.ok());
    EXPECT_TRUE(zs->service);
    auto s = parse("-S -n");
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->kind, CommandKind::Save);
    EXPECT_EQ(error_of("-S -t 10.0.0.1:80"), "Illegal 'service-address' option with the 'save' command");
    auto r = parse("--restore");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->kind, CommandKind::Restore);
    EXPECT_EQ(error_of("-R -n"), "Illegal 'numeric' option with the 'restore' command");
}

TEST(IpvsadmArgs, SetTimeouts) {
    auto r = parse("--set 900 0 300");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->kind, CommandKind::SetTimeout);
    EXPECT_EQ(r->timeouts.tcp, 900u);
    EXPECT_EQ(r->timeouts.tcpfin, 0u);
    EXPECT_EQ(r->timeouts.udp, 300u);
    EXPECT_EQ(error_of("--set 900 120"), "--set option requires 3 timeout values");
    EXPECT_EQ(error_of("--set 900 x 300"), "invalid timeout value `x' specified");
    EXPECT_EQ(error_of("--set 1 2 3 4"), "unexpected argument 4");
}

TEST(IpvsadmArgs, LocalAddresses) {
    auto p = parse("-P -t 10.0.0.1:80 -z 10.10.2.100 -F lan0");
    ASSERT_TRUE(p.ok()) << p.error();
    EXPECT_EQ(p->kind, CommandKind::AddLaddr);
    EXPECT_EQ(p->laddr, ip("10.10.2.100"));
    EXPECT_EQ(p->ifname, "lan0");
    EXPECT_EQ(error_of("--add-laddr -t 10.0.0.1:80 -z 10.10.2.100"),
              "You need to supply the 'ifname' option for the 'add-laddr' command");
    auto q = parse("--del-laddr -t 10.0.0.1:80 -z 10.10.2.100");
    ASSERT_TRUE(q.ok());
    EXPECT_EQ(q->kind, CommandKind::DelLaddr);
    auto g = parse("-G -t 10.0.0.1:80");
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->kind, CommandKind::GetLaddr);
    EXPECT_EQ(error_of("-G"),
              "You need to supply the 'service-address' option for the 'get-laddr' command");
    EXPECT_EQ(error_of("-P -t 10.0.0.1:80 -z 10.10.2 -F lan0"), "illegal local address");
}

TEST(IpvsadmArgs, ReloadHelpVersionSocket) {
    auto r = parse("--reload --socket /tmp/x.sock");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->kind, CommandKind::Reload);
    EXPECT_EQ(r->socket_path, "/tmp/x.sock");
    EXPECT_EQ(parse("-h")->kind, CommandKind::Help);
    EXPECT_EQ(parse("--help")->kind, CommandKind::Help);
    EXPECT_EQ(parse("-v")->kind, CommandKind::Version);
    EXPECT_EQ(parse("--version")->kind, CommandKind::Version);
    auto eq = parse("-L --socket=/tmp/y.sock");
    ASSERT_TRUE(eq.ok());
    EXPECT_EQ(eq->socket_path, "/tmp/y.sock");
}

TEST(IpvsadmArgs, RestoreLineSplitting) {
    EXPECT_EQ(split_restore_line("-A -t 10.0.0.1:80 -s wlc"),
              (std::vector<std::string>{"-A", "-t", "10.0.0.1:80", "-s", "wlc"}));
    EXPECT_EQ(split_restore_line("  ipvsadm -C  "), (std::vector<std::string>{"-C"}));
    EXPECT_EQ(split_restore_line("/usr/sbin/xvsadm\t-C"), (std::vector<std::string>{"-C"}));
    EXPECT_TRUE(split_restore_line("").empty());
    EXPECT_TRUE(split_restore_line("   # comment").empty());
}

// DPVS's list commands: -U/-V/-B (blacklist, -k entry), -O/-Y/-W (whitelist, --whtlst/-2).
TEST(IpvsadmArgs, BlackAndWhiteListCommands) {
    auto add = parse("-U -t 10.0.0.1:80 -k 192.0.2.0/24");
    ASSERT_TRUE(add.ok()) << add.error();
    EXPECT_EQ(add->kind, CommandKind::AddBlacklist);
    EXPECT_EQ(net::to_string(add->acl), "192.0.2.0/24");
    auto del = parse("--del-blklst -u 10.0.0.1:53 --blklst 192.0.2.7");
    ASSERT_TRUE(del.ok()) << del.error();
    EXPECT_EQ(del->kind, CommandKind::DelBlacklist);
    EXPECT_EQ(net::to_string(del->acl), "192.0.2.7/32");
    auto white = parse("-O -t 10.0.0.1:80 -2 198.51.100.0/24");
    ASSERT_TRUE(white.ok()) << white.error();
    EXPECT_EQ(white->kind, CommandKind::AddWhitelist);
    auto white_long = parse("--del-whtlst -t 10.0.0.1:80 --whtlst 198.51.100.9");
    ASSERT_TRUE(white_long.ok()) << white_long.error();
    EXPECT_EQ(white_long->kind, CommandKind::DelWhitelist);
    auto get_all = parse("-B");
    ASSERT_TRUE(get_all.ok()) << get_all.error();
    EXPECT_EQ(get_all->kind, CommandKind::GetBlacklist);
    EXPECT_FALSE(get_all->service);
    auto get_one = parse("-W -t 10.0.0.1:80 -n");
    ASSERT_TRUE(get_one.ok()) << get_one.error();
    EXPECT_EQ(get_one->kind, CommandKind::GetWhitelist);
    EXPECT_TRUE(get_one->service);
}

TEST(IpvsadmArgs, BlackAndWhiteListErrors) {
    EXPECT_EQ(error_of("-U -t 10.0.0.1:80"),
              "You need to supply the 'blklst-address' option for the 'add-blklst' command");
    EXPECT_EQ(error_of("-O -t 10.0.0.1:80 -k 1.2.3.4"),
              "Illegal 'blklst-address' option with the 'add-whtlst' command");
    EXPECT_EQ(error_of("-U -k 1.2.3.4"),
              "You need to supply the 'service-address' option for the 'add-blklst' command");
    EXPECT_EQ(error_of("-B -k 1.2.3.4"),
              "Illegal 'blklst-address' option with the 'get-blklst' command");
    EXPECT_EQ(error_of("-U -t 10.0.0.1:80 -k 10.1.2.3/8"),
              "illegal blacklist entry: prefix '10.1.2.3/8' has host bits set (did you mean "
              "10.0.0.0/8?)");
    EXPECT_EQ(error_of("-O -t 10.0.0.1:80 --whtlst 10.0.0.0/40"),
              "illegal whitelist entry: bad address or prefix '10.0.0.0/40' (expected "
              "A.B.C.D[/LEN], LEN 0..32, or an IPv6 address[/LEN], LEN 0..128)");
    EXPECT_EQ(error_of("-U -t 10.0.0.1:80 -k 1.2.3.4 -k 1.2.3.5"),
              "multiple 'blklst-address' options specified");
}

TEST(IpvsadmArgs, ConnRateOnServices) {
    auto a = parse("-A -t 10.0.0.1:80 --conn-rate 1000");
    ASSERT_TRUE(a.ok()) << a.error();
    EXPECT_EQ(a->svc.conn_rate, 1000u);
    auto e = parse("-E -t 10.0.0.1:80 -s rr");
    ASSERT_TRUE(e.ok()) << e.error();
    EXPECT_EQ(e->svc.conn_rate, 0u);  // -E replaces every attribute, as ipvsadm's
    EXPECT_EQ(error_of("-A -t 10.0.0.1:80 --conn-rate fast"),
              "illegal conn-rate `fast' specified (0..4294967295 per second, 0 = no cap)");
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 10.1.1.1 --conn-rate 5"),
              "Illegal 'conn-rate' option with the 'add-server' command");
}

TEST(IpvsadmArgs, ThresholdsOnServers) {
    auto a = parse("-a -t 10.0.0.1:80 -r 10.1.1.1:8080 -m -x 200 -y 150");
    ASSERT_TRUE(a.ok()) << a.error();
    EXPECT_EQ(a->dest.u_threshold, 200u);
    EXPECT_EQ(a->dest.l_threshold, 150u);
    EXPECT_EQ(error_of("-a -t 10.0.0.1:80 -r 10.1.1.1 -x -1"), "illegal u_threshold specified");
    EXPECT_EQ(error_of("-e -t 10.0.0.1:80 -r 10.1.1.1 -y many"), "illegal l_threshold specified");
}

}  // namespace
}  // namespace xvs::ctl
