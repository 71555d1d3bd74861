// lblc/lblcr tables, see lb/sched/locality.h.
#include "lb/sched/locality.h"

#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

constexpr uint64_t kSetSeed = 0x4c42'4c43'5345'5453ULL;

LocalityEntry* set_of(LocalityTable& table, const net::InetAddr& daddr) {
    const uint64_t set = sched_hash(daddr, 0, kSetSeed) % kLocalitySets;
    return &table.entries[set * kLocalityWays];
}

bool expired(const LocalityEntry& entry, uint64_t now_ms) {
    return now_ms >= entry.lastuse_ms && now_ms - entry.lastuse_ms >= kLocalityExpireMs;
}

}  // namespace

LocalityEntry* locality_find(LocalityTable& table, const net::InetAddr& daddr, uint64_t now_ms) {
    LocalityEntry* ways = set_of(table, daddr);
    for (uint32_t w = 0; w < kLocalityWays; ++w) {
        LocalityEntry& entry = ways[w];
        if (entry.count == 0 || !(entry.daddr == daddr)) continue;
        if (expired(entry, now_ms)) {
            entry.count = 0;
            return nullptr;
        }
        return &entry;
    }
    return nullptr;
}

LocalityEntry& locality_insert(LocalityTable& table, const net::InetAddr& daddr, uint64_t now_ms) {
    LocalityEntry* ways = set_of(table, daddr);
    LocalityEntry* victim = nullptr;
    for (uint32_t w = 0; w < kLocalityWays; ++w) {
        LocalityEntry& entry = ways[w];
        if (entry.count == 0 || expired(entry, now_ms) || entry.daddr == daddr) {
            victim = &entry;
            break;
        }
        if (victim == nullptr || entry.lastuse_ms < victim->lastuse_ms) victim = &entry;
    }
    if (victim->count != 0 && !expired(*victim, now_ms) && !(victim->daddr == daddr)) {
        ++table.evictions;
    }
    *victim = LocalityEntry{};
    victim->daddr = daddr;
    victim->lastuse_ms = now_ms;
    victim->lastmod_ms = now_ms;
    return *victim;
}

int locality_plan_index(const SchedPlan& plan, const Dest* dest) {
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        if (plan.dests[i] == dest) return static_cast<int>(i);
    }
    return -1;
}

bool locality_overloaded(const SchedPlan& plan, size_t i, unsigned worker) {
    if (plan.dests[i]->stats[worker].active <= static_cast<uint32_t>(plan.weights[i])) return false;
    for (size_t j = 0; j < plan.dests.size(); ++j) {
        if (uint64_t{plan.dests[j]->stats[worker].active} * 2 <
            static_cast<uint64_t>(plan.weights[j]))
            return true;
    }
    return false;
}

}  // namespace xvs::lb
