// Packet tests: two workers in one process, each fed through its own queue of two 2-queue ring
// ports (queue q is worker q's, as RSS would deal them). Return traffic that lands on the
// worker not owning its conn is handed to the owner (lb/redirect.h): FULLNAT by local port,
// NAT through the owner table, a SYN-proxy cookie ACK on the other worker than its SYN, NatTun's
// tunnelled RS SYN-ACK and a router's frag-needed about its tunnel, a full hand-over ring counted, and no conn ever made twice. Conservation is checked on each worker
// after every poll, and the pool is whole at the end.
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <array>
#include <cstring>
#include <sstream>

#include "fixture/mq_ports.h"
#include "fixture/pipeline.h"
#include "lb/redirect.h"
#include "port/ethdev.h"
#include "stack/conservation.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr unsigned kWorkers = 2;
constexpr uint8_t kSynAck = net::kTcpSyn | net::kTcpAck;
const net::InetAddr kVip = ip("10.10.1.100");

static_assert(kMqQueues == kWorkers);

class TwoWorkerTest : public ::testing::Test {
protected:
    void SetUp() override {
        for (auto& p : mq_ports()) p.drain();
        avail_at_setup_ = rte_mempool_avail_count(DpdkEnvironment::pool());
        director = std::make_unique<lb::Director>(kWorkers);
        ASSERT_TRUE(director->port_add({"wan", mq_ports()[kWan].info.id, mq_ports()[kWan].info.mac, 1500}).ok());
        ASSERT_TRUE(director->port_add({"lan", mq_ports()[kLan].info.id, mq_ports()[kLan].info.mac, 1500}).ok());
    }

    void TearDown() override {
        for (auto& w : workers) {
            check_conservation("at teardown");
            w->release_held();
        }
        check_conservation("after release_held()");
        workers.clear();
        director.reset();  // frees whatever the hand-over rings still hold
        for (auto& p : mq_ports()) p.drain();
        EXPECT_EQ(rte_mempool_avail_count(DpdkEnvironment::pool()), avail_at_setup_)
            << "mbufs leaked";
    }

