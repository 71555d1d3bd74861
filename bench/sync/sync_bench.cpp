// bench/sync: session sync costs (issue 15). Three figures, one run, one core:
//   - encode: worker records -> IPVS sync v1 messages (the control thread's send side), in
//     messages and conns per second;
//   - decode: those messages -> conns (the receive side);
//   - the worker's cost per synced conn: a report pushed into its ring (packet path), an
//     import of a new conn and a refresh of a known one (Command::import_conns, served
//     inline here: no poller, so this thread runs exactly the worker's code).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <unistd.h>
#include <vector>

#include "ctl/sync/sync_daemon.h"
#include "lb/director.h"
#include "lb/service.h"
#include "lb/sync.h"
#include "lb/worker.h"
#include "net/byteorder.h"
#include "net/sync_wire.h"
#include "port/eal.h"
#include "port/ethdev.h"

using namespace xvs;

namespace {

using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

void must(const Result<void>& r) {
    if (!r) {
        std::fprintf(stderr, "config: %s\n", r.error().c_str());
        std::exit(1);
    }
}

std::vector<lb::SyncRecord> make_records(size_t n) {
    std::vector<lb::SyncRecord> v(n);
    for (size_t i = 0; i < n; ++i) {
        lb::SyncRecord& r = v[i];
        r.caddr = net::InetAddr::v4(net::hton32(0xac100000u + static_cast<uint32_t>(i / 50000)));
        r.vaddr = *net::parse_ipv4("10.10.1.100");
        r.cport = net::hton16(static_cast<uint16_t>(1024 + i % 50000));
        r.vport = net::hton16(80);
        r.laddr_ip = net::InetAddr::v4(net::hton32(0x0a0a0364u + static_cast<uint32_t>(i / 60000)));
        r.lport = net::hton16(static_cast<uint16_t>(1025 + i % 60000));
        r.daddr = net::InetAddr::v4(net::hton32(0x0a0a020au + static_cast<uint32_t>(i % 8)));
        r.dport = net::hton16(8080);
        r.proto = net::kIpProtoTcp;
        r.state = lb::TcpState::Established;
        r.mode = lb::FwdMode::FullNat;
        r.timeout_s = 90;
    }
    return v;
}

}  // namespace

