// Tests for src/ctl/config_apply.cpp: a parsed config applied to a Director, then a changed
// config applied as a diff (unchanged dests keep their objects, so connections and counters
// survive), the model and the published snapshot checked, and unsupported configs refused
// with file:line.
#include "ctl/config_apply.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "ctl/config_parser.h"
#include "ctl/worker_placement.h"

namespace xvs::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

net::Ipv4 ip(const char* text) { return *net::parse_ipv4(text); }
net::InetAddr be(const char* text) {
    return ip(text);
}

// DESIGN.md's example, adapted to what xvs runs today (FNAT, one worker, no synproxy/toa),
// with a second static route and three services so a reload can exercise every kind of diff.
constexpr const char* kBase = R"(netif_defs {
    port wan0 { dev net_ring0 }
    port lan0 { dev net_ring1 }
}
worker_defs { workers 1 }
ip_defs {
    address 10.10.1.1/24 dev wan0
    address 10.10.2.1/24 dev lan0
    route default via 10.10.1.254 dev wan0
    route 172.16.0.0/16 via 10.10.2.254 dev lan0
}
ipvs_defs {
    timeouts { tcp 900 tcpfin 120 udp 300 }
}
local_address_group lan_lips {
    10.10.2.100-10.10.2.103 lan0
}
virtual_server 10.10.1.100 80 {
    protocol TCP
    lb_algo wrr
    lb_kind FNAT
    laddr_group_name lan_lips
    real_server 10.10.2.2 8080 { weight 1 }
    real_server 10.10.2.3 8080 { weight 2 }
    real_server 10.10.2.6 8080 { weight 4 }
}
virtual_server 10.10.1.101 53 {
    protocol UDP
    lb_algo rr
    lb_kind FNAT
    laddr_group_name lan_lips
    real_server 10.10.2.4 53 { weight 5 }
}
virtual_server 10.10.1.102 8443 {
    protocol TCP
    lb_algo wlc
    lb_kind FNAT
    laddr_group_name lan_lips
    real_server 10.10.2.7 8443 { weight 1 }
}
)";

// kBase with: address 10.10.1.1 -> 10.10.1.2, route 172.16/16 -> 192.168/16, tcp timeout 600,
// LIPs .100-.101 plus .110; service :80 keeps .2, reweights .3, drops .6, adds .5; :53 changes
// scheduler rr -> wlc; :8443 is removed; :443 is added.
constexpr const char* kChanged = R"(netif_defs {
    port wan0 { dev net_ring0 }
    port lan0 { dev net_ring1 }
}
worker_defs { workers 1 }
ip_defs {
    address 10.10.1.2/24 dev wan0
    address 10.10.2.1/24 dev lan0
    route default via 10.10.1.254 dev wan0
    route 192.168.0.0/16 via 10.10.2.254 dev lan0
}
ipvs_defs {
    timeouts { tcp 600 tcpfin 120 udp 300 }
}
local_address_group lan_lips {
    10.10.2.100-10.10.2.101 lan0
    10.10.2.110 lan0
}
virtual_server 10.10.1.100 80 {
    protocol TCP
    lb_algo wrr
    lb_kind FNAT
    laddr_group_name lan_lips
    real_server 10.10.2.2 8080 { weight 1 }
    real_server 10.10.2.3 8080 { weight 3 }
    real_server 10.10.2.5 8080 { weight 7 }
}
virtual_server 10.10.1.101 53 {
    protocol UDP
    lb_algo wlc
    lb_kind FNAT
    laddr_group_name lan_lips
    real_server 10.10.2.4 53 { weight 5 }
}
virtual_server 10.10.1.103 443 {
    protocol TCP
    lb_algo rr
    lb_kind FNAT
    laddr_group_name lan_lips
    real_server 10.10.2.8 443 { weight 9 }
}
)";

Config parse(const char* text, const char* name = "xvs.conf") {
    ParseOutcome out = parse_config(text, name);
    EXPECT_THAT(out.errors, IsEmpty());
    if (!out.config) {
        ADD_FAILURE() << "config did not parse";
        return Config{};
    }
    return *out.config;
}

void add_ports(lb::Director& d, const Config& cfg) {
    uint16_t id = 0;
    for (const auto& p : cfg.netif.ports) {
        lb::PortEntry e;
        e.name = p.name;
        e.port_id = id++;
        e.mac = net::MacAddr{{0x02, 0, 0, 0, 0, uint8_t(id)}};
        e.mtu = uint16_t(p.mtu);
        ASSERT_TRUE(d.port_add(e));
    }
}

lb::ServiceKey key(uint8_t proto, const char* vip, uint16_t port) {
    return lb::make_service_key(proto, ip(vip), port);
}

std::shared_ptr<lb::Dest> find_dest(const lb::Service& svc, const char* addr, uint16_t port) {
    for (const auto& d : svc.dests)
        if (d->addr == ip(addr) && d->port == port) return d;
    return nullptr;
}

std::vector<std::string> laddr_strings(const lb::Service& svc) {
    std::vector<std::string> out;
    for (const auto& l : svc.laddrs) out.push_back(net::to_string(l->addr) + " " + l->port_name);
    return out;
}

std::vector<std::string> address_strings(const lb::Director& d) {
    std::vector<std::string> out;
    for (const auto& a : d.addresses())
        out.push_back(net::to_string(a.addr) + "/" + std::to_string(a.prefix_len) + " " + a.port);
    return out;
}

// "PREFIX via GW dev PORT [connected]"
std::vector<std::string> route_strings(const lb::Director& d) {
    std::vector<std::string> out;
    for (const auto& r : d.routes()) {
        std::string s = net::to_string(r.prefix);
        if (r.gateway) s += " via " + net::to_string(*r.gateway);
        s += " dev " + r.port;
        if (r.connected) s += " connected";
        out.push_back(s);
    }
    return out;
}

class ConfigApplyTest : public ::testing::Test {
protected:
    void SetUp() override {
        base_ = parse(kBase);
        add_ports(director_, base_);
        auto r = config_apply(director_, base_);
        ASSERT_TRUE(r) << r.error();
        first_changes_ = r->changes;
    }

    lb::Director director_;
    Config base_;
    std::vector<std::string> first_changes_;
};