    // Addresses and routes of the packet-test topology, a TCP service VIP:80 (fwd, rr over
    // both RSs) and, for FULLNAT, the local address 10.10.2.100.
    void configure(lb::FwdMode fwd, uint32_t flags = 0) {
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        ok(director->address_add(ip("10.10.1.1"), 24, "wan"));
        ok(director->address_add(ip("10.10.2.1"), 24, "lan"));
        ok(director->service_add(lb::ServiceSpec{6, kVip, 80, "rr", fwd, flags}));
        const auto key = lb::make_service_key(6, kVip, 80);
        for (const char* rs : {"10.10.2.2", "10.10.2.3"}) {
            lb::DestSpec d{ip(rs), 8080, 1};
            d.fwd = fwd;
            ok(director->dest_add(key, d));
        }
        if (fwd == lb::FwdMode::FullNat || fwd == lb::FwdMode::NatTun)
            ok(director->laddr_add(key, ip("10.10.2.100"), "lan"));
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
            auto& n = workers.back()->neighbours();
            n.add_static(ip("10.10.1.2"), kClientMac, kWan);
            n.add_static(ip("10.10.2.2"), kRs1Mac, kLan);
            n.add_static(ip("10.10.2.3"), kRs2Mac, kLan);
        }
    }

    void send(uint8_t port, unsigned queue, const Bytes& frame) {
        rte_mbuf* m = rte_pktmbuf_alloc(DpdkEnvironment::pool());
        ASSERT_NE(m, nullptr);
        std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size())), frame.data(),
                    frame.size());
        ASSERT_EQ(rte_ring_enqueue(mq_ports()[port].rx[queue], m), 0);
    }
    void poll(unsigned w) {
        workers[w]->poll_once();
        check_conservation("after poll");
    }
    std::vector<Bytes> recv(uint8_t port, unsigned queue) {
        std::vector<Bytes> out;
        void* p;
        while (rte_ring_dequeue(mq_ports()[port].tx[queue], &p) == 0) {
            auto* m = static_cast<rte_mbuf*>(p);
            const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
            out.emplace_back(d, d + rte_pktmbuf_data_len(m));
            rte_pktmbuf_free(m);
        }
        return out;
    }
    // Everything transmitted anywhere, which must be nothing.
    size_t sent_anywhere() {
        size_t n = 0;
        for (uint8_t p = 0; p < 2; ++p)
            for (unsigned q = 0; q < kWorkers; ++q) n += recv(p, q).size();
        return n;
    }
    uint64_t counter(unsigned w, Counter c) const { return workers[w]->counters().get(c); }
    void fill_the_ring_to_the_owner(bool same_cpu);
    uint64_t created() const {
        uint64_t n = 0;
        for (const auto& w : workers) n += w->counters().get(Counter::conns_created);
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
        if (const lb::Redirect* r = director->redirect())
            for (unsigned a = 0; a < kWorkers; ++a)
                for (unsigned b = 0; b < kWorkers; ++b)
                    if (a != b) in_rings += rte_ring_count(r->ring(a, b));
        uint64_t held = 0;
        for (const auto& w : workers) held += w->held_mbufs();
        const unsigned in_use = avail_at_setup_ - rte_mempool_avail_count(DpdkEnvironment::pool());
        EXPECT_EQ(in_use, in_rings + held) << "mbufs unaccounted " << where;
    }

    Bytes client(uint16_t cport, uint32_t seq, uint32_t ack, uint8_t flags, Bytes opts = {}) {
        return PacketBuilder()
            .eth(kClientMac, mq_ports()[kWan].info.mac)
            .ipv4("10.10.1.2", "10.10.1.100")
            .tcp(cport, 80)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .tcp_options(std::move(opts))
            .build();
    }
    // The RS's SYN-ACK (seq `seq`, acking the client's ISN 1000 + 1) from RS1 or RS2 to
    // dst:dport: the local address for FULLNAT, the client for NAT.
    Bytes rs_synack(bool rs1, const char* dst, uint16_t dport, uint32_t seq, Bytes opts = {}) {
        return PacketBuilder()
            .eth(rs1 ? kRs1Mac : kRs2Mac, mq_ports()[kLan].info.mac)
            .ipv4(rs1 ? "10.10.2.2" : "10.10.2.3", dst)
            .tcp(8080, dport)
            .seq(seq)
            .ack(1001)
            .flags(kSynAck)
            .tcp_options(std::move(opts))
            .build();
    }
    const lb::Conn* conn_of(unsigned w, uint16_t cport) {
        const lb::Conn* found = nullptr;
        workers[w]->conns().for_each([&](const lb::Conn& c) {
            if (c.cport == net::hton16(cport) && c.proto == 6) found = &c;
        });
        return found;
    }
    static const net::Ipv4Hdr* ip4_of(const Bytes& f) {
        return reinterpret_cast<const net::Ipv4Hdr*>(f.data() + 14);
    }
    static const net::TcpHdr* tcp_of(const Bytes& f) {
        return reinterpret_cast<const net::TcpHdr*>(f.data() + 34);
    }

    std::unique_ptr<lb::Director> director;
    std::vector<std::unique_ptr<lb::Worker>> workers;
    unsigned avail_at_setup_ = 0;
};

TEST_F(TwoWorkerTest, FullnatReturnOnTheOtherWorkerIsRedirectedAndForwarded) {
    configure(lb::FwdMode::FullNat);
    for (unsigned w = 0; w < kWorkers; ++w) {
        const uint16_t cport = static_cast<uint16_t>(40000 + w);
        send(kWan, w, client(cport, 1000, 0, net::kTcpSyn));
        poll(w);
        auto syn = recv(kLan, w);
        ASSERT_EQ(syn.size(), 1u) << "worker " << w;
        const uint16_t lport = net::ntoh16(tcp_of(syn[0])->sport);
        EXPECT_EQ(lport % kWorkers, w) << "a local port of the creating worker's share";
        const bool rs1 = ip4_of(syn[0])->daddr == ip("10.10.2.2");
        const char* rs = rs1 ? "10.10.2.2" : "10.10.2.3";
        EXPECT_TRUE(FramesEqual(PacketBuilder()
                                    .eth(mq_ports()[kLan].info.mac, rs1 ? kRs1Mac : kRs2Mac)
                                    .ipv4("10.10.2.100", rs)
                                    .tcp(lport, 8080)
                                    .seq(1000)
                                    .flags(net::kTcpSyn)
                                    .build(),
                                syn[0]));
        // The RS's SYN-ACK arrives on the other worker's queue: handed over, nothing sent.
        const unsigned other = 1 - w;
        send(kLan, other,
             rs_synack(rs1, "10.10.2.100", lport, 5000));
        poll(other);
        EXPECT_EQ(sent_anywhere(), 0u);
        EXPECT_EQ(counter(other, Counter::redirect_out), 1u);
        EXPECT_EQ(counter(other, Counter::drop_lip_no_conn), 0u);
        // The owner forwards it to the client, from its own queue.
        poll(w);
        EXPECT_EQ(counter(w, Counter::redirect_in), 1u);
        auto out = recv(kWan, w);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(PacketBuilder()
                                    .eth(mq_ports()[kWan].info.mac, kClientMac)
                                    .ipv4("10.10.1.100", "10.10.1.2")
                                    .tcp(80, cport)
                                    .seq(5000)
                                    .ack(1001)
                                    .flags(kSynAck)
                                    .build(),
                                out[0]));
        EXPECT_EQ(sent_anywhere(), 0u);
        ASSERT_NE(conn_of(w, cport), nullptr);
        EXPECT_EQ(conn_of(w, cport)->state, lb::TcpState::SynRecv);
        EXPECT_EQ(conn_of(other, cport), nullptr);
    }
    EXPECT_EQ(counter(0, Counter::conns_created), 1u);
    EXPECT_EQ(counter(1, Counter::conns_created), 1u);
}

