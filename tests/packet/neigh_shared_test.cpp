// Packet tests: one neighbour table for two workers in one process (stack/neigh_shared.h).
// Worker 0 owns the table; worker 1 sends through what it publishes and hands the owner what it
// cannot send (unresolved next hop) and every ARP / ND message it receives. A neighbour is
// resolved once: one ARP request (or neighbour solicitation), by the owner, whichever worker
// needed it; the answer, wherever it lands, teaches the one table; then both workers send with
// the learned MAC, and conns' next-hop caches on worker 1 follow the owner's changes.
//
// Ports: two ring ports with two queues each (queue i is worker i's), opened here. After every
// poll each worker's frames balance (stack/conservation.h: a handoff is consumed on worker 1 and
// received on worker 0) and every mbuf in use is in a ring, held by a worker or in the handoff.
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <cstring>
#include <sstream>

#include "fixture/mq_ports.h"
#include "fixture/pipeline.h"
#include "lb/command.h"
#include "stack/conservation.h"
#include "stack/neigh_shared.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr unsigned kQueues = kMqQueues;

const char* const kClient6 = "2001:db8:1::2";
const char* const kVip6 = "2001:db8:1::100";
const char* const kRs6 = "2001:db8:2::2";
const char* const kLan6 = "2001:db8:2::1";

Bytes advert(net::MacAddr from, net::MacAddr to_mac, const char* target, const char* to) {
    const net::InetAddr t = ip6(target);
    Bytes body(4 + 16);
    body[0] = net::kNaSolicited | net::kNaOverride;
    std::memcpy(body.data() + 4, t.b, 16);
    body.push_back(net::kNdOptTargetLla);
    body.push_back(1);
    body.insert(body.end(), from.b, from.b + 6);
    return PacketBuilder()
        .eth(from, to_mac)
        .ipv6(target, to)
        .ttl(255)
        .icmp6(net::kNdNeighAdvert, 0, body)
        .build();
}

net::MacAddr dst_mac(const Bytes& f) {
    net::MacAddr m;
    std::memcpy(m.b, f.data(), 6);
    return m;
}

class SharedNeighTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ports_ = mq_ports().data();
        for (auto& p : mq_ports()) p.drain();
        pool_avail_ = rte_mempool_avail_count(DpdkEnvironment::pool());
        ASSERT_EQ(pool_avail_, DpdkEnvironment::pool()->size) << "an earlier test leaked";
        director = std::make_unique<lb::Director>(2);
        ok(director->port_add({"wan", ports_[kWan].info.id, ports_[kWan].info.mac, 1500}));
        ok(director->port_add({"lan", ports_[kLan].info.id, ports_[kLan].info.mac, 1500}));
        ok(director->address_add(ip("10.10.1.1"), 24, "wan"));
        ok(director->address_add(ip("10.10.2.1"), 24, "lan"));
        ok(director->address_add(ip6("2001:db8:1::1"), 64, "wan"));
        ok(director->address_add(ip6(kLan6), 64, "lan"));
        service(ip("10.10.1.100"), ip("10.10.2.2"), ip("10.10.2.100"));
        service(ip6(kVip6), ip6(kRs6), ip6("2001:db8:2::100"));
        director->commit();
    }
    void service(net::InetAddr vip, net::InetAddr rs, net::InetAddr lip) {
        ok(director->service_add(lb::ServiceSpec{6, vip, 80, "rr"}));
        const auto key = lb::make_service_key(6, vip, 80);
        ok(director->dest_add(key, lb::DestSpec{rs, 8080, 1}));
        ok(director->laddr_add(key, lip, "lan"));
    }
    // Both workers, worker 1's handoff ring of ring_size frames; the clients are known.
    void start(uint32_t ring_size = stack::kNeighHandoffRing) {
        for (unsigned id = 0; id < 2; ++id) {
            lb::WorkerConfig cfg;
            cfg.id = id;
            cfg.pool = DpdkEnvironment::pool();
            cfg.reasm_pool = DpdkEnvironment::reasm_pool();
            cfg.manual_clock = true;
            cfg.max_conns = 1024;
            cfg.neigh_handoff_ring = ring_size;
            auto w = lb::Worker::create(*director, cfg);
            ASSERT_TRUE(w.ok()) << w.error();
            workers[id] = std::move(*w);
        }
        table().add_static(ip("10.10.1.2"), kClientMac, kWan);
        table().add_static(ip6(kClient6), kClientMac, kWan);
    }
    void TearDown() override {
        if (workers[0]) {
            check("at teardown");
            for (auto& w : workers) w->release_held();
            check("after release_held()");
        }
        workers[1].reset();  // frees its handoff ring (and what is left in it)
        workers[0].reset();
        director.reset();
        for (auto& p : mq_ports()) p.drain();
        EXPECT_EQ(rte_mempool_avail_count(DpdkEnvironment::pool()), pool_avail_)
            << "mbuf pool not whole at teardown";
    }
    static void ok(const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); }

    stack::Neighbours& table() { return workers[0]->neighbours(); }
    net::MacAddr mac_of(uint8_t port) const { return ports_[port].info.mac; }
    uint64_t counter(unsigned w, Counter c) const { return workers[w]->counters().get(c); }

    // A frame arriving on `port` at worker q's queue.
    void send(unsigned q, uint8_t port, const Bytes& frame) {
        rte_mbuf* m = rte_pktmbuf_alloc(DpdkEnvironment::pool());
        ASSERT_NE(m, nullptr);
        char* d = rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size()));
        ASSERT_NE(d, nullptr);
        std::memcpy(d, frame.data(), frame.size());
        ASSERT_EQ(rte_ring_enqueue(ports_[port].rx[q], m), 0);
    }
    void poll(unsigned q) {
        workers[q]->poll_once();
        check("after poll");
    }
    // What worker q transmitted on port.
    std::vector<Bytes> recv(uint8_t port, unsigned q) {
        std::vector<Bytes> out;
        void* p;
        while (rte_ring_dequeue(ports_[port].tx[q], &p) == 0) {
            auto* m = static_cast<rte_mbuf*>(p);
            const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
            out.emplace_back(d, d + rte_pktmbuf_data_len(m));
            rte_pktmbuf_free(m);
        }
        return out;
    }
    void expect_quiet(const char* where) {
        for (uint8_t p = 0; p < 2; ++p)
            for (unsigned q = 0; q < kQueues; ++q)
                EXPECT_TRUE(recv(p, q).empty()) << where << ": port " << int(p) << " queue " << q;
    }

    // Conservation on each worker, and every mbuf in use accounted for.
    void check(const char* where) {
        for (unsigned w = 0; w < 2; ++w) {
            const stack::FrameBalance b =
                stack::frame_balance(workers[w]->counters(), workers[w]->held_frames());
            if (!b.balanced()) {
                std::ostringstream os;
                for (size_t i = 0; i < stack::kCounterCount; ++i)
                    if (workers[w]->counters().v[i])
                        os << " " << stack::kCounterInfo[i].name << "=" << workers[w]->counters().v[i];
                ADD_FAILURE() << "worker " << w << " frames do not balance " << where
                              << ": received " << b.received << " generated " << b.generated
                              << " sent " << b.sent << " dropped " << b.dropped << " consumed "
                              << b.consumed << " held " << b.held << "\n " << os.str();
            }
        }
        unsigned in_rings = 0;
        for (int p = 0; p < 2; ++p)
            for (unsigned q = 0; q < kQueues; ++q)
                in_rings += rte_ring_count(ports_[p].rx[q]) + rte_ring_count(ports_[p].tx[q]);
        const unsigned in_use = pool_avail_ - rte_mempool_avail_count(DpdkEnvironment::pool());
        const uint64_t accounted = in_rings + workers[0]->held_mbufs() + workers[1]->held_mbufs() +
                                   workers[1]->neigh_handoff_in_flight();
        EXPECT_EQ(in_use, accounted) << "mbufs unaccounted " << where;
    }

    // Client to VIP:80, over IPv4 (10.10.1.2 -> 10.10.1.100) or IPv6 (kClient6 -> kVip6).
    Bytes client_tcp(uint16_t cport, uint8_t flags, bool v6 = false) const {
        PacketBuilder b;
        b.eth(kClientMac, mac_of(kWan));
        if (v6)
            b.ipv6(kClient6, kVip6);
        else
            b.ipv4("10.10.1.2", "10.10.1.100");
        b.tcp(cport, 80).seq(flags == net::kTcpSyn ? 7 : 8).flags(flags);
        if (flags & net::kTcpAck) b.ack(1);
        return b.build();
    }
    Bytes syn(uint16_t cport) const { return client_tcp(cport, net::kTcpSyn); }
    Bytes ack(uint16_t cport) const { return client_tcp(cport, net::kTcpAck); }
    Bytes syn6(uint16_t cport) const { return client_tcp(cport, net::kTcpSyn, true); }
    Bytes arp_request_from_us() const {
        return arp_frame(mac_of(kLan), net::kBroadcastMac, net::kArpOpRequest, mac_of(kLan),
                         "10.10.2.1", net::MacAddr{}, "10.10.2.2");
    }
    Bytes arp_reply(const net::MacAddr& rs_mac) const {
        return arp_frame(rs_mac, mac_of(kLan), net::kArpOpReply, rs_mac, "10.10.2.2",
                         mac_of(kLan), "10.10.2.1");
    }
    // The RS asks for our local address: the owner learns its MAC (and answers).
    Bytes arp_request_from_rs(const net::MacAddr& rs_mac) const {
        return arp_frame(rs_mac, net::kBroadcastMac, net::kArpOpRequest, rs_mac, "10.10.2.2",
                         net::MacAddr{}, "10.10.2.100");
    }
    uint64_t arp_requests() const {
        return counter(0, Counter::arp_requests_sent) + counter(1, Counter::arp_requests_sent);
    }

    std::unique_ptr<lb::Director> director;
    std::unique_ptr<lb::Worker> workers[2];

  private:
    MqPort* ports_ = nullptr;
    unsigned pool_avail_ = 0;
};