TEST_F(ConfigApplyTest, FirstApplyBuildsTheModel) {
    EXPECT_THAT(address_strings(director_),
                UnorderedElementsAre("10.10.1.1/24 wan0", "10.10.2.1/24 lan0"));
    EXPECT_THAT(route_strings(director_),
                UnorderedElementsAre("10.10.1.0/24 dev wan0 connected",
                                     "10.10.2.0/24 dev lan0 connected",
                                     "0.0.0.0/0 via 10.10.1.254 dev wan0",
                                     "172.16.0.0/16 via 10.10.2.254 dev lan0"));
    ASSERT_EQ(director_.services().size(), 3u);

    auto web = director_.service_find(key(6, "10.10.1.100", 80));
    ASSERT_TRUE(web);
    EXPECT_EQ(web->sched_name, "wrr");
    EXPECT_EQ(web->fwd, lb::FwdMode::FullNat);
    ASSERT_EQ(web->dests.size(), 3u);
    EXPECT_EQ(find_dest(*web, "10.10.2.2", 8080)->weight.load(), 1);
    EXPECT_EQ(find_dest(*web, "10.10.2.3", 8080)->weight.load(), 2);
    EXPECT_EQ(find_dest(*web, "10.10.2.6", 8080)->weight.load(), 4);
    EXPECT_THAT(laddr_strings(*web),
                UnorderedElementsAre("10.10.2.100 lan0", "10.10.2.101 lan0", "10.10.2.102 lan0",
                                     "10.10.2.103 lan0"));

    auto dns = director_.service_find(key(17, "10.10.1.101", 53));
    ASSERT_TRUE(dns);
    EXPECT_EQ(dns->sched_name, "rr");
    ASSERT_EQ(dns->dests.size(), 1u);
    EXPECT_EQ(find_dest(*dns, "10.10.2.4", 53)->weight.load(), 5);
    // One LocalAddr object per LIP, shared by the services that use it.
    EXPECT_EQ(dns->laddrs.size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(dns->laddrs[i].get(), web->laddrs[i].get());

    auto tls = director_.service_find(key(6, "10.10.1.102", 8443));
    ASSERT_TRUE(tls);
    EXPECT_EQ(tls->sched_name, "wlc");
    EXPECT_EQ(director_.service_find(key(17, "10.10.1.100", 80)), nullptr);  // proto matters

    const lb::Timeouts& t = director_.timeouts();
    EXPECT_EQ(t.of(lb::TcpState::Established), 900u);
    EXPECT_EQ(t.of(lb::TcpState::FinWait), 120u);
    EXPECT_EQ(t.udp, 300u);
    // States the config does not name keep DPVS's values.
    EXPECT_EQ(t.of(lb::TcpState::SynRecv), lb::Timeouts::dpvs_defaults().of(lb::TcpState::SynRecv));

    EXPECT_THAT(first_changes_, ::testing::Contains("added service TCP 10.10.1.100:80"));
    EXPECT_THAT(first_changes_, ::testing::Contains("added address 10.10.1.1/24 dev wan0"));
    EXPECT_THAT(first_changes_,
                ::testing::Contains("added real server 10.10.2.6:8080 to TCP 10.10.1.100:80"));
    EXPECT_THAT(first_changes_,
                ::testing::Contains("added local address 10.10.2.103 to UDP 10.10.1.101:53"));
    EXPECT_THAT(first_changes_, ::testing::Contains("timeout ESTABLISHED 900"));
}

TEST_F(ConfigApplyTest, FirstApplyPublishesASnapshot) {
    const lb::Snapshot* snap = director_.snapshot();
    ASSERT_NE(snap, nullptr);
    const stack::StackView& sv = snap->stack;
    ASSERT_EQ(sv.ports.size(), 2u);
    EXPECT_EQ(sv.ports[0].name, "wan0");
    EXPECT_EQ(sv.ports[1].name, "lan0");

    // Own addresses: kind and the port they are answered on.
    auto own = [&](const char* a) { return sv.own(be(a)); };
    ASSERT_TRUE(own("10.10.1.1"));
    EXPECT_EQ(own("10.10.1.1")->kind, stack::AddrKind::Director);
    EXPECT_EQ(own("10.10.1.1")->port, 0);
    ASSERT_TRUE(own("10.10.2.1"));
    EXPECT_EQ(own("10.10.2.1")->kind, stack::AddrKind::Director);
    EXPECT_EQ(own("10.10.2.1")->port, 1);
    for (const char* vip : {"10.10.1.100", "10.10.1.101", "10.10.1.102"}) {
        ASSERT_TRUE(own(vip)) << vip;
        EXPECT_EQ(own(vip)->kind, stack::AddrKind::Vip) << vip;
        EXPECT_EQ(own(vip)->port, 0) << vip << " lives in wan0's subnet";
    }
    auto web = director_.service_find(key(6, "10.10.1.100", 80));
    for (const auto& l : web->laddrs) {
        const stack::OwnAddr* o = sv.own(l->addr);
        ASSERT_TRUE(o);
        EXPECT_EQ(o->kind, stack::AddrKind::Lip);
        EXPECT_EQ(o->port, 1);
        EXPECT_EQ(o->lip, l.get());
    }
    EXPECT_EQ(own("10.10.2.104"), nullptr);
    EXPECT_EQ(own("10.10.2.2"), nullptr);  // a real server is not ours

    // Routes: longest prefix first, connected ones deliver to the destination itself.
    auto hop = sv.route_lookup(be("10.10.2.2"));
    EXPECT_TRUE(hop.found);
    EXPECT_EQ(hop.addr, be("10.10.2.2"));
    EXPECT_EQ(hop.port, 1);
    hop = sv.route_lookup(be("172.16.9.9"));
    EXPECT_TRUE(hop.found);
    EXPECT_EQ(hop.addr, be("10.10.2.254"));
    EXPECT_EQ(hop.port, 1);
    hop = sv.route_lookup(be("8.8.8.8"));
    EXPECT_TRUE(hop.found);
    EXPECT_EQ(hop.addr, be("10.10.1.254"));
    EXPECT_EQ(hop.port, 0);

    // Services by (proto, vip, port) in network order.
    const lb::ServiceView* v = snap->service(6, be("10.10.1.100"), net::hton16(80));
    ASSERT_TRUE(v);
    EXPECT_EQ(v->svc, web.get());
    EXPECT_EQ(v->sched->name, "wrr");
    EXPECT_EQ(v->fwd, lb::FwdMode::FullNat);
    ASSERT_EQ(v->plan.dests.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(v->plan.dests[i], web->dests[i].get());
        EXPECT_EQ(v->plan.weights[i], web->dests[i]->weight.load());
    }
    EXPECT_EQ(v->laddrs.size(), 4u);
    EXPECT_TRUE(snap->service(17, be("10.10.1.101"), net::hton16(53)));
    EXPECT_EQ(snap->service(6, be("10.10.1.101"), net::hton16(53)), nullptr);
    EXPECT_EQ(snap->service(6, be("10.10.1.100"), net::hton16(81)), nullptr);
    EXPECT_EQ(snap->timeouts.of(lb::TcpState::Established), 900u);
}

TEST_F(ConfigApplyTest, ReapplyingTheSameConfigChangesNothing) {
    const lb::Snapshot* before = director_.snapshot();
    auto web = director_.service_find(key(6, "10.10.1.100", 80));
    std::vector<lb::Dest*> dests;
    for (const auto& d : web->dests) dests.push_back(d.get());
    std::vector<lb::LocalAddr*> laddrs;
    for (const auto& l : web->laddrs) laddrs.push_back(l.get());

    auto r = config_apply(director_, parse(kBase));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, IsEmpty());
    EXPECT_EQ(director_.service_find(key(6, "10.10.1.100", 80)), web);
    for (size_t i = 0; i < dests.size(); ++i) EXPECT_EQ(web->dests[i].get(), dests[i]);
    for (size_t i = 0; i < laddrs.size(); ++i) EXPECT_EQ(web->laddrs[i].get(), laddrs[i]);
    EXPECT_EQ(director_.addresses().size(), 2u);
    EXPECT_EQ(director_.routes().size(), 4u);
    // It still commits (a new generation), with the same content.
    EXPECT_NE(director_.snapshot(), before);
    EXPECT_GT(director_.snapshot()->generation, before->generation);
}

