// Weighted random twos choice ("twos", IPVS ip_vs_twos.c; Mitzenmacher's power of two
// choices): two dests are drawn at random with probability proportional to weight among the
// usable ones, and the one with the lower overhead / weight (active * 256 + inactive, as wlc)
// takes the connection, the first drawn on a tie. The random source is a per-worker xorshift in
// the cursor (no shared state, no syscall); counts are the worker's own Dest::stats[worker].
#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

void twos_build(SchedPlan& plan) {
    sched_plan_snapshot_weights(plan);
}

uint64_t next_random(SchedCursor& cursor, unsigned worker) {
    uint64_t x = cursor.random;
    if (x == 0) x = mix64(0x7477'6f73ULL + worker) | 1;  // seeded once per worker
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    cursor.random = x;
    return x;
}

// A random point in [0, n): the high half of random * n (Lemire's multiply-shift), not
// random % n, whose 64-bit division costs tens of cycles on every new conn. Both carry a bias
// below n / 2^64.
uint64_t random_below(SchedCursor& cursor, unsigned worker, uint64_t n) {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(next_random(cursor, worker)) * n >>
                                 64);
}

// The usable dest where the running weight total first exceeds `point` (< total).
size_t weighted_index(const SchedPlan& plan, unsigned worker, uint64_t point) {
    uint64_t sum = 0;
    size_t last = 0;
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        if (!sched_dest_usable(plan, i, worker)) continue;
        sum += static_cast<uint32_t>(plan.weights[i]);
        last = i;
        if (point < sum) return i;
    }
    return last;
}

Dest* twos_pick(const SchedPlan& plan, SchedCursor& cursor, unsigned worker,
                const FlowKey& /*flow*/) {
    uint64_t total = 0;
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        if (sched_dest_usable(plan, i, worker)) total += static_cast<uint32_t>(plan.weights[i]);
    }
    if (total == 0) return nullptr;
    const size_t first = weighted_index(plan, worker, random_below(cursor, worker, total));
    const size_t second = weighted_index(plan, worker, random_below(cursor, worker, total));
    const uint64_t first_overhead = sched_overhead(plan.dests[first]->stats[worker]);
    const uint64_t second_overhead = sched_overhead(plan.dests[second]->stats[worker]);
    const bool second_wins = sched_less_loaded(second_overhead, plan.weights[second],
                                               first_overhead, plan.weights[first]);
    return plan.dests[second_wins ? second : first];
}

}  // namespace

constexpr Scheduler kSchedTwos{
    .name = "twos",
    .build = twos_build,
    .pick = twos_pick,
};

}  // namespace xvs::lb
