// Control -> worker dumps (lb/command.h): the control thread posts a dump and the worker copies
// its own tables from poll_once, chunk by chunk; the control thread never reads them. Here a
// second thread plays the control thread while the test thread polls the worker.
#include <rte_ring.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <tuple>

#include "ctl/controller.h"
#include "fixture/pipeline.h"
#include "lb/snapshot.h"

namespace xvs::test {
namespace {

using nlohmann::json;

class WorkerCommandTest : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        lb::WorkerConfig wc;
        wc.max_conns = 1u << 14;
        wc.manual_clock = true;
        start_worker(wc);
        learn_neighbours();
        ctl = std::make_unique<ctl::Controller>(
            *director, std::vector<lb::Worker*>{worker.get()},
            std::vector<ctl::PortInfoForCtl>{{"wan", "", 0, 1500, {}, false},
                                             {"lan", "", 1, 1500, {}, false}},
            [] { return Result<void>{}; });
    }
    void TearDown() override {
        ctl.reset();
        PipelineTest::TearDown();
    }

    Bytes syn(uint16_t sport) const {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", "10.10.1.100")
            .tcp(sport, 80)
            .seq(1000)
            .flags(net::kTcpSyn)
            .build();
    }

    // Runs `control` on a second thread while this thread polls the worker (holding a Polling
    // scope, so the dump must be served by poll_once). Returns the number of polls it took.
    template <typename F>
    unsigned serve_while(F&& control) {
        lb::Worker::Polling polling(*worker);
        std::atomic<bool> done{false};
        std::thread t([&] {
            control();
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
        return polls;
    }

    std::unique_ptr<ctl::Controller> ctl;
};

std::string ip_port_of(const uint8_t* ip4, size_t off_addr, const uint8_t* l4, size_t off_port) {
    net::Ipv4 a{};
    std::memcpy(&a, ip4 + off_addr, 4);
    uint16_t p;
    std::memcpy(&p, l4 + off_port, 2);
    return net::to_string(a) + ":" + std::to_string(net::ntoh16(p));
}

TEST_F(WorkerCommandTest, ConnsAndNeighboursDumpedByThePollLoopAreExact) {
    // Three connections; remember where each went (dest) and from which local address.
    std::set<std::vector<std::string>> expected;
    for (uint16_t sport : {40000, 40001, 40002}) {
        auto out = roundtrip(kWan, syn(sport), kLan);
        ASSERT_EQ(out.size(), 1u);
        const uint8_t* ip4 = out[0].data() + 14;
        const uint8_t* tcp = ip4 + 20;
        expected.insert({"tcp", "SYN_RECV", "10.10.1.2:" + std::to_string(sport), "10.10.1.100:80",
                         ip_port_of(ip4, 16, tcp, 2), ip_port_of(ip4, 12, tcp, 0)});
    }
    worker->advance_clock(1500);
    const uint64_t timeout = director->snapshot()->timeouts.of(lb::TcpState::SynRecv);
    ASSERT_GT(timeout, 2u);

    json conns, neigh;
    unsigned polls = serve_while([&] {
        conns = json::parse(ctl->handle_line(R"({"cmd":"conns"})"));
        neigh = json::parse(ctl->handle_line(R"({"cmd":"neigh_show"})"));
    });
    // 16384 conn slots at 4096 per poll, then the neighbour table: several polls.
    EXPECT_GE(polls, worker->conns().capacity() / lb::kCommandChunk);

    ASSERT_TRUE(conns.value("ok", false)) << conns.dump();
    std::set<std::vector<std::string>> got;
    for (const json& c : conns.at("conns")) {
        EXPECT_EQ(c.at("expire_seconds").get<uint64_t>(), timeout - 1) << c.dump();
        std::vector<std::string> row;
        for (const char* k : {"proto", "state", "client", "vip", "dest", "lip"})
            row.push_back(c.at(k).get<std::string>());
        got.insert(row);
    }
    EXPECT_EQ(conns.at("conns").size(), 3u);
    EXPECT_EQ(got, expected);

    ASSERT_TRUE(neigh.value("ok", false)) << neigh.dump();
    std::set<std::vector<std::string>> nb;
    for (const json& n : neigh.at("neighbours")) {
        EXPECT_EQ(n.at("worker"), 0u);
        std::vector<std::string> row;
        for (const char* k : {"addr", "mac", "ifname", "state"})
            row.push_back(n.at(k).get<std::string>());
        nb.insert(row);
    }
    std::set<std::vector<std::string>> nb_expected{
        {"10.10.1.2", "02:00:00:00:01:02", "wan", "PERMANENT"},
        {"10.10.2.2", "02:00:00:00:02:02", "lan", "PERMANENT"},
        {"10.10.2.3", "02:00:00:00:02:03", "lan", "PERMANENT"}};
    EXPECT_EQ(neigh.at("neighbours").size(), 3u);
    EXPECT_EQ(nb, nb_expected);
}

TEST_F(WorkerCommandTest, ManyConnsAreCopiedAcrossChunks) {
    constexpr uint16_t kConns = 10'000;
    for (uint16_t done = 0; done < kConns;) {
        const uint16_t batch = std::min<uint16_t>(256, kConns - done);
        for (uint16_t i = 0; i < batch; ++i)
            send(kWan, syn(static_cast<uint16_t>(10000 + done + i)));
        while (rte_ring_count(DpdkEnvironment::rx_ring(kWan))) poll();
        recv(kLan);
        recv(kWan);
        done += batch;
    }
    ASSERT_EQ(worker->conns().in_use(), kConns);
    worker->advance_clock(2500);

    std::vector<lb::ConnDumpEntry> dump;
    Result<void> r;
    unsigned polls = serve_while([&] {
        r = worker->command(lb::Command::dump_conns, 2000, [&](const lb::Command& cmd) {
            EXPECT_FALSE(cmd.truncated);
            dump = cmd.conns;
        });
    });
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_GE(polls, worker->conns().capacity() / lb::kCommandChunk);

    // Exactly the live table, entry for entry (read here: this thread is the worker's).
    const uint64_t now = worker->now_ms();
    std::vector<lb::ConnDumpEntry> live;
    worker->conns().for_each([&](const lb::Conn& c) {
        live.push_back({c.caddr(), c.vaddr(), c.laddr_ip(), c.daddr(), c.cport, c.vport, c.lport,
                        c.dport, c.proto, c.state, (c.expires(now) - now + 999) / 1000});
    });
    ASSERT_EQ(dump.size(), size_t(kConns));
    ASSERT_EQ(live.size(), dump.size());
    std::set<uint16_t> sports;
    const uint64_t timeout = director->snapshot()->timeouts.of(lb::TcpState::SynRecv);
    for (size_t i = 0; i < dump.size(); ++i) {
        const auto& d = dump[i];
        const auto& l = live[i];
        auto fields = [](const lb::ConnDumpEntry& e) {
            return std::tuple(e.caddr, e.vaddr, e.laddr_ip, e.daddr, e.cport, e.vport, e.lport,
                              e.dport, e.proto, e.state, e.expire_s);
        };
        ASSERT_EQ(fields(d), fields(l)) << i;
        ASSERT_EQ(d.expire_s, timeout - 2) << i;
        ASSERT_EQ(d.state, lb::TcpState::SynRecv) << i;
        sports.insert(net::ntoh16(d.cport));
    }
    EXPECT_EQ(sports.size(), size_t(kConns));
    EXPECT_EQ(*sports.begin(), 10000u);
    EXPECT_EQ(*sports.rbegin(), 10000u + kConns - 1);
}

TEST_F(WorkerCommandTest, AWorkerThatDoesNotPollTimesOutAndItsLateAnswerIsDiscarded) {
    auto a = roundtrip(kWan, syn(40000), kLan);
    ASSERT_EQ(a.size(), 1u);
    lb::Worker::Polling polling(*worker);  // a loop claims the worker but never polls
    Result<void> r;
    bool used = false;
    std::thread t([&] {
        r = worker->command(lb::Command::dump_conns, 50, [&](const lb::Command&) { used = true; });
    });
    t.join();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "worker 0 did not answer");
    EXPECT_FALSE(used);
    // Still unanswered: the next command says so at once, without waiting.
    std::thread t2([&] { r = worker->command(lb::Command::dump_neighbours, 50, [](auto&) {}); });
    t2.join();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "worker 0 did not answer (still busy with an earlier command)");
    // The worker answers late; the next command takes the channel again and gets its own answer.
    for (int i = 0; i < 8; ++i) poll();
    size_t nconns = 99, nneigh = 0;
    unsigned polls = 0;
    {
        std::atomic<bool> done{false};
        std::thread t3([&] {
            r = worker->command(lb::Command::dump_neighbours, 2000, [&](const lb::Command& cmd) {
                nconns = cmd.conns.size();
                nneigh = cmd.neighbours.size();
            });
            done = true;
        });
        while (!done) {
            poll();
            ++polls;
        }
        t3.join();
    }
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_GE(polls, 1u);
    EXPECT_EQ(nconns, 0u);
    EXPECT_EQ(nneigh, 3u);
}

}  // namespace
}  // namespace xvs::test
