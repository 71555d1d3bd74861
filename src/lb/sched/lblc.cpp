// Locality-based least connection ("lblc", IPVS ip_vs_lblc.c), for cache clusters: a
// destination address keeps going to the dest it was last sent to, so that dest's cache stays
// warm, unless that dest is unusable (weight 0, over its -x threshold) or overloaded by IPVS's
// rule (more active conns than its weight while another dest is under half of its own); then
// the least loaded dest (wlc's rule) takes the address over. The table is this worker's
// (plan.locality[worker], lb/sched/locality.h); counts are the worker's Dest::stats[worker].
#include "lb/sched/locality.h"
#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

void lblc_build(SchedPlan& plan) {
    sched_plan_snapshot_weights(plan);
}

Dest* lblc_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
                const FlowKey& flow) {
    if (plan.locality == nullptr) return nullptr;
    LocalityTable& table = plan.locality[worker];
    LocalityEntry* entry = locality_find(table, flow.daddr, flow.now_ms);
    if (entry != nullptr) {
        entry->lastuse_ms = flow.now_ms;
        const int index = locality_plan_index(plan, entry->dests[0]);
        if (index >= 0 && sched_dest_usable(plan, index, worker) &&
            !locality_overloaded(plan, index, worker))
            return plan.dests[index];
    }
    const int least = sched_least_loaded(plan, worker);
    if (least < 0) return nullptr;
    if (entry == nullptr) entry = &locality_insert(table, flow.daddr, flow.now_ms);
    entry->dests[0] = plan.dests[least];
    entry->count = 1;
    return plan.dests[least];
}

}  // namespace

constexpr Scheduler kSchedLblc{
    .name = "lblc",
    .needs_locality = true,
    .build = lblc_build,
    .pick = lblc_pick,
};

}  // namespace xvs::lb
