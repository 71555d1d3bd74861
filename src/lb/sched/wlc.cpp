// Weighted least connection ("wlc", the ipvsadm default): the dest with the least
// overhead / weight, overhead = active * 256 + inactive as in IPVS (an active conn costs far
// more than one lingering in TIME_WAIT). Counts are the calling worker's own
// Dest::stats[worker], which that worker maintains (see sched.h), so no cross-core reads.
#include <cassert>

#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

void wlc_build(SchedPlan& plan) { sched_plan_snapshot_weights(plan); }

uint64_t conn_overhead(const DestWorkerStats& stats) {
    return uint64_t{stats.active} * 256 + stats.inactive;
}

// Compares overhead_a / weight_a < overhead_b / weight_b without division, as IPVS does.
// 128-bit products: overhead reaches 2^40 and weight 2^31, which overflows 64 bits.
bool less_loaded(uint64_t overhead_a, int32_t weight_a, uint64_t overhead_b, int32_t weight_b) {
    using U128 = unsigned __int128;
    return U128{overhead_a} * static_cast<uint32_t>(weight_b) <
           U128{overhead_b} * static_cast<uint32_t>(weight_a);
}

// Strictly-less comparison keeps the first dest in plan order on ties.
Dest* wlc_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
               const FlowKey& /*flow*/) {
    assert(worker < kMaxWorkers);
    Dest* best = nullptr;
    uint64_t best_overhead = 0;
    int32_t best_weight = 0;
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        if (!sched_dest_usable(plan, i, worker)) continue;
        const int32_t weight = plan.weights[i];
        Dest* dest = plan.dests[i];
        const uint64_t overhead = conn_overhead(dest->stats[worker]);
        if (best == nullptr || less_loaded(overhead, weight, best_overhead, best_weight)) {
            best = dest;
            best_overhead = overhead;
            best_weight = weight;
        }
    }
    return best;
}

}  // namespace

constexpr Scheduler kSchedWlc{
    .name = "wlc",
    .build = wlc_build,
    .pick = wlc_pick,
};

}  // namespace xvs::lb