TEST_F(TwoWorkerTest, NatReturnFindsItsOwnerInTheOwnerTable) {
    configure(lb::FwdMode::Nat);
    const uint16_t cport = 40100;
    send(kWan, 1, client(cport, 1000, 0, net::kTcpSyn));
    poll(1);
    auto syn = recv(kLan, 1);
    ASSERT_EQ(syn.size(), 1u);
    const bool rs1 = ip4_of(syn[0])->daddr == ip("10.10.2.2");
    const char* rs = rs1 ? "10.10.2.2" : "10.10.2.3";
    const lb::ConnKey out_key =
        lb::conn_key(6, ip(rs), ip("10.10.1.2"), net::hton16(8080), net::hton16(cport));
    EXPECT_EQ(director->redirect()->owners().owner(out_key), 1);
    // RS -> client, on worker 0: not addressed to the director, so only the table knows.
    send(kLan, 0,
         rs_synack(rs1, "10.10.1.2", cport, 5000));
    poll(0);
    EXPECT_EQ(counter(0, Counter::redirect_out), 1u);
    EXPECT_EQ(sent_anywhere(), 0u);
    poll(1);
    auto out = recv(kWan, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(PacketBuilder()
                                .eth(mq_ports()[kWan].info.mac, kClientMac)
                                .ipv4("10.10.1.100", "10.10.1.2")
                                .ttl(63)
                                .tcp(80, cport)
                                .seq(5000)
                                .ack(1001)
                                .flags(kSynAck)
                                .build(),
                            out[0]));
    EXPECT_EQ(created(), 1u);
    // The conn's expiry takes its entry out of the table.
    for (auto& w : workers) w->advance_clock(600'000);
    poll(1);
    EXPECT_EQ(counter(1, Counter::conns_expired), 1u);
    EXPECT_EQ(director->redirect()->owners().owner(out_key), -1);
}

TEST_F(TwoWorkerTest, SynProxyCookieAckOnTheOtherWorkerMakesTheConnThereOnce) {
    configure(lb::FwdMode::FullNat, lb::kSvcFlagSynProxy);
    for (auto& w : workers) w->advance_clock(5000);
    const uint16_t cport = 40200;
    const Bytes mss = {2, 4, 0x05, 0xb4};
    send(kWan, 0, client(cport, 1000, 0, net::kTcpSyn, mss));
    poll(0);
    auto synack = recv(kWan, 0);
    ASSERT_EQ(synack.size(), 1u);
    EXPECT_EQ(tcp_of(synack[0])->flags, kSynAck);
    const uint32_t cookie = net::ntoh32(tcp_of(synack[0])->seq);
    EXPECT_EQ(created(), 0u) << "a cookie SYN-ACK keeps no state";
    // The ACK lands on worker 1: the cookie checks there, the conn is made there.
    send(kWan, 1, client(cport, 1001, cookie + 1, net::kTcpAck));
    poll(1);
    EXPECT_EQ(counter(1, Counter::conns_created), 1u);
    auto syn = recv(kLan, 1);
    ASSERT_EQ(syn.size(), 1u);
    const uint16_t lport = net::ntoh16(tcp_of(syn[0])->sport);
    EXPECT_EQ(lport % kWorkers, 1u);
    const bool rs1 = ip4_of(syn[0])->daddr == ip("10.10.2.2");
    // The RS's SYN-ACK on worker 0 goes to worker 1, which completes both sides.
    send(kLan, 0,
         rs_synack(rs1, "10.10.2.100", lport, 7000, mss));
    poll(0);
    EXPECT_EQ(counter(0, Counter::redirect_out), 1u);
    EXPECT_EQ(sent_anywhere(), 0u);
    poll(1);
    auto to_rs = recv(kLan, 1);
    ASSERT_EQ(to_rs.size(), 1u) << "the client's ACK replayed to the RS";
    EXPECT_EQ(tcp_of(to_rs[0])->flags, net::kTcpAck);
    EXPECT_EQ(net::ntoh32(tcp_of(to_rs[0])->ack), 7001u);
    ASSERT_NE(conn_of(1, cport), nullptr);
    EXPECT_EQ(conn_of(1, cport)->state, lb::TcpState::Established);
    EXPECT_EQ(counter(0, Counter::conns_created), 0u);
    EXPECT_EQ(counter(1, Counter::conns_created), 1u);
    recv(kWan, 1);  // the window update to the client
}

// NatTun with SYN proxy across workers: the cookie ACK on worker 1 opens the conn there and
// its RS SYN goes out in IPIP; the RS's SYN-ACK, in the tunnel to the local address, lands on
// worker 0 and reaches worker 1 through the owner table (the decapsulated reply tuple). Then a
// router's frag-needed about the tunnel packet, also on worker 0, is unwrapped there and
// handed to worker 1, which tells the client.
TEST_F(TwoWorkerTest, NatTunSynProxyAndRouterFragNeededReachTheOwner) {
    configure(lb::FwdMode::NatTun, lb::kSvcFlagSynProxy);
    for (auto& w : workers) w->advance_clock(5000);
    const uint16_t cport = 40300;
    send(kWan, 1, client(cport, 1000, 0, net::kTcpSyn, {2, 4, 0x05, 0xb4}));
    poll(1);
    auto synack = recv(kWan, 1);
    ASSERT_EQ(synack.size(), 1u);
    const uint32_t cookie = net::ntoh32(tcp_of(synack[0])->seq);
    send(kWan, 1, client(cport, 1001, cookie + 1, net::kTcpAck));
    poll(1);
    auto syn = recv(kLan, 1);
    ASSERT_EQ(syn.size(), 1u);
    ASSERT_EQ(ip4_of(syn[0])->protocol, 4) << "the RS SYN goes in IPIP";
    const Bytes inner_syn(syn[0].begin() + 34, syn[0].end());
    const bool rs1 = inner_syn[16] == 10 && inner_syn[19] == 2;
    const Bytes synack_in = ip_packet(rs_synack(rs1, "10.10.1.2", cport, 7000, {2, 4, 0x05, 0xb4}));
    send(kLan, 0,
         PacketBuilder()
             .eth(rs1 ? kRs1Mac : kRs2Mac, mq_ports()[kLan].info.mac)
             .ipv4(rs1 ? "10.10.2.2" : "10.10.2.3", "10.10.2.100")
             .ip_payload(4, synack_in)
             .build());
    poll(0);
    EXPECT_EQ(counter(0, Counter::redirect_out), 1u);
    EXPECT_EQ(sent_anywhere(), 0u);
    poll(1);
    auto replay = recv(kLan, 1);
    ASSERT_EQ(replay.size(), 1u) << "the client's ACK replayed to the RS, in IPIP";
    EXPECT_EQ(ip4_of(replay[0])->protocol, 4);
    EXPECT_EQ(recv(kWan, 1).size(), 1u);  // the window update
    ASSERT_NE(conn_of(1, cport), nullptr);
    EXPECT_EQ(conn_of(1, cport)->state, lb::TcpState::Established);
    // A router's frag-needed (MTU 1000) about the replayed ACK's tunnel packet, on worker 0.
    send(kLan, 0,
         PacketBuilder()
             .eth(kRs1Mac, mq_ports()[kLan].info.mac)
             .ipv4("10.10.2.254", "10.10.2.100")
             .icmp_error(3, 4, 1000, Bytes(replay[0].begin() + 14, replay[0].end()))
             .build());
    poll(0);
    EXPECT_EQ(counter(0, Counter::nattun_icmp_unwrapped), 1u);
    EXPECT_EQ(counter(0, Counter::redirect_out), 2u);
    EXPECT_EQ(sent_anywhere(), 0u);
    poll(1);
    auto err = recv(kWan, 1);
    ASSERT_EQ(err.size(), 1u);
    EXPECT_EQ(ip4_of(err[0])->saddr, ip("10.10.1.100"));
    EXPECT_EQ(err[0][34], 3);
    EXPECT_EQ(err[0][35], 4);
    EXPECT_EQ(uint16_t(err[0][40] << 8 | err[0][41]), 980u) << "1000 less 20 bytes of IPIP";
    EXPECT_EQ(counter(1, Counter::nattun_pmtu_lowered), 1u);
    EXPECT_EQ(created(), 1u);
}

// Return frames of one conn reach worker 1 while worker 0, its owner, does not poll: the
// ring between them fills. `same_cpu`: worker 0 is pinned to worker 1's CPU, so worker 1
// yields the CPU once for every flush that finds the ring full (redirect_yield); in this
// single thread nobody drains the ring meanwhile, so the drops are the same either way.
void TwoWorkerTest::fill_the_ring_to_the_owner(bool same_cpu) {
    configure(lb::FwdMode::FullNat);
    if (same_cpu) workers[1]->set_cpu_peers(1u << 0);
    const uint16_t cport = 40300;
    send(kWan, 0, client(cport, 1000, 0, net::kTcpSyn));
    poll(0);
    auto syn = recv(kLan, 0);
    ASSERT_EQ(syn.size(), 1u);
    const uint16_t lport = net::ntoh16(tcp_of(syn[0])->sport);
    const bool rs1 = ip4_of(syn[0])->daddr == ip("10.10.2.2");
    const Bytes from_rs = rs_synack(rs1, "10.10.2.100", lport, 5000);
    // 400 frames at a time (what the test port's ring takes) until 400 more than the ring holds.
    const unsigned capacity = rte_ring_get_capacity(director->redirect()->ring(1, 0));
    const unsigned frames = (capacity / 400 + 2) * 400;
    unsigned polls_dropping = 0;
    for (unsigned sent = 0; sent < frames; sent += 400) {
        for (unsigned i = 0; i < 400; ++i) send(kLan, 1, from_rs);
        while (rte_ring_count(mq_ports()[kLan].rx[1])) {
            const uint64_t dropped = counter(1, Counter::drop_redirect_full);
            poll(1);
            polls_dropping += counter(1, Counter::drop_redirect_full) > dropped;
        }
    }
    EXPECT_EQ(counter(1, Counter::redirect_out), capacity);
    EXPECT_EQ(counter(1, Counter::drop_redirect_full), frames - capacity);
    EXPECT_GT(polls_dropping, 0u);
    EXPECT_EQ(counter(1, Counter::redirect_yield), same_cpu ? polls_dropping : 0u);
    EXPECT_EQ(sent_anywhere(), 0u);
    unsigned forwarded = 0;
    while (rte_ring_count(director->redirect()->ring(1, 0))) {
        poll(0);
        forwarded += static_cast<unsigned>(recv(kWan, 0).size());
    }
    EXPECT_EQ(counter(0, Counter::redirect_in), capacity);
    EXPECT_EQ(forwarded, capacity);
    EXPECT_EQ(created(), 1u);
}

TEST_F(TwoWorkerTest, FullRingIsACountedDropAndTheRestArrive) {
    fill_the_ring_to_the_owner(false);
}

TEST_F(TwoWorkerTest, FullRingToAWorkerOnThisCpuYieldsBeforeDropping) {
    fill_the_ring_to_the_owner(true);
}

// Persistence: one client's conns meet one template, so they are made on the worker the
// client's address hashes to, whichever queue their SYNs arrive on.
TEST_F(TwoWorkerTest, PersistentServiceKeepsAClientOnOneWorker) {
    configure(lb::FwdMode::FullNat);
    lb::ServiceSpec spec{6, kVip, 80, "rr", lb::FwdMode::FullNat};
    spec.persistence_s = 300;
    ASSERT_TRUE(director->service_edit(spec).ok());
    director->commit();
    for (unsigned q = 0; q < kWorkers; ++q) {
        send(kWan, q, client(static_cast<uint16_t>(40400 + q), 1000, 0, net::kTcpSyn));
        poll(q);
        poll(1 - q);
        poll(q);
    }
    const uint64_t on0 = counter(0, Counter::conns_created);
    const uint64_t on1 = counter(1, Counter::conns_created);
    // Two conns (and one template) all on one worker; one of the SYNs was handed over.
    EXPECT_TRUE((on0 == 0) != (on1 == 0)) << on0 << " / " << on1;
    EXPECT_EQ(counter(0, Counter::redirect_out) + counter(1, Counter::redirect_out), 1u);
    const unsigned owner = on0 ? 0 : 1;
    std::vector<Bytes> syns = recv(kLan, owner);
    ASSERT_EQ(syns.size(), 2u);
    EXPECT_EQ(ip4_of(syns[0])->daddr, ip4_of(syns[1])->daddr) << "one RS for the client";
    EXPECT_EQ(sent_anywhere(), 0u);
}

}  // namespace
}  // namespace xvs::test
