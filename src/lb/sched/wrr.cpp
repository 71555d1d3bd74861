// Weighted round robin ("wrr"), IPVS's interleaved variant: the cursor walks the dests in plan
// order while a current weight steps down from max_weight by gcd_weight; a dest is picked when
// its weight is at least the current weight. Over one cycle each dest gets weight/gcd picks,
// spread out rather than in runs (5:3:2 gives A A A B A B C A B C). Weight-0 dests never match.
#include <algorithm>
#include <numeric>

#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

// max_weight and gcd_weight over the dests with weight > 0; max 0 means nothing to pick.
void wrr_build(SchedPlan& plan) {
    sched_plan_snapshot_weights(plan);
    int32_t max_weight = 0;
    int32_t gcd_weight = 0;
    for (int32_t weight : plan.weights) {
        if (weight <= 0) continue;
        max_weight = std::max(max_weight, weight);
        gcd_weight = std::gcd(gcd_weight, weight);
    }
    plan.max_weight = max_weight;
    plan.gcd_weight = gcd_weight > 0 ? gcd_weight : 1;
}

// cursor.index is the next position to examine; current_weight is the level in force. Passing
// position 0 starts a new round one gcd lower (wrapping to max_weight), as IPVS does.
Dest* wrr_pick(const SchedPlan& plan, SchedCursor& cursor, unsigned worker,
               const FlowKey& /*flow*/) {
    const size_t count = plan.dests.size();
    if (count == 0 || plan.max_weight <= 0) return nullptr;

    size_t pos = cursor.index;
    int32_t current = cursor.current_weight;
    // State from an older plan (or a fresh cursor) restarts the cycle: a position past the
    // end, a level above the new maximum, or a level <= 0 mid-round would otherwise let a
    // weight-0 dest match or waste a lap.
    if (pos >= count || current > plan.max_weight || (current <= 0 && pos != 0)) {
        pos = 0;
        current = 0;
    }
    // Unusable dests (over a threshold, or passed over for a SYN retry: sched_dest_usable)
    // are skipped. Levels above the largest usable weight then match nothing: start a round
    // there directly (IPVS walks through them without picking, so the sequence is the same)
    // and the two-lap bound below still holds. Without thresholds that top is the plan's
    // maximum unless a dest is passed over, which the first search failing tells.
    auto usable_top = [&] {
        int32_t top = 0;
        for (size_t i = 0; i < count; ++i)
            if (sched_dest_usable(plan, i, worker)) top = std::max(top, plan.weights[i]);
        return top;
    };
    // Every level in (0, top] is matched by a usable dest of weight top, so one lap after the
    // level is set always finds a dest; two laps bound the loop without relying on that.
    auto search = [&](int32_t top) -> Dest* {
        for (size_t step = 0; step < 2 * count + 1; ++step) {
            if (pos == 0) {
                current -= plan.gcd_weight;
                if (current <= 0) current = plan.max_weight;
                current = std::min(current, top);
            }
            if (plan.weights[pos] >= current && sched_dest_usable(plan, pos, worker)) {
                cursor.index = static_cast<uint32_t>(pos + 1 == count ? 0 : pos + 1);
                cursor.current_weight = current;
                return plan.dests[pos];
            }
            pos = pos + 1 == count ? 0 : pos + 1;
        }
        return nullptr;
    };
    const int32_t top = plan.limits.empty() ? plan.max_weight : usable_top();
    if (top == 0) return nullptr;
    if (Dest* dest = search(top)) return dest;
    if (!plan.limits.empty()) return nullptr;
    const int32_t lower = usable_top();  // a dest passed over: its weight may be the top
    return lower > 0 && lower < top ? search(lower) : nullptr;
}

}  // namespace

constexpr Scheduler kSchedWrr{
    .name = "wrr",
    .build = wrr_build,
    .pick = wrr_pick,
};

}  // namespace xvs::lb
