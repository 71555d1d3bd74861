// Round robin ("rr"): each new connection goes to the next dest in plan order that has a
// weight above 0. cursor.index is the next position to try; it is reduced modulo the plan
// size, so a cursor left over from a larger plan still points at a valid dest.
#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

void rr_build(SchedPlan& plan) { sched_plan_snapshot_weights(plan); }

Dest* rr_pick(const SchedPlan& plan, SchedCursor& cursor, unsigned worker,
              const FlowKey& /*flow*/) {
    const size_t count = plan.dests.size();
    if (count == 0) return nullptr;
    // A compare, not a modulo (a division's latency on every new conn); only a cursor left
    // over from a larger plan is reduced.
    size_t pos = cursor.index < count ? cursor.index : cursor.index % count;
    // At most one full lap: if no dest is usable (weight > 0, not overloaded) the service takes
    // no new connections.
    for (size_t step = 0; step < count; ++step) {
        if (sched_dest_usable(plan, pos, worker)) {
            cursor.index = static_cast<uint32_t>(pos + 1 == count ? 0 : pos + 1);
            return plan.dests[pos];
        }
        pos = pos + 1 == count ? 0 : pos + 1;
    }
    return nullptr;
}

}  // namespace

constexpr Scheduler kSchedRr{
    .name = "rr",
    .build = rr_build,
    .pick = rr_pick,
};

}  // namespace xvs::lb