TEST_F(ConfigApplyTest, ChangedConfigAppliesExactlyTheDiff) {
    auto web = director_.service_find(key(6, "10.10.1.100", 80));
    auto dns = director_.service_find(key(17, "10.10.1.101", 53));
    std::weak_ptr<lb::Service> tls = director_.service_find(key(6, "10.10.1.102", 8443));
    auto kept = find_dest(*web, "10.10.2.2", 8080);
    auto reweighted = find_dest(*web, "10.10.2.3", 8080);
    auto dropped = find_dest(*web, "10.10.2.6", 8080);
    auto dns_dest = find_dest(*dns, "10.10.2.4", 53);
    lb::LocalAddr* lip100 = web->laddrs[0].get();
    lb::LocalAddr* lip101 = web->laddrs[1].get();
    ASSERT_EQ(lip100->addr, ip("10.10.2.100"));
    ASSERT_EQ(lip101->addr, ip("10.10.2.101"));
    // Counters a worker would have written: they must survive the reload.
    kept->stats[0].conns = 11;
    kept->stats[0].refs = 2;
    web->workers[0].inpkts = 77;

    auto r = config_apply(director_, parse(kChanged));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes,
                UnorderedElementsAre(
                    "removed service TCP 10.10.1.102:8443",
                    "removed address 10.10.1.1",
                    "removed route 172.16.0.0/16",
                    "added address 10.10.1.2/24 dev wan0",
                    "added route 192.168.0.0/16",
                    "removed real server 10.10.2.6:8080 from TCP 10.10.1.100:80",
                    "real server 10.10.2.3:8080 weight 3",
                    "added real server 10.10.2.5:8080 to TCP 10.10.1.100:80",
                    "removed local address 10.10.2.102 from TCP 10.10.1.100:80",
                    "removed local address 10.10.2.103 from TCP 10.10.1.100:80",
                    "added local address 10.10.2.110 to TCP 10.10.1.100:80",
                    "service UDP 10.10.1.101:53 scheduler wlc",
                    "removed local address 10.10.2.102 from UDP 10.10.1.101:53",
                    "removed local address 10.10.2.103 from UDP 10.10.1.101:53",
                    "added local address 10.10.2.110 to UDP 10.10.1.101:53",
                    "added service TCP 10.10.1.103:443",
                    "added real server 10.10.2.8:443 to TCP 10.10.1.103:443",
                    "added local address 10.10.2.100 to TCP 10.10.1.103:443",
                    "added local address 10.10.2.101 to TCP 10.10.1.103:443",
                    "added local address 10.10.2.110 to TCP 10.10.1.103:443",
                    "timeout ESTABLISHED 600"));

    // Services: same objects for the kept ones, the removed one out of the model.
    EXPECT_EQ(director_.services().size(), 3u);
    EXPECT_EQ(director_.service_find(key(6, "10.10.1.100", 80)), web);
    EXPECT_EQ(director_.service_find(key(17, "10.10.1.101", 53)), dns);
    EXPECT_EQ(dns->sched_name, "wlc");
    EXPECT_EQ(director_.service_find(key(6, "10.10.1.102", 8443)), nullptr);
    ASSERT_FALSE(tls.expired());  // draining: a retired snapshot still holds it
    EXPECT_TRUE(tls.lock()->dests[0]->removed.load());
    auto added = director_.service_find(key(6, "10.10.1.103", 443));
    ASSERT_TRUE(added);
    EXPECT_EQ(added->sched_name, "rr");
    ASSERT_EQ(added->dests.size(), 1u);
    EXPECT_EQ(added->dests[0]->weight.load(), 9);

    // Dests: unchanged and reweighted ones are the same objects with their counters.
    ASSERT_EQ(web->dests.size(), 3u);
    EXPECT_EQ(find_dest(*web, "10.10.2.2", 8080), kept);
    EXPECT_EQ(kept->weight.load(), 1);
    EXPECT_EQ(kept->stats[0].conns, 11u);
    EXPECT_EQ(kept->stats[0].refs, 2u);
    EXPECT_FALSE(kept->removed.load());
    EXPECT_EQ(find_dest(*web, "10.10.2.3", 8080), reweighted);
    EXPECT_EQ(reweighted->weight.load(), 3);
    EXPECT_EQ(find_dest(*web, "10.10.2.6", 8080), nullptr);
    EXPECT_TRUE(dropped->removed.load());
    auto fresh = find_dest(*web, "10.10.2.5", 8080);
    ASSERT_TRUE(fresh);
    EXPECT_EQ(fresh->weight.load(), 7);
    EXPECT_EQ(web->workers[0].inpkts, 77u);
    EXPECT_EQ(find_dest(*dns, "10.10.2.4", 53), dns_dest);

    // Local addresses: kept LIPs are the same objects, shared across services.
    EXPECT_THAT(laddr_strings(*web),
                UnorderedElementsAre("10.10.2.100 lan0", "10.10.2.101 lan0", "10.10.2.110 lan0"));
    EXPECT_THAT(laddr_strings(*added),
                UnorderedElementsAre("10.10.2.100 lan0", "10.10.2.101 lan0", "10.10.2.110 lan0"));
    EXPECT_EQ(web->laddrs[0].get(), lip100);
    EXPECT_EQ(web->laddrs[1].get(), lip101);
    for (const auto& l : added->laddrs) {
        auto same = std::find_if(web->laddrs.begin(), web->laddrs.end(),
                                 [&](const auto& w) { return w.get() == l.get(); });
        EXPECT_NE(same, web->laddrs.end()) << net::to_string(l->addr);
    }

    // Addresses, routes, timeouts.
    EXPECT_THAT(address_strings(director_),
                UnorderedElementsAre("10.10.1.2/24 wan0", "10.10.2.1/24 lan0"));
    EXPECT_THAT(route_strings(director_),
                UnorderedElementsAre("10.10.1.0/24 dev wan0 connected",
                                     "10.10.2.0/24 dev lan0 connected",
                                     "0.0.0.0/0 via 10.10.1.254 dev wan0",
                                     "192.168.0.0/16 via 10.10.2.254 dev lan0"));
    EXPECT_EQ(director_.timeouts().of(lb::TcpState::Established), 600u);
    EXPECT_EQ(director_.timeouts().of(lb::TcpState::FinWait), 120u);

    // The snapshot follows.
    const lb::Snapshot* snap = director_.snapshot();
    const stack::StackView& sv = snap->stack;
    EXPECT_EQ(sv.own(be("10.10.1.1")), nullptr);
    ASSERT_TRUE(sv.own(be("10.10.1.2")));
    EXPECT_EQ(sv.own(be("10.10.1.2"))->kind, stack::AddrKind::Director);
    EXPECT_EQ(sv.own(be("10.10.1.102")), nullptr);  // VIP of the removed service
    ASSERT_TRUE(sv.own(be("10.10.1.103")));
    EXPECT_EQ(sv.own(be("10.10.1.103"))->kind, stack::AddrKind::Vip);
    EXPECT_EQ(sv.own(be("10.10.2.102")), nullptr);
    EXPECT_EQ(sv.own(be("10.10.2.103")), nullptr);
    ASSERT_TRUE(sv.own(be("10.10.2.110")));
    EXPECT_EQ(sv.own(be("10.10.2.110"))->kind, stack::AddrKind::Lip);
    EXPECT_EQ(sv.own(be("10.10.2.100"))->lip, lip100);
    auto hop = sv.route_lookup(be("172.16.9.9"));
    EXPECT_EQ(hop.addr, be("10.10.1.254")) << "the 172.16/16 route is gone: default applies";
    hop = sv.route_lookup(be("192.168.3.3"));
    EXPECT_EQ(hop.addr, be("10.10.2.254"));
    EXPECT_EQ(hop.port, 1);
    EXPECT_EQ(snap->service(6, be("10.10.1.102"), net::hton16(8443)), nullptr);
    const lb::ServiceView* v = snap->service(6, be("10.10.1.100"), net::hton16(80));
    ASSERT_TRUE(v);
    ASSERT_EQ(v->plan.dests.size(), 3u);
    EXPECT_EQ(std::count(v->plan.dests.begin(), v->plan.dests.end(), dropped.get()), 0);
    for (size_t i = 0; i < v->plan.dests.size(); ++i)
        EXPECT_EQ(v->plan.weights[i], v->plan.dests[i]->weight.load());
    EXPECT_EQ(snap->service(17, be("10.10.1.101"), net::hton16(53))->sched->name, "wlc");
    EXPECT_EQ(snap->timeouts.of(lb::TcpState::Established), 600u);

    // And applying it again is a no-op.
    auto again = config_apply(director_, parse(kChanged));
    ASSERT_TRUE(again) << again.error();
    EXPECT_THAT(again->changes, IsEmpty());
}