static int run(bool quick) {
    const size_t nconns = quick ? 100'000 : 1'000'000;
    const auto records = make_records(nconns);

    // Encode.
    net::SyncEncoder enc(7);
    std::vector<std::vector<uint8_t>> msgs;
    msgs.reserve(nconns / 30);
    auto t0 = Clock::now();
    for (const auto& r : records) {
        const net::SyncConn c = ctl::sync_conn_of(r);
        if (!enc.add(c)) {
            msgs.emplace_back(enc.bytes().begin(), enc.bytes().end());
            enc.reset();
            enc.add(c);
        }
    }
    msgs.emplace_back(enc.bytes().begin(), enc.bytes().end());
    auto t1 = Clock::now();
    std::printf("xvs bench/sync: %zu FULLNAT conns, %zu messages of <= %zu bytes (%.1f conns each)\n",
                nconns, msgs.size(), net::kSyncDefaultMessage, double(nconns) / double(msgs.size()));
    std::printf("%-40s %12s %12s %10s\n", "step", "msgs/s", "conns/s", "ns/conn");
    auto row = [&](const char* what, double s, size_t n_msgs, size_t n_conns) {
        std::printf("%-40s %12.0f %12.0f %10.1f\n", what, n_msgs ? double(n_msgs) / s : 0.0,
                    double(n_conns) / s, s * 1e9 / double(n_conns));
    };
    row("encode (record -> message)", secs(t0, t1), msgs.size(), nconns);

    // Decode.
    size_t decoded = 0;
    t0 = Clock::now();
    for (const auto& m : msgs) {
        auto d = net::sync_decode(m);
        if (!d) {
            std::fprintf(stderr, "decode: %s\n", d.error().c_str());
            return 1;
        }
        for (const auto& c : d->conns) decoded += ctl::sync_record_of(c).has_value();
    }
    t1 = Clock::now();
    if (decoded != nconns) {
        std::fprintf(stderr, "decoded %zu of %zu\n", decoded, nconns);
        return 1;
    }
    row("decode (message -> record)", secs(t0, t1), msgs.size(), nconns);

    // The worker: ring push (what sync_report costs the packet path), import, refresh.
    lb::SyncRing ring(1 << 16);
    std::vector<lb::SyncRecord> popped(256);
    size_t pushed = 0;
    t0 = Clock::now();
    for (const auto& r : records) {
        if (!ring.push(r)) {
            while (ring.pop(popped.data(), 256)) {
            }
            ring.push(r);
        }
        ++pushed;
    }
    t1 = Clock::now();
    row("worker: report into its ring (+ drain)", secs(t0, t1), 0, pushed);

    std::vector<std::string> eal = {"-m", "1024", "--no-pci", "-l", "0", "--no-huge", "--no-shconf",
                                    "--file-prefix", "xvs-syncb-" + std::to_string(getpid()),
                                    "--log-level", "lib.eal:error", "--no-telemetry"};
    if (auto r = port::eal_start(eal); !r) {
        std::fprintf(stderr, "%s\n", r.error().c_str());
        return 1;
    }
    auto pool = port::mbuf_pool_create("syncb_pool", 4095, 256);
    auto wan = pool ? port::port_open_vdev("net_null0", {}, *pool) : Result<port::PortInfo>(make_error("pool"));
    auto lan = pool ? port::port_open_vdev("net_null1", {}, *pool) : Result<port::PortInfo>(make_error("pool"));
    if (!pool || !wan || !lan) {
        std::fprintf(stderr, "ports or pool failed\n");
        return 1;
    }
    lb::Director d(1);
    must(d.port_add({"wan", wan->id, wan->mac, 1500}));
    must(d.port_add({"lan", lan->id, lan->mac, 1500}));
    must(d.address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
    must(d.address_add(*net::parse_ipv4("10.10.0.1"), 16, "lan"));
    const auto vip = *net::parse_ipv4("10.10.1.100");
    must(d.service_add({6, vip, 80, "wrr", lb::FwdMode::FullNat, 0}));
    const auto key = lb::make_service_key(6, vip, 80);
    for (uint32_t r = 0; r < 8; ++r)
        must(d.dest_add(key, lb::DestSpec{net::Ipv4::from_host(0x0a0a020au + r), 8080, 1}));
    d.commit();
    lb::WorkerConfig cfg;
    cfg.pool = *pool;
    cfg.max_conns = static_cast<uint32_t>(nconns * 2);
    cfg.manual_clock = true;
    auto w = lb::Worker::create(d, cfg);
    if (!w) {
        std::fprintf(stderr, "worker: %s\n", w.error().c_str());
        return 1;
    }
    (*w)->refresh_snapshot();
    for (const char* what : {"worker: import a new conn", "worker: refresh a known conn"}) {
        uint64_t ok = 0;
        t0 = Clock::now();
        for (size_t i = 0; i < nconns; i += lb::kCommandChunk) {
            const size_t end = std::min(nconns, i + lb::kCommandChunk);
            std::vector<lb::SyncRecord> chunk(records.begin() + static_cast<ptrdiff_t>(i),
                                              records.begin() + static_cast<ptrdiff_t>(end));
            auto n = (*w)->import_conns(std::move(chunk), 10'000);
            if (!n) {
                std::fprintf(stderr, "import: %s\n", n.error().c_str());
                return 1;
            }
            ok += n->imported;
        }
        t1 = Clock::now();
        if (ok != nconns) {
            std::fprintf(stderr, "%s: %llu of %zu\n", what, (unsigned long long)ok, nconns);
            return 1;
        }
        row(what, secs(t0, t1), 0, nconns);
    }
    std::printf("conn table after import: %u conns\n", (*w)->conns().in_use());
    return 0;
}

int main(int argc, char** argv) {
    try {
        return run(argc > 1 && std::string(argv[1]) == "--quick");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_sync: %s\n", e.what());
        return 1;
    }
}
