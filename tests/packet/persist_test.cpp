// Packet tests: persistence through the real pipeline. A persistent rr service sends a
// client's second connection (another source port) to the dest of its first even though rr
// would pick the other; a quiesced dest (weight 0) keeps its persistent clients, unless
// expire_quiescent_template; a firewall-mark service with persistence keeps a client on one
// dest across VIP:80 and VIP:443, for IPv6 too (-f N -6), each family of a mark to its own
// service; templates show in the conn dump as ipvsadm -L -c does.
#include "fixture/pipeline.h"
#include "lb/command.h"

namespace xvs::test {
namespace {

using stack::Counter;

const net::InetAddr kVip = ip("10.10.1.100");

class PersistTest : public PipelineTest {
  protected:
    void addresses() {
        ok(director->address_add(ip("10.10.1.1"), 24, "wan"));
        ok(director->address_add(ip("10.10.2.1"), 24, "lan"));
    }
    static void ok(const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); }
    // TCP VIP:80, rr, DR real servers RS1 and RS2, persistent for `timeout` seconds.
    void configure(uint32_t timeout, uint8_t prefix = lb::ServiceSpec::kPersistFull) {
        addresses();
        lb::ServiceSpec s{6, kVip, 80, "rr"};
        s.fwd = lb::FwdMode::Dr;
        s.persistence_s = timeout;
        s.persist_prefix = prefix;
        ok(director->service_add(s));
        for (const char* rs : {"10.10.2.2", "10.10.2.3"}) add_dr(key(), ip(rs), 80);
        director->commit();
        start_worker();
        learn_neighbours();
    }
    // A DR real server of weight 1 (port 0: the packet's own, for firewall-mark services).
    void add_dr(const lb::ServiceKey& k, const net::InetAddr& addr, uint16_t port) {
        lb::DestSpec d{addr, port, 1};
        d.fwd = lb::FwdMode::Dr;
        ok(director->dest_add(k, d));
    }
    static lb::ServiceKey key() { return lb::make_service_key(6, kVip, 80); }
    // The RS MAC a SYN from client:cport to VIP:vport went to (zero MAC if none came out).
    net::MacAddr syn(const char* client, uint16_t cport, uint16_t vport = 80,
                     const char* vip = "10.10.1.100") {
        net::MacAddr dst = syn_to_rs(false, client, vip, cport, vport);
        EXPECT_NE(dst, net::MacAddr{}) << client << ":" << cport << " -> " << vport;
        return dst;
    }
    // A client SYN of either family: the RS MAC it went to (zero MAC if none came out).
    net::MacAddr syn_to_rs(bool v6, const char* client, const char* vip, uint16_t cport,
                           uint16_t vport) {
        PacketBuilder b;
        b.eth(kClientMac, wan_mac());
        if (v6)
            b.ipv6(client, vip);
        else
            b.ipv4(client, vip);
        auto out =
            roundtrip(kWan, b.tcp(cport, vport).flags(net::kTcpSyn).seq(1000).build(), kLan);
        net::MacAddr dst{};
        if (out.size() == 1) std::memcpy(dst.b, out[0].data(), 6);
        return dst;
    }
    // Time passes second by second, the worker polling (its timers see each second).
    void seconds(int n) {
        for (int i = 0; i < n; ++i) {
            worker->advance_clock(1000);
            poll();
        }
    }
    void set_weight(size_t i, int32_t weight) {
        auto d = director->service_find(key())->dests[i];
        lb::DestSpec spec{d->addr, d->port, weight};
        spec.fwd = lb::FwdMode::Dr;
        ok(director->dest_edit(key(), spec));
        director->commit();
    }
};

TEST_F(PersistTest, SecondConnectionOfAClientGoesToTheSameDest) {
    configure(300);
    EXPECT_EQ(syn("10.10.1.2", 1000), kRs1Mac);
    // rr would now pick RS2; the template sends the client's new connection to RS1.
    EXPECT_EQ(syn("10.10.1.2", 1001), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.2", 1002), kRs1Mac);
    // Another client is scheduled (RS2, rr's next) and sticks there in turn.
    EXPECT_EQ(syn("10.10.1.3", 5000), kRs2Mac);
    EXPECT_EQ(syn("10.10.1.3", 5001), kRs2Mac);
    EXPECT_EQ(counter(Counter::conns_created), 5u);
    EXPECT_EQ(worker->conns().in_use(), 5u + 2u);  // 5 conns, 2 templates
    const auto& dests = director->service_find(key())->dests;
    EXPECT_EQ(dests[0]->stats[0].persist, 1u);
    EXPECT_EQ(dests[1]->stats[0].persist, 1u);
    EXPECT_EQ(dests[0]->stats[0].conns, 3u);
}

TEST_F(PersistTest, WithoutPersistenceRrAlternates) {
    configure(0 + 0);  // the control: same service, not persistent (port 80 is given)
    EXPECT_EQ(syn("10.10.1.2", 1000), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.2", 1001), kRs2Mac);
    EXPECT_EQ(worker->conns().in_use(), 2u);
}

TEST_F(PersistTest, GranularityPutsAPrefixOnOneDest) {
    configure(300, 24);
    EXPECT_EQ(syn("10.10.1.2", 1000), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.3", 1000), kRs1Mac);  // same /24: same template
    EXPECT_EQ(worker->conns().in_use(), 3u);
}

TEST_F(PersistTest, QuiescedDestKeepsItsPersistentClients) {
    configure(300);
    EXPECT_EQ(syn("10.10.1.2", 1000), kRs1Mac);
    set_weight(0, 0);  // RS1 quiesced: no new clients, its persistent ones stay
    EXPECT_EQ(syn("10.10.1.2", 1001), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.3", 1000), kRs2Mac);  // a new client: RS2 only
    EXPECT_EQ(syn("10.10.1.4", 1000), kRs2Mac);
}

TEST_F(PersistTest, ExpireQuiescentTemplateReschedulesTheClient) {
    configure(300);
    EXPECT_EQ(syn("10.10.1.2", 1000), kRs1Mac);
    director->expire_quiescent_template_set(true);
    set_weight(0, 0);
    EXPECT_EQ(syn("10.10.1.2", 1001), kRs2Mac);
    EXPECT_EQ(syn("10.10.1.2", 1002), kRs2Mac);  // and sticks to its new dest
}

TEST_F(PersistTest, TemplateExpiresOnlyAfterItsConnsAndTheTimeout) {
    configure(60);
    EXPECT_EQ(syn("10.10.1.2", 1000), kRs1Mac);
    // The SYN_RECV conn times out (DPVS: 30 s); the template lives 60 s after it.
    seconds(31);
    EXPECT_EQ(worker->conns().in_use(), 1u);     // only the template
    EXPECT_EQ(syn("10.10.1.2", 1001), kRs1Mac);  // still RS1, and the template refreshed
    seconds(31);  // t = 62 s: the second conn went at 61 s, the template lives until 121 s
    EXPECT_EQ(worker->conns().in_use(), 1u);
    seconds(57);
    EXPECT_EQ(worker->conns().in_use(), 1u);
    seconds(4);
    EXPECT_EQ(worker->conns().in_use(), 0u);
    EXPECT_EQ(syn("10.10.1.2", 1002), kRs2Mac);  // a new client to rr: RS2 was next
}

TEST_F(PersistTest, ChangingPersistenceAppliesToNewConns) {
    configure(0);
    EXPECT_EQ(syn("10.10.1.2", 1000), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.2", 1001), kRs2Mac);  // rr alternates
    lb::ServiceSpec s{6, kVip, 80, "rr"};
    s.fwd = lb::FwdMode::Dr;
    s.persistence_s = 300;
    ok(director->service_edit(s));  // ipvsadm -E ... -p 300, or a reload
    director->commit();
    EXPECT_EQ(syn("10.10.1.2", 1002), kRs1Mac);  // scheduled, and a template made
    EXPECT_EQ(syn("10.10.1.2", 1003), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.2", 1004), kRs1Mac);
    s.persistence_s = 0;
    ok(director->service_edit(s));
    director->commit();
    EXPECT_EQ(syn("10.10.1.2", 1005), kRs2Mac);  // rr again, the template ignored
    EXPECT_EQ(syn("10.10.1.2", 1006), kRs1Mac);
}

TEST_F(PersistTest, TemplatesShowInTheConnDumpWithPortZero) {
    configure(300);
    syn("10.10.1.2", 1000);
    lb::Command cmd;
    cmd.kind = lb::Command::dump_conns;
    cmd.conns.reserve(16);
    while (!lb::command_serve_chunk(cmd, worker->conns(), worker->neighbours(), 0)) {
    }
    ASSERT_EQ(cmd.conns.size(), 2u);
    const lb::ConnDumpEntry& t = cmd.conns[0].tpl ? cmd.conns[0] : cmd.conns[1];
    ASSERT_TRUE(t.tpl);
    EXPECT_EQ(t.proto, 6);
    EXPECT_EQ(t.cport, 0);
    EXPECT_EQ(t.caddr, ip("10.10.1.2"));
    EXPECT_EQ(t.vport, net::hton16(80));
    EXPECT_EQ(t.daddr, ip("10.10.2.2"));
    EXPECT_EQ(t.state, lb::TcpState::None);
}

// An IPv6 service's granularity is a prefix length (ipvsadm -M 64): clients of one /64 share
// a template, a client of the next /64 is scheduled anew; /128 (the default) keeps rr's
// alternation between two clients of one /64.
class Persist6Test : public PersistTest {
  protected:
    static constexpr const char* kVip6 = "2001:db8:1::100";
    void configure6(uint8_t prefix) {
        ok(director->address_add(ip6("2001:db8:1::1"), 64, "wan"));
        ok(director->address_add(ip6("2001:db8:2::1"), 64, "lan"));
        lb::ServiceSpec s{6, ip6(kVip6), 80, "rr"};
        s.fwd = lb::FwdMode::Dr;
        s.persistence_s = 300;
        s.persist_prefix = prefix;
        ok(director->service_add(s));
        for (const char* rs : {"2001:db8:2::2", "2001:db8:2::3"})
            add_dr(lb::make_service_key(6, ip6(kVip6), 80), ip6(rs), 80);
        director->commit();
        start_worker();
        worker->neighbours().add_static(ip6("2001:db8:2::2"), kRs1Mac, kLan);
        worker->neighbours().add_static(ip6("2001:db8:2::3"), kRs2Mac, kLan);
    }
    // The RS MAC a SYN from client:cport went to, the frame checked whole (DR: MACs only).
    net::MacAddr syn6(const char* client, uint16_t cport) {
        auto frame = [&](net::MacAddr src, net::MacAddr dst) {
            return PacketBuilder()
                .eth(src, dst)
                .ipv6(client, kVip6)
                .tcp(cport, 80)
                .flags(net::kTcpSyn)
                .seq(1000)
                .build();
        };
        auto out = roundtrip(kWan, frame(kClientMac, wan_mac()), kLan);
        EXPECT_EQ(out.size(), 1u) << client << ":" << cport;
        if (out.size() != 1) return net::MacAddr{};
        for (net::MacAddr rs : {kRs1Mac, kRs2Mac})
            if (FramesEqual(frame(lan_mac(), rs), out[0])) return rs;
        ADD_FAILURE() << "not the client's SYN to a real server";
        return net::MacAddr{};
    }
};

TEST_F(Persist6Test, PrefixLengthPutsA64OnOneDest) {
    configure6(64);
    EXPECT_EQ(syn6("2001:db8:1::2", 1000), kRs1Mac);
    EXPECT_EQ(syn6("2001:db8:1::3", 1000), kRs1Mac);        // same /64: same template
    EXPECT_EQ(syn6("2001:db8:1:0:ffff::9", 1001), kRs1Mac);  // still that /64
    EXPECT_EQ(syn6("2001:db8:1:1::2", 1000), kRs2Mac);      // the next /64: rr's next
    EXPECT_EQ(syn6("2001:db8:1:1::3", 1002), kRs2Mac);
    EXPECT_EQ(worker->conns().in_use(), 5u + 2u);  // 5 conns, 2 templates
}

TEST_F(Persist6Test, WholeAddressByDefault) {
    configure6(lb::ServiceSpec::kPersistFull);
    EXPECT_EQ(syn6("2001:db8:1::2", 1000), kRs1Mac);
    EXPECT_EQ(syn6("2001:db8:1::3", 1000), kRs2Mac);  // another client: its own template
    EXPECT_EQ(syn6("2001:db8:1::2", 1001), kRs1Mac);
    EXPECT_EQ(worker->conns().in_use(), 3u + 2u);
}

class FwmarkTest : public PersistTest {
  protected:
    // Mark 1: VIP ports 80 and 443 over TCP; 10.10.1.101 any port, any protocol.
    void configure_mark(uint32_t persist) {
        addresses();
        lb::FwmarkDef mark{1, {}};
        mark.entries.push_back(lb::FwmarkEntry{net::InetPrefix(kVip, 32), 80, 80, 6});
        mark.entries.push_back(lb::FwmarkEntry{net::InetPrefix(kVip, 32), 443, 443, 6});
        mark.entries.push_back(
            lb::FwmarkEntry{net::InetPrefix(ip("10.10.1.101"), 32), 1, 65535, 0});
        ok(director->fwmark_set({mark}));
        lb::ServiceSpec s{0, {}, 0, "rr"};
        s.fwmark = 1;
        s.fwd = lb::FwdMode::Dr;
        s.persistence_s = persist;
        ok(director->service_add(s));
        for (const char* rs : {"10.10.2.2", "10.10.2.3"})
            add_dr(lb::make_fwmark_key(1, false), ip(rs), 0);
        director->commit();
        start_worker();
        learn_neighbours();
    }
};

TEST_F(FwmarkTest, PersistenceSpansThePortsOfAMark) {
    configure_mark(300);
    EXPECT_EQ(syn("10.10.1.2", 1000, 80), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.2", 1001, 443), kRs1Mac);                  // https follows http
    EXPECT_EQ(syn("10.10.1.2", 1002, 8080, "10.10.1.101"), kRs1Mac);  // another VIP of the mark
    EXPECT_EQ(syn("10.10.1.3", 1000, 443), kRs2Mac);
    EXPECT_EQ(syn("10.10.1.3", 1001, 80), kRs2Mac);
    EXPECT_EQ(worker->conns().in_use(), 5u + 2u);
}

TEST_F(FwmarkTest, WithoutPersistenceEachConnIsScheduled) {
    configure_mark(0);
    EXPECT_EQ(syn("10.10.1.2", 1000, 80), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.2", 1001, 443), kRs2Mac);
}

TEST_F(FwmarkTest, PortsOutsideTheMarkHaveNoService) {
    configure_mark(300);
    Bytes f = PacketBuilder()
                  .eth(kClientMac, wan_mac())
                  .ipv4("10.10.1.2", "10.10.1.100")
                  .tcp(1000, 22)
                  .flags(net::kTcpSyn)
                  .seq(1000)
                  .build();
    EXPECT_TRUE(roundtrip(kWan, f, kLan).empty());
    EXPECT_EQ(counter(Counter::drop_no_service), 1u);
}

// IPv6 firewall marks (ipvsadm -f N -6): mark 1 has entries of both families and a service
// per family, as IPVS keys fwmark services by (mark, family). An IPv6 packet the mark's IPv6
// entries match goes to the IPv6 service, an IPv4 packet of the same mark to the IPv4 one;
// the IPv6 service's templates span the mark's ports with a /64 granularity.
class Fwmark6Test : public Persist6Test {
  protected:
    static constexpr const char* kVip6b = "2001:db8:1::101";  // a second address of the mark
    static lb::ServiceKey key6() { return lb::make_fwmark_key(1, true); }
    static lb::ServiceKey key4() { return lb::make_fwmark_key(1, false); }
    void configure_marks(bool with_v6_service = true) {
        addresses();
        ok(director->address_add(ip6("2001:db8:1::1"), 64, "wan"));
        ok(director->address_add(ip6("2001:db8:2::1"), 64, "lan"));
        lb::FwmarkDef mark{1, {}};
        mark.entries.push_back(lb::FwmarkEntry{net::InetPrefix(kVip, 32), 80, 80, 6});
        mark.entries.push_back(lb::FwmarkEntry{net::InetPrefix(ip6(kVip6), 128), 80, 80, 6});
        mark.entries.push_back(lb::FwmarkEntry{net::InetPrefix(ip6(kVip6), 128), 443, 443, 6});
        mark.entries.push_back(lb::FwmarkEntry{net::InetPrefix(ip6("2001:db8:1::100"), 127), 8000,
                                               8099, 0});  // ::100 and ::101
        ok(director->fwmark_set({mark}));
        lb::ServiceSpec s4{0, {}, 0, "rr"};
        s4.fwmark = 1;
        s4.fwd = lb::FwdMode::Dr;
        ok(director->service_add(s4));
        add_dr(key4(), ip("10.10.2.3"), 0);
        if (with_v6_service) {
            lb::ServiceSpec s6 = s4;
            s6.fwmark_v6 = true;
            s6.persistence_s = 300;
            s6.persist_prefix = 64;
            ok(director->service_add(s6));
            EXPECT_FALSE(director->service_add(s6).ok());  // (mark 1, IPv6) exists
            // An IPv4 real server behind the IPv6 mark service: FULLNAT only (FNAT64).
            lb::DestSpec wrong{ip("10.10.2.2"), 0, 1};
            wrong.fwd = lb::FwdMode::Dr;
            auto r = director->dest_add(key6(), wrong);
            ASSERT_FALSE(r.ok());
            EXPECT_NE(r.error().find("is IPv4 behind IPv6 firewall-mark service 1 (IPv6)"),
                      std::string::npos)
                << r.error();
            for (const char* rs : {"2001:db8:2::2", "2001:db8:2::3"})
                add_dr(key6(), ip6(rs), 0);
        }
        director->commit();
        start_worker();
        learn_neighbours();
        worker->neighbours().add_static(ip6("2001:db8:2::2"), kRs1Mac, kLan);
        worker->neighbours().add_static(ip6("2001:db8:2::3"), kRs2Mac, kLan);
    }
    // The RS MAC an IPv6 SYN client:cport -> vip:vport went to (zero MAC if none came out).
    net::MacAddr syn6_to(const char* client, uint16_t cport, uint16_t vport,
                         const char* vip = kVip6) {
        return syn_to_rs(true, client, vip, cport, vport);
    }
    uint64_t service_conns(const lb::ServiceKey& k) {
        uint64_t n = 0;
        for (const auto& d : director->service_find(k)->dests) n += d->stats[0].conns;
        return n;
    }
};

TEST_F(Fwmark6Test, Ipv6PersistenceSpansThePortsAndAddressesOfTheMark) {
    configure_marks();
    EXPECT_EQ(syn6_to("2001:db8:1::2", 1000, 80), kRs1Mac);
    EXPECT_EQ(syn6_to("2001:db8:1::2", 1001, 443), kRs1Mac);           // https follows http
    EXPECT_EQ(syn6_to("2001:db8:1::3", 1002, 8080, kVip6b), kRs1Mac);  // same /64, other VIP
    EXPECT_EQ(syn6_to("2001:db8:1:1::2", 1000, 443), kRs2Mac);         // next /64: rr's next
    EXPECT_EQ(syn6_to("2001:db8:1:1::2", 1001, 80), kRs2Mac);
    EXPECT_EQ(worker->conns().in_use(), 5u + 2u);  // 5 conns, 2 templates
    EXPECT_EQ(service_conns(key6()), 5u);
    EXPECT_EQ(service_conns(key4()), 0u);
    // Not a port of the mark's IPv6 entries: no service.
    EXPECT_EQ(syn6_to("2001:db8:1::2", 1003, 22), net::MacAddr{});
    EXPECT_EQ(counter(Counter::drop_no_service), 1u);
}

TEST_F(Fwmark6Test, EachFamilyOfAMarkGoesToItsOwnService) {
    configure_marks();
    EXPECT_EQ(syn("10.10.1.2", 1000, 80), kRs2Mac);  // the IPv4 service's only dest
    EXPECT_EQ(syn6_to("2001:db8:1::2", 1000, 80), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.2", 1001, 80), kRs2Mac);
    EXPECT_EQ(service_conns(key4()), 2u);
    EXPECT_EQ(service_conns(key6()), 1u);
    // The IPv4 service is not persistent: no template; the IPv6 one made one.
    EXPECT_EQ(worker->conns().in_use(), 3u + 1u);
}

TEST_F(Fwmark6Test, Ipv6EntriesWithoutAnIpv6ServiceAreUnused) {
    configure_marks(false);
    EXPECT_EQ(syn("10.10.1.2", 1000, 80), kRs2Mac);
    // The mark's IPv6 addresses are no VIPs without the IPv6 service: nothing goes out.
    EXPECT_EQ(syn6_to("2001:db8:1::2", 1000, 80), net::MacAddr{});
    EXPECT_EQ(service_conns(key4()), 1u);
}

TEST_F(PersistTest, PortZeroServiceTakesEveryPortOfItsVip) {
    addresses();
    lb::ServiceSpec s{6, kVip, 0, "rr"};
    s.fwd = lb::FwdMode::Dr;
    EXPECT_FALSE(director->service_add(s).ok());  // ipvsadm: port 0 needs persistence
    s.persistence_s = 300;
    ok(director->service_add(s));
    for (const char* rs : {"10.10.2.2", "10.10.2.3"})
        add_dr(lb::make_service_key(6, kVip, 0), ip(rs), 0);
    director->commit();
    start_worker();
    learn_neighbours();
    EXPECT_EQ(syn("10.10.1.2", 1000, 80), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.2", 1001, 443), kRs1Mac);
    EXPECT_EQ(syn("10.10.1.3", 1000, 22), kRs2Mac);
}

// SIP persistence (--pe sip): a UDP persistent service keys its templates by the Call-ID of a
// flow's first datagram, so a call's datagrams from another address (another proxy, a new
// source port after NAT) reach the same real server; a datagram without a Call-ID falls back
// to the client-address template.
class SipPersistTest : public PersistTest {
  protected:
    void configure_sip(uint32_t flags = lb::kSvcFlagPeSip) {
        addresses();
        lb::ServiceSpec s{17, kVip, 5060, "rr"};
        s.fwd = lb::FwdMode::Dr;
        s.persistence_s = 300;
        s.flags = flags;
        ok(director->service_add(s));
        for (const char* rs : {"10.10.2.2", "10.10.2.3"})
            add_dr(lb::make_service_key(17, kVip, 5060), ip(rs), 5060);
        director->commit();
        start_worker();
        learn_neighbours();
    }
    // The RS MAC a SIP datagram from client:cport with `call_id` (empty: none) went to.
    net::MacAddr sip(const char* client, uint16_t cport, const std::string& call_id) {
        std::string msg = "INVITE sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/UDP host\r\n";
        if (!call_id.empty()) msg += "Call-ID: " + call_id + "\r\n";
        msg += "CSeq: 1 INVITE\r\n\r\n";
        Bytes f = PacketBuilder()
                      .eth(kClientMac, wan_mac())
                      .ipv4(client, "10.10.1.100")
                      .udp(cport, 5060)
                      .payload(msg)
                      .build();
        auto out = roundtrip(kWan, f, kLan);
        net::MacAddr dst{};
        EXPECT_EQ(out.size(), 1u) << client << ":" << cport << " " << call_id;
        if (out.size() == 1) std::memcpy(dst.b, out[0].data(), 6);
        return dst;
    }
};

TEST_F(SipPersistTest, ACallStaysOnOneDestWhoeverSendsIt) {
    configure_sip();
    EXPECT_EQ(sip("10.10.1.2", 5060, "call-a@host"), kRs1Mac);
    // Another address and port, same call: rr would pick RS2, the call's template says RS1.
    EXPECT_EQ(sip("10.10.1.3", 40000, "call-a@host"), kRs1Mac);
    EXPECT_EQ(sip("10.10.1.4", 40001, "call-a@host"), kRs1Mac);
    // Another call from the first client is scheduled on its own (RS2) and sticks there.
    EXPECT_EQ(sip("10.10.1.2", 5062, "call-b@host"), kRs2Mac);
    EXPECT_EQ(sip("10.10.1.5", 5064, "call-b@host"), kRs2Mac);
    EXPECT_EQ(worker->conns().in_use(), 5u + 2u);  // 5 flows, 2 templates (one per call)
    // No Call-ID: the client-address template (a new one here, rr's next: RS1).
    EXPECT_EQ(sip("10.10.1.9", 6000, ""), kRs1Mac);
    EXPECT_EQ(sip("10.10.1.9", 6001, ""), kRs1Mac);
    EXPECT_EQ(worker->conns().in_use(), 7u + 3u);
}

TEST_F(SipPersistTest, WithoutTheEngineTheClientAddressDecides) {
    configure_sip(0);  // the control: plain persistence
    EXPECT_EQ(sip("10.10.1.2", 5060, "call-a@host"), kRs1Mac);
    EXPECT_EQ(sip("10.10.1.3", 40000, "call-a@host"), kRs2Mac);
}

}  // namespace
}  // namespace xvs::test
