// Packet tests: exhaustion. Each bounded resource is driven to empty: the frames it refuses are
// counted under that resource's own reason, nothing crashes, memory stays what was allocated at
// start, and service resumes by itself once the pressure stops (conns expire on the manual
// clock, TX drains, an ARP reply arrives). The fixture checks conservation after every poll.
//
// Not covered: the redirect ring between workers, because xvs runs one worker per director so
// far (DESIGN.md "several workers" is not built) and there is no ring to fill.
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

// 198.18.0.0/15 (RFC 2544 benchmarking): spoofed flood sources, none of them martian.
uint32_t flood_source(uint32_t i) {
    return net::hton32((198u << 24 | 18u << 16) + i);
}

class ExhaustionTest : public PipelineTest {
  protected:
    // One TCP service VIP:80 -> RS1 only (deterministic next hop), one LIP.
    void configure_one_rs() {
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        ok(director->address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
        ok(director->address_add(*net::parse_ipv4("10.10.2.1"), 24, "lan"));
        const auto vip = *net::parse_ipv4("10.10.1.100");
        ok(director->service_add(lb::ServiceSpec{6, vip, 80, "rr"}));
        auto key = lb::make_service_key(6, vip, 80);
        ok(director->dest_add(key, lb::DestSpec{*net::parse_ipv4("10.10.2.2"), 8080, 1}));
        ok(director->laddr_add(key, *net::parse_ipv4("10.10.2.100"), "lan"));
        director->commit();
    }
    Bytes syn_from(uint32_t src_be, uint16_t sport) const {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4(src_be, ip("10.10.1.100"))
            .tcp(sport, 80)
            .seq(1000)
            .flags(net::kTcpSyn)
            .build();
    }
    Bytes client_syn(uint16_t sport) const { return syn_from(ip("10.10.1.2"), sport); }
    // Polls until both RX rings are empty (one poll reads at most rx_burst frames per port).
    void pump() {
        while (rte_ring_count(DpdkEnvironment::rx_ring(kWan)) ||
               rte_ring_count(DpdkEnvironment::rx_ring(kLan)))
            poll();
    }
    // A spoofed SYN flood of n frames (sources flood_source(first..first+n)), in batches the
    // rings hold; with drain, what the worker sends is read and discarded after each batch.
    void flood(uint32_t first, uint32_t n, bool drain = true) {
        for (uint32_t done = 0; done < n;) {
            const uint32_t batch = std::min<uint32_t>(256, n - done);
            for (uint32_t i = 0; i < batch; ++i)
                send(kWan, syn_from(flood_source(first + done + i), 1024));
            pump();
            if (drain) {
                recv(kLan);
                recv(kWan);
            }
            done += batch;
        }
    }
    // Advances time past every handshake timeout and lets the timer wheel expire (it expires at
    // most 4096 conns per poll).
    void expire_all() {
        worker->advance_clock(200'000);
        for (int i = 0; i < 40 && worker->conns().in_use(); ++i) poll();
    }
    // The first frame of a real client's connection reaches the RS.
    void expect_new_conn_served(uint16_t sport) {
        const uint64_t created = counter(Counter::conns_created);
        auto out = roundtrip(kWan, client_syn(sport), kLan);
        ASSERT_EQ(out.size(), 1u);
        const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
        EXPECT_EQ(ip4->daddr, ip("10.10.2.2"));
        EXPECT_EQ(ip4->saddr, ip("10.10.2.100"));
        EXPECT_EQ(counter(Counter::conns_created), created + 1);
    }
};

TEST_F(ExhaustionTest, ConnTableFullFromSynFloodThenConnsExpireAndServiceResumes) {
    configure_one_rs();
    lb::WorkerConfig cfg;
    cfg.max_conns = 1024;
    start_worker(cfg);
    learn_neighbours();
    const size_t table_bytes = worker->conns().memory_bytes();

    flood(0, 1024 + 300);  // no syn_proxy: each spoofed SYN takes a conn until the table is full
    EXPECT_EQ(worker->conns().in_use(), 1024u);
    EXPECT_EQ(counter(Counter::conns_created), 1024u);
    EXPECT_EQ(counter(Counter::drop_conn_pool_full), 300u);
    // A real client during the flood is refused under the same reason.
    EXPECT_TRUE(roundtrip(kWan, client_syn(40000), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_conn_pool_full), 301u);
    EXPECT_EQ(counter(Counter::drop_conn_table_full), 0u);  // the hash never fills first

    expire_all();  // the flood stops: SYN_RECV conns time out
    EXPECT_EQ(worker->conns().in_use(), 0u);
    EXPECT_EQ(counter(Counter::conns_expired), 1024u);
    expect_new_conn_served(40000);
    // The table can be filled again to the same size: nothing leaked.
    flood(5000, 1023);
    EXPECT_EQ(worker->conns().in_use(), 1024u);
    EXPECT_EQ(worker->conns().memory_bytes(), table_bytes);
}

TEST_F(ExhaustionTest, MbufPoolEmptyWhileTxIsStuckThenTrafficResumes) {
    configure_one_rs();
    lb::WorkerConfig cfg;
    cfg.max_conns = 4096;
    start_worker(cfg);
    learn_neighbours();
    rte_ring* lan_tx = DpdkEnvironment::tx_ring(kLan);
    rte_mempool* pool = DpdkEnvironment::pool();

    // TX stuck: nobody drains the LAN TX ring. An RX burst fills it, the rest is refused by the
    // port and counted.
    const uint32_t burst = rte_ring_get_capacity(lan_tx) + 200;
    flood(0, burst, /*drain=*/false);
    EXPECT_EQ(rte_ring_count(lan_tx), rte_ring_get_capacity(lan_tx));
    EXPECT_EQ(counter(Counter::drop_tx_full), 200u);

    // Pool empty: the stuck ring holds its mbufs and the rest of the pool is taken (as NIC RX
    // rings would), leaving one for the next client frame. The frame needs an ARP request for
    // its next hop, which finds no mbuf: counted, the frame waits in the neighbour queue.
    worker->neighbours().remove(ip("10.10.2.2"));
    std::vector<rte_mbuf*> taken;
    while (rte_mempool_avail_count(pool) > 1) {
        taken.push_back(rte_pktmbuf_alloc(pool));
        ASSERT_NE(taken.back(), nullptr);
    }
    test_owned_mbufs = static_cast<unsigned>(taken.size());
    send(kWan, client_syn(40000));
    poll();
    EXPECT_EQ(counter(Counter::drop_mbuf_alloc), 1u);
    EXPECT_EQ(counter(Counter::neigh_queued), 1u);
    EXPECT_EQ(rte_mempool_avail_count(pool), 0u);

    // Pressure stops: TX drains, the mbufs come back. The next probe goes out, the reply
    // releases the waiting SYN, and new connections flow.
    EXPECT_EQ(recv(kLan).size(), rte_ring_get_capacity(lan_tx));
    for (rte_mbuf* m : taken) rte_pktmbuf_free(m);
    test_owned_mbufs = 0;
    worker->advance_clock(1000);
    poll();
    auto out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* eth = reinterpret_cast<const net::EtherHdr*>(out[0].data());
    EXPECT_EQ(eth->ether_type, net::hton16(net::kEtherTypeArp));
    send(kLan, arp_frame(kRs1Mac, lan_mac(), net::kArpOpReply, kRs1Mac, "10.10.2.2", lan_mac(),
                         "10.10.2.1"));
    poll();
    out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);  // the SYN that waited
    EXPECT_EQ(reinterpret_cast<const net::EtherHdr*>(out[0].data())->dst, kRs1Mac);
    EXPECT_EQ(counter(Counter::arp_replies_received), 1u);
    expect_new_conn_served(40001);
    EXPECT_EQ(counter(Counter::drop_tx_full), 200u);
    EXPECT_EQ(counter(Counter::drop_mbuf_alloc), 1u);
}

TEST_F(ExhaustionTest, LocalPortsExhaustedThenFreedOnExpiry) {
    configure_one_rs();
    lb::WorkerConfig cfg;
    cfg.max_conns = 70'000;  // more conns than one LIP has ports
    start_worker(cfg);
    learn_neighbours();
    constexpr uint32_t kPorts = 65535 - 1025 + 1;  // one LIP, one worker: 1025..65535

    flood(0, kPorts + 50);
    EXPECT_EQ(counter(Counter::conns_created), kPorts);
    EXPECT_EQ(counter(Counter::drop_laddr_exhausted), 50u);
    EXPECT_EQ(counter(Counter::drop_conn_pool_full), 0u);
    EXPECT_TRUE(roundtrip(kWan, client_syn(40000), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_laddr_exhausted), 51u);

    expire_all();
    EXPECT_EQ(worker->conns().in_use(), 0u);
    expect_new_conn_served(40000);
    // Every port came back: the LIP serves a full table's worth again.
    flood(66'000, kPorts - 1);
    EXPECT_EQ(counter(Counter::drop_laddr_exhausted), 51u);
    EXPECT_EQ(worker->conns().in_use(), kPorts);
}

TEST_F(ExhaustionTest, NeighbourQueueFullThenResolutionFlushes) {
    configure_one_rs();
    start_worker();
    worker->neighbours().add_static(ip("10.10.1.2"), kClientMac, kWan);  // RS1 unresolved

    // Ten new connections to one unresolved next hop: four wait, six are refused.
    for (uint16_t i = 0; i < 10; ++i) send(kWan, client_syn(static_cast<uint16_t>(40000 + i)));
    poll();
    auto out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);  // the ARP request
    EXPECT_EQ(counter(Counter::neigh_queued), 4u);
    EXPECT_EQ(counter(Counter::drop_neigh_queue_full), 6u);
    EXPECT_EQ(worker->held_frames(), 4u);

    // Resolution flushes the queue.
    send(kLan, arp_frame(kRs1Mac, lan_mac(), net::kArpOpReply, kRs1Mac, "10.10.2.2", lan_mac(),
                         "10.10.2.1"));
    poll();
    out = recv(kLan);
    ASSERT_EQ(out.size(), 4u);
    for (const auto& f : out)
        EXPECT_EQ(reinterpret_cast<const net::EtherHdr*>(f.data())->dst, kRs1Mac);
    EXPECT_EQ(worker->held_frames(), 0u);
    // A refused SYN's retransmission (its conn exists) and a new connection go straight out.
    EXPECT_EQ(roundtrip(kWan, client_syn(40009), kLan).size(), 1u);
    expect_new_conn_served(41000);
    EXPECT_EQ(counter(Counter::drop_neigh_queue_full), 6u);
}

}  // namespace
}  // namespace xvs::test
