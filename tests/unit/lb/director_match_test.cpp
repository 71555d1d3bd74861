// Tests for src/lb/director_match.cpp and src/lb/match.cpp: SNAT match services in the
// Director's model and snapshots (ports resolved, one port pool per WAN address shared by the
// services using it, pools kept while connections may hold ports), and the match text forms.
#include <gtest/gtest.h>

#include "lb/director.h"

namespace xvs::lb {
namespace {

net::Ipv4 ip(const char* text) {
    return *net::parse_ipv4(text);
}

MatchKey key(uint8_t proto, const char* src, const char* oif, const char* iif = "") {
    MatchKey k;
    k.proto = proto;
    k.src = *parse_addr_range(src);
    k.oif = oif;
    k.iif = iif;
    return k;
}

DestSpec wan(const char* addr, int32_t weight = 1) {
    DestSpec d;
    d.addr = ip(addr);
    d.port = 0;
    d.fwd = FwdMode::Snat;
    d.weight = weight;
    return d;
}

class DirectorMatch : public ::testing::Test {
  protected:
    DirectorMatch() : d_(2) {
        EXPECT_TRUE(d_.port_add({"wan0", 0, {}, 1500}));
        EXPECT_TRUE(d_.port_add({"lan0", 1, {}, 1500}));
        EXPECT_TRUE(d_.address_add(ip("10.10.1.1"), 24, "wan0"));
        EXPECT_TRUE(d_.address_add(ip("10.10.1.3"), 24, "wan0"));
        EXPECT_TRUE(d_.address_add(ip("10.10.2.1"), 24, "lan0"));
    }
    Director d_;
};

TEST_F(DirectorMatch, SnapshotResolvesPortsAndSharesOnePoolPerWanAddress) {
    const MatchKey tcp = key(6, "10.10.2.0-10.10.2.255", "wan0", "lan0");
    const MatchKey udp = key(17, "10.10.2.0-10.10.2.255", "wan0");
    ASSERT_TRUE(d_.match_add({tcp, "T", "wrr"}));
    ASSERT_TRUE(d_.match_add({udp, "U", "rr"}));
    ASSERT_TRUE(d_.match_dest_add(tcp, wan("10.10.1.1", 3)));
    ASSERT_TRUE(d_.match_dest_add(tcp, wan("10.10.1.3", 1)));
    ASSERT_TRUE(d_.match_dest_add(udp, wan("10.10.1.1")));
    d_.commit();
    const Snapshot* snap = d_.snapshot();
    ASSERT_EQ(snap->matches.size(), 2u);
    const ServiceView* t = snap->matches[0];
    EXPECT_EQ(t->fwd, FwdMode::Snat);
    EXPECT_EQ(t->match.proto, 6);
    EXPECT_EQ(t->match.oif, 0);
    EXPECT_EQ(t->match.iif, 1);
    EXPECT_EQ(snap->matches[1]->match.iif, -1);
    EXPECT_TRUE(t->match.src.contains(ip("10.10.2.7"), 40000));
    EXPECT_FALSE(t->match.src.contains(ip("10.10.3.7"), 40000));
    ASSERT_EQ(t->wan.size(), 2u);
    EXPECT_EQ(t->plan.dests[0]->addr, ip("10.10.1.1"));
    EXPECT_EQ(t->plan.weights[0], 3);
    EXPECT_EQ(t->wan[0]->addr, ip("10.10.1.1"));
    EXPECT_EQ(t->wan[1]->addr, ip("10.10.1.3"));
    // 10.10.1.1 is one pool for both services: a port is never handed out twice.
    EXPECT_EQ(t->wan[0], snap->matches[1]->wan[0]);
    EXPECT_EQ(t->wan[0]->port_name, "wan0");
    ASSERT_TRUE(t->wan[0]->workers[1].pool);  // one pool per worker
    EXPECT_FALSE(t->wan[0]->workers[2].pool);
    // Match services are not VIP services: no VIP:port key, WAN addresses stay director ones.
    EXPECT_EQ(snap->stack.own(ip("10.10.1.1"))->kind, stack::AddrKind::Director);
    EXPECT_EQ(d_.services().size(), 0u);
}

TEST_F(DirectorMatch, RefusalsUseIpvsadmWordsAndSayWhatToDo) {
    const MatchKey k = key(6, "10.10.2.0-10.10.2.255", "wan0");
    EXPECT_EQ(d_.match_del(k).error(), "No such service");
    EXPECT_EQ(d_.match_dest_add(k, wan("10.10.1.1")).error(), "No such service");
    ASSERT_TRUE(d_.match_add({k, "", "rr"}));
    EXPECT_EQ(d_.match_add({k, "", "rr"}).error(), "Service already exists");
    EXPECT_EQ(d_.match_add({key(6, "", "wan0"), "", "nope"}).error(), "Scheduler not found");
    EXPECT_EQ(d_.match_add({key(47, "", "wan0"), "", "rr"}).error(),
              "a match service's protocol must be TCP, UDP or ICMP");
    EXPECT_EQ(d_.match_add({key(6, "", "wan0", "eth9"), "", "rr"}).error(),
              "iif: no such port 'eth9'");
    EXPECT_EQ(d_.match_dest_edit(k, wan("10.10.1.1")).error(), "No such destination");
    EXPECT_EQ(d_.match_dest_del(k, ip("10.10.1.1")).error(), "No such destination");
    DestSpec heavy = wan("10.10.1.1", 70000);
    EXPECT_EQ(d_.match_dest_add(k, heavy).error(), "Illegal weight specified");
    // A VIP service cannot use SNAT; a match service cannot use anything else.
    ServiceSpec vip;
    vip.vip = ip("10.10.1.100");
    vip.port = 80;
    ASSERT_TRUE(d_.service_add(vip));
    DestSpec rs = wan("10.10.2.2");
    rs.port = 80;
    EXPECT_EQ(d_.dest_add(make_service_key(6, vip.vip, 80), rs).error().substr(0, 39),
              "lb_kind SNAT is only for match services");
    DestSpec fnat = wan("10.10.1.1");
    fnat.fwd = FwdMode::FullNat;
    EXPECT_EQ(d_.match_dest_add(k, fnat).error(),
              "a match service forwards by SNAT only: add its WAN address with -J (--snat), not "
              "--fullnat");
}

TEST_F(DirectorMatch, RemovedWanPoolComesBackWhileConnectionsHoldPorts) {
    const MatchKey k = key(17, "", "wan0");
    ASSERT_TRUE(d_.match_add({k, "", "rr"}));
    ASSERT_TRUE(d_.match_dest_add(k, wan("10.10.1.1")));
    d_.commit();
    LocalAddr* pool = d_.snapshot()->matches[0]->wan[0];
    auto port = pool->workers[0].pool->alloc();  // a connection holds a port
    ASSERT_TRUE(port);
    pool->workers[0].refs = 1;
    ASSERT_TRUE(d_.match_dest_del(k, ip("10.10.1.1")));
    d_.commit();
    d_.worker_quiescent(0, d_.snapshot()->generation);
    d_.worker_quiescent(1, d_.snapshot()->generation);
    d_.reclaim();
    ASSERT_TRUE(d_.match_dest_add(k, wan("10.10.1.1")));
    d_.commit();
    EXPECT_EQ(d_.snapshot()->matches[0]->wan[0], pool);
    EXPECT_TRUE(pool->workers[0].pool->in_use(*port));
    pool->workers[0].refs = 0;
    // Clear (ipvsadm -C) removes match services too.
    d_.services_clear();
    EXPECT_TRUE(d_.matches().empty());
}

TEST(Match, TextFormsRoundTrip) {
    auto k = parse_match(
        "proto=udp,src-range=10.0.0.1-10.0.0.9:1024-2047,dst-range=192.0.2.1,iif=lan0,oif=wan0");
    ASSERT_TRUE(k) << k.error();
    EXPECT_EQ(
        to_string(*k),
        "proto=udp,src-range=10.0.0.1-10.0.0.9:1024-2047,dst-range=192.0.2.1,iif=lan0,oif=wan0");
    EXPECT_TRUE(k->src.contains(ip("10.0.0.9"), 2047));
    EXPECT_FALSE(k->src.contains(ip("10.0.0.9"), 2048));
    EXPECT_FALSE(k->src.contains(ip("10.0.0.10"), 1024));
    EXPECT_TRUE(k->dst.contains(ip("192.0.2.1"), 53));
    EXPECT_EQ(*parse_match(to_string(*k)), *k);
    AddrRange any;
    EXPECT_TRUE(any.contains(ip("203.0.113.5"), 1));
    EXPECT_EQ(parse_addr_range("10.0.0.1:9-8").error(),
              "bad port range in '10.0.0.1:9-8' (P or P-Q, 0..65535, P <= Q)");
    EXPECT_EQ(parse_addr_range("10.0.0.300").error(),
              "bad address range '10.0.0.300' (A.B.C.D or A.B.C.D-A.B.C.D)");
    EXPECT_EQ(parse_match("proto=tcp,oif").error(), "'oif' is not key=value");
}

}  // namespace
}  // namespace xvs::lb