// Lists, rate and thresholds reach the model and the workers' view; a reload that changes
// them replaces them (and keeps the service and its dests).
TEST_F(ConfigApplyTest, AdmissionControlAppliedAndReloaded) {
    std::string with_acl(kBase);
    const std::string anchor = "    real_server 10.10.2.2 8080 { weight 1 }\n";
    const size_t at = with_acl.find(anchor);
    ASSERT_NE(at, std::string::npos);
    with_acl.replace(at, anchor.size(),
                     "    blacklist { 192.0.2.0/24 }\n"
                     "    whitelist 198.51.100.0/24\n"
                     "    conn_rate_limit 300\n"
                     "    real_server 10.10.2.2 8080 { weight 1 uthreshold 20 lthreshold 10 }\n");
    auto web = director_.service_find(key(6, "10.10.1.100", 80));
    auto kept = find_dest(*web, "10.10.2.2", 8080);
    auto r = config_apply(director_, parse(with_acl.c_str()));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, ::testing::IsSupersetOf(
                                {"service TCP 10.10.1.100:80 conn_rate_limit 300",
                                 "service TCP 10.10.1.100:80 blacklist now 1 entries",
                                 "service TCP 10.10.1.100:80 whitelist now 1 entries"}));
    EXPECT_EQ(director_.service_find(key(6, "10.10.1.100", 80)), web);
    EXPECT_EQ(find_dest(*web, "10.10.2.2", 8080), kept);
    EXPECT_EQ(kept->upper_threshold, 20u);
    EXPECT_EQ(kept->lower_threshold, 10u);
    const lb::ServiceView* view = director_.snapshot()->service(6, be("10.10.1.100"), net::hton16(80));
    ASSERT_TRUE(view);
    EXPECT_EQ(view->conn_rate, 300u);
    EXPECT_TRUE(view->blacklist.contains(be("192.0.2.9")));
    EXPECT_TRUE(view->whitelist.contains(be("198.51.100.9")));
    EXPECT_FALSE(view->whitelist.contains(be("198.51.101.9")));
    ASSERT_EQ(view->plan.limits.size(), view->plan.dests.size());

    // Same config again: nothing to do. Back to the base: lists emptied, rate and limits gone.
    auto same = config_apply(director_, parse(with_acl.c_str()));
    ASSERT_TRUE(same) << same.error();
    EXPECT_THAT(same->changes, IsEmpty());
    auto back = config_apply(director_, parse(kBase));
    ASSERT_TRUE(back) << back.error();
    view = director_.snapshot()->service(6, be("10.10.1.100"), net::hton16(80));
    EXPECT_EQ(view->conn_rate, 0u);
    EXPECT_TRUE(view->blacklist.empty());
    EXPECT_TRUE(view->whitelist.empty());
    EXPECT_TRUE(view->plan.limits.empty());
}

