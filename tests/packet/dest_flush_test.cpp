// Connections of a removed real server, as IPVS treats them: their client packets are dropped
// (drop_dest_unavailable); with expire_nodest_conn the control thread posts flush_dest to the
// worker, which expires them from its poll loop in chunks (lb/command.h), and a packet of one
// the flush has not reached expires it at once. Expiry is the normal one: the table slot, the
// dest's refs (so the director frees it) and the FULLNAT local port all come back.
#include <rte_ring.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "ctl/controller.h"
#include "fixture/pipeline.h"
#include "lb/laddr.h"
#include "lb/service.h"

namespace xvs::test {
namespace {

using nlohmann::json;
using stack::Counter;

constexpr const char* kDelRs1 =
    R"({"cmd":"del_dest","service":{"proto":"tcp","vip":"10.10.1.100","port":80},)"
    R"("dest":{"addr":"10.10.2.2","port":8080}})";

class DestFlushTest : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        lb::WorkerConfig wc;
        wc.max_conns = 1u << 14;  // four kCommandChunk chunks
        wc.manual_clock = true;
        start_worker(wc);
        learn_neighbours();
        ctl = std::make_unique<ctl::Controller>(
            *director, std::vector<lb::Worker*>{worker.get()},
            std::vector<ctl::PortInfoForCtl>{{"wan", "", 0, 1500, {}, false},
                                             {"lan", "", 1, 1500, {}, false}},
            [] { return Result<void>{}; });
        rs1 = dest_of(6, 80, "10.10.2.2");
        rs2 = dest_of(6, 80, "10.10.2.3");
        ASSERT_TRUE(rs1 && rs2);
        auto svc = director->service_find(lb::make_service_key(6, ip_of("10.10.1.100"), 80));
        laddr = svc->laddrs.at(0).get();
    }
    void TearDown() override {
        ctl.reset();
        PipelineTest::TearDown();
    }

    static net::Ipv4 ip_of(const char* s) { return *net::parse_ipv4(s); }

    // The dest ADDR of the (proto, 10.10.1.100, port) service, or null.
    std::shared_ptr<lb::Dest> dest_of(uint8_t proto, uint16_t port, const char* addr) const {
        auto svc = director->service_find(lb::make_service_key(proto, ip_of("10.10.1.100"), port));
        if (svc)
            for (const auto& d : svc->dests)
                if (d->addr == ip_of(addr)) return d;
        return nullptr;
    }

    Bytes client(uint16_t sport, uint8_t flags) const {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", "10.10.1.100")
            .tcp(sport, 80)
            .seq(1000)
            .flags(flags)
            .build();
    }

    // Opens n conns (rr: alternately RS1 and RS2) from client ports base..base+n-1.
    void open(uint16_t base, uint16_t n) {
        for (uint16_t i = 0; i < n; ++i)
            send(kWan, client(static_cast<uint16_t>(base + i), net::kTcpSyn));
        while (rte_ring_count(DpdkEnvironment::rx_ring(kWan))) poll();
        EXPECT_EQ(recv(kLan).size(), n);
        recv(kWan);
    }

    size_t free_lports() const { return laddr->workers[0].pool->available(); }

    // Opens two conns (40000 -> RS1, 40001 -> RS2) and removes RS1 through the controller.
    void open_and_remove_rs1() {
        open(40000, 2);
        json r = handle_polled(kDelRs1);
        ASSERT_TRUE(r.value("ok", false)) << r.dump();
    }

    // The IPv4 destination of an Ethernet frame, dotted.
    static std::string ip_dst(const Bytes& frame) {
        if (frame.size() < 34) return "short frame";
        return std::to_string(frame[30]) + "." + std::to_string(frame[31]) + "." +
               std::to_string(frame[32]) + "." + std::to_string(frame[33]);
    }

    Bytes client_udp(uint16_t sport) const {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", "10.10.1.100")
            .udp(sport, 53)
            .payload("query")
            .build();
    }

    // Handles `request` on a second thread (the control thread) while this one polls the
    // worker, so a flush_dest it posts is served by poll_once. Returns the reply.
    json handle_polled(const char* request, unsigned* polls_out = nullptr) {
        lb::Worker::Polling polling(*worker);
        std::atomic<bool> done{false};
        json reply;
        std::thread t([&] {
            reply = json::parse(ctl->handle_line(request));
            done.store(true, std::memory_order_release);
        });
        unsigned polls = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!done.load(std::memory_order_acquire) &&
               std::chrono::steady_clock::now() < deadline) {
            poll();
            ++polls;
        }
        t.join();
        if (polls_out) *polls_out = polls;
        return reply;
    }

    std::unique_ptr<ctl::Controller> ctl;
    std::shared_ptr<lb::Dest> rs1, rs2;
    const lb::LocalAddr* laddr = nullptr;
};

