// One neighbour table for every worker (DESIGN.md "Threads": resolved by its owner, published
// like a snapshot). Worker kNeighOwner is the table's only writer; the other workers read what
// it publishes, lock-free (stack/neigh.h), and hand it, over one SPSC ring each, the frames they
// cannot send themselves: packets routed and rewritten (L3 done) whose next hop has no usable
// entry, and every ARP message and neighbour solicitation/advertisement they receive. So a
// neighbour is resolved once, by one worker, whichever worker's conn needs it; the owner queues,
// probes and sends those frames from its own TX queue. With one worker the owner is the only
// worker: no ring, no published copy, nothing changes.
//
// Conservation (stack/conservation.h): a handed frame is consumed on its sender
// (neigh_handoff_sent) and received on the owner (neigh_handoff_received); a full ring drops it
// on the sender (drop_neigh_handoff_full).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "common/result.h"
#include "net/addr.h"
#include "stack/context.h"
#include "stack/ipv6.h"
#include "stack/neigh.h"

struct rte_mbuf;
struct rte_ring;

namespace xvs::stack {

inline constexpr unsigned kNeighOwner = 0;
inline constexpr unsigned kMaxNeighWorkers = 16;  // lb::kMaxWorkers (checked in lb/director.cpp)
inline constexpr uint32_t kNeighHandoffRing = 1024;  // frames per worker ring, by default

// What the rings and the table have in common: owned by the lb::Director, shared by all workers.
class NeighShared {
  public:
    explicit NeighShared(unsigned nworkers)
        : nworkers_(nworkers), table_(4096, NeighTimes{}, nworkers > 1) {}
    NeighShared(const NeighShared&) = delete;
    NeighShared& operator=(const NeighShared&) = delete;

    unsigned workers() const { return nworkers_; }
    Neighbours& table() { return table_; }
    // Worker w's ring to the owner (nullptr: none yet, or w is the owner). Set by w when it is
    // created, cleared when it goes; the owner loads it every poll.
    rte_ring* ring(unsigned w) const { return rings_[w].load(std::memory_order_acquire); }
    void set_ring(unsigned w, rte_ring* r) { rings_[w].store(r, std::memory_order_release); }

  private:
    unsigned nworkers_;
    Neighbours table_;
    std::array<std::atomic<rte_ring*>, kMaxNeighWorkers> rings_{};
};

// Connects a worker's stack context to the shared table: the owner resets the table with its
// timers; another worker creates its ring (ring_size frames, a power of two). Control thread,
// before the workers run. Workers are detached after they stopped, the owner last or not at all
// before the others.
Result<void> neigh_attach(StackContext& ctx, NeighShared& shared, unsigned worker,
                          const NeighTimes& times, uint32_t ring_size = kNeighHandoffRing);
// Frees the worker's ring and the frames still in it (already counted as sent by this worker).
void neigh_detach(StackContext& ctx);

// Non-owner: hands an IP packet (Ethernet header room first, L3 done) to the owner to send to
// next hop `addr` on `port`. Consumes pkt.
void neigh_handoff_output(StackContext& ctx, rte_mbuf* pkt, const net::InetAddr& addr,
                          uint8_t port);
// Non-owner: hands a received ARP frame (v nullptr) or ND message (v from ipv6_validate) to the
// owner, which processes it as received on `port`. Consumes pkt.
void neigh_handoff_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt, const Ipv6View* v);

// Owner: takes what the other workers handed over (a bounded burst per ring) and sends,
// queues or processes it. Returns the frames taken. Nothing to do with one worker.
unsigned neigh_handoff_poll(StackContext& ctx);
// Frames waiting in the neighbour queue that this worker holds (conservation: held): the
// owner's queue; none on the others.
inline uint32_t neigh_held(const StackContext& ctx) {
    return ctx.neigh_owner && ctx.neigh ? ctx.neigh->pending_total : 0;
}
// Frames in this worker's ring not yet taken by the owner (tests' mbuf accounting).
unsigned neigh_handoff_in_flight(const StackContext& ctx);

}  // namespace xvs::stack
