// Packet tests: the exception path with two workers. The lan port and its exception port (a
// TAP in xvsd, here a ring port) have one queue per worker. A frame for the kernel goes to the
// TAP queue of the worker that received it, never handed to another worker (no conn owns it);
// what the kernel writes on TAP queue q leaves through worker q; ARP/ND go through the
// neighbour owner (worker 0), so what of them is the kernel's reaches it on worker 0's queue.
// Conservation is checked on each worker after every poll, and the pool is whole at the end.
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <array>
#include <cstring>
#include <string>

#include "fixture/mq_ports.h"
#include "fixture/pipeline.h"
#include "lb/redirect.h"
#include "port/ethdev.h"
#include "stack/conservation.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr unsigned kWorkers = 2;
static_assert(kMqQueues == kWorkers);

// The lan port's exception port, one ring pair per queue; opened once per binary.
struct ExcMqPort {
    std::array<rte_ring*, kWorkers> rx{}, tx{};  // rx: what the kernel writes; tx: for it
    uint16_t id = 0;
};
ExcMqPort& exc_port() {
    static ExcMqPort p = [] {
        ExcMqPort e;
        std::vector<rte_ring*> rx, tx;
        for (unsigned q = 0; q < kWorkers; ++q) {
            const std::string base = "excmq" + std::to_string(q);
            e.rx[q] =
                rte_ring_create((base + "_rx").c_str(), 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
            e.tx[q] =
                rte_ring_create((base + "_tx").c_str(), 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
            rx.push_back(e.rx[q]);
            tx.push_back(e.tx[q]);
        }
        port::PortParams params;
        params.queues = kWorkers;
        auto info = port::port_open_rings("excmq", rx, tx, params, DpdkEnvironment::pool());
        EXPECT_TRUE(info.ok()) << info.error();
        if (info) e.id = info->id;
        return e;
    }();
    return p;
}

std::vector<Bytes> drain(rte_ring* r) {
    std::vector<Bytes> out;
    void* p;
    while (rte_ring_dequeue(r, &p) == 0) {
        auto* m = static_cast<rte_mbuf*>(p);
        const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
        out.emplace_back(d, d + rte_pktmbuf_data_len(m));
        rte_pktmbuf_free(m);
    }
    return out;
}

class ExceptionWorkersTest : public ::testing::Test {
  protected:
    void SetUp() override {
        for (auto& p : mq_ports()) p.drain();
        for (unsigned q = 0; q < kWorkers; ++q) {
            drain(exc_port().rx[q]);
            drain(exc_port().tx[q]);
        }
        avail_at_setup_ = rte_mempool_avail_count(DpdkEnvironment::pool());
        director = std::make_unique<lb::Director>(kWorkers);
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        ok(director->port_add({"wan", mq_ports()[kWan].id(), mq_ports()[kWan].mac(), 1500}));
        ok(director->port_add({"lan", mq_ports()[kLan].id(), mq_ports()[kLan].mac(), 1500,
                               std::optional<uint16_t>(exc_port().id)}));
    }

    void TearDown() override {
        for (auto& w : workers) w->release_held();
        check_conservation("after release_held()");
        workers.clear();
        director.reset();
        for (auto& p : mq_ports()) p.drain();
        for (unsigned q = 0; q < kWorkers; ++q) {
            drain(exc_port().rx[q]);
            drain(exc_port().tx[q]);
        }
        EXPECT_EQ(rte_mempool_avail_count(DpdkEnvironment::pool()), avail_at_setup_)
            << "mbufs leaked";
    }

    // The packet-test addresses (IPv6 too on lan), a VIP:80 service of mode fwd over both RSs.
    void configure(lb::FwdMode fwd) {
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        ok(director->address_add(ip("10.10.1.1"), 24, "wan"));
        ok(director->address_add(ip("10.10.2.1"), 24, "lan"));
        ok(director->address_add(ip6("2001:db8:2::1"), 64, "lan"));
        ok(director->service_add(lb::ServiceSpec{6, ip("10.10.1.100"), 80, "rr", fwd, 0}));
        const auto key = lb::make_service_key(6, ip("10.10.1.100"), 80);
        for (const char* rs : {"10.10.2.2", "10.10.2.3"}) {
            lb::DestSpec d{ip(rs), 8080, 1};
            d.fwd = fwd;
            ok(director->dest_add(key, d));
        }
        if (fwd == lb::FwdMode::FullNat) ok(director->laddr_add(key, ip("10.10.2.100"), "lan"));
        director->commit();
        for (unsigned i = 0; i < kWorkers; ++i) {
            lb::WorkerConfig cfg;
            cfg.id = i;
            cfg.pool = DpdkEnvironment::pool();
            cfg.reasm_pool = DpdkEnvironment::reasm_pool();
            cfg.manual_clock = true;
            cfg.max_conns = 1024;
            auto w = lb::Worker::create(*director, cfg);
            ASSERT_TRUE(w.ok()) << w.error();
            workers.push_back(std::move(*w));
        }
        ASSERT_NE(director->redirect(), nullptr) << "two workers hand frames over";
    }

    void send(uint8_t port, unsigned queue, const Bytes& frame) {
        enqueue(mq_ports()[port].rx[queue], frame);
    }
    void from_kernel(unsigned queue, const Bytes& frame) { enqueue(exc_port().rx[queue], frame); }
    static void enqueue(rte_ring* r, const Bytes& frame) {
        rte_mbuf* m = rte_pktmbuf_alloc(DpdkEnvironment::pool());
        ASSERT_NE(m, nullptr);
        std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size())), frame.data(),
                    frame.size());
        ASSERT_EQ(rte_ring_enqueue(r, m), 0);
    }
    void poll(unsigned w) {
        workers[w]->poll_once();
        check_conservation("after poll");
    }
    uint64_t counter(unsigned w, Counter c) const { return workers[w]->counters().get(c); }
    // Frames sent on any port queue (lan and wan): none, for what is the kernel's alone.
    size_t sent_on_ports() {
        size_t n = 0;
        for (auto& p : mq_ports())
            for (unsigned q = 0; q < kWorkers; ++q) n += drain(p.tx[q]).size();
        return n;
    }

    void check_conservation(const char* where) {
        for (const auto& w : workers) {
            const auto b = stack::frame_balance(w->counters(), w->held_frames());
            EXPECT_TRUE(b.balanced())
                << "worker " << w->id() << " " << where << ": received " << b.received
                << " + generated " << b.generated << " != sent " << b.sent << " + dropped "
                << b.dropped << " + consumed " << b.consumed << " + held " << b.held;
        }
        unsigned in_rings = 0;
        for (auto& p : mq_ports())
            for (unsigned q = 0; q < kWorkers; ++q)
                in_rings += rte_ring_count(p.rx[q]) + rte_ring_count(p.tx[q]);
        for (unsigned q = 0; q < kWorkers; ++q)
            in_rings += rte_ring_count(exc_port().rx[q]) + rte_ring_count(exc_port().tx[q]);
        if (const lb::Redirect* r = director->redirect())
            for (unsigned a = 0; a < kWorkers; ++a)
                for (unsigned b = 0; b < kWorkers; ++b)
                    if (a != b) in_rings += rte_ring_count(r->ring(a, b));
        uint64_t held = 0;
        for (const auto& w : workers) held += w->held_mbufs() + w->neigh_handoff_in_flight();
        const unsigned in_use = avail_at_setup_ - rte_mempool_avail_count(DpdkEnvironment::pool());
        EXPECT_EQ(in_use, in_rings + held) << "mbufs unaccounted " << where;
    }

    std::unique_ptr<lb::Director> director;
    std::vector<std::unique_ptr<lb::Worker>> workers;
    unsigned avail_at_setup_ = 0;
};