TEST_F(ConfigApplyTest, SchedulerFlagsAndMaglevTableSizeAppliedAndReloaded) {
    std::string mh(kBase);
    const std::string anchor = "    lb_algo wrr\n";
    const size_t at = mh.find(anchor);
    ASSERT_NE(at, std::string::npos);
    mh.replace(at, anchor.size(),
               "    lb_algo mh\n    mh-port\n    mh-fallback\n    mh_table_size 4093\n");
    auto r = config_apply(director_, parse(mh.c_str()));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, ::testing::Contains("service TCP 10.10.1.100:80 scheduler mh "
                                                "(mh-fallback,mh-port) table 4093"));
    auto web = director_.service_find(key(6, "10.10.1.100", 80));
    EXPECT_EQ(web->sched_flags, lb::kSchedFlagFallback | lb::kSchedFlagPort);
    const lb::ServiceView* view =
        director_.snapshot()->service(6, be("10.10.1.100"), net::hton16(80));
    ASSERT_TRUE(view);
    EXPECT_EQ(view->sched->name, "mh");
    EXPECT_EQ(view->plan.table.size(), 4093u);
    EXPECT_EQ(view->plan.flags, lb::kSchedFlagFallback | lb::kSchedFlagPort);
    auto same = config_apply(director_, parse(mh.c_str()));
    ASSERT_TRUE(same) << same.error();
    EXPECT_THAT(same->changes, IsEmpty());
    auto back = config_apply(director_, parse(kBase));
    ASSERT_TRUE(back) << back.error();
    view = director_.snapshot()->service(6, be("10.10.1.100"), net::hton16(80));
    EXPECT_EQ(view->sched->name, "wrr");
    EXPECT_EQ(view->plan.flags, 0u);
    EXPECT_EQ(director_.service_find(key(6, "10.10.1.100", 80))->mh_table_size, 0u);
}

// hash_target qid and quic_cid_len reach the service view (the worker reads both per new
// flow); a reload changing the length edits the service, and going back to sip clears both.
TEST_F(ConfigApplyTest, HashTargetQidAndConnectionIdLengthAppliedAndReloaded) {
    auto with = [](const char* lines) {
        std::string text(kBase);
        const std::string anchor = "    protocol UDP\n    lb_algo rr\n";
        const size_t at = text.find(anchor);
        EXPECT_NE(at, std::string::npos);
        text.replace(at, anchor.size(), std::string("    protocol UDP\n") + lines);
        return text;
    };
    const std::string qid8 = with("    lb_algo conhash\n    hash_target qid\n    quic_cid_len 8\n");
    auto r = config_apply(director_, parse(qid8.c_str()));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, ::testing::Contains("service UDP 10.10.1.101:53 scheduler conhash "
                                                "hash_target qid quic_cid_len 8"));
    const lb::ServiceView* view =
        director_.snapshot()->service(17, be("10.10.1.101"), net::hton16(53));
    ASSERT_TRUE(view);
    EXPECT_TRUE(view->flags & lb::kSvcFlagHashQid);
    EXPECT_EQ(view->quic_cid_len, 8);
    auto same = config_apply(director_, parse(qid8.c_str()));
    ASSERT_TRUE(same) << same.error();
    EXPECT_THAT(same->changes, IsEmpty());
    const std::string qid4 = with("    lb_algo conhash\n    hash_target qid\n    quic_cid_len 4\n");
    auto four = config_apply(director_, parse(qid4.c_str()));
    ASSERT_TRUE(four) << four.error();
    EXPECT_THAT(four->changes, ::testing::Contains("service UDP 10.10.1.101:53 scheduler conhash "
                                                   "hash_target qid quic_cid_len 4"));
    view = director_.snapshot()->service(17, be("10.10.1.101"), net::hton16(53));
    EXPECT_EQ(view->quic_cid_len, 4);
    const std::string sip = with("    lb_algo conhash\n    hash_target sip\n");
    auto back = config_apply(director_, parse(sip.c_str()));
    ASSERT_TRUE(back) << back.error();
    view = director_.snapshot()->service(17, be("10.10.1.101"), net::hton16(53));
    EXPECT_FALSE(view->flags & lb::kSvcFlagHashQid);
    EXPECT_EQ(view->quic_cid_len, 0);
}

TEST_F(ConfigApplyTest, LocalAddressCanMovePortInOneReload) {
    std::string text = kBase;
    // .103 moves from lan0 to wan0 (no other service keeps it on lan0).
    text.replace(text.find("10.10.2.100-10.10.2.103 lan0"), 28,
                 "10.10.2.100-10.10.2.102 lan0\n    10.10.2.103 wan0");
    auto r = config_apply(director_, parse(text.c_str()));
    ASSERT_TRUE(r) << r.error();
    auto web = director_.service_find(key(6, "10.10.1.100", 80));
    EXPECT_THAT(laddr_strings(*web),
                UnorderedElementsAre("10.10.2.100 lan0", "10.10.2.101 lan0", "10.10.2.102 lan0",
                                     "10.10.2.103 wan0"));
    const stack::OwnAddr* o = director_.snapshot()->stack.own(be("10.10.2.103"));
    ASSERT_TRUE(o);
    EXPECT_EQ(o->kind, stack::AddrKind::Lip);
    EXPECT_EQ(o->port, 0);
}

