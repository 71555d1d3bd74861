// Several workers (DESIGN.md "Threads"): the worker that creates a conn owns it, and a packet
// of that conn that RSS hands to another worker is passed to the owner here.
//
// Who owns a packet that missed the receiving worker's table (Worker::owner_of):
// - to a local address (FULLNAT return) or a SNAT WAN address: the worker whose share of the
//   local ports holds its destination port, `port % N` (lb/port_pool.h splits the pools so);
// - NAT and NAT-over-tunnel return traffic (RS -> client) carries no port of ours: the worker
//   that created the conn records its outbound tuple in the OwnerTable;
// - to a VIP: the receiving worker (RSS keeps a client flow on one queue), except for
//   persistent services, whose templates must be one per client: there the owner is
//   client-address hash % N.
//
// The hand-over is an SPSC rte_ring per ordered worker pair, in bursts. A full ring toward a
// worker pinned to the same CPU (the default placement on a 2-CPU machine) means the owner
// cannot run while the sender does: the sender yields the CPU once (redirect_yield) and tries
// again. Whatever still finds the ring full is dropped as drop_redirect_full. A redirected
// frame is never redirected again: the owner handles it as its own (a miss there is that
// packet's drop reason).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "common/result.h"
#include "lb/conn.h"
#include "lb/dest.h"

struct rte_ring;

namespace xvs::lb {

// Outbound tuple -> owning worker, shared by every worker, lock-free: a slot is one 64-bit
// word (key hash with the owner in its low byte), claimed by compare-and-swap and cleared by
// the worker that claimed it. Two keys with the same 56-bit hash in one bucket would share an
// owner: the loser's packet goes to a worker that has no conn for it and is dropped there.
class OwnerTable {
public:
    static constexpr unsigned kWays = 8;  // words per 64-byte bucket; two buckets per key
    explicit OwnerTable(uint32_t entries);
    // False when both buckets of the key are full (the caller counts it).
    bool insert(const ConnKey& key, unsigned worker);
    void erase(const ConnKey& key, unsigned worker);
    // The owner, or -1 when no worker recorded the tuple.
    int owner(const ConnKey& key) const;
    size_t memory_bytes() const { return (mask_ + 1) * sizeof(Bucket); }

private:
    struct alignas(64) Bucket {
        std::atomic<uint64_t> w[kWays];
    };
    struct Hash {
        uint32_t b1, b2;
        uint64_t tag;  // low byte zero
    };
    Hash hash(const ConnKey& key) const;
    std::unique_ptr<Bucket[]> buckets_;
    uint32_t mask_ = 0;
};

class Redirect {
public:
    // Frames in flight per worker pair: ~2 ms of a busy owner's traffic, for an owner
    // descheduled that long. Half the spare mbufs of a port's default pool for two workers
    // (ctl/config.h mbufs_per_port_default): a stalled ring must not starve RX.
    static constexpr unsigned kRingSize = 2048;
    // Rings for every ordered pair of `workers` and an owner table for `conns_per_worker`
    // conns on each; needs the EAL.
    static Result<std::unique_ptr<Redirect>> create(unsigned workers, uint32_t conns_per_worker);
    ~Redirect();
    Redirect(const Redirect&) = delete;
    Redirect& operator=(const Redirect&) = delete;

    unsigned workers() const { return n_; }
    rte_ring* ring(unsigned from, unsigned to) const { return rings_[from * kMaxWorkers + to]; }
    OwnerTable& owners() { return owners_; }
    // Frees the frames still in the rings toward `to` (a worker going away); returns how many.
    unsigned drain(unsigned to);

private:
    Redirect(unsigned workers, uint32_t entries) : n_(workers), owners_(entries) {}
    unsigned n_;
    rte_ring* rings_[kMaxWorkers * kMaxWorkers] = {};
    OwnerTable owners_;
};

}  // namespace xvs::lb