TEST_F(DestFlushTest, OffByDefaultTheConnStaysAndItsClientPacketsAreDropped) {
    ASSERT_FALSE(director->expire_nodest_conn());
    const size_t lports = free_lports();
    open(40000, 2);  // 40000 -> RS1, 40001 -> RS2
    ASSERT_EQ(rs1->sum_refs(), 1u);
    ASSERT_EQ(rs2->sum_refs(), 1u);

    json r = handle_polled(kDelRs1);
    ASSERT_TRUE(r.value("ok", false)) << r.dump();
    EXPECT_TRUE(rs1->removed);
    EXPECT_EQ(worker->conns().in_use(), 2u);  // nothing flushed
    EXPECT_EQ(rs1->sum_refs(), 1u);

    // The RS1 conn's next client packet goes nowhere, counted; the RS2 one still flows.
    EXPECT_TRUE(roundtrip(kWan, client(40000, net::kTcpAck), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
    EXPECT_EQ(roundtrip(kWan, client(40001, net::kTcpAck), kLan).size(), 1u);
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
    EXPECT_EQ(worker->conns().in_use(), 2u);  // dropped, not expired (setting off)
    EXPECT_EQ(free_lports(), lports - 2);

    // The operator's flush (xvsctl conn flush dest): the removed dest's conn goes now.
    std::weak_ptr<lb::Dest> gone = rs1;
    rs1.reset();
    r = handle_polled(R"({"cmd":"flush_dest","dest":"10.10.2.2:8080"})");
    ASSERT_TRUE(r.value("ok", false)) << r.dump();
    EXPECT_EQ(r.at("flushed"), 1u);
    EXPECT_EQ(worker->conns().in_use(), 1u);
    EXPECT_EQ(free_lports(), lports - 1);
    EXPECT_TRUE(gone.expired());  // refs 0: the director freed it
    EXPECT_TRUE(director->removed_dests().empty());
    r = json::parse(ctl->handle_line(R"({"cmd":"flush_dest","dest":"10.10.2.2:8080"})"));
    EXPECT_EQ(r.value("error", ""), "No such destination");
}

// IPVS's dest trash: the real server added back (a health check flapping) is the same dest,
// and the conns it still had flow again.
TEST_F(DestFlushTest, OffADestAddedBackTakesItsConnsBack) {
    ASSERT_NO_FATAL_FAILURE(open_and_remove_rs1());
    EXPECT_TRUE(roundtrip(kWan, client(40000, net::kTcpAck), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
    json r = handle_polled(
        R"({"cmd":"add_dest","service":{"proto":"tcp","vip":"10.10.1.100","port":80},)"
        R"("dest":{"addr":"10.10.2.2","port":8080,"weight":3}})");
    ASSERT_TRUE(r.value("ok", false)) << r.dump();
    auto svc = director->service_find(lb::make_service_key(6, ip_of("10.10.1.100"), 80));
    ASSERT_EQ(svc->dests.size(), 2u);
    EXPECT_EQ(svc->dests.back(), rs1);  // the same object, available again
    EXPECT_FALSE(rs1->removed);
    EXPECT_EQ(rs1->weight, 3);
    EXPECT_TRUE(director->removed_dests().empty());
    EXPECT_EQ(roundtrip(kWan, client(40000, net::kTcpAck), kLan).size(), 1u);
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
    EXPECT_EQ(rs1->sum_refs(), 1u);
}

TEST_F(DestFlushTest, OnRemovalFlushesTheDestsConnsInChunksThroughTheNormalExpiry) {
    director->expire_nodest_conn_set(true);
    director->commit();
    const size_t lports = free_lports();
    constexpr uint16_t kConns = 600;
    open(20000, kConns);
    ASSERT_EQ(worker->conns().in_use(), kConns);
    ASSERT_EQ(rs1->sum_refs(), kConns / 2);
    ASSERT_EQ(rs1->sum_inactive() + rs1->sum_active(), kConns / 2);
    ASSERT_EQ(free_lports(), lports - kConns);
    const uint64_t expired_before = counter(Counter::conns_expired);

    std::weak_ptr<lb::Dest> gone = rs1;
    lb::Dest* raw = rs1.get();
    rs1.reset();
    unsigned polls = 0;
    json r = handle_polled(kDelRs1, &polls);
    ASSERT_TRUE(r.value("ok", false)) << r.dump();
    // 16384 slots at kCommandChunk per poll: the table was walked over several polls.
    EXPECT_GE(polls, worker->conns().capacity() / lb::kCommandChunk);
    EXPECT_EQ(worker->conns().in_use(), kConns / 2u);
    EXPECT_EQ(counter(Counter::conns_expired) - expired_before, kConns / 2u);
    EXPECT_EQ(free_lports(), lports - kConns / 2);
    EXPECT_TRUE(gone.expired());  // its refs reached 0 and the director freed it
    EXPECT_TRUE(director->removed_dests().empty());
    worker->conns().for_each([&](const lb::Conn& c) {
        EXPECT_EQ(c.dest, rs2.get());
        EXPECT_NE(c.dest, raw);
    });
    EXPECT_EQ(rs2->sum_refs(), kConns / 2u);
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 0u);
    // A client of a flushed conn finds no conn (a non-SYN), RS2's clients are untouched.
    EXPECT_TRUE(roundtrip(kWan, client(20000, net::kTcpAck), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_tcp_no_conn), 1u);
    EXPECT_EQ(roundtrip(kWan, client(20001, net::kTcpAck), kLan).size(), 1u);
}

TEST_F(DestFlushTest, OnAPacketOfAConnTheFlushHasNotReachedExpiresItAtOnce) {
    director->expire_nodest_conn_set(true);
    director->commit();
    const size_t lports = free_lports();
    open(40000, 2);
    // Removed behind the controller's back: nothing posts flush_dest.
    ASSERT_TRUE(
        director
            ->dest_del(lb::make_service_key(6, ip_of("10.10.1.100"), 80), ip_of("10.10.2.2"), 8080)
            .ok());
    director->commit();
    EXPECT_EQ(worker->conns().in_use(), 2u);
    EXPECT_TRUE(roundtrip(kWan, client(40000, net::kTcpAck), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
    EXPECT_EQ(worker->conns().in_use(), 1u);
    EXPECT_EQ(rs1->sum_refs(), 0u);
    EXPECT_EQ(free_lports(), lports - 1);
    // The client's next packet finds no conn at all.
    EXPECT_TRUE(roundtrip(kWan, client(40000, net::kTcpAck), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_tcp_no_conn), 1u);
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
}

// A client port reused soon after a failed attempt: the client's new SYN meets the old conn,
// still in SYN_RECV toward the removed RS1. It is a new connection, not a packet of that one:
// the old conn ends (its port and refs freed) and the SYN goes to RS2, in either setting.
// IPVS without expire_nodest_conn drops it and every retransmission until SYN_RECV's 30 s.
TEST_F(DestFlushTest, OffASynOnAReusedPortOfARemovedDestsConnIsScheduledAnew) {
    ASSERT_FALSE(director->expire_nodest_conn());
    const size_t lports = free_lports();
    // 40000's conn is in SYN_RECV toward RS1: RS1 never answered.
    ASSERT_NO_FATAL_FAILURE(open_and_remove_rs1());
    std::weak_ptr<lb::Dest> gone = rs1;
    rs1.reset();

    auto out = roundtrip(kWan, client(40000, net::kTcpSyn), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ip_dst(out[0]), "10.10.2.3");
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 0u);
    EXPECT_EQ(worker->conns().in_use(), 2u);  // the old one ended, the new one made
    EXPECT_EQ(free_lports(), lports - 2);
    EXPECT_EQ(rs2->sum_refs(), 2u);
    director->reclaim();
    EXPECT_TRUE(gone.expired());  // RS1's last conn went: the director freed it
    // The new conn carries the client's next packets to RS2; what is not a SYN on a removed
    // dest's conn is still dropped (no case here: RS1 has none left).
    EXPECT_EQ(roundtrip(kWan, client(40000, net::kTcpAck), kLan).size(), 1u);
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 0u);
}

// A non-SYN on the removed dest's conn is dropped and the conn kept (off, IPVS's rule); a SYN
// on the same client port, later, still starts anew.
TEST_F(DestFlushTest, OffAnAckIsDroppedButALaterSynStartsAnew) {
    ASSERT_NO_FATAL_FAILURE(open_and_remove_rs1());
    EXPECT_TRUE(roundtrip(kWan, client(40000, net::kTcpAck), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
    EXPECT_EQ(worker->conns().in_use(), 2u);
    EXPECT_EQ(rs1->sum_refs(), 1u);
    auto out = roundtrip(kWan, client(40000, net::kTcpSyn), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ip_dst(out[0]), "10.10.2.3");
    EXPECT_EQ(rs1->sum_refs(), 0u);
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
}

// A datagram of a removed dest's UDP conn: dropped and the conn kept (off); with
// expire_nodest_conn the conn ends and the datagram goes to another RS (IPVS since 5.9).
TEST_F(DestFlushTest, UdpDatagramDroppedWhenOffScheduledAnewWhenOn) {
    const auto udp_key = lb::make_service_key(17, ip_of("10.10.1.100"), 53);
    std::shared_ptr<lb::Dest> u1 = dest_of(17, 53, "10.10.2.2");
    ASSERT_TRUE(u1);
    auto out = roundtrip(kWan, client_udp(5000), kLan);  // rr: the first goes to RS1
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(ip_dst(out[0]), "10.10.2.2");
    ASSERT_TRUE(director->dest_del(udp_key, ip_of("10.10.2.2"), 5353).ok());
    director->commit();
    EXPECT_TRUE(roundtrip(kWan, client_udp(5000), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
    EXPECT_EQ(u1->sum_refs(), 1u);

    director->expire_nodest_conn_set(true);
    director->commit();
    out = roundtrip(kWan, client_udp(5000), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ip_dst(out[0]), "10.10.2.3");
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
    EXPECT_EQ(u1->sum_refs(), 0u);
}

}  // namespace
}  // namespace xvs::test
