// Weighted failover ("fo", IPVS ip_vs_fo.c): every new connection goes to the usable dest of
// the highest weight, the first in plan order among equals; the others are standbys that take
// over when it is quiesced (weight 0) or over its -x threshold.
#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

void fo_build(SchedPlan& plan) {
    sched_plan_snapshot_weights(plan);
}

Dest* fo_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
              const FlowKey& /*flow*/) {
    Dest* best = nullptr;
    int32_t best_weight = 0;
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        if (plan.weights[i] <= best_weight || !sched_dest_usable(plan, i, worker)) continue;
        best = plan.dests[i];
        best_weight = plan.weights[i];
    }
    return best;
}

}  // namespace

constexpr Scheduler kSchedFo{
    .name = "fo",
    .build = fo_build,
    .pick = fo_pick,
};

}  // namespace xvs::lb
