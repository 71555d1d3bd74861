// Source hashing ("sh") and destination hashing ("dh"), IPVS ip_vs_sh.c / ip_vs_dh.c: a
// 256-bucket table maps a hash of the client address (sh) or the destination address (dh) to a
// dest, so one address always meets the same dest while the dest set stays. sh fills the
// buckets in rounds, each dest taking `weight` consecutive buckets per round (a weight-0 dest
// still takes one, as IPVS, so its clients find no dest until fallback); dh ignores weights
// and gives each dest one bucket per round. A hash landing on an unusable dest (weight 0, over
// its -x threshold) schedules nothing, unless sh-fallback is set: then the address is rehashed
// with successive seeds until a usable dest turns up (IPVS probes the following buckets; a
// rehash spreads a failed dest's clients over all the others instead of its neighbour's).
// sh-port hashes the client port too. The hash is keyed by nothing local, so directors with the
// same dest list agree.
#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

constexpr uint32_t kNoDest = UINT32_MAX;
constexpr uint64_t kHashSeed = 0x5348'5348'5348'5348ULL;  // "SHSH"

void buckets_fill(SchedPlan& plan, bool weighted) {
    sched_plan_snapshot_weights(plan);
    plan.table.assign(kHashBuckets, kNoDest);
    const size_t count = plan.dests.size();
    if (count == 0) return;
    size_t pos = 0;
    int32_t taken = 0;
    for (uint32_t& bucket : plan.table) {
        bucket = static_cast<uint32_t>(pos);
        if (!weighted || ++taken >= plan.weights[pos]) {
            pos = pos + 1 == count ? 0 : pos + 1;
            taken = 0;
        }
    }
}

void sh_build(SchedPlan& plan) {
    buckets_fill(plan, /*weighted=*/true);
}
void dh_build(SchedPlan& plan) {
    buckets_fill(plan, /*weighted=*/false);
}

Dest* bucket_pick(const SchedPlan& plan, unsigned worker, const net::InetAddr& addr,
                  uint16_t port) {
    if (plan.table.size() != kHashBuckets || plan.dests.empty()) return nullptr;
    const bool fallback = (plan.flags & kSchedFlagFallback) != 0;
    for (uint32_t attempt = 0; attempt < (fallback ? kHashBuckets : 1); ++attempt) {
        const uint32_t index =
            plan.table[sched_hash(addr, port, kHashSeed + attempt) % kHashBuckets];
        if (index == kNoDest) return nullptr;
        if (sched_dest_usable(plan, index, worker)) return plan.dests[index];
    }
    return nullptr;
}

Dest* sh_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
              const FlowKey& flow) {
    const uint16_t port = (plan.flags & kSchedFlagPort) != 0 ? flow.sport : 0;
    return bucket_pick(plan, worker, flow.saddr, port);
}

Dest* dh_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
              const FlowKey& flow) {
    return bucket_pick(plan, worker, flow.daddr, 0);
}

}  // namespace

constexpr Scheduler kSchedSh{
    .name = "sh",
    .flags = kSchedFlagFallback | kSchedFlagPort,
    .build = sh_build,
    .pick = sh_pick,
};

constexpr Scheduler kSchedDh{
    .name = "dh",
    .build = dh_build,
    .pick = dh_pick,
};

}  // namespace xvs::lb