TEST_F(ConfigApplyTest, LocalAddressCanBecomeADirectorAddressInOneReload) {
    std::string text = kBase;
    text.replace(text.find("10.10.2.100-10.10.2.103 lan0"), 28, "10.10.2.100-10.10.2.102 lan0");
    text.replace(text.find("address 10.10.2.1/24 dev lan0"), 29,
                 "address 10.10.2.1/24 dev lan0\n    address 10.10.2.103/24 dev lan0");
    auto r = config_apply(director_, parse(text.c_str()));
    ASSERT_TRUE(r) << r.error();
    const stack::OwnAddr* o = director_.snapshot()->stack.own(be("10.10.2.103"));
    ASSERT_TRUE(o);
    EXPECT_EQ(o->kind, stack::AddrKind::Director);
}

// ip_defs tunnel_source: the TUN outer source of a port, in the snapshot's port view; a
// reload may change it, or drop it together with its address, in one go.
TEST_F(ConfigApplyTest, TunnelSourceAppliedAndReloaded) {
    const uint32_t lan = 1;  // wan0, lan0 in that order
    EXPECT_EQ(director_.snapshot()->stack.ports[lan].tunnel_source, be("10.10.2.1"));  // default
    std::string text = kBase;
    text.replace(text.find("address 10.10.2.1/24 dev lan0"), 29,
                 "address 10.10.2.1/24 dev lan0\n    address 10.10.2.5/24 dev lan0\n"
                 "    address 10.10.2.9/24 dev lan0\n    tunnel_source 10.10.2.5 dev lan0");
    auto r = config_apply(director_, parse(text.c_str()));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, testing::Contains("tunnel source of lan0: 10.10.2.5"));
    EXPECT_EQ(director_.tunnel_source("lan0"), ip("10.10.2.5"));
    EXPECT_EQ(director_.snapshot()->stack.ports[lan].tunnel_source, be("10.10.2.5"));
    EXPECT_EQ(director_.snapshot()->stack.ports[0].tunnel_source, be("10.10.1.1"));
    // The same config again: nothing to do.
    r = config_apply(director_, parse(text.c_str()));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, IsEmpty());
    // A tunnel source cannot be removed behind the config's back.
    auto del = director_.address_del(ip("10.10.2.5"));
    ASSERT_FALSE(del);
    EXPECT_EQ(del.error(),
              "address 10.10.2.5 is the tunnel source of port 'lan0': change or remove ip_defs "
              "`tunnel_source` first");
    // Moves to .9 while .5 leaves, in one reload.
    std::string moved = text;
    moved.replace(moved.find("    address 10.10.2.5/24 dev lan0\n"), 34, "");
    moved.replace(moved.find("tunnel_source 10.10.2.5"), 23, "tunnel_source 10.10.2.9");
    r = config_apply(director_, parse(moved.c_str()));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, testing::Contains("tunnel source of lan0: 10.10.2.9"));
    EXPECT_EQ(director_.snapshot()->stack.ports[lan].tunnel_source, be("10.10.2.9"));
    // Dropped together with its address: back to the port's first address.
    r = config_apply(director_, base_);
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, testing::Contains("tunnel source of lan0: default (first address)"));
    EXPECT_EQ(director_.tunnel_source("lan0"), std::nullopt);
    EXPECT_EQ(director_.snapshot()->stack.ports[lan].tunnel_source, be("10.10.2.1"));
}

TEST_F(ConfigApplyTest, ServiceRemovedAndItsVipBecomesADirectorAddress) {
    std::string text = kBase;
    text.erase(text.find("virtual_server 10.10.1.102 8443"));
    text.replace(text.find("address 10.10.1.1/24 dev wan0"), 29,
                 "address 10.10.1.1/24 dev wan0\n    address 10.10.1.102/24 dev wan0");
    auto r = config_apply(director_, parse(text.c_str()));
    ASSERT_TRUE(r) << r.error();
    const stack::OwnAddr* o = director_.snapshot()->stack.own(be("10.10.1.102"));
    ASSERT_TRUE(o);
    EXPECT_EQ(o->kind, stack::AddrKind::Director);
}

// --- refusals ---------------------------------------------------------------------------------

constexpr const char* kOneService = R"(netif_defs {
    port wan0 { dev net_ring0 }
    port lan0 { dev net_ring1 }
}
worker_defs { workers WORKERS }
ip_defs { address 10.10.1.1/24 dev wan0 }
local_address_group lips { 10.10.2.100 lan0 }
virtual_server 10.10.1.100 80 {
    lb_kind KIND
    LADDR
    real_server 10.10.2.2 80 { weight 1 }
}
)";

std::string one_service(const std::string& workers, const std::string& kind,
                        const std::string& laddr) {
    std::string t = kOneService;
    t.replace(t.find("WORKERS"), 7, workers);
    t.replace(t.find("KIND"), 4, kind);
    t.replace(t.find("LADDR"), 5, laddr);
    return t;
}

// The parser already refuses a missing laddr_group_name (FNAT) with file:line;
// config_supported() is the apply-side guard for Configs that did not come through it (and the
// only one for `workers 2`), so both layers are checked.
class ConfigRefusalTest : public ::testing::Test {
protected:
    Config good() {
        ParseOutcome out = parse_config(one_service("1", "FNAT", "laddr_group_name lips"),
                                        "/etc/xvs/xvs.conf");
        EXPECT_THAT(out.errors, IsEmpty());
        return out.config ? *out.config : Config{};
    }
    // Applies cfg to a fresh Director that has its ports; returns the error text.
    std::string refusal(const Config& cfg) {
        lb::Director director;
        add_ports(director, cfg);
        EXPECT_FALSE(config_supported(cfg));
        auto r = config_apply(director, cfg);
        if (r) return "<accepted>";
        // Refused before anything changed.
        EXPECT_TRUE(director.services().empty());
        EXPECT_TRUE(director.addresses().empty());
        return r.error();
    }
    static std::vector<std::string> parse_errors(const std::string& text) {
        return parse_config(text, "/etc/xvs/xvs.conf").errors;
    }
};