namespace xvs::lb {
namespace {

// IPv6 is taken where the data path forwards it, and the family rules refuse the rest by
// name: a gateway of the other family, an IPv6 real server or local address behind an IPv4
// VIP, an IPv4 one behind an IPv6 VIP in a mode other than FULLNAT, SYN proxy on IPv6.
TEST_F(DirectorMatch, Ipv6IsTakenWithTheFamilyRules) {
    const net::InetAddr v6 = *net::parse_inet("2001:db8::1");
    ASSERT_TRUE(d_.address_add(v6, 64, "wan0"));
    EXPECT_FALSE(d_.address_add(*net::parse_inet("2001:db8:5::1"), 129, "wan0"));
    EXPECT_TRUE(d_.route_add(net::InetPrefix::masked(*net::parse_inet("2001:db8:9::"), 48),
                             *net::parse_inet("2001:db8::fe"), "wan0"));
    auto r = d_.route_add(*net::parse_ipv4_prefix("0.0.0.0/0"), v6, "wan0");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("address family"), std::string::npos) << r.error();
    ServiceSpec s;
    s.proto = 6;
    s.vip = *net::parse_inet("2001:db8::100");
    s.port = 80;
    s.flags = kSvcFlagUoaIpo;
    r = d_.service_add(s);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("uoa_mode ipo on IPv6"), std::string::npos) << r.error();
    s.flags = 0;
    ASSERT_TRUE(d_.service_add(s));
    const ServiceKey k6 = make_service_key(6, s.vip, 80);
    DestSpec rs;
    rs.addr = ip("10.10.2.2");
    rs.port = 80;
    rs.fwd = FwdMode::Nat;
    r = d_.dest_add(k6, rs);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("only FULLNAT translates"), std::string::npos) << r.error();
    rs.fwd = FwdMode::FullNat;
    EXPECT_TRUE(d_.dest_add(k6, rs));                                           // FNAT64
    EXPECT_FALSE(d_.laddr_add(k6, *net::parse_inet("2001:db8::200"), "lan0"));  // one family

    s.vip = ip("10.10.1.100");
    ASSERT_TRUE(d_.service_add(s));
    const ServiceKey k = make_service_key(6, ip("10.10.1.100"), 80);
    rs.addr = v6;
    r = d_.dest_add(k, rs);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("not back"), std::string::npos) << r.error();
    EXPECT_FALSE(d_.laddr_add(k, *net::parse_inet("2001:db8::200"), "lan0"));
    EXPECT_TRUE(d_.service_find(k)->dests.empty());
}

}  // namespace
}  // namespace xvs::lb
