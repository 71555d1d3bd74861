// Internal to lb/sched/: the ops table each scheduler file defines and the plan helpers they
// share. Other code finds schedulers only through sched_find() (sched.h), never these symbols.
#pragma once

#include "common/flat_map.h"
#include "lb/sched/sched.h"

namespace xvs::lb {

extern const Scheduler kSchedRr;
extern const Scheduler kSchedWrr;
extern const Scheduler kSchedWlc;
extern const Scheduler kSchedLc;
extern const Scheduler kSchedSed;
extern const Scheduler kSchedNq;
extern const Scheduler kSchedSh;
extern const Scheduler kSchedDh;
extern const Scheduler kSchedLblc;
extern const Scheduler kSchedLblcr;
extern const Scheduler kSchedFo;
extern const Scheduler kSchedOvf;
extern const Scheduler kSchedMh;
extern const Scheduler kSchedTwos;
extern const Scheduler kSchedConhash;

// Makes plan.weights one entry per dest. A caller that already filled it (one per dest) keeps
// its values; otherwise Dest::weight is snapshotted now, so pick() never reads the live atomic
// and a weight change only takes effect with the next plan. Negative weights become 0.
void sched_plan_snapshot_weights(SchedPlan& plan);

// IPVS's connection overhead: an active conn costs 256 lingering ones (ip_vs_dest_conn_overhead).
inline uint64_t sched_overhead(const DestWorkerStats& stats) {
    return uint64_t{stats.active} * 256 + stats.inactive;
}

// overhead_a / weight_a < overhead_b / weight_b without division, as IPVS compares. 128-bit
// products: overhead reaches 2^40 and weight 2^31, which overflows 64 bits.
inline bool sched_less_loaded(uint64_t overhead_a, int32_t weight_a, uint64_t overhead_b,
                              int32_t weight_b) {
    using U128 = unsigned __int128;
    return U128{overhead_a} * static_cast<uint32_t>(weight_b) <
           U128{overhead_b} * static_cast<uint32_t>(weight_a);
}

// The usable dest with the least overhead / weight (wlc's rule; lblc and lblcr schedule with
// it too), first in plan order on ties; -1 when none is usable.
int sched_least_loaded(const SchedPlan& plan, unsigned worker);

// Hash of an address (and port) under a seed, the same on every director and every run, so
// directors of a cluster that share a configuration pick alike (sh, dh, mh, conhash).
inline uint64_t sched_hash(const net::InetAddr& addr, uint16_t port, uint64_t seed) {
    return mix64(mix64(addr.word(0) ^ seed) ^ addr.word(1) ^ (uint64_t{port} << 48));
}

// sh and dh: IPVS's 256-bucket table (CONFIG_IP_VS_SH_TAB_BITS / DH_TAB_BITS = 8).
inline constexpr uint32_t kHashBuckets = 256;

}  // namespace xvs::lb