TEST_F(SharedNeighTest, NeighbourIsResolvedOnceByTheOwnerForBothWorkers) {
    start();
    // Worker 1's conn needs the RS, unknown: the SYN goes to the owner, not to an ARP of its own.
    send(1, kWan, syn(40000));
    poll(1);
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 1u);
    EXPECT_EQ(counter(1, Counter::conns_created), 1u);
    expect_quiet("worker 1 sent nothing itself");
    poll(0);
    EXPECT_EQ(counter(0, Counter::neigh_handoff_received), 1u);
    auto out = recv(kLan, 0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(arp_request_from_us(), out[0]));
    EXPECT_EQ(counter(0, Counter::neigh_queued), 1u);

    // A second conn of worker 1 to the same RS, while the owner waits: queued, no new request.
    send(1, kWan, syn(40001));
    poll(1);
    poll(0);
    EXPECT_EQ(counter(0, Counter::neigh_queued), 2u);
    expect_quiet("nothing sent while resolving");
    EXPECT_EQ(arp_requests(), 1u);

    // The reply lands on worker 1's queue: handed to the owner, which learns and sends both.
    send(1, kLan, arp_reply(kRs1Mac));
    poll(1);
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 3u);
    EXPECT_EQ(counter(1, Counter::arp_replies_received), 0u);
    poll(0);
    EXPECT_EQ(counter(0, Counter::arp_replies_received), 1u);
    out = recv(kLan, 0);
    ASSERT_EQ(out.size(), 2u);
    for (const Bytes& f : out) {
        EXPECT_EQ(dst_mac(f), kRs1Mac);
        const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(f.data() + 14);
        EXPECT_EQ(ip4->daddr, ip("10.10.2.2"));
        EXPECT_EQ(ip4->saddr, ip("10.10.2.100"));
    }
    const stack::NeighEntry* e = table().find(ip("10.10.2.2"));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->state, stack::NeighState::Reachable);
    EXPECT_EQ(e->mac, kRs1Mac);

    // Now both workers send with the learned MAC themselves, with no further ARP.
    send(1, kWan, syn(40002));
    poll(1);
    out = recv(kLan, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kRs1Mac);
    const uint16_t lport = net::ntoh16(reinterpret_cast<const net::TcpHdr*>(out[0].data() + 34)->sport);
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 3u);
    send(0, kWan, syn(40003));
    poll(0);
    out = recv(kLan, 0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kRs1Mac);
    EXPECT_EQ(arp_requests(), 1u);

    // Worker 1's conn: its next packet uses the next hop cached on the conn, and the RS's
    // answer goes back to the client through the (static) client entry of the one table.
    send(1, kWan, ack(40002));
    poll(1);
    out = recv(kLan, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kRs1Mac);
    EXPECT_EQ(counter(1, Counter::nh_cache_hits), 1u);
    send(1, kLan,
         PacketBuilder()
             .eth(kRs1Mac, mac_of(kLan))
             .ipv4("10.10.2.2", "10.10.2.100")
             .tcp(8080, lport)
             .seq(5000)
             .ack(8)
             .flags(net::kTcpSyn | net::kTcpAck)
             .build());
    poll(1);
    out = recv(kWan, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kClientMac);
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 3u);
    EXPECT_EQ(arp_requests(), 1u);
    expect_quiet("nothing else");
}

