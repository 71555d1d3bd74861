// Least connection ("lc"): the usable dest with the least overhead (active * 256 + inactive,
// as IPVS), weights only deciding usable (> 0) or not; first in plan order on ties. Counts are
// the calling worker's own Dest::stats[worker] (see sched.h).
#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

void lc_build(SchedPlan& plan) {
    sched_plan_snapshot_weights(plan);
}

Dest* lc_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
              const FlowKey& /*flow*/) {
    Dest* best = nullptr;
    uint64_t best_overhead = 0;
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        if (!sched_dest_usable(plan, i, worker)) continue;
        const uint64_t overhead = sched_overhead(plan.dests[i]->stats[worker]);
        if (best == nullptr || overhead < best_overhead) {
            best = plan.dests[i];
            best_overhead = overhead;
        }
    }
    return best;
}

}  // namespace

constexpr Scheduler kSchedLc{
    .name = "lc",
    .build = lc_build,
    .pick = lc_pick,
};

}  // namespace xvs::lb
