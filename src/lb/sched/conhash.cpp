// Consistent hashing ("conhash", DPVS): each dest of weight > 0 puts kPointsPerWeight points
// per unit of weight / gcd on a 32-bit hash ring (scaled down so the ring holds at most
// kMaxPoints), and a client address goes to the dest of the first point at or after its hash.
// Adding or removing a dest moves only the clients whose next point changes, about 1 / N of
// them. The ring is sorted in build; pick is one binary search. A client whose dest is unusable
// (over its -x threshold) gets nothing, as DPVS. A UDP service with `hash_target qid` (DPVS's
// keepalived keyword, ipvsadm --hash-target) hashes the QUIC Destination Connection ID of the
// flow's first datagram instead (FlowKey::cid, read by conn_create with net/quic.h), so the
// flows of one QUIC connection meet one dest from any client address while the ID stays;
// datagrams that carry none are hashed by the client address.
#include <algorithm>
#include <numeric>

#include "lb/sched/schedulers.h"

namespace xvs::lb {

namespace {

constexpr uint64_t kPointsPerWeight = 160;  // DPVS's replica count
constexpr uint64_t kMaxPoints = 1u << 16;
constexpr uint64_t kPointSeed = 0x434f'4e48'4153'4850ULL;
constexpr uint64_t kLookupSeed = 0x434f'4e48'4c4f'4f4bULL;

void conhash_build(SchedPlan& plan) {
    sched_plan_snapshot_weights(plan);
    plan.ring.clear();
    int32_t gcd = 0;
    uint64_t units = 0;
    for (int32_t weight : plan.weights) {
        if (weight > 0) gcd = std::gcd(gcd, weight);
    }
    if (gcd == 0) return;
    for (int32_t weight : plan.weights) {
        if (weight > 0) units += static_cast<uint32_t>(weight / gcd);
    }
    // Points per weight unit, at least one per dest.
    const uint64_t per_unit = std::max<uint64_t>(1, std::min(kPointsPerWeight, kMaxPoints / units));
    for (size_t i = 0; i < plan.dests.size(); ++i) {
        if (plan.weights[i] <= 0) continue;
        const Dest& dest = *plan.dests[i];
        const uint64_t points = per_unit * static_cast<uint32_t>(plan.weights[i] / gcd);
        for (uint64_t p = 0; p < points; ++p) {
            const uint32_t point =
                static_cast<uint32_t>(sched_hash(dest.addr, dest.port, kPointSeed + p));
            plan.ring.push_back(uint64_t{point} << 32 | i);
        }
    }
    std::sort(plan.ring.begin(), plan.ring.end());
}

Dest* conhash_pick(const SchedPlan& plan, SchedCursor& /*cursor*/, unsigned worker,
                   const FlowKey& flow) {
    if (plan.ring.empty()) return nullptr;
    const uint64_t hash = flow.cid.len != 0 ? net::quic_cid_hash(flow.cid, kLookupSeed)
                                            : sched_hash(flow.saddr, 0, kLookupSeed);
    const uint64_t point = hash & 0xffff'ffffULL;
    auto it = std::lower_bound(plan.ring.begin(), plan.ring.end(), point << 32);
    if (it == plan.ring.end()) it = plan.ring.begin();  // the ring wraps
    const size_t index = static_cast<uint32_t>(*it);
    return sched_dest_usable(plan, index, worker) ? plan.dests[index] : nullptr;
}

}  // namespace

constexpr Scheduler kSchedConhash{
    .name = "conhash",
    .build = conhash_build,
    .pick = conhash_pick,
};

}  // namespace xvs::lb
