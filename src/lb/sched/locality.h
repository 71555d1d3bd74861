// Per-(service, worker) state of the locality schedulers lblc and lblcr: a table from a
// destination address to the dest (lblc) or dest set (lblcr) it was last sent to. IPVS grows a
// hash table and sweeps it from a timer; here the table is fixed-size and set-associative,
// allocated by the control plane once per service (Service::locality) and written only by the
// worker it belongs to, so pick() neither allocates nor locks. IPVS's rules, applied when an
// entry is met instead of by a timer: an entry unused for kLocalityExpireMs (IPVS's
// lblc_expiration / lblcr_expiration default, 24 h) is gone; when a set is full the least
// recently used entry makes room (IPVS lets its table grow past 16384 entries and then drops
// entries idle for 6 minutes; a bounded table must evict, and counts it in `evictions`).
#pragma once

#include <array>
#include <cstdint>

#include "lb/sched/sched.h"

namespace xvs::lb {

inline constexpr uint32_t kLocalitySets = 1024;
inline constexpr uint32_t kLocalityWays = 4;      // 4096 destination addresses per worker
inline constexpr uint32_t kLocalityMaxDests = 4;  // lblcr: dests per address (IPVS: unbounded)
inline constexpr uint64_t kLocalityExpireMs = 24ull * 3600 * 1000;

struct LocalityEntry {
    net::InetAddr daddr;
    uint64_t lastuse_ms = 0;
    uint64_t lastmod_ms = 0;                       // lblcr: when the set last gained or lost a dest
    std::array<Dest*, kLocalityMaxDests> dests{};  // compared only, never dereferenced
    uint8_t count = 0;                             // 0 = free
};

struct alignas(64) LocalityTable {
    std::array<LocalityEntry, kLocalitySets * kLocalityWays> entries{};
    uint64_t evictions = 0;  // live entries pushed out by a full set
};

// The entry for daddr, nullptr if none or expired (an expired entry is freed).
LocalityEntry* locality_find(LocalityTable& table, const net::InetAddr& daddr, uint64_t now_ms);
// A fresh entry for daddr (count 0, lastuse now): a free or expired way, else the least
// recently used one.
LocalityEntry& locality_insert(LocalityTable& table, const net::InetAddr& daddr, uint64_t now_ms);
// Index of dest in the plan, -1 if it has left it.
int locality_plan_index(const SchedPlan& plan, const Dest* dest);
// IPVS's lblc/lblcr overload rule: dest i holds more active conns than its weight while some
// dest of the service is under half of its own weight.
bool locality_overloaded(const SchedPlan& plan, size_t i, unsigned worker);

}  // namespace xvs::lb
