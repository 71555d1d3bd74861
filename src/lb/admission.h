// Admission control building blocks, pure and DPDK-free so they unit-test alone: a worker's
// share of a service-wide figure, the per-dest connection-threshold hysteresis (ipvsadm -x/-y)
// and the per-worker token bucket behind a service's new-connection rate cap.
//
// N workers. Thresholds and rates are configured for the whole director, but each worker
// only sees its own connections (DestWorkerStats) and must not read other cores' counters on
// the packet path. So each worker enforces its share: worker w of n gets total / n, plus one
// if w < total % n, and the shares add up to exactly the configured figure. With one worker
// (all that FULLNAT supports today) this is exactly IPVS's rule. A figure smaller than the
// number of workers leaves some workers a share of 0: those admit nothing (thresholds) or no
// new connection (rate), which is the only way to keep the sum within the limit.
#pragma once

#include <algorithm>
#include <cstdint>

#include "lb/dest.h"

namespace xvs::lb {

inline uint32_t worker_share(uint32_t total, unsigned worker, unsigned workers) {
    if (workers <= 1) return total;
    return total / workers + (worker < total % workers ? 1u : 0u);
}

// ipvsadm -x upper / -y lower, as configured (0 = none).
struct DestLimit {
    uint32_t upper = 0;
    uint32_t lower = 0;
    bool operator==(const DestLimit&) const = default;
};

// IPVS's overload rule on this worker's connections (active + inactive): a dest becomes
// overloaded when they reach the upper threshold and stays so until they fall below the lower
// threshold, or below 3/4 of the upper one when no lower threshold is set. IPVS flips the flag
// when a connection is bound or unbound; here it is evaluated when a scheduler looks at the
// dest, which gives the same answers because a dest's count only grows by being picked.
// Returns true when the dest must not take a new connection on this worker.
inline bool dest_overloaded(const DestLimit& limit, DestWorkerStats& stats, unsigned worker,
                            unsigned workers) {
    if (limit.upper == 0) {
        stats.overloaded = false;
        return false;
    }
    const uint64_t upper = worker_share(limit.upper, worker, workers);
    const uint64_t conns = uint64_t{stats.active} + stats.inactive;
    if (stats.overloaded) {
        // A lower share of 0 would never be undercut: come back once idle instead.
        const bool below = limit.lower != 0
                               ? conns < std::max(1u, worker_share(limit.lower, worker, workers))
                               : conns * 4 < upper * 3;
        if (below) stats.overloaded = false;
    }
    if (!stats.overloaded && conns >= upper) stats.overloaded = true;
    return stats.overloaded;
}

// New connections per second for one worker. Holds at most one second of its rate (the burst
// a quiet service may absorb at once), in thousandths of a token so that refills at
// millisecond granularity lose nothing for rates below 1000/s.
struct TokenBucket {
    uint64_t milli = 0;    // tokens * 1000
    uint64_t last_ms = 0;  // worker clock of the last refill
    bool primed = false;   // a fresh bucket starts full
};

// Takes one token at `now_ms` (the worker's clock); false when the bucket is empty or the
// rate is 0. Never allocates; O(1).
inline bool token_take(TokenBucket& bucket, uint32_t rate_per_s, uint64_t now_ms) {
    if (rate_per_s == 0) return false;
    const uint64_t capacity = uint64_t{rate_per_s} * 1000;
    if (!bucket.primed) {
        bucket.milli = capacity;
        bucket.last_ms = now_ms;
        bucket.primed = true;
    } else if (now_ms > bucket.last_ms) {
        // A second refills the bucket completely: longer gaps cannot add more (or overflow).
        const uint64_t elapsed = std::min<uint64_t>(now_ms - bucket.last_ms, 1000);
        bucket.milli += elapsed * rate_per_s;
        bucket.last_ms = now_ms;
    }
    bucket.milli = std::min(bucket.milli, capacity);  // also after the rate was lowered
    if (bucket.milli < 1000) return false;
    bucket.milli -= 1000;
    return true;
}

}  // namespace xvs::lb
