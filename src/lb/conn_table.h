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
#include <utility>
#include <vector>

#include "common/result.h"
#include "lb/conn.h"

namespace xvs::lb {

struct ConnRef {
    Conn* conn = nullptr;
    ConnDir dir = ConnDir::In;
    // A miss of ConnTable::lookup_bulk: its key's place in that call (ConnTable::insert takes
    // the key's hash from there), and the key's signature with kSigTag set, for
    // ConnTable::maybe_added (kNoSig: not from lookup_bulk). In ConnDir's padding: the ref
    // stays 16 bytes, and all zero by default.
    uint8_t bulk_index = 0;
    uint32_t sig = kNoSig;
    static constexpr uint32_t kNoSig = 0;
    static constexpr uint32_t kSigTag = 1u << 31;  // maybe_added reads the low 9 bits only
};
static_assert(sizeof(ConnRef) == 16);

class ConnTable {
public:
    static constexpr unsigned kSlotsPerBucket = 8;
    static constexpr unsigned kMaxBulk = 64;

    static Result<std::unique_ptr<ConnTable>> create(const std::string& name, uint32_t max_conns);
    ~ConnTable();
    ConnTable(const ConnTable&) = delete;
    ConnTable& operator=(const ConnTable&) = delete;

    // A conn in one slot, or (wide: Conn::needs_wide of its addresses) an aligned pair of
    // slots; nullptr when the pool has none. Pairs are split for single slots only when no
    // single is free, and a freed slot whose buddy is free makes a pair again (a buddy
    // allocator of two sizes), so pairs run out only when every pair is half used.
    Conn* alloc(bool wide);
    void release(Conn* conn);  // back to the pool (remove() it first)

    // A tuple's two candidate buckets and its signature.
    struct Hash {
        uint32_t b1, b2, sig;
    };
    // Hashes a tuple about to be inserted and starts fetching its buckets: for insert's
    // `out_hash`, taken early enough that they arrive while the caller does other work.
    Hash hash_prefetch(const ConnKey& key) const;

    // Inserts the inbound tuple of conn and, when its mode has one (XmitTraits::inserts_out_tuple),
    // the outbound tuple (from its address/port fields). False if a bucket pair is
    // full; then nothing stays inserted. `in_miss`: the last lookup_bulk's miss of the conn's
    // inbound tuple (a new flow's first packet), whose hash that call kept, so the tuple is
    // not hashed again; any other ref (default: none) and the tuple is hashed here.
    // `out_hash`: the outbound tuple's hash_prefetch, and the tuple is queued rather than
    // added: settle() adds it once the burst's other packets are handled, by when its buckets
    // have arrived (a new conn's out-tuple insert is otherwise a cache miss in a large table).
    // Only a conn whose first packet has not left yet may defer: no reply can come before
    // settle(). Added at once when the queue is full. Null: the tuple is hashed and added here.
    bool insert(Conn* conn, const ConnRef& in_miss = ConnRef{}, const Hash* out_hash = nullptr);
    // Removes both tuples (or cancels a queued one).
    void remove(Conn* conn);

    static constexpr unsigned kMaxUnsettled = kMaxBulk;
    // Whether insert queued outbound tuples that settle() has not added yet.
    bool unsettled() const { return n_unsettled_ != 0; }
    // Adds the queued outbound tuples. Returns how many found both buckets full; those conns
    // are written to failed[0..n) (room for kMaxUnsettled) and have their inbound tuple only:
    // the caller ends them.
    unsigned settle(Conn** failed);

    ConnRef lookup(const ConnKey& key) const;
    // Looks up n (<= kMaxBulk) keys in stages (hash+prefetch buckets, match signatures and
    // prefetch Conns, verify tuples); refs[i].conn is nullptr for misses, which carry their
    // key's signature. Starts a new window for maybe_added.
    void lookup_bulk(const ConnKey* const* keys, unsigned n, ConnRef* refs);
    // Whether a miss of the last lookup_bulk may have been inserted since (an earlier packet of
    // the same burst made its conn): false means it is still a miss, without a second hash
    // and bucket search. Exact for a miss of the last lookup_bulk, which sets a bit per
    // signature inserted since (one in 512: a false "maybe" costs that search); any other ref
    // is a "maybe" once anything was inserted after the last lookup_bulk.
    bool maybe_added(const ConnRef& miss) const {
        if (adds_ == adds_at_bulk_) return false;
        if (miss.sig == ConnRef::kNoSig) return true;
        return (recent_[recent_word(miss.sig)] & recent_bit(miss.sig)) != 0;
    }
    // Tuple insertions so far.
    uint64_t adds() const { return adds_; }

