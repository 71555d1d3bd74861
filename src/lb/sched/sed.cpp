// Shortest expected delay ("sed"): the usable dest with the least (active + 1) / weight, the
// delay a new connection expects there (IPVS ip_vs_sed.c); inactive conns do not count. First
// in plan order on ties. Counts are the calling worker's own Dest::stats[worker] (see sched.h).
#include "lb/sched/sed.h"

#include "lb/sched/schedulers.h"

namespace xvs::lb {

int sched_sed_index(const SchedPlan& plan, unsigned worker, bool idle_first) {
    int best = -1;
    uint64_t best_overhead = 0;
    int32_t best_weight = 0;
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        if (!sched_dest_usable(plan, i, worker)) continue;
        const uint32_t active = plan.dests[i]->stats[worker].active;
        if (idle_first && active == 0) return static_cast<int>(i);
        const uint64_t overhead = uint64_t{active} + 1;
        if (best < 0 || sched_less_loaded(overhead, plan.weights[i], best_overhead, best_weight)) {
            best = static_cast<int>(i);
            best_overhead = overhead;
            best_weight = plan.weights[i];
        }
    }
    return best;
}

namespace {

void sed_build(SchedPlan& plan) {
    sched_plan_snapshot_weights(plan);
}

Dest* sed_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
               const FlowKey& /*flow*/) {
    const int best = sched_sed_index(plan, worker, /*idle_first=*/false);
    return best < 0 ? nullptr : plan.dests[best];
}

// Never queue ("nq"): the first usable dest with no active conn, else as sed (IPVS ip_vs_nq.c).
Dest* nq_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
              const FlowKey& /*flow*/) {
    const int best = sched_sed_index(plan, worker, /*idle_first=*/true);
    return best < 0 ? nullptr : plan.dests[best];
}

}  // namespace

constexpr Scheduler kSchedSed{
    .name = "sed",
    .build = sed_build,
    .pick = sed_pick,
};

constexpr Scheduler kSchedNq{
    .name = "nq",
    .build = sed_build,
    .pick = nq_pick,
};

}  // namespace xvs::lb
