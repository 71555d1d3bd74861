// A FULLNAT local address (LIP): one per IP, shared by every service that uses it, with one
// port pool per worker (worker i owns ports with port % workers == i). Outlives every
// connection using it (refs per worker, retired by the control plane at zero).
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <random>
#include <string>

#include "lb/dest.h"
#include "lb/port_pool.h"
#include "net/addr.h"

namespace xvs::lb {

struct alignas(64) LaddrWorkerState {
    std::unique_ptr<PortPool> pool;
    std::atomic<uint32_t> refs{0};  // conns on this worker using this LIP
};

struct LocalAddr {
    net::InetAddr addr;
    std::string port_name;  // the director port it is owned on
    std::array<LaddrWorkerState, kMaxWorkers> workers;

    // Port order is shuffled with a per-process random seed: a restarted director must not
    // hand out the same (LIP, port) pairs in the same order, or it collides with the real
    // servers' TIME_WAIT entries of its previous run.
    LocalAddr(const net::InetAddr& a, std::string port, unsigned nworkers, uint16_t lo = 1025,
              uint16_t hi = 65535)
        : addr(a), port_name(std::move(port)) {
        static const uint64_t process_seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
        for (unsigned w = 0; w < nworkers; ++w) {
            uint64_t seed = process_seed ^ (a.word(0) * 31 + a.word(1)) << 8 ^ (w + 1);
            workers[w].pool = std::make_unique<PortPool>(lo, hi, w, nworkers, seed ? seed : 1);
        }
    }
    uint64_t sum_refs() const {
        uint64_t s = 0;
        for (auto& w : workers) s += w.refs.load(std::memory_order_relaxed);
        return s;
    }
};

}  // namespace xvs::lb
