// Weighted round robin ("wrr"), IPVS's interleaved variant: the cursor walks the dests in plan
// order while a current weight steps down from max_weight by gcd_weight; a dest is picked when
// its weight is at least the current weight. Over one cycle each dest gets weight/gcd picks,
// spread out rather than in runs (5:3:2 gives A A A B A B C A B C). Weight-0 dests never match.
//
// The walk costs a step per dest passed at each level (~90 instructions a new conn in
// bench/engine). So build() also runs it once over a whole cycle with every dest usable and
// keeps the picks in plan.table; pick() then takes the cycle's next entry when the cursor
// stands exactly where the entry before it left the walk, no thresholds can lower the levels,
// and the entry's dest is usable. From that state the walk would reach the same dest first
// (every position it passes on the way has a weight below the level: it would be an entry
// otherwise), so the two give the same sequence. Anything else (a fresh or stale cursor, a
// dest passed over, -x/-y thresholds) walks as before, and the walk puts the table's place
// back in step with its pick.
#include <algorithm>
#include <numeric>

#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

// The cycle table: four words an entry, in the walk's order (levels from max_weight down by
// gcd_weight, positions ascending within a level): the dest's position and the level it is
// picked at, and the cursor the walk leaves after the entry before it (the last entry's for
// the first). A cycle has sum(weight / gcd) entries; above this many the table is not built
// and every pick walks (64 KiB a service at most: a service's weights are mostly small, and
// a cycle of many picks only makes the table larger, not the walk longer).
constexpr uint64_t kTableMaxEntries = 4096;
constexpr size_t kEntryWords = 4;

struct Entry {
    uint32_t pos;
    int32_t level;
    uint32_t from_index;  // SchedCursor::index and current_weight before this entry's pick
    int32_t from_level;
};
Entry entry(const SchedPlan& plan, size_t i) {
    const uint32_t* w = &plan.table[kEntryWords * i];
    return Entry{w[0], static_cast<int32_t>(w[1]), w[2], static_cast<int32_t>(w[3])};
}

// max_weight and gcd_weight over the dests with weight > 0 (max 0 means nothing to pick), and
// the cycle table when it is small enough.
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
    plan.table.clear();
    uint64_t entries = 0;
    for (int32_t weight : plan.weights)
        if (weight > 0) entries += static_cast<uint64_t>(weight / plan.gcd_weight);
    if (entries == 0 || entries > kTableMaxEntries) return;
    std::vector<Entry> cycle;
    cycle.reserve(entries);
    const size_t count = plan.weights.size();
    // Every weight is a multiple of the gcd, so the levels end at gcd_weight itself.
    for (int32_t level = max_weight; level > 0; level -= plan.gcd_weight)
        for (size_t pos = 0; pos < count; ++pos)
            if (plan.weights[pos] >= level)
                cycle.push_back(Entry{static_cast<uint32_t>(pos), level, 0, 0});
    plan.table.reserve(kEntryWords * entries);
    for (size_t i = 0; i < cycle.size(); ++i) {
        const Entry& prev = cycle[(i == 0 ? cycle.size() : i) - 1];
        const uint32_t from_index = prev.pos + 1 == count ? 0 : prev.pos + 1;
        plan.table.insert(plan.table.end(), {cycle[i].pos, static_cast<uint32_t>(cycle[i].level),
                                             from_index, static_cast<uint32_t>(prev.level)});
    }
}

// The table's entry after the walk's pick (pos, level), or `entries` when that pick is none of
// the table's (a level a threshold lowered). Entries are ordered by level descending, then
// position: a binary search.
size_t entry_after(const SchedPlan& plan, size_t entries, size_t pos, int32_t level) {
    size_t lo = 0, hi = entries;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const Entry e = entry(plan, mid);
        if (e.level > level || (e.level == level && e.pos < pos))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == entries) return entries;
    const Entry e = entry(plan, lo);
    if (e.level != level || e.pos != pos) return entries;
    return lo + 1 == entries ? 0 : lo + 1;
}

// cursor.index is the next position to examine; current_weight is the level in force. Passing
// position 0 starts a new round one gcd lower (wrapping to max_weight), as IPVS does.
[[gnu::noinline]] Dest* wrr_walk(const SchedPlan& plan, SchedCursor& cursor, unsigned worker) {
    const size_t count = plan.dests.size();
    if (count == 0 || plan.max_weight <= 0) return nullptr;
    const size_t entries = plan.table.size() / kEntryWords;

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
                if (entries != 0)
                    cursor.seq = static_cast<uint32_t>(entry_after(plan, entries, pos, current));
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

// The cycle table's entry seq (see the top of this file) when the cursor is where the walk
// left it before that entry and the entry's dest is usable; the walk otherwise.
Dest* wrr_pick(const SchedPlan& plan, SchedCursor& cursor, unsigned worker,
               const FlowKey& /*flow*/) {
    const size_t entries = plan.table.size() / kEntryWords;
    if (cursor.seq < entries && plan.limits.empty()) {
        const Entry e = entry(plan, cursor.seq);
        if (cursor.index == e.from_index && cursor.current_weight == e.from_level &&
            sched_dest_usable(plan, e.pos, worker)) {
            const size_t count = plan.dests.size();
            cursor.index = static_cast<uint32_t>(e.pos + 1 == count ? 0 : e.pos + 1);
            cursor.current_weight = e.level;
            cursor.seq = cursor.seq + 1 == entries ? 0 : cursor.seq + 1;
            return plan.dests[e.pos];
        }
    }
    return wrr_walk(plan, cursor, worker);
}

}  // namespace

constexpr Scheduler kSchedWrr{
    .name = "wrr",
    .build = wrr_build,
    .pick = wrr_pick,
};

}  // namespace xvs::lb
