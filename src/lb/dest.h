// Real servers (dests) and their per-worker counters. A Dest outlives every snapshot and every
// connection that points to it: the control plane retires it only when no worker holds a
// connection to it (refs summed over workers reach zero after removal).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "net/addr.h"

namespace xvs::lb {

inline constexpr unsigned kMaxWorkers = 16;

enum class FwdMode : uint8_t { FullNat, Nat, Dr, Tun, Snat };

// Written by one worker only; read (racy but word-sized) by the control thread.
struct alignas(64) DestWorkerStats {
    uint64_t conns = 0;     // connections scheduled to this dest
    uint64_t inpkts = 0;    // client -> RS
    uint64_t outpkts = 0;   // RS -> client
    uint64_t inbytes = 0;
    uint64_t outbytes = 0;
    uint32_t active = 0;    // conns in an active TCP state (ESTABLISHED, SYN_*)
    uint32_t inactive = 0;  // all other conns (incl. UDP)
    uint32_t refs = 0;      // conns on this worker pointing at this dest
    bool overloaded = false;  // over its -x share on this worker (lb/admission.h)
};

struct Dest {
    net::Ipv4 addr;
    uint16_t port = 0;  // host order
    FwdMode fwd = FwdMode::FullNat;
    std::atomic<int32_t> weight{1};
    std::atomic<bool> removed{false};  // no longer in any service; awaiting refs == 0
    uint32_t upper_threshold = 0;      // -x, 0 = none
    uint32_t lower_threshold = 0;      // -y
    std::array<DestWorkerStats, kMaxWorkers> stats{};

    uint64_t sum_active() const {
        uint64_t s = 0;
        for (auto& w : stats) s += w.active;
        return s;
    }
    uint64_t sum_inactive() const {
        uint64_t s = 0;
        for (auto& w : stats) s += w.inactive;
        return s;
    }
    uint64_t sum_refs() const {
        uint64_t s = 0;
        for (auto& w : stats) s += w.refs;
        return s;
    }
};

}  // namespace xvs::lb
