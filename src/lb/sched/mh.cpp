// Maglev hashing ("mh"; Eisenbud et al., "Maglev: A Fast and Reliable Software Network Load
// Balancer", NSDI 2016, section 3.4; IPVS ip_vs_mh.c; Katran): a lookup table of a prime size M
// (default 65537, as Katran; SchedPlan::table_size) maps a hash of the client address (and
// port with mh-port) to a dest. Each dest of weight > 0 walks its own permutation of the slots
// (offset + j * skip mod M, both from hashes of its address and port) and claims the next
// free one when its turn comes. Turns go to the dest whose claims per weight are lowest, so
// every dest ends with M * weight / total slots, within one: weights hold to about 1 / M, and
// removing one of N dests moves few flows of the others (the paper's figure 11). The dests
// take their turns in an order sorted by their hash, not by configuration order, so directors
// of a cluster with the same dest set build the same table. A flow landing on an unusable dest
// (over its -x threshold) gets nothing, unless mh-fallback is set: then the client is rehashed
// up to kFallbackTries times (IPVS walks the whole table; a bound keeps pick O(1)).
#include <algorithm>
#include <numeric>
#include <queue>

#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

constexpr uint32_t kNoDest = UINT32_MAX;
constexpr uint64_t kOffsetSeed = 0x4d41'474c'4f46'4653ULL;
constexpr uint64_t kSkipSeed = 0x4d41'474c'534b'4950ULL;
constexpr uint64_t kLookupSeed = 0x4d41'474c'4c4f'4f4bULL;
constexpr uint32_t kFallbackTries = 64;

void mh_build(SchedPlan& plan) {
    sched_plan_snapshot_weights(plan);
    uint32_t size = plan.table_size != 0 ? plan.table_size : kMhDefaultTableSize;
    if (!sched_is_prime(size) || size > kMhMaxTableSize)
        size = kMhDefaultTableSize;  // refused earlier
    plan.table.assign(size, kNoDest);
    plan.table_div = Divider(size);

    struct Walker {
        uint32_t index;  // in plan.dests
        uint64_t order;  // hash: the turn order among equals
        uint32_t next;   // next slot of its permutation
        uint32_t skip;
        uint64_t claims = 0;
    };
    std::vector<Walker> walkers;
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        if (plan.weights[i] <= 0) continue;
        const Dest& dest = *plan.dests[i];
        const uint64_t offset = sched_hash(dest.addr, dest.port, kOffsetSeed);
        const uint64_t skip = sched_hash(dest.addr, dest.port, kSkipSeed);
        walkers.push_back(Walker{static_cast<uint32_t>(i), offset,
                                 static_cast<uint32_t>(offset % size),
                                 static_cast<uint32_t>(skip % (size - 1) + 1)});
    }
    if (walkers.empty()) return;

    // Min-heap on (claims + 1) / weight: the dest furthest below its share claims next.
    auto later = [&](const Walker* a, const Walker* b) {
        const unsigned __int128 lhs = static_cast<unsigned __int128>(a->claims + 1) *
                                      static_cast<uint32_t>(plan.weights[b->index]);
        const unsigned __int128 rhs = static_cast<unsigned __int128>(b->claims + 1) *
                                      static_cast<uint32_t>(plan.weights[a->index]);
        if (lhs != rhs) return lhs > rhs;
        return a->order > b->order;
    };
    std::priority_queue<Walker*, std::vector<Walker*>, decltype(later)> turns(later);
    for (Walker& w : walkers) turns.push(&w);
    for (uint32_t filled = 0; filled < size; ++filled) {
        Walker* w = turns.top();
        turns.pop();
        // A permutation of a prime-sized table visits every slot, so a free one is found.
        while (plan.table[w->next] != kNoDest) {
            w->next = static_cast<uint32_t>((uint64_t{w->next} + w->skip) % size);
        }
        plan.table[w->next] = w->index;
        ++w->claims;
        turns.push(w);
    }
}

Dest* mh_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
              const FlowKey& flow) {
    if (plan.table.empty()) return nullptr;
    const uint16_t port = (plan.flags & kSchedFlagPort) != 0 ? flow.sport : 0;
    const uint32_t tries = (plan.flags & kSchedFlagFallback) != 0 ? kFallbackTries : 1;
    for (uint32_t attempt = 0; attempt < tries; ++attempt) {
        const uint32_t index =
            plan.table[plan.table_div.mod(sched_hash(flow.saddr, port, kLookupSeed + attempt))];
        if (index == kNoDest) return nullptr;  // no dest of weight > 0
        if (sched_dest_usable(plan, index, worker)) return plan.dests[index];
    }
    return nullptr;
}

}  // namespace

constexpr Scheduler kSchedMh{
    .name = "mh",
    .flags = kSchedFlagFallback | kSchedFlagPort,
    .build = mh_build,
    .pick = mh_pick,
};

}  // namespace xvs::lb
