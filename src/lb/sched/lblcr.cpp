// Locality-based least connection with replication ("lblcr", IPVS ip_vs_lblcr.c): like lblc,
// but a destination address maps to a set of dests. The least loaded usable member of the set
// serves it; when that one is overloaded (IPVS's rule, lb/sched/locality.h) the least loaded
// dest of the service joins the set and serves instead, so a hot address spreads over more
// dests. A set of several dests that has not changed for the expiry time (24 h, IPVS's
// lblcr_expiration) sheds its most loaded member. Sets hold at most kLocalityMaxDests dests (a
// full set gives up its most loaded member for the newcomer). Table per worker, counts the
// worker's own (Dest::stats[worker]).
#include "lb/sched/locality.h"
#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

void lblcr_build(SchedPlan& plan) {
    sched_plan_snapshot_weights(plan);
}

// Drops the members that have left the plan; fills plan indices of the rest into `index`.
void set_refresh(const SchedPlan& plan, LocalityEntry& entry,
                 std::array<int, kLocalityMaxDests>& index) {
    uint8_t kept = 0;
    for (uint8_t m = 0; m < entry.count; ++m) {
        const int i = locality_plan_index(plan, entry.dests[m]);
        if (i < 0) continue;
        entry.dests[kept] = entry.dests[m];
        index[kept++] = i;
    }
    entry.count = kept;
}

// Position in the set of its least (most) loaded member by overhead / weight; -1 if none.
// The least loaded is chosen among usable members, the most loaded among those of weight > 0.
int set_extreme(const SchedPlan& plan, const LocalityEntry& entry,
                const std::array<int, kLocalityMaxDests>& index, unsigned worker, bool most) {
    int best = -1;
    uint64_t best_overhead = 0;
    int32_t best_weight = 0;
    for (uint8_t m = 0; m < entry.count; ++m) {
        const int i = index[m];
        if (most ? plan.weights[i] <= 0 : !sched_dest_usable(plan, i, worker)) continue;
        const uint64_t overhead = sched_overhead(plan.dests[i]->stats[worker]);
        const bool better =
            most ? sched_less_loaded(best_overhead, best_weight, overhead, plan.weights[i])
                 : sched_less_loaded(overhead, plan.weights[i], best_overhead, best_weight);
        if (best < 0 || better) {
            best = m;
            best_overhead = overhead;
            best_weight = plan.weights[i];
        }
    }
    return best;
}

void set_erase(LocalityEntry& entry, std::array<int, kLocalityMaxDests>& index, int m,
               uint64_t now_ms) {
    for (int k = m; k + 1 < entry.count; ++k) {
        entry.dests[k] = entry.dests[k + 1];
        index[k] = index[k + 1];
    }
    --entry.count;
    entry.lastmod_ms = now_ms;
}

Dest* lblcr_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
                 const FlowKey& flow) {
    if (plan.locality == nullptr) return nullptr;
    LocalityTable& table = plan.locality[worker];
    LocalityEntry* entry = locality_find(table, flow.daddr, flow.now_ms);
    std::array<int, kLocalityMaxDests> index{};
    if (entry != nullptr) {
        entry->lastuse_ms = flow.now_ms;
        set_refresh(plan, *entry, index);
        const int least = set_extreme(plan, *entry, index, worker, /*most=*/false);
        const int least_index = least >= 0 ? index[least] : -1;
        if (entry->count > 1 && flow.now_ms - entry->lastmod_ms > kLocalityExpireMs) {
            const int most = set_extreme(plan, *entry, index, worker, /*most=*/true);
            if (most >= 0) set_erase(*entry, index, most, flow.now_ms);
        }
        if (least_index >= 0 && !locality_overloaded(plan, least_index, worker))
            return plan.dests[least_index];
    }
    const int chosen = sched_least_loaded(plan, worker);
    if (chosen < 0) return nullptr;
    if (entry == nullptr) {
        entry = &locality_insert(table, flow.daddr, flow.now_ms);
    } else {
        for (uint8_t m = 0; m < entry->count; ++m) {
            if (index[m] == chosen) return plan.dests[chosen];  // already a member
        }
        if (entry->count == kLocalityMaxDests) {
            int most = set_extreme(plan, *entry, index, worker, /*most=*/true);
            set_erase(*entry, index, most >= 0 ? most : 0, flow.now_ms);
        }
    }
    entry->dests[entry->count] = plan.dests[chosen];
    index[entry->count] = chosen;
    ++entry->count;
    entry->lastmod_ms = flow.now_ms;
    return plan.dests[chosen];
}

}  // namespace

constexpr Scheduler kSchedLblcr{
    .name = "lblcr",
    .needs_locality = true,
    .build = lblcr_build,
    .pick = lblcr_pick,
};

}  // namespace xvs::lb