// TCP from an RS to the kernel's 10.10.2.9 (a health check's SYN-ACK, an SSH session): no conn
// of xvs's owns it, so whichever worker RSS gave it passes it to the kernel on its own queue.
// NAT asks the shared owner table, FULLNAT has no local port in it: neither hands it over.
TEST_F(ExceptionWorkersTest, KernelTrafficGoesToTheReceivingWorkersQueue) {
    for (lb::FwdMode fwd : {lb::FwdMode::FullNat, lb::FwdMode::Nat}) {
        SCOPED_TRACE(fwd == lb::FwdMode::Nat ? "NAT" : "FULLNAT");
        TearDown();
        SetUp();
        configure(fwd);
        for (unsigned w = 0; w < kWorkers; ++w) {
            const Bytes synack = PacketBuilder()
                                     .eth(kRs1Mac, mq_ports()[kLan].mac())
                                     .ipv4("10.10.2.2", "10.10.2.9")
                                     .tcp(22, static_cast<uint16_t>(40000 + w))
                                     .flags(net::kTcpSyn | net::kTcpAck)
                                     .build();
            send(kLan, w, synack);
            poll(w);
            poll(1 - w);  // a frame handed over would be handled (and show) here
            auto out = drain(exc_port().tx[w]);
            ASSERT_EQ(out.size(), 1u) << "worker " << w;
            EXPECT_TRUE(FramesEqual(synack, out[0]));
            EXPECT_TRUE(drain(exc_port().tx[1 - w]).empty());
            EXPECT_EQ(counter(w, Counter::exc_to_kernel), 1u);
            EXPECT_EQ(counter(w, Counter::redirect_out), 0u);
        }
        EXPECT_EQ(sent_on_ports(), 0u);
    }
}