    // 64-byte slots: an IPv4 conn takes one, an IPv6 or NAT64 conn two.
    uint32_t capacity() const { return capacity_; }
    // The conn's (first) pool slot (0..capacity-1): indexes per-conn side arrays kept elsewhere.
    uint32_t index_of(const Conn* conn) const {
        return static_cast<uint32_t>(reinterpret_cast<const ConnSlot*>(conn) - pool_);
    }
    uint32_t in_use() const { return live_; }              // conns
    uint32_t slots_in_use() const { return slots_used_; }  // slots they take
    // Bytes held by buckets and the pool (bench's bytes-per-connection figure).
    size_t memory_bytes() const { return memory_bytes_; }
    // The first slot, for TimerWheel::attach (a conn's timer is its first member).
    Conn* base() { return &pool_[0].conn; }

    // The conn starting at pool slot i (0..capacity-1), nullptr when none does (a free slot,
    // or the second of a pair): the worker's own dumps (lb/command.h) walk the pool with it.
    const Conn* live(uint32_t i) const {
        if ((i & 1) && pool_[i - 1].conn.proto && pool_[i - 1].conn.wide) return nullptr;
        return pool_[i].conn.proto ? &pool_[i].conn : nullptr;
    }
    Conn* live(uint32_t i) {  // flush_dest expires conns found this way
        return const_cast<Conn*>(std::as_const(*this).live(i));
    }

    template <typename F>
    void for_each(F&& f) const {
        for (uint32_t i = 0; i < capacity_; ++i) {
            const Conn& c = pool_[i].conn;
            if (!c.proto) continue;
            f(c);
            i += c.wide;  // its second slot
        }
    }

private:
    // Slot i is (sig[i], ref[i]): the signatures side by side, so that one bucket's eight
    // are compared at once (slot_bits).
    struct alignas(64) Bucket {
        uint32_t sig[kSlotsPerBucket];
        uint32_t ref[kSlotsPerBucket];  // conn index << 1 | direction; kEmpty when free
    };
    static_assert(sizeof(Bucket) == 64);
    static constexpr uint32_t kEmpty = UINT32_MAX;

    Hash hash(const ConnKey& key) const;
    bool matches(uint32_t ref, const ConnKey& key) const;
    ConnRef to_ref(uint32_t ref) const {
        return ConnRef{&pool_[ref >> 1].conn, static_cast<ConnDir>(ref & 1)};
    }
    // Bit i set when words[i] == v, for a bucket's eight signatures or refs: two SSE2
    // compares, not a slot loop whose exit the branch predictor cannot learn.
    static uint32_t slot_bits(const uint32_t (&words)[kSlotsPerBucket], uint32_t v);
    ConnRef find_in(const Bucket& b, uint32_t sig, const ConnKey& key) const;
    static bool place(Bucket& b, uint32_t sig, uint32_t ref);
    bool add(const Hash& h, uint32_t ref);
    bool displace(const Hash& h, uint32_t ref);
    void erase(const ConnKey& key, uint32_t ref);

    ConnTable() = default;

    // Free slots (proto 0) form two doubly linked lists, of single slots and of aligned
    // pairs (by their first slot), linked through the slot's own address words: Conn::caddr4
    // is the next, vaddr4 the previous, kNil ends. The second slot of a free pair is a
    // Conn{} (proto 0), so that pool walkers read it as free.
    enum FreeList : unsigned { kSingles = 0, kPairs = 1 };
    static constexpr uint32_t kNil = UINT32_MAX;
    void push_free(FreeList l, uint32_t i);
    uint32_t pop_free(FreeList l);
    void unlink_free(FreeList l, uint32_t i);

    ConnSlot* pool_ = nullptr;  // rte_malloc'd: hugepages when the EAL has them
    uint32_t capacity_ = 0;
    Bucket* buckets_ = nullptr;
    uint32_t bucket_mask_ = 0;
    uint32_t free_head_[2] = {kNil, kNil};  // by FreeList
    bool odd_tail_ = false;  // an odd capacity's last slot, not yet handed out (then a single)
    uint32_t live_ = 0;
    uint32_t slots_used_ = 0;
    size_t memory_bytes_ = 0;
    uint64_t adds_ = 0;  // add() calls, see adds()
    // Signatures inserted since the last lookup_bulk (bit sig % 512), for maybe_added;
    // cleared by the next lookup_bulk that follows an insertion.
    static constexpr unsigned kRecentWords = 8;
    // Where signature sig's bit is (its low 9 bits; ConnRef::kSigTag is above them).
    static unsigned recent_word(uint32_t sig) { return (sig >> 6) % kRecentWords; }
    static uint64_t recent_bit(uint32_t sig) { return uint64_t{1} << (sig & 63); }
    uint64_t recent_[kRecentWords] = {};
    uint64_t adds_at_bulk_ = 0;  // adds_ at the last lookup_bulk
    // Outbound tuples queued by insert for settle(): the ref to add (conn index << 1 | Out)
    // and the tuple's hash.
    struct Unsettled {
        uint32_t ref;
        Hash h;
    };
    Unsettled unsettled_[kMaxUnsettled];
    unsigned n_unsettled_ = 0;
    // The hashes of the last lookup_bulk's misses, by their place in it (ConnRef::bulk_index);
    // other places hold older hashes, which insert tells apart by the signature.
    Hash miss_hash_[kMaxBulk] = {};
};

}  // namespace xvs::lb
