// Weighted least connection ("wlc", the ipvsadm default): the dest with the least
// overhead / weight, overhead = active * 256 + inactive as in IPVS (an active conn costs far
// more than one lingering in TIME_WAIT). Counts are the calling worker's own
// Dest::stats[worker], which that worker maintains (see sched.h), so no cross-core reads.
#include <cassert>

#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

void wlc_build(SchedPlan& plan) { sched_plan_snapshot_weights(plan); }

Dest* wlc_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
               const FlowKey& /*flow*/) {
    const int best = sched_least_loaded(plan, worker);
    return best < 0 ? nullptr : plan.dests[best];
}

}  // namespace

// Strictly-less comparison keeps the first dest in plan order on ties.
int sched_least_loaded(const SchedPlan& plan, unsigned worker) {
    assert(worker < kMaxWorkers);
    int best = -1;
    uint64_t best_overhead = 0;
    int32_t best_weight = 0;
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        if (!sched_dest_usable(plan, i, worker)) continue;
        const int32_t weight = plan.weights[i];
        const uint64_t overhead = sched_overhead(plan.dests[i]->stats[worker]);
        if (best < 0 || sched_less_loaded(overhead, weight, best_overhead, best_weight)) {
            best = static_cast<int>(i);
            best_overhead = overhead;
            best_weight = weight;
        }
    }
    return best;
}

constexpr Scheduler kSchedWlc{
    .name = "wlc",
    .build = wlc_build,
    .pick = wlc_pick,
};

}  // namespace xvs::lb
