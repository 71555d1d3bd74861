// Shared by the scheduler tests: owns Dests (which are neither copyable nor movable) and builds
// a SchedPlan over them with a named scheduler from the registry, as the control plane would.
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <initializer_list>
#include <map>

#include "lb/sched/sched.h"

namespace xvs::lb::testing {

class SchedFixture {
public:
    explicit SchedFixture(std::string_view name) : sched_(sched_find(name)) {}

    // Adds dests with the given weights (Dest::weight) and returns the built plan.
    const SchedPlan& build(std::initializer_list<int32_t> weights) {
        for (int32_t weight : weights) {
            Dest& dest = dests_.emplace_back();
            dest.port = static_cast<uint16_t>(8000 + dests_.size() - 1);
            dest.weight = weight;
        }
        return rebuild();
    }

    // Rebuilds the plan from every dest not marked removed, snapshotting Dest::weight.
    const SchedPlan& rebuild() {
        plan_ = SchedPlan{};
        for (Dest& dest : dests_) {
            if (!dest.removed) plan_.dests.push_back(&dest);
        }
        sched_->build(plan_);
        return plan_;
    }

    Dest* pick(unsigned worker = 0) { return sched_->pick(plan_, cursor_, worker, flow_); }

    // Index of dest in creation order, -1 for nullptr, so failures print something readable.
    int index_of(const Dest* dest) const {
        for (size_t i = 0; i < dests_.size(); ++i) {
            if (&dests_[i] == dest) return static_cast<int>(i);
        }
        return -1;
    }

    // n picks, returned as dest indices.
    std::vector<int> picks(size_t n, unsigned worker = 0) {
        std::vector<int> out;
        for (size_t i = 0; i < n; ++i) out.push_back(index_of(pick(worker)));
        return out;
    }

    std::map<int, int> histogram(size_t n) {
        std::map<int, int> counts;
        for (int index : picks(n)) ++counts[index];
        return counts;
    }

    const Scheduler* sched() const { return sched_; }
    Dest& dest(size_t i) { return dests_[i]; }
    SchedPlan& plan() { return plan_; }
    SchedCursor& cursor() { return cursor_; }

private:
    const Scheduler* sched_;
    std::deque<Dest> dests_;
    SchedPlan plan_;
    SchedCursor cursor_;
    FlowKey flow_{};
};

}  // namespace xvs::lb::testing