TEST_F(ExceptionWorkersTest, KernelFramesLeaveThroughTheWorkerOfTheirTapQueue) {
    configure(lb::FwdMode::FullNat);
    for (unsigned w = 0; w < kWorkers; ++w) {
        const Bytes syn = PacketBuilder()
                              .eth(mq_ports()[kLan].mac(), kRs1Mac)
                              .ipv4("10.10.2.9", "10.10.2.2")
                              .tcp(static_cast<uint16_t>(50000 + w), 80)
                              .flags(net::kTcpSyn)
                              .build();
        from_kernel(w, syn);
        poll(1 - w);  // the other worker does not read this queue
        EXPECT_TRUE(drain(mq_ports()[kLan].tx[1 - w]).empty());
        poll(w);
        auto out = drain(mq_ports()[kLan].tx[w]);
        ASSERT_EQ(out.size(), 1u) << "worker " << w;
        EXPECT_TRUE(FramesEqual(syn, out[0]));
        EXPECT_EQ(counter(w, Counter::exc_from_kernel), 1u);
    }
    EXPECT_EQ(counter(0, Counter::tx_packets), 1u);
    EXPECT_EQ(counter(1, Counter::tx_packets), 1u);
}

// ARP and ND that worker 1 receives go to the neighbour owner, worker 0; what of them is the
// kernel's reaches it there: a request for its address, and an unsolicited advertisement,
// which xvs learns from as well.
TEST_F(ExceptionWorkersTest, NeighbourFramesReachTheKernelThroughTheNeighbourOwner) {
    configure(lb::FwdMode::FullNat);
    const Bytes arp = arp_frame(kRs1Mac, net::kBroadcastMac, net::kArpOpRequest, kRs1Mac,
                                "10.10.2.2", net::MacAddr{}, "10.10.2.9");
    const net::InetAddr rs = ip6("2001:db8:2::2");
    workers[0]->neighbours().learn(rs, kRs1Mac, kLan, 0, true);
    const net::MacAddr moved{{0x02, 0, 0, 0, 0x2a, 0x2a}};
    Bytes body(4 + 16);
    body[0] = net::kNaOverride;
    std::memcpy(body.data() + 4, rs.b, 16);
    body.push_back(net::kNdOptTargetLla);
    body.push_back(1);
    body.insert(body.end(), moved.b, moved.b + 6);
    const Bytes na = PacketBuilder()
                         .eth(moved, net::MacAddr{{0x33, 0x33, 0, 0, 0, 0x01}})
                         .ipv6("2001:db8:2::2", "ff02::1")
                         .ttl(255)
                         .icmp6(net::kNdNeighAdvert, 0, body)
                         .build();
    send(kLan, 1, arp);
    send(kLan, 1, na);
    poll(1);
    EXPECT_EQ(counter(1, Counter::neigh_handoff_sent), 2u);
    poll(0);
    auto out = drain(exc_port().tx[0]);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(FramesEqual(arp, out[0]));
    EXPECT_TRUE(FramesEqual(na, out[1]));
    EXPECT_TRUE(drain(exc_port().tx[1]).empty());
    EXPECT_EQ(counter(0, Counter::exc_to_kernel), 2u);
    const stack::NeighEntry* e = workers[0]->neighbours().find(rs);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->mac, moved);
    EXPECT_EQ(sent_on_ports(), 0u);
}

// IPv4 multicast (an OSPF hello) stays on the worker that received it.
TEST_F(ExceptionWorkersTest, Ipv4MulticastGoesToTheReceivingWorkersQueue) {
    configure(lb::FwdMode::FullNat);
    const Bytes ospf = PacketBuilder()
                           .eth(kRs1Mac, net::MacAddr{{0x01, 0x00, 0x5e, 0, 0, 0x05}})
                           .ipv4("10.10.2.2", "224.0.0.5")
                           .ttl(1)
                           .ip_payload(89, Bytes(44, 0x11))
                           .build();
    send(kLan, 1, ospf);
    poll(1);
    auto out = drain(exc_port().tx[1]);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(ospf, out[0]));
    EXPECT_EQ(counter(1, Counter::exc_to_kernel), 1u);
}

}  // namespace
}  // namespace xvs::test
