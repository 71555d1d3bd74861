// Overflow connection ("ovf", IPVS ip_vs_ovf.c): the usable dest of the highest weight whose
// active conns do not exceed its weight, so weight acts as a capacity in conns and the next
// dest takes the overflow. First in plan order among equal weights. Active counts are the
// calling worker's own Dest::stats[worker] (see sched.h).
#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

void ovf_build(SchedPlan& plan) {
    sched_plan_snapshot_weights(plan);
}

Dest* ovf_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
               const FlowKey& /*flow*/) {
    Dest* best = nullptr;
    int32_t best_weight = 0;
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        const int32_t weight = plan.weights[i];
        if (weight <= best_weight || !sched_dest_usable(plan, i, worker)) continue;
        if (plan.dests[i]->stats[worker].active > static_cast<uint32_t>(weight)) continue;
        best = plan.dests[i];
        best_weight = weight;
    }
    return best;
}

}  // namespace

constexpr Scheduler kSchedOvf{
    .name = "ovf",
    .build = ovf_build,
    .pick = ovf_pick,
};

}  // namespace xvs::lb
