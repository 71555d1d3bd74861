// Per-worker connection table: a preallocated Conn pool and a bucketed hash holding two
// entries per connection (inbound tuple client->VIP, outbound tuple RS->LIP). Single writer
// (its worker), so no locks.
//
// Why not rte_hash: its keys live in a separate key store, so a lookup costs three dependent
// cache misses (bucket, key, then the Conn). Here a slot holds a 32-bit signature and the
// Conn index; the tuple is compared against the Conn itself, which the caller needs anyway:
// two misses (bucket, Conn), and 48 bytes less per connection.
//
// Layout: 64-byte buckets of 8 slots; two candidate buckets per key (two independent CRC32C
// hashes), sized for <= 50% load, so an insert finding both full is vanishingly rare and is
// counted by the caller when it happens.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "lb/conn.h"

namespace xvs::lb {

struct ConnRef {
    Conn* conn = nullptr;
    ConnDir dir = ConnDir::In;
};

class ConnTable {
public:
    static constexpr unsigned kSlotsPerBucket = 8;
    static constexpr unsigned kMaxBulk = 64;

    static Result<std::unique_ptr<ConnTable>> create(const std::string& name, uint32_t max_conns);
    ~ConnTable();
    ConnTable(const ConnTable&) = delete;
    ConnTable& operator=(const ConnTable&) = delete;

    Conn* alloc();             // nullptr when the pool is exhausted
    void release(Conn* conn);  // back to the pool (remove() it first)

    // Inserts the inbound tuple of conn and, when its mode has one (XmitTraits::inserts_out_tuple),
    // the outbound tuple (from its address/port fields). False if a bucket pair is
    // full; then nothing stays inserted.
    bool insert(Conn* conn);
    void remove(Conn* conn);

    ConnRef lookup(const ConnKey& key) const;
    // Looks up n (<= kMaxBulk) keys in stages (hash+prefetch buckets, match signatures and
    // prefetch Conns, verify tuples); refs[i].conn is nullptr for misses.
    void lookup_bulk(const ConnKey* const* keys, unsigned n, ConnRef* refs) const;
    // Tuple insertions so far: a miss of an earlier lookup is still a miss while this has not
    // moved (lb_handle skips its second lookup of a miss that way).
    uint64_t adds() const { return adds_; }

    uint32_t capacity() const { return capacity_; }
    // The conn's pool slot (0..capacity-1): indexes per-conn side arrays kept elsewhere.
    uint32_t index_of(const Conn* conn) const { return static_cast<uint32_t>(conn - pool_); }
    uint32_t in_use() const { return capacity_ - static_cast<uint32_t>(free_.size()); }
    // Bytes held by buckets, Conn pool and free list (bench's bytes-per-connection figure).
    size_t memory_bytes() const { return memory_bytes_; }

    // Pool slot i (0..capacity-1), live when proto != 0: the worker's own dumps (lb/command.h).
    const Conn& slot(uint32_t i) const { return pool_[i]; }
    Conn& slot(uint32_t i) { return pool_[i]; }  // flush_dest expires conns found this way

    template <typename F>
    void for_each(F&& f) const {
        for (uint32_t i = 0; i < capacity_; ++i)
            if (pool_[i].proto) f(pool_[i]);
    }

private:
    struct Slot {
        uint32_t sig;
        uint32_t ref;  // conn index << 1 | direction; kEmpty when free
    };
    struct alignas(64) Bucket {
        Slot slots[kSlotsPerBucket];
    };
    static_assert(sizeof(Bucket) == 64);
    static constexpr uint32_t kEmpty = UINT32_MAX;

    struct Hash {
        uint32_t b1, b2, sig;
    };
    Hash hash(const ConnKey& key) const;
    bool matches(uint32_t ref, const ConnKey& key) const;
    ConnRef to_ref(uint32_t ref) const {
        return ConnRef{&pool_[ref >> 1], static_cast<ConnDir>(ref & 1)};
    }
    ConnRef find_in(const Bucket& b, uint32_t sig, const ConnKey& key) const;
    bool add(const ConnKey& key, uint32_t ref);
    void erase(const ConnKey& key, uint32_t ref);

    ConnTable() = default;

    Conn* pool_ = nullptr;  // rte_malloc'd: hugepages when the EAL has them
    uint32_t capacity_ = 0;
    Bucket* buckets_ = nullptr;
    uint32_t bucket_mask_ = 0;
    std::vector<uint32_t> free_;  // stack of free pool indices
    size_t memory_bytes_ = 0;
    uint64_t adds_ = 0;  // add() calls, see adds()
};

}  // namespace xvs::lb
