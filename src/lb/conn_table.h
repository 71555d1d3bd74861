// Per-worker connection table: a preallocated Conn pool plus a DPDK cuckoo hash (rte_hash)
// holding two keys per connection. Single writer (its worker), so no locks anywhere.
// rte_hash is used rather than a hand-written table: it is well kept, has bulk lookup for
// bursts, and its memory is accounted for in bench figures. The pool and the hash live in
// EAL memory, so with hugepages a 1M-connection table costs few TLB misses.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/result.h"
#include "lb/conn.h"

struct rte_hash;

namespace xvs::lb {

struct ConnRef {
    Conn* conn = nullptr;
    ConnDir dir = ConnDir::In;
};

class ConnTable {
public:
    static Result<std::unique_ptr<ConnTable>> create(const std::string& name, uint32_t max_conns);
    ~ConnTable();

    Conn* alloc();              // nullptr when the pool is exhausted
    void release(Conn* conn);   // back to the pool (keys must be removed first)

    // Inserts both keys; on failure nothing stays inserted.
    bool insert(Conn* conn, const ConnKey& in, const ConnKey& out);
    void remove(const ConnKey& in, const ConnKey& out);

    ConnRef lookup(const ConnKey& key) const;
    // Looks up n (<= 64) keys; refs[i].conn is nullptr for misses.
    void lookup_bulk(const ConnKey* const* keys, unsigned n, ConnRef* refs) const;

    uint32_t capacity() const { return capacity_; }
    uint32_t in_use() const { return capacity() - static_cast<uint32_t>(free_.size()); }
    // Bytes held by the pool, free list and hash (for bench's bytes-per-connection figure).
    size_t memory_bytes() const { return memory_bytes_; }

    template <typename F>
    void for_each(F&& f) const {
        for (uint32_t i = 0; i < capacity_; ++i)
            if (pool_[i].proto) f(pool_[i]);
    }

private:
    ConnTable() = default;

    Conn* pool_ = nullptr;        // rte_malloc'd: hugepages when the EAL has them
    uint32_t capacity_ = 0;
    std::vector<uint32_t> free_;  // stack of free pool indices
    rte_hash* hash_ = nullptr;
    size_t memory_bytes_ = 0;
};

}  // namespace xvs::lb
