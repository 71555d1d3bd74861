// Internal to lb/sched/: the ops table each scheduler file defines and the plan helpers they
// share. Other code finds schedulers only through sched_find() (sched.h), never these symbols.
#pragma once

#include "lb/sched/sched.h"

namespace xvs::lb {

extern const Scheduler kSchedRr;
extern const Scheduler kSchedWrr;
extern const Scheduler kSchedWlc;

// Makes plan.weights one entry per dest. A caller that already filled it (one per dest) keeps
// its values; otherwise Dest::weight is snapshotted now, so pick() never reads the live atomic
// and a weight change only takes effect with the next plan. Negative weights become 0.
void sched_plan_snapshot_weights(SchedPlan& plan);

}  // namespace xvs::lb
