// Scheduler registry: a fixed table of the ops tables compiled into xvs, looked up by the name
// ipvsadm uses. Referencing every scheduler from here is what links them out of the static lib.
#include <array>
#include <algorithm>

#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

// Registration order is the order sched_names() reports (and xvsctl lists).
const std::array<const Scheduler*, 3> kSchedulers{&kSchedRr, &kSchedWrr, &kSchedWlc};

}  // namespace

const Scheduler* sched_find(std::string_view name) {
    for (const Scheduler* sched : kSchedulers) {
        if (sched->name == name) return sched;
    }
    return nullptr;
}

std::vector<std::string_view> sched_names() {
    std::vector<std::string_view> names;
    names.reserve(kSchedulers.size());
    for (const Scheduler* sched : kSchedulers) names.push_back(sched->name);
    return names;
}

void sched_plan_snapshot_weights(SchedPlan& plan) {
    if (plan.weights.size() != plan.dests.size()) {
        plan.weights.resize(plan.dests.size());
        for (size_t i = 0; i < plan.dests.size(); ++i) {
            plan.weights[i] = plan.dests[i]->weight.load(std::memory_order_relaxed);
        }
    }
    for (int32_t& weight : plan.weights) weight = std::max(weight, 0);
}

}  // namespace xvs::lb
