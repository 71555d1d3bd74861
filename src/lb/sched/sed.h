// Shared by sed and nq (lb/sched/sed.cpp): the dest index they pick, -1 when none is usable.
#pragma once

#include "lb/sched/sched.h"

namespace xvs::lb {

// The usable dest with the least (active + 1) / weight; with idle_first, the first usable dest
// with no active conn wins outright (nq).
int sched_sed_index(const SchedPlan& plan, unsigned worker, bool idle_first);

}  // namespace xvs::lb
