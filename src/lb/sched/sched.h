// Scheduler contract (STYLE.md rule 5).
//   build(plan)  control plane, on every config change; may allocate; fills plan.data.
//   pick(...)    data plane, per new connection; O(1)-ish; never allocates; returns nullptr when
//                no dest is available (all weight 0 or none).
// Connection counts reach schedulers through Dest::stats[worker] (active/inactive), which the
// calling worker itself maintains: each worker balances the connections it owns, so no
// cross-core reads happen on the packet path. With one worker this is exactly IPVS's view.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/divider.h"
#include "lb/admission.h"
#include "lb/dest.h"
#include "net/quic.h"

namespace xvs::lb {

// What a scheduler may hash on (sh, dh, mh, conhash, lblc/lblcr by daddr), and the worker's
// clock for the schedulers that age state (lblc, lblcr).
struct FlowKey {
    net::InetAddr saddr;
    net::InetAddr daddr;
    uint16_t sport;  // network order
    uint16_t dport;
    uint8_t proto;
    uint64_t now_ms = 0;  // the picking worker's clock
    // conhash with `hash_target qid` (DPVS): the QUIC Destination Connection ID of the flow's
    // first datagram (net/quic.h), hashed in place of saddr; none (len 0) otherwise.
    net::QuicCid cid{};
};

// Scheduler flags (ipvsadm -b), as IPVS numbers them: flag-1 is sh-fallback / mh-fallback,
// flag-2 sh-port / mh-port, flag-3 has no scheduler using it. Scheduler::flags says which a
// scheduler accepts; the Director refuses the others.
inline constexpr uint32_t kSchedFlagFallback = 1u << 0;  // an unusable dest: try the next
inline constexpr uint32_t kSchedFlagPort = 1u << 1;      // hash the source port as well
inline constexpr uint32_t kSchedFlag3 = 1u << 2;

// Maglev lookup table size when none is configured: Katran's default, a prime.
inline constexpr uint32_t kMhDefaultTableSize = 65537;
inline constexpr uint32_t kMhMaxTableSize = 1u << 24;
bool sched_is_prime(uint32_t n);

struct LocalityTable;  // lblc/lblcr per-worker state, lb/sched/locality.h

// Immutable per snapshot: the service's dests with the weights in force when built.
struct SchedPlan {
    std::vector<Dest*> dests;
    std::vector<int32_t> weights;  // same order as dests; snapshot of Dest::weight
    // Scheduler-specific precomputed data (wrr: max weight, gcd, and its cycle in `table`).
    int32_t max_weight = 0;
    int32_t gcd_weight = 1;
    std::vector<uint32_t> table;  // e.g. an interleaved sequence or a Maglev lookup table
    // table.size() for the per-connection lookup (mh): a division instruction's latency on
    // every new conn otherwise.
    Divider table_div{1};
    // Connection thresholds (-x/-y), same order as dests; empty = none. Each worker enforces
    // its share of them (lb/admission.h), so the plan also carries the worker count.
    std::vector<DestLimit> limits;
    unsigned workers = 1;
    // Inputs besides the dests: ipvsadm -b flags (kSchedFlag*) and the Maglev table size
    // (0 = kMhDefaultTableSize).
    uint32_t flags = 0;
    uint32_t table_size = 0;
    std::vector<uint64_t> ring;  // conhash: (point << 32 | dest index), sorted by point
    // lblc/lblcr: one table per worker (index = worker id), allocated by the control plane
    // once per service and owned by it (Service::locality), so it survives config changes;
    // only worker w writes locality[w]. nullptr for every other scheduler.
    LocalityTable* locality = nullptr;
};

// May dest i of the plan take a new connection on this worker? Weight above 0, not over its
// connection threshold, and not the one a refused connection is being moved away from
// (DestWorkerStats::sched_skip). Every scheduler asks this instead of testing the weight alone.
inline bool sched_dest_usable(const SchedPlan& plan, size_t i, unsigned worker) {
    if (plan.weights[i] <= 0) return false;
    DestWorkerStats& stats = plan.dests[i]->stats[worker];
    if (stats.sched_skip) return false;
    if (plan.limits.empty()) return true;
    return !dest_overloaded(plan.limits[i], stats, worker, plan.workers);
}

// Mutable per (service, worker): lives in the Service, written only by its worker.
struct alignas(64) SchedCursor {
    uint32_t index = 0;       // rr/wrr position
    int32_t current_weight = 0;  // wrr
    uint32_t seq = 0;  // wrr: the entry of the plan's cycle table to try next (lb/sched/wrr.cpp)
    uint64_t plan_generation = 0;  // plan this cursor was last used with (reset on change)
    uint64_t random = 0;           // twos: this worker's xorshift state (0 = not seeded)
};

struct Scheduler {
    std::string_view name;
    uint32_t flags = 0;           // the kSchedFlag* it accepts
    bool needs_locality = false;  // build/pick use plan.locality (lblc, lblcr)
    void (*build)(SchedPlan& plan);
    Dest* (*pick)(const SchedPlan& plan, SchedCursor& cursor, unsigned worker,
                  const FlowKey& flow);
};

// Registry lookup by ipvsadm name ("rr", "wrr", "wlc", ...); nullptr if unknown.
const Scheduler* sched_find(std::string_view name);
// Names of every registered scheduler, in registration order.
std::vector<std::string_view> sched_names();
// ipvsadm's names of a set of kSchedFlag* for a scheduler ("sh-fallback", "mh-port",
// "flag-3"...), in bit order; and the reverse (false for a name that is none of these).
std::vector<std::string> sched_flag_names(std::string_view sched, uint32_t flags);
bool sched_flag_parse(std::string_view name, uint32_t& flag);
// The kSchedFlag* of a list of such names; nullopt if one is none of them.
std::optional<uint32_t> sched_flags_parse(const std::vector<std::string>& names);

}  // namespace xvs::lb