TEST_F(ConfigRefusalTest, SupportedConfigIsAccepted) {
    Config cfg = good();
    EXPECT_TRUE(config_supported(cfg));
    lb::Director director;
    add_ports(director, cfg);
    auto r = config_apply(director, cfg);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(director.services().size(), 1u);
}

// NAT, DR and TUN services need no local addresses; the DR real server 10.10.2.2 must be on a
// connected network (10.10.2.0/24 here), and DR/TUN keep the service's port.
TEST_F(ConfigRefusalTest, NatDrTunAreAppliedWithTheirDests) {
    for (const char* kind : {"NAT", "DR", "TUN", "TUN type gue port 6080"}) {
        std::string text = one_service("1", kind, "");
        text.replace(text.find("ip_defs { address 10.10.1.1/24 dev wan0 }"), 41,
                     "ip_defs { address 10.10.1.1/24 dev wan0\n address 10.10.2.1/24 dev lan0 }");
        ParseOutcome out = parse_config(text, "/etc/xvs/xvs.conf");
        ASSERT_TRUE(out.config) << kind << ": " << ::testing::PrintToString(out.errors);
        EXPECT_TRUE(config_supported(*out.config)) << kind;
        lb::Director director;
        add_ports(director, *out.config);
        auto r = config_apply(director, *out.config);
        ASSERT_TRUE(r) << kind << ": " << r.error();
        ASSERT_EQ(director.services().size(), 1u);
        const auto& dests = director.services()[0]->dests;
        ASSERT_EQ(dests.size(), 1u);
        EXPECT_EQ(std::string(lb::fwd_names(dests[0]->fwd).keepalived), std::string(kind).substr(0, std::string(kind).find(' ')));
        if (std::string(kind).find("gue") != std::string::npos) {
            EXPECT_EQ(dests[0]->tun_type.load(), lb::TunType::Gue);
            EXPECT_EQ(dests[0]->tun_port.load(), 6080);
        }
    }
}

TEST_F(ConfigRefusalTest, DrRealServerOffLinkOrWithAnotherPortIsRefusedAtItsLine) {
    // No address on lan0: 10.10.2.2 is not on a connected network of the director.
    auto r = [&](const std::string& text) {
        ParseOutcome out = parse_config(text, "/etc/xvs/xvs.conf");
        EXPECT_TRUE(out.config) << ::testing::PrintToString(out.errors);
        lb::Director director;
        add_ports(director, *out.config);
        auto res = config_apply(director, *out.config);
        return res ? std::string("<accepted>") : res.error();
    };
    EXPECT_THAT(r(one_service("1", "DR", "")),
                HasSubstr("xvs.conf:11: real_server: DR real server 10.10.2.2 is not on a directly "
                          "connected network"));
    std::string mapped = one_service("1", "TUN", "");
    mapped.replace(mapped.find("10.10.2.2 80"), 12, "10.10.2.2 8080");
    EXPECT_THAT(r(mapped), HasSubstr("TUN real server 10.10.2.2:8080 cannot map ports: give the "
                                     "service's port 80"));
}

TEST_F(ConfigRefusalTest, SnatOnAVipServiceIsRefused) {
    Config cfg = good();
    cfg.virtual_servers[0].fwd = lb::FwdMode::Snat;
    EXPECT_THAT(refusal(cfg), HasSubstr("/etc/xvs/xvs.conf:8: lb_kind SNAT is only for match services: write `virtual_server match NAME {"));
}

// More workers than CPUs: refused at the workers line (no machine lets xvsd use 16 CPUs of
// a test's affinity... unless it has them: then a CPU that cannot exist is listed instead).
TEST_F(ConfigRefusalTest, WorkersBeyondTheCpusAreRefused) {
    ParseOutcome out = parse_config(one_service("16", "FNAT", "laddr_group_name lips"), "x.conf");
    ASSERT_TRUE(out.config);  // valid syntax; the machine is what cannot do it
    if (cpus_available().size() >= 16) out.config->worker.cpus = {1023};
    EXPECT_THAT(refusal(*out.config),
                cpus_available().size() >= 16 ? HasSubstr("CPU 1023 is not one xvsd may run on")
                                               : HasSubstr("x.conf:5: workers 16: xvsd may run on"));
}

TEST_F(ConfigRefusalTest, FnatWithoutLaddrGroupIsRefusedWithFileAndLine) {
    EXPECT_THAT(parse_errors(one_service("1", "FNAT", "")),
                ::testing::ElementsAre("/etc/xvs/xvs.conf:8: virtual_server: laddr_group_name "
                                       "missing (required for lb_kind FNAT)"));
    Config cfg = good();
    cfg.virtual_servers[0].laddr_group.clear();
    EXPECT_EQ(refusal(cfg), "/etc/xvs/xvs.conf:8: FNAT virtual server needs laddr_group_name");
}

TEST_F(ConfigRefusalTest, EveryProblemIsReportedOnItsOwnLine) {
    Config cfg = good();
    cfg.worker.cpus = {1023};
    cfg.worker.cpus_loc = {"/etc/xvs/xvs.conf", 5};
    cfg.virtual_servers[0].fwd = lb::FwdMode::Snat;
    cfg.virtual_servers[0].laddr_group.clear();
    std::string err = refusal(cfg);
    EXPECT_THAT(err, HasSubstr("xvs.conf:5: cpus: CPU 1023"));
    EXPECT_THAT(err, HasSubstr("xvs.conf:8: lb_kind SNAT"));
    // Only FNAT needs local addresses: two problems, not three.
    EXPECT_THAT(err, Not(HasSubstr("laddr_group_name")));
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);
}

