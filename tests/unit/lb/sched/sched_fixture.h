// Shared by the scheduler tests: owns Dests (which are neither copyable nor movable) and builds
// a SchedPlan over them with a named scheduler from the registry, as the control plane would
// (flags, Maglev table size and lblc/lblcr tables included).
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>

#include "lb/sched/locality.h"
#include "lb/sched/sched.h"

namespace xvs::lb::testing {

inline constexpr unsigned kFixtureWorkers = 2;

class SchedFixture {
public:
  explicit SchedFixture(std::string_view name, uint32_t flags = 0, uint32_t table_size = 0)
      : sched_(sched_find(name)), flags_(flags), table_size_(table_size) {
      if (sched_ != nullptr && sched_->needs_locality)
          locality_ = std::make_unique<LocalityTable[]>(kFixtureWorkers);
  }

  // Adds dests with the given weights (Dest::weight) and returns the built plan. Dest i has
  // address 10.0.(i / 256).(i % 256) and port 8000 + i.
  const SchedPlan& build(std::initializer_list<int32_t> weights) {
      for (int32_t weight : weights) add(weight);
      return rebuild();
  }
  Dest& add(int32_t weight) {
      Dest& dest = dests_.emplace_back();
      const uint32_t i = static_cast<uint32_t>(dests_.size() - 1);
      dest.addr = net::InetAddr::v4(__builtin_bswap32(0x0a000000u | i));
      dest.port = static_cast<uint16_t>(8000 + i);
      dest.weight = weight;
      return dest;
  }

    // Rebuilds the plan from every dest not marked removed, snapshotting Dest::weight.
    const SchedPlan& rebuild() {
        plan_ = SchedPlan{};
        for (Dest& dest : dests_) {
            if (!dest.removed) plan_.dests.push_back(&dest);
        }
        plan_.flags = flags_;
        plan_.table_size = table_size_;
        plan_.locality = locality_.get();
        sched_->build(plan_);
        return plan_;
    }

    // Picks for the fixture's flow, or a fresh random flow (addresses and ports) per pick.
    Dest* pick(unsigned worker = 0) {
        if (vary_flow_) randomise_flow();
        return sched_->pick(plan_, cursor_, worker, flow_);
    }
    Dest* pick_for(const FlowKey& flow, unsigned worker = 0) {
        return sched_->pick(plan_, cursor_, worker, flow);
    }
    void vary_flow(bool on) { vary_flow_ = on; }
    FlowKey random_flow() {
        FlowKey flow{};
        flow.saddr = net::InetAddr::v4(static_cast<uint32_t>(rng_()));
        flow.daddr = net::InetAddr::v4(static_cast<uint32_t>(rng_()));
        flow.sport = static_cast<uint16_t>(rng_());
        flow.dport = 80;
        flow.proto = 6;
        flow.now_ms = flow_.now_ms;
        return flow;
    }

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
    size_t dest_count() const { return dests_.size(); }
    SchedPlan& plan() { return plan_; }
    SchedCursor& cursor() { return cursor_; }
    FlowKey& flow() { return flow_; }
    LocalityTable* locality() { return locality_.get(); }

  private:
    void randomise_flow() { flow_ = random_flow(); }

    const Scheduler* sched_;
    uint32_t flags_;
    uint32_t table_size_;
    std::unique_ptr<LocalityTable[]> locality_;
    std::deque<Dest> dests_;
    SchedPlan plan_;
    SchedCursor cursor_;
    FlowKey flow_{};
    bool vary_flow_ = false;
    std::mt19937_64 rng_{12345};
};

}  // namespace xvs::lb::testing