TEST_F(SharedNeighTest, OwnersChangesReachWorkerOnesCachedNextHops) {
    start();
    // The RS asks for our LIP on worker 1's queue: the owner learns it and answers.
    send(1, kLan, arp_request_from_rs(kRs1Mac));
    poll(1);
    poll(0);
    auto out = recv(kLan, 0);
    ASSERT_EQ(out.size(), 1u);  // the owner's ARP reply
    EXPECT_EQ(dst_mac(out[0]), kRs1Mac);
    EXPECT_EQ(counter(0, Counter::arp_replies_sent), 1u);

    send(1, kWan, syn(40000));
    poll(1);
    ASSERT_EQ(recv(kLan, 1).size(), 1u);
    send(1, kWan, ack(40000));
    poll(1);
    ASSERT_EQ(recv(kLan, 1).size(), 1u);
    ASSERT_EQ(counter(1, Counter::nh_cache_hits), 1u);

    // A new MAC for the RS, learned by the owner: worker 1's conn uses it at once.
    const net::MacAddr kRs1NewMac{{0x02, 0, 0, 0, 0x2a, 0x99}};
    send(0, kLan, arp_request_from_rs(kRs1NewMac));
    poll(0);
    ASSERT_EQ(recv(kLan, 0).size(), 1u);
    send(1, kWan, ack(40000));
    poll(1);
    out = recv(kLan, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kRs1NewMac);
    EXPECT_EQ(counter(1, Counter::nh_cache_hits), 1u) << "the stale cache must not be used";
    send(1, kWan, ack(40000));
    poll(1);
    out = recv(kLan, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kRs1NewMac);
    EXPECT_EQ(counter(1, Counter::nh_cache_hits), 2u) << "refilled with the new entry";

    // A route change (a new snapshot) sends worker 1's conn to a gateway it must resolve:
    // through the owner, which asks once.
    ok(director->route_add(*net::parse_ipv4_prefix("10.10.2.2/32"), ip("10.10.2.9"), "lan"));
    director->commit();
    send(1, kWan, ack(40000));
    poll(1);
    EXPECT_TRUE(recv(kLan, 1).empty());
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 2u);  // the first ARP, and this packet
    poll(0);
    out = recv(kLan, 0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(arp_frame(mac_of(kLan), net::kBroadcastMac, net::kArpOpRequest,
                                      mac_of(kLan), "10.10.2.1", net::MacAddr{}, "10.10.2.9"),
                            out[0]));
    const net::MacAddr kGatewayMac{{0x02, 0, 0, 0, 0x2a, 0x09}};
    send(1, kLan, arp_frame(kGatewayMac, mac_of(kLan), net::kArpOpReply, kGatewayMac, "10.10.2.9",
                            mac_of(kLan), "10.10.2.1"));
    poll(1);
    poll(0);
    out = recv(kLan, 0);
    ASSERT_EQ(out.size(), 1u);  // the waiting ACK, from the owner
    EXPECT_EQ(dst_mac(out[0]), kGatewayMac);
    send(1, kWan, ack(40000));
    poll(1);
    out = recv(kLan, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kGatewayMac);
    EXPECT_EQ(arp_requests(), 1u);
}

