// bench/workers: several workers in one process, each on its own lcore, each fed in-memory
// bursts as bench/engine feeds one (mbuf alloc, template copy, address patch), transmitting to
// net_null ports with a queue per worker. Rows, for 1 worker and for every count up to the
// lcores given:
//   - FULLNAT established return traffic (RS -> LIP:lport) over 1M conns, where no packet
//     needs a hand-over (each worker is fed its own conns' returns), and where every one does
//     (each is fed the next worker's: lb/redirect.h hands them over, the owner forwards);
//   - new TCP connections (client SYN -> conn -> RS SYN), distinct flows per worker.
// Aggregate Mpps is packets of all workers over the wall time of the slowest; the scaling
// ratio is over the 1-worker row.
//
//   bench_workers [--quick] [--huge]
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <rte_pause.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <random>
#include <thread>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lb/conn.h"
#include "lb/director.h"
#include "lb/worker.h"
#include "net/checksum.h"
#include "port/eal.h"
#include "port/ethdev.h"

using namespace xvs;

namespace {

constexpr unsigned kBurst = 32;
constexpr unsigned kMaxW = 8;

struct Ports {
    port::PortInfo wan, lan;
};

void must(const Result<void>& r) {
    if (!r) {
        std::fprintf(stderr, "config: %s\n", r.error().c_str());
        std::exit(1);
    }
}

// A 60-byte TCP frame (and pad) src -> dst with ports and flags; checksums complete.
void make_tcp(uint8_t* f, const net::MacAddr& smac, const net::MacAddr& dmac, uint32_t saddr,
              uint32_t daddr, uint16_t sport, uint16_t dport, uint8_t flags) {
    std::memset(f, 0, 64);
    net::EtherHdr eth{};
    eth.src = smac;
    eth.dst = dmac;
    eth.ether_type = net::hton16(net::kEtherTypeIpv4);
    std::memcpy(f, &eth, sizeof eth);
    net::Ipv4Hdr ip{};
    ip.version_ihl = 0x45;
    ip.total_length = net::hton16(40);
    ip.ttl = 64;
    ip.protocol = net::kIpProtoTcp;
    ip.saddr = saddr;
    ip.daddr = daddr;
    ip.checksum = net::csum_fold(net::csum_partial(&ip, 20, 0));
    std::memcpy(f + 14, &ip, 20);
    net::TcpHdr tcp{};
    tcp.sport = net::hton16(sport);
    tcp.dport = net::hton16(dport);
    tcp.seq = net::hton32(1);
    tcp.ack = net::hton32(1);
    tcp.data_off = 5 << 4;
    tcp.flags = flags;
    tcp.window = net::hton16(1000);
    tcp.checksum = net::ipv4_l4_checksum(saddr, daddr, net::kIpProtoTcp, &tcp, 20);
    std::memcpy(f + 34, &tcp, 20);
}

// Prebuilt frames, one per flow: the harness copies 64 bytes per packet.
using Frames = std::vector<std::array<uint8_t, 64>>;

struct Lb {
    std::unique_ptr<lb::Director> director;
    std::vector<std::unique_ptr<lb::Worker>> workers;
};

// FULLNAT TCP VIP:80 over 8 RS with enough local addresses for `conns` (60k ports each).
Lb make_lb(const Ports& p, rte_mempool* pool, unsigned n, uint32_t conns_per_worker,
           uint32_t total_conns) {
    Lb lb;
    lb.director = std::make_unique<lb::Director>(n);
    auto& d = *lb.director;
    must(d.port_add({"wan", p.wan.id, p.wan.mac, 1500}));
    must(d.port_add({"lan", p.lan.id, p.lan.mac, 1500}));
    must(d.address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
    must(d.address_add(*net::parse_ipv4("10.10.0.1"), 16, "lan"));
    must(d.route_add(*net::parse_ipv4_prefix("default"), *net::parse_ipv4("10.10.1.254"), "wan"));
    const auto vip = *net::parse_ipv4("10.10.1.100");
    must(d.service_add({6, vip, 80, "rr", lb::FwdMode::FullNat, 0}));
    const auto key = lb::make_service_key(6, vip, 80);
    for (int r = 0; r < 8; ++r)
        must(d.dest_add(key, lb::DestSpec{net::Ipv4::from_host(net::parse_ipv4("10.10.2.10")->host() + r),
                                          8080, 1}));
    for (unsigned l = 0; l < total_conns / 60000 + 1; ++l)
        must(d.laddr_add(key, net::Ipv4::from_host(net::parse_ipv4("10.10.3.1")->host() + l), "lan"));
    d.commit();
    for (unsigned w = 0; w < n; ++w) {
        lb::WorkerConfig cfg;
        cfg.id = w;
        cfg.pool = pool;
        cfg.max_conns = conns_per_worker;
        cfg.manual_clock = true;
        cfg.frag.limits.max_datagrams = 0;
        auto wk = lb::Worker::create(d, cfg);
        if (!wk) {
            std::fprintf(stderr, "worker: %s\n", wk.error().c_str());
            std::exit(1);
        }
        net::MacAddr m{{0x02, 0, 0, 0, 0x0a, 0}};
        for (int r = 0; r < 8; ++r) {
            m.b[5] = uint8_t(r);
            (*wk)->neighbours().add_static(
                net::InetAddr::v4(net::hton32(net::parse_ipv4("10.10.2.10")->host() + r)), m, 1);
        }
        (*wk)->neighbours().add_static(*net::parse_ipv4("10.10.1.254"),
                                       net::MacAddr{{2, 0, 0, 0, 1, 0xfe}}, 0);
        (*wk)->refresh_snapshot();
        lb.workers.push_back(std::move(*wk));
    }
    return lb;
}

// Client SYNs of flow i: 172.16.0.0/12 clients, 50000 ports each.
void client_syn(uint8_t* f, const Ports& p, uint64_t i, uint8_t flags) {
    const uint32_t host = 0xac100000u + uint32_t(i / 50000);
    make_tcp(f, p.lan.mac, p.wan.mac, net::hton32(host), net::parse_ipv4("10.10.1.100")->be,
             uint16_t(10000 + i % 50000), 80, flags);
}

struct Task {
    lb::Worker* worker = nullptr;
    const Frames* frames = nullptr;
    uint64_t packets = 0;
    uint8_t port = 0;  // the port the frames arrive on
    rte_mempool* pool = nullptr;
    const std::atomic<bool>* go = nullptr;
    std::atomic<unsigned>* done = nullptr;
    unsigned nworkers = 1;
    uint64_t cycles = 0;
};

// One worker's loop: its bursts, and what others hand it, until its packets are in and every
// worker is done feeding (so hand-overs to it are all served).
int task_main(void* arg) {
    auto* t = static_cast<Task*>(arg);
    while (!t->go->load(std::memory_order_acquire)) rte_pause();
    const uint64_t start = rte_rdtsc();
    rte_mbuf* burst[kBurst];
    const size_t nf = t->frames->size();
    for (uint64_t done = 0; done < t->packets; done += kBurst) {
        while (rte_pktmbuf_alloc_bulk(t->pool, burst, kBurst) != 0) t->worker->redirect_receive();
        for (unsigned i = 0; i < kBurst; ++i) {
            auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(burst[i], 60));
            std::memcpy(d, (*t->frames)[(done + i) % nf].data(), 64);
        }
        t->worker->process_burst(t->port, burst, kBurst);
        t->worker->redirect_receive();
        t->worker->flush();
    }
    t->done->fetch_add(1);
    while (t->done->load() < t->nworkers) t->worker->redirect_receive();
    for (int i = 0; i < 8; ++i) t->worker->redirect_receive();
    t->cycles = rte_rdtsc() - start;
    return 0;
}

struct Row {
    double mpps;
    uint64_t forwarded, redirected, dropped;
};

// Runs every worker's frames on its lcore (worker 0 on the main lcore).
Row run(Lb& lb, rte_mempool* pool, const std::vector<Frames>& frames, uint64_t packets_each,
        uint8_t port, const std::vector<unsigned>& lcores) {
    const unsigned n = static_cast<unsigned>(lb.workers.size());
    std::atomic<bool> go{false};
    std::atomic<unsigned> done{0};
    std::vector<Task> tasks(n);
    uint64_t fwd0 = 0, rd0 = 0;
    for (auto& w : lb.workers) {
        fwd0 += w->counters().get(stack::Counter::lb_forwarded);
        rd0 += w->counters().get(stack::Counter::redirect_out);
    }
    for (unsigned w = 0; w < n; ++w)
        tasks[w] = Task{lb.workers[w].get(), &frames[w], packets_each, port, pool, &go, &done, n, 0};
    for (unsigned w = 1; w < n; ++w) rte_eal_remote_launch(task_main, &tasks[w], lcores[w]);
    go.store(true, std::memory_order_release);
    task_main(&tasks[0]);
    rte_eal_mp_wait_lcore();
    uint64_t cycles = 0;
    for (const Task& t : tasks) cycles = std::max(cycles, t.cycles);
    Row r{};
    for (auto& w : lb.workers) {
        r.forwarded += w->counters().get(stack::Counter::lb_forwarded);
        r.redirected += w->counters().get(stack::Counter::redirect_out);
        r.dropped += w->counters().get(stack::Counter::drop_redirect_full);
    }
    r.forwarded -= fwd0;
    r.redirected -= rd0;
    const double secs = double(cycles) / double(rte_get_tsc_hz());
    r.mpps = double(packets_each * n) / secs / 1e6;
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, huge = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--huge")
            huge = true;
        else {
            std::fprintf(stderr, "usage: bench_workers [--quick] [--huge]\n");
            return 2;
        }
    }
    const unsigned ncpu = std::min<unsigned>(kMaxW, std::max(1u, std::thread::hardware_concurrency()));
    const uint32_t total_conns = quick ? 100'000 : 1'000'000;
    const uint64_t packets = quick ? 2'000'000 : 10'000'000;  // per worker count, all workers
    std::vector<std::string> eal = {"-m", quick ? "1024" : "3072", "--no-pci", "-l",
                                    "0-" + std::to_string(ncpu - 1), "--file-prefix",
                                    "xvs-wbench-" + std::to_string(getpid()), "--log-level",
                                    "lib.eal:error", "--no-telemetry"};
    if (huge) {
        eal.push_back("--in-memory");
    } else {
        eal.push_back("--no-huge");
        eal.push_back("--no-shconf");
    }
    if (auto r = port::eal_start(eal); !r) {
        std::fprintf(stderr, "%s\n", r.error().c_str());
        return 1;
    }
    std::vector<unsigned> lcores;
    for (unsigned lc = rte_get_next_lcore(-1, 0, 0); lc < RTE_MAX_LCORE; lc = rte_get_next_lcore(lc, 0, 0))
        lcores.push_back(lc);
    auto pool = port::mbuf_pool_create("wbench_pool", 65535, 256);
    if (!pool) {
        std::fprintf(stderr, "%s\n", pool.error().c_str());
        return 1;
    }
    port::PortParams params;
    params.queues = ncpu;
    auto wan = port::port_open_vdev("net_null0", params, *pool);
    auto lan = port::port_open_vdev("net_null1", params, *pool);
    if (!wan || !lan) {
        std::fprintf(stderr, "ports: %s %s\n", wan ? "" : wan.error().c_str(),
                     lan ? "" : lan.error().c_str());
        return 1;
    }
    const Ports ports{*wan, *lan};
    std::printf("xvs bench/workers: %u lcores, bursts of %u, 64-byte frames, %llu packets per row, "
                "%u conns, %s\n",
                ncpu, kBurst, (unsigned long long)packets, total_conns,
                huge ? "hugepages" : "4 KiB pages (--no-huge)");
    std::printf("%-44s %7s %8s %8s %10s %8s\n", "scenario", "workers", "Mpps", "scaling",
                "redirects", "drops");
    std::vector<unsigned> counts{1};
    for (unsigned n = 2; n <= ncpu; ++n) counts.push_back(n);
    double base_ret = 0, base_new = 0;
    for (unsigned n : counts) {
        const uint32_t per_worker = total_conns / n + 4096;
        {
        // Established: open total_conns flows, each on worker i % n, then feed the returns.
        Lb lb = make_lb(ports, *pool, n, per_worker, total_conns);
        {
            std::vector<Frames> syns(n);
            for (uint64_t i = 0; i < total_conns; ++i) {
                std::array<uint8_t, 64> f;
                client_syn(f.data(), ports, i, net::kTcpSyn);
                syns[i % n].push_back(f);
            }
            for (unsigned w = 0; w < n; ++w) {
                const Frames& fs = syns[w];
                rte_mbuf* b[kBurst];
                for (size_t i = 0; i < fs.size(); i += kBurst) {
                    const unsigned k = static_cast<unsigned>(std::min<size_t>(kBurst, fs.size() - i));
                    if (rte_pktmbuf_alloc_bulk(*pool, b, k) != 0) {
                        std::fprintf(stderr, "mbuf pool empty\n");
                        return 1;
                    }
                    for (unsigned j = 0; j < k; ++j)
                        std::memcpy(rte_pktmbuf_append(b[j], 60), fs[i + j].data(), 64);
                    lb.workers[w]->process_burst(0, b, static_cast<uint16_t>(k));
                    lb.workers[w]->flush();
                }
            }
        }
        // Each conn's return frame RS:8080 -> LIP:lport, grouped by owner.
        std::vector<Frames> own(n);
        for (unsigned w = 0; w < n; ++w) {
            lb.workers[w]->conns().for_each([&](const lb::Conn& c) {
                std::array<uint8_t, 64> f;
                make_tcp(f.data(), net::MacAddr{{2, 0, 0, 0, 0x0a, 0}}, ports.lan.mac,
                         c.daddr().v4_be(), c.laddr_ip().v4_be(), net::ntoh16(c.dport),
                         net::ntoh16(c.lport), net::kTcpAck);
                own[w].push_back(f);
            });
            std::shuffle(own[w].begin(), own[w].end(), std::mt19937_64(w + 1));
        }
        uint64_t conns = 0;
        for (auto& w : lb.workers) conns += w->conns().in_use();
        const uint64_t each = packets / n / kBurst * kBurst;
        Row none = run(lb, *pool, own, each, 1, lcores);
        if (n == 1) base_ret = none.mpps;
        std::printf("%-44s %7u %8.2f %7.2fx %10llu %8llu\n", "fullnat established return, no hand-over",
                    n, none.mpps, none.mpps / base_ret, (unsigned long long)none.redirected,
                    (unsigned long long)none.dropped);
        if (n > 1) {
            std::vector<Frames> other(n);
            for (unsigned w = 0; w < n; ++w) other[w] = own[(w + 1) % n];
            Row all = run(lb, *pool, other, each, 1, lcores);
            std::printf("%-44s %7u %8.2f %7.2fx %10llu %8llu\n",
                        "fullnat established return, all handed over", n, all.mpps,
                        all.mpps / base_ret, (unsigned long long)all.redirected,
                        (unsigned long long)all.dropped);
            const double ns_none = 1e3 / (none.mpps / n), ns_all = 1e3 / (all.mpps / n);
            std::printf("%-44s %7u %8.1f ns per packet and worker\n", "  hand-over cost", n,
                        ns_all - ns_none);
        }
        if (conns != total_conns)
            std::fprintf(stderr, "%llu conns for %u flows\n", (unsigned long long)conns, total_conns);
        }
        // New connections: fresh flows (beyond the established ones), n streams.
        Lb fresh = make_lb(ports, *pool, n, per_worker, total_conns);
        std::vector<Frames> syns(n);
        const uint64_t new_each = total_conns / n;
        for (unsigned w = 0; w < n; ++w)
            for (uint64_t i = 0; i < new_each; ++i) {
                std::array<uint8_t, 64> f;
                client_syn(f.data(), ports, i * n + w, net::kTcpSyn);
                syns[w].push_back(f);
            }
        Row nc = run(fresh, *pool, syns, new_each / kBurst * kBurst, 0, lcores);
        if (n == 1) base_new = nc.mpps;
        std::printf("%-44s %7u %8.2f %7.2fx %10llu %8llu   (M conns/s)\n", "new tcp connections (SYN)",
                    n, nc.mpps, nc.mpps / base_new, (unsigned long long)nc.redirected,
                    (unsigned long long)nc.dropped);
    }
    std::printf("scaling = aggregate Mpps over the 1-worker row's; hand-over cost = ns per packet "
                "per worker, all handed over less none\n");
    port::eal_stop();
    return 0;
}
