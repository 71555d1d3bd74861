// Scheduler registry: a fixed table of the ops tables compiled into xvs, looked up by the name
// ipvsadm uses. Referencing every scheduler from here is what links them out of the static lib.
#include <algorithm>
#include <array>
#include <string>

#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

// Registration order is the order sched_names() reports (and xvsctl lists).
// Registration order is ipvsadm(8)'s, then DPVS's conhash.
const std::array<const Scheduler*, 15> kSchedulers{
    &kSchedRr,    &kSchedWrr, &kSchedLc, &kSchedWlc,  &kSchedLblc,
    &kSchedLblcr, &kSchedDh,  &kSchedSh, &kSchedSed,  &kSchedNq,
    &kSchedFo,    &kSchedOvf, &kSchedMh, &kSchedTwos, &kSchedConhash};

// ipvsadm's spellings of the flag bits: generic, then the names sh and mh give them.
constexpr std::array<std::string_view, 3> kFlagGeneric{"flag-1", "flag-2", "flag-3"};
constexpr std::array<std::string_view, 2> kFlagSuffix{"-fallback", "-port"};

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

std::vector<std::string> sched_flag_names(std::string_view sched, uint32_t flags) {
    std::vector<std::string> names;
    const bool named = sched == "sh" || sched == "mh";
    for (size_t bit = 0; bit < kFlagGeneric.size(); ++bit) {
        if ((flags & (1u << bit)) == 0) continue;
        if (named && bit < kFlagSuffix.size())
            names.push_back(std::string(sched) + std::string(kFlagSuffix[bit]));
        else
            names.emplace_back(kFlagGeneric[bit]);
    }
    return names;
}

bool sched_flag_parse(std::string_view name, uint32_t& flag) {
    for (size_t bit = 0; bit < kFlagGeneric.size(); ++bit) {
        if (name == kFlagGeneric[bit]) {
            flag = 1u << bit;
            return true;
        }
    }
    for (std::string_view sched : {"sh", "mh"}) {
        if (!name.starts_with(sched)) continue;
        for (size_t bit = 0; bit < kFlagSuffix.size(); ++bit) {
            if (name.substr(sched.size()) == kFlagSuffix[bit]) {
                flag = 1u << bit;
                return true;
            }
        }
    }
    return false;
}

std::optional<uint32_t> sched_flags_parse(const std::vector<std::string>& names) {
    uint32_t flags = 0;
    for (const std::string& name : names) {
        uint32_t flag = 0;
        if (!sched_flag_parse(name, flag)) return std::nullopt;
        flags |= flag;
    }
    return flags;
}

bool sched_is_prime(uint32_t n) {
    if (n < 2) return false;
    for (uint32_t d = 2; uint64_t{d} * d <= n; ++d) {
        if (n % d == 0) return false;
    }
    return true;
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
