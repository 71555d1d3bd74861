// The control plane with two workers (issue 12, item 4): each worker fed through its own
// queue of two-queue ring ports, one Director(2), one Controller over both. Checks that
// `xvsadm -L -c` lists every worker's conns, `stats` sums them and gives each worker's column,
// a FULLNAT conn's local port is its worker's (lport % 2 == id), admission shares (rate cap,
// thresholds) add up to the configured figure across the workers, quiescence (-e -w 0) and
// removal (-d with expire_nodest_conn, conn flush) reach every worker. Frame conservation
// is checked per worker, and the mbuf pool is whole at the end.
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <map>
#include <nlohmann/json.hpp>

#include "ctl/controller.h"
#include "ctl/ipvsadm_args.h"
#include "ctl/ipvsadm_format.h"
#include "ctl/xvsadm_main.h"
#include "fixture/mq_ports.h"
#include "fixture/pipeline.h"
#include "stack/conservation.h"

namespace xvs::test {
namespace {

using nlohmann::json;
using stack::Counter;

constexpr unsigned kWorkers = 2;

static_assert(kMqQueues == kWorkers);
MqPort& mq_port(uint8_t which) { return mq_ports()[which]; }

const net::Ipv4 kVip = *net::parse_ipv4("10.10.1.100");

class WorkersCtlTest : public ::testing::Test {
  protected:
    void SetUp() override {
        for (auto& p : mq_ports()) p.drain();
        pool_avail_ = rte_mempool_avail_count(DpdkEnvironment::pool());
        director = std::make_unique<lb::Director>(kWorkers);
        auto ok = [](const Result<void>& r) { ASSERT_TRUE(r.ok()) << r.error(); };
        ok(director->port_add({"wan", mq_port(kWan).info.id, mq_port(kWan).info.mac, 1500}));
        ok(director->port_add({"lan", mq_port(kLan).info.id, mq_port(kLan).info.mac, 1500}));
        ok(director->address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
        ok(director->address_add(*net::parse_ipv4("10.10.2.1"), 24, "lan"));
        ok(director->service_add(lb::ServiceSpec{6, kVip, 80, "rr"}));
        const auto key = lb::make_service_key(6, kVip, 80);
        ok(director->dest_add(key, lb::DestSpec{*net::parse_ipv4("10.10.2.2"), 8080, 1}));
        ok(director->dest_add(key, lb::DestSpec{*net::parse_ipv4("10.10.2.3"), 8080, 1}));
        ok(director->laddr_add(key, *net::parse_ipv4("10.10.2.100"), "lan"));
        director->commit();
        for (unsigned w = 0; w < kWorkers; ++w) {
            lb::WorkerConfig cfg;
            cfg.id = w;
            cfg.pool = DpdkEnvironment::pool();
            cfg.manual_clock = true;
            cfg.max_conns = 1024;
            auto worker = lb::Worker::create(*director, cfg);
            ASSERT_TRUE(worker.ok()) << worker.error();
            (*worker)->neighbours().add_static(ip("10.10.1.2"), kClientMac, kWan);
            (*worker)->neighbours().add_static(ip("10.10.2.2"), kRs1Mac, kLan);
            (*worker)->neighbours().add_static(ip("10.10.2.3"), kRs2Mac, kLan);
            workers.push_back(std::move(*worker));
        }
        std::vector<lb::Worker*> raw;
        for (auto& w : workers) raw.push_back(w.get());
        ctl = std::make_unique<ctl::Controller>(*director, raw, std::vector<ctl::PortInfoForCtl>{},
                                                [] { return Result<void>{}; });
    }
    void TearDown() override {
        for (auto& w : workers) {
            if (frames_only) check_balance(*w);
            w->release_held();
        }
        ctl.reset();
        workers.clear();
        director.reset();
        for (auto& p : mq_ports()) p.drain();
        EXPECT_EQ(rte_mempool_avail_count(DpdkEnvironment::pool()), pool_avail_)
            << "mbuf pool not whole at teardown";
    }
    static void check_balance(const lb::Worker& w) {
        const stack::FrameBalance b = stack::frame_balance(w.counters(), w.held_frames());
        EXPECT_TRUE(b.balanced()) << "worker " << w.id() << ": received " << b.received
                                  << " + generated " << b.generated << " != sent " << b.sent
                                  << " + dropped " << b.dropped << " + consumed " << b.consumed
                                  << " + held " << b.held;
    }

    Bytes syn(uint16_t cport, uint16_t vport = 80) {
        return PacketBuilder()
            .eth(kClientMac, mq_port(kWan).info.mac)
            .ipv4("10.10.1.2", "10.10.1.100")
            .tcp(cport, vport)
            .seq(1000)
            .flags(net::kTcpSyn)
            .build();
    }
    // Client SYNs through worker `w`'s own queue; returns the RS address of each SYN it sent.
    std::vector<std::string> syns_via(unsigned w, uint16_t first, int count, uint16_t vport = 80) {
        for (int i = 0; i < count; ++i) {
            Bytes f = syn(static_cast<uint16_t>(first + i), vport);
            rte_mbuf* m = rte_pktmbuf_alloc(DpdkEnvironment::pool());
            EXPECT_NE(m, nullptr);
            std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
            EXPECT_EQ(rte_ring_enqueue(mq_port(kWan).rx[w], m), 0);
        }
        workers[w]->poll_once();
        check_balance(*workers[w]);
        std::vector<std::string> out;
        void* p;
        for (unsigned q = 0; q < kWorkers; ++q) {
            while (rte_ring_dequeue(mq_port(kLan).tx[q], &p) == 0) {
                auto* m = static_cast<rte_mbuf*>(p);
                EXPECT_EQ(q, w) << "worker " << w << " sent on queue " << q;
                net::Ipv4Hdr ip4;
                std::memcpy(&ip4, rte_pktmbuf_mtod_offset(m, const uint8_t*, 14), sizeof ip4);
                out.push_back(net::to_string(net::Ipv4{ip4.daddr}));
                rte_pktmbuf_free(m);
            }
            EXPECT_EQ(rte_ring_count(mq_port(kWan).tx[q]), 0u);
        }
        return out;
    }
    json request(const std::string& line) {
        json r = json::parse(ctl->handle_line(line));
        EXPECT_TRUE(r.value("ok", false)) << line << " -> " << r.dump();
        return r;
    }
    json xvsadm(std::vector<std::string> args) {
        auto cmd = ctl::parse_ipvsadm_args(args);
        EXPECT_TRUE(cmd) << (cmd ? "" : cmd.error());
        return request(ctl::build_request(*cmd).dump());
    }
    // `xvsadm -L -n -c` as printed, TCP lines only.
    std::vector<std::string> listed_conns() {
        auto cmd = ctl::parse_ipvsadm_args({"-L", "-n", "-c"});
        EXPECT_TRUE(cmd);
        auto text = ctl::render_reply(*cmd, request(ctl::build_request(*cmd).dump()));
        EXPECT_TRUE(text) << text.error();
        std::vector<std::string> lines;
        size_t start = 0;
        while (text && start < text->size()) {
            size_t end = text->find('\n', start);
            std::string line = text->substr(start, end - start);
            if (line.starts_with("TCP")) lines.push_back(line);
            start = end == std::string::npos ? text->size() : end + 1;
        }
        return lines;
    }

    std::unique_ptr<lb::Director> director;
    std::vector<std::unique_ptr<lb::Worker>> workers;
    std::unique_ptr<ctl::Controller> ctl;
    unsigned pool_avail_ = 0;
    // Counters moved by frames only (conservation holds); false where a test calls admit()
    // directly, which counts drop_conn_rate without a frame.
    bool frames_only = true;
};

TEST_F(WorkersCtlTest, ConnsAndStatsOfEveryWorker) {
    EXPECT_EQ(syns_via(0, 40000, 3).size(), 3u);
    EXPECT_EQ(syns_via(1, 41000, 2).size(), 2u);
    EXPECT_EQ(workers[0]->conns().in_use(), 3u);
    EXPECT_EQ(workers[1]->conns().in_use(), 2u);

    // xvsadm -L -n -c: all five, whichever worker holds them.
    const auto lines = listed_conns();
    EXPECT_EQ(lines.size(), 5u) << ::testing::PrintToString(lines);
    // Each conn's local port is its worker's: the return traffic's owner is lport % N.
    const json conns = request(R"({"cmd":"conns"})").at("conns");
    ASSERT_EQ(conns.size(), 5u);
    std::map<unsigned, int> by_parity;
    for (const json& c : conns) {
        const std::string lip = c.at("lip");
        const unsigned lport = static_cast<unsigned>(std::stoul(lip.substr(lip.rfind(':') + 1)));
        const std::string client = c.at("client");
        const unsigned cport = static_cast<unsigned>(std::stoul(client.substr(client.rfind(':') + 1)));
        EXPECT_EQ(lport % kWorkers, cport >= 41000 ? 1u : 0u) << lip << " for " << client;
        ++by_parity[lport % kWorkers];
    }
    EXPECT_EQ(by_parity[0], 3);
    EXPECT_EQ(by_parity[1], 2);

    // stats: the sum and each worker's own figure.
    const json stats = request(R"({"cmd":"stats"})");
    EXPECT_EQ(stats.at("workers"), kWorkers);
    bool seen = false;
    for (const json& c : stats.at("counters")) {
        ASSERT_EQ(c.at("per_worker").size(), kWorkers) << c.dump();
        EXPECT_EQ(c.at("value").get<uint64_t>(),
                  c.at("per_worker")[0].get<uint64_t>() + c.at("per_worker")[1].get<uint64_t>())
            << c.dump();
        if (c.at("name") == "conns_created") {
            seen = true;
            EXPECT_EQ(c.at("value"), 5);
            EXPECT_EQ(c.at("per_worker"), json::array({3, 2}));
        }
    }
    EXPECT_TRUE(seen);
    // The service's and the dests' conns in -L --stats: summed over the workers.
    const json list = request(R"({"cmd":"list"})");
    ASSERT_EQ(list.at("services").size(), 1u);
    EXPECT_EQ(list.at("services")[0].at("stats").at("conns"), 5);
    uint64_t dest_conns = 0;
    for (const json& d : list.at("services")[0].at("dests"))
        dest_conns += d.at("stats").at("conns").get<uint64_t>();
    EXPECT_EQ(dest_conns, 5u);
}

TEST_F(WorkersCtlTest, QuiescenceAndRemovalReachEveryWorker) {
    // rr on each worker: both RS get conns on both workers.
    for (unsigned w = 0; w < kWorkers; ++w) {
        auto rs = syns_via(w, static_cast<uint16_t>(42000 + 100 * w), 4);
        EXPECT_EQ(std::count(rs.begin(), rs.end(), "10.10.2.2"), 2) << "worker " << w;
    }
    // -e -w 0: no worker sends a new conn to RS1 any more.
    xvsadm({"-e", "-t", "10.10.1.100:80", "-r", "10.10.2.2:8080", "--fullnat", "-w", "0"});
    for (unsigned w = 0; w < kWorkers; ++w) {
        auto rs = syns_via(w, static_cast<uint16_t>(43000 + 100 * w), 4);
        EXPECT_EQ(rs, std::vector<std::string>(4, "10.10.2.3")) << "worker " << w;
    }
    // conn flush dest: RS1's conns expire on both workers (2 each).
    const json flushed = request(R"({"cmd":"flush_dest","dest":"10.10.2.2:8080"})");
    EXPECT_EQ(flushed.at("flushed"), 4);
    EXPECT_EQ(workers[0]->conns().in_use(), 6u);
    EXPECT_EQ(workers[1]->conns().in_use(), 6u);
    // -d RS2 with expire_nodest_conn: its conns go from both workers at once.
    director->expire_nodest_conn_set(true);
    xvsadm({"-d", "-t", "10.10.1.100:80", "-r", "10.10.2.3:8080"});
    EXPECT_EQ(workers[0]->conns().in_use(), 0u);
    EXPECT_EQ(workers[1]->conns().in_use(), 0u);
    EXPECT_TRUE(listed_conns().empty());
}

// Admission shares (lb/admission.h worker_share): each worker enforces its part, and the
// parts add up to the configured figure.
TEST_F(WorkersCtlTest, RateCapSharesSumToTheConfiguredRate) {
    frames_only = false;
    for (uint32_t rate : {5u, 1u, 8u}) {
        SCOPED_TRACE(rate);
        xvsadm({"-E", "-t", "10.10.1.100:80", "-s", "rr", "--conn-rate", std::to_string(rate)});
        const lb::ServiceView* view = director->snapshot()->service(6, net::InetAddr(kVip), net::hton16(80));
        ASSERT_NE(view, nullptr);
        ASSERT_EQ(view->conn_rate, rate);
        unsigned admitted[kWorkers] = {};
        for (unsigned w = 0; w < kWorkers; ++w) {
            workers[w]->advance_clock(10000);  // a full bucket: one second of the worker's share
            for (int i = 0; i < 20; ++i)
                admitted[w] += workers[w]->admit(*view, net::InetAddr(*net::parse_ipv4("10.10.1.2")));
        }
        EXPECT_EQ(admitted[0], (rate + 1) / 2);  // worker 0 takes the odd one
        EXPECT_EQ(admitted[1], rate / 2);
        EXPECT_EQ(admitted[0] + admitted[1], rate);
    }
}

TEST_F(WorkersCtlTest, ThresholdSharesSumToTheConfiguredLimit) {
    // -x 3 on both RS: worker 0 may hold 2 conns per RS, worker 1 one, 3 per RS in all.
    xvsadm({"-e", "-t", "10.10.1.100:80", "-r", "10.10.2.2:8080", "--fullnat", "-x", "3"});
    xvsadm({"-e", "-t", "10.10.1.100:80", "-r", "10.10.2.3:8080", "--fullnat", "-x", "3"});
    std::map<std::string, int> per_rs;
    for (unsigned w = 0; w < kWorkers; ++w)
        for (const auto& rs : syns_via(w, static_cast<uint16_t>(44000 + 100 * w), 6)) ++per_rs[rs];
    EXPECT_EQ(per_rs["10.10.2.2"], 3);
    EXPECT_EQ(per_rs["10.10.2.3"], 3);
    EXPECT_EQ(workers[0]->conns().in_use(), 4u);
    EXPECT_EQ(workers[1]->conns().in_use(), 2u);
    EXPECT_EQ(workers[0]->counters().get(Counter::drop_dest_overloaded), 2u);
    EXPECT_EQ(workers[1]->counters().get(Counter::drop_dest_overloaded), 4u);
}

}  // namespace
}  // namespace xvs::test