TEST_F(SharedNeighTest, FullHandoffRingIsACountedDrop) {
    start(4);  // three frames fit
    for (uint16_t p = 0; p < 5; ++p) send(1, kWan, syn(static_cast<uint16_t>(41000 + p)));
    poll(1);
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 3u);
    EXPECT_EQ(counter(1, Counter::drop_neigh_handoff_full), 2u);
    EXPECT_EQ(workers[1]->neigh_handoff_in_flight(), 3u);
    poll(0);
    EXPECT_EQ(counter(0, Counter::neigh_handoff_received), 3u);
    EXPECT_EQ(workers[1]->neigh_handoff_in_flight(), 0u);
    EXPECT_EQ(counter(0, Counter::neigh_queued), 3u);
    EXPECT_EQ(recv(kLan, 0).size(), 1u);  // one ARP request
    expect_quiet("nothing else");
}

TEST_F(SharedNeighTest, Ipv6NeighbourIsSolicitedOnceByTheOwner) {
    start();
    send(1, kWan, syn6(40000));
    poll(1);
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 1u);
    expect_quiet("worker 1 solicits nothing itself");
    poll(0);
    auto out = recv(kLan, 0);
    ASSERT_EQ(out.size(), 1u);
    const net::MacAddr solicited{{0x33, 0x33, 0xff, 0x00, 0x00, 0x02}};
    EXPECT_EQ(dst_mac(out[0]), solicited);
    ASSERT_GT(out[0].size(), 54u);
    EXPECT_EQ(out[0][54], net::kNdNeighSolicit);
    EXPECT_EQ(counter(0, Counter::nd_solicits_sent), 1u);

    // The advertisement lands on worker 1: handed over, learned, the SYN released.
    send(1, kLan, advert(kRs1Mac, mac_of(kLan), kRs6, kLan6));
    poll(1);
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 2u);
    poll(0);
    EXPECT_EQ(counter(0, Counter::nd_adverts_received), 1u);
    out = recv(kLan, 0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kRs1Mac);
    const stack::NeighEntry* e = table().find(ip6(kRs6));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->state, stack::NeighState::Reachable);

    send(1, kWan, syn6(40001));
    poll(1);
    out = recv(kLan, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kRs1Mac);
    send(0, kWan, syn6(40002));
    poll(0);
    out = recv(kLan, 0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kRs1Mac);
    EXPECT_EQ(counter(0, Counter::nd_solicits_sent) + counter(1, Counter::nd_solicits_sent), 1u);
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 2u);
}

TEST_F(SharedNeighTest, StaleEntryWorkerOneUsesIsProbedByTheOwner) {
    start();
    send(1, kLan, arp_request_from_rs(kRs1Mac));
    poll(1);
    poll(0);
    ASSERT_EQ(recv(kLan, 0).size(), 1u);
    for (auto& w : workers) w->advance_clock(31'000);
    poll(0);  // past reachable_ms: stale
    ASSERT_EQ(table().find(ip("10.10.2.2"))->state, stack::NeighState::Stale);
    EXPECT_TRUE(recv(kLan, 0).empty()) << "nobody used it: no probe";
    // Worker 1 still sends through the stale MAC, without the owner...
    send(1, kWan, syn(40000));
    poll(1);
    auto out = recv(kLan, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(dst_mac(out[0]), kRs1Mac);
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 1u);  // only the RS's request
    // ... and the owner, seeing it used, probes it once.
    for (auto& w : workers) w->advance_clock(200);
    poll(0);
    out = recv(kLan, 0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(arp_request_from_us(), out[0]));
    for (auto& w : workers) w->advance_clock(200);
    poll(0);
    EXPECT_TRUE(recv(kLan, 0).empty()) << "one probe per retransmission interval";
}

TEST_F(SharedNeighTest, TheOneTableIsListedByItsOwnerOnly) {
    start();
    size_t listed[2] = {99, 99};
    for (unsigned w = 0; w < 2; ++w) {
        auto r = workers[w]->command(lb::Command::dump_neighbours, 2000,
                                     [&](const lb::Command& cmd) { listed[w] = cmd.neighbours.size(); });
        ASSERT_TRUE(r.ok()) << r.error();
    }
    EXPECT_EQ(listed[0], 2u);  // the two static clients
    EXPECT_EQ(listed[1], 0u);
}

}  // namespace
}  // namespace xvs::test