TEST_F(ConfigRefusalTest, UoaNeedsUdpAndExcludesProxyProtocol) {
    Config cfg = good();  // TCP :80
    cfg.virtual_servers[0].uoa = Uoa::Opp;
    EXPECT_EQ(refusal(cfg), "/etc/xvs/xvs.conf:8: uoa opp needs protocol UDP (TCP clients get "
                            "toa or proxy_protocol)");
    cfg.virtual_servers[0].proto = Proto::Udp;
    cfg.virtual_servers[0].uoa = Uoa::Ipo;
    cfg.virtual_servers[0].proxy_protocol = ProxyProtocol::V2;
    EXPECT_EQ(refusal(cfg), "/etc/xvs/xvs.conf:8: uoa ipo cannot be combined with proxy_protocol v2");
}

// UOA per UDP service (flags in the model and the snapshot), uoa_max_trail into the snapshot,
// and a reload that changes both reports exactly that.
TEST_F(ConfigApplyTest, UoaAndMaxTrailAreAppliedAndReloaded) {
    EXPECT_EQ(director_.uoa_max_trail(), 3u);
    EXPECT_EQ(director_.service_find(key(17, "10.10.1.101", 53))->flags, 0u);
    std::string text = kBase;
    text.replace(text.find("    protocol UDP\n"), 17, "    protocol UDP\n    uoa ipo\n");
    text.replace(text.find("ipvs_defs {\n"), 12, "ipvs_defs {\n    uoa_max_trail 2\n");
    auto r = config_apply(director_, parse(text.c_str()));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, UnorderedElementsAre("service UDP 10.10.1.101:53 uoa ipo",
                                                 "uoa_max_trail 2"));
    auto dns = director_.service_find(key(17, "10.10.1.101", 53));
    EXPECT_EQ(dns->flags, lb::kSvcFlagUoaIpo);
    EXPECT_EQ(director_.uoa_max_trail(), 2u);
    const lb::Snapshot* snap = director_.snapshot();
    EXPECT_EQ(snap->uoa_max_trail, 2u);
    const lb::ServiceView* view = snap->service(17, be("10.10.1.101"), net::hton16(53));
    ASSERT_NE(view, nullptr);
    EXPECT_EQ(view->flags, lb::kSvcFlagUoaIpo);

    text.replace(text.find("uoa ipo"), 7, "uoa opp");
    r = config_apply(director_, parse(text.c_str()));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, UnorderedElementsAre("service UDP 10.10.1.101:53 uoa opp"));
    EXPECT_EQ(director_.service_find(key(17, "10.10.1.101", 53))->flags, lb::kSvcFlagUoaOpp);

    r = config_apply(director_, base_);
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, UnorderedElementsAre("service UDP 10.10.1.101:53 uoa off",
                                                 "uoa_max_trail 3"));
    EXPECT_EQ(director_.service_find(key(17, "10.10.1.101", 53))->flags, 0u);
    EXPECT_EQ(director_.snapshot()->uoa_max_trail, 3u);
}

// expire_nodest_conn reaches the director and the snapshot on reload, and back off.
TEST_F(ConfigApplyTest, ExpireNodestConnIsAppliedOnReload) {
    EXPECT_FALSE(director_.expire_nodest_conn());
    std::string text = kBase;
    text.replace(text.find("ipvs_defs {\n"), 12, "ipvs_defs {\n    expire_nodest_conn on\n");
    auto r = config_apply(director_, parse(text.c_str()));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, UnorderedElementsAre("expire_nodest_conn on"));
    EXPECT_TRUE(director_.expire_nodest_conn());
    EXPECT_TRUE(director_.snapshot()->expire_nodest_conn);
    r = config_apply(director_, base_);
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, UnorderedElementsAre("expire_nodest_conn off"));
    EXPECT_FALSE(director_.snapshot()->expire_nodest_conn);
}

// reschedule_refused (default on) reaches the director and the snapshot on reload, and back.
TEST_F(ConfigApplyTest, RescheduleRefusedIsAppliedOnReload) {
    EXPECT_TRUE(director_.snapshot()->reschedule_refused);
    std::string text = kBase;
    text.replace(text.find("ipvs_defs {\n"), 12, "ipvs_defs {\n    reschedule_refused off\n");
    auto r = config_apply(director_, parse(text.c_str()));
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, UnorderedElementsAre("reschedule_refused off"));
    EXPECT_FALSE(director_.reschedule_refused());
    EXPECT_FALSE(director_.snapshot()->reschedule_refused);
    r = config_apply(director_, base_);
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, UnorderedElementsAre("reschedule_refused on"));
    EXPECT_TRUE(director_.snapshot()->reschedule_refused);
}

TEST(ConfigApplyPorts, MissingPortIsReportedWithFileAndLine) {
    lb::Director director;  // no ports registered
    Config cfg = parse(kBase, "/etc/xvs/xvs.conf");
    auto r = config_apply(director, cfg);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "/etc/xvs/xvs.conf:7: address 10.10.1.1: no such port 'wan0'");
}

}  // namespace
}  // namespace xvs::ctl

namespace xvs::ctl {
namespace {

TEST_F(ConfigRefusalTest, SynProxyOnUdpIsRefused) {
    Config cfg = good();
    cfg.virtual_servers[0].syn_proxy = true;
    cfg.virtual_servers[0].proto = Proto::Udp;
    EXPECT_EQ(refusal(cfg),
              "/etc/xvs/xvs.conf:8: syn_proxy needs protocol TCP (SYN cookies are a TCP handshake)");
}

TEST_F(ConfigApplyTest, SynProxyFlagAndSettingsReachTheSnapshot) {
    Config cfg = base_;
    cfg.virtual_servers[0].syn_proxy = true;
    cfg.ipvs.synproxy.mss = 1400;
    cfg.ipvs.synproxy.defer_rs_syn = true;
    auto r = config_apply(director_, cfg);
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, UnorderedElementsAre("service TCP 10.10.1.100:80 syn_proxy on",
                                                 "synproxy settings"));
    const lb::Snapshot* snap = director_.snapshot();
    EXPECT_EQ(snap->synproxy.mss, 1400);
    EXPECT_TRUE(snap->synproxy.defer_rs_syn);
    EXPECT_TRUE(snap->service(6, be("10.10.1.100"), net::hton16(80))->flags & lb::kSvcFlagSynProxy);
    r = config_apply(director_, cfg);
    ASSERT_TRUE(r) << r.error();
    EXPECT_THAT(r->changes, IsEmpty());
}

}  // namespace
}  // namespace xvs::ctl
