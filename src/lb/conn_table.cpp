// ConnTable: two-choice bucketed hash over a Conn pool, both in EAL memory.
#include "lb/conn_table.h"

#include <emmintrin.h>
#include <nmmintrin.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/flat_map.h"
#include "lb/persist.h"
#include "lb/xmit/xmit.h"
#include "port/eal.h"

namespace xvs::lb {

namespace {

// EAL memory (hugepages when configured) once the EAL runs; plain aligned memory otherwise,
// so the table is usable in unit tests without DPDK.
void* table_alloc(const std::string& name, size_t bytes) {
    if (port::eal_running()) return rte_malloc_socket(name.c_str(), bytes, 64, SOCKET_ID_ANY);
    return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
}

void table_free(void* p) {
    if (!p) return;
    if (port::eal_running())
        rte_free(p);
    else
        std::free(p);
}

ConnKey in_key(const Conn& c) {
    return conn_key(c.proto, c.caddr(), c.vaddr(), c.cport, c.vport);
}
ConnKey out_key(const Conn& c) {
    return conn_key(c.proto, c.daddr(), c.laddr_ip(), c.dport, c.lport);
}

}  // namespace

Result<std::unique_ptr<ConnTable>> ConnTable::create(const std::string& name, uint32_t max_conns) {
    if (max_conns == 0 || max_conns > (1u << 30))
        return make_error("connection table size must be 1.." + std::to_string(1u << 30));
    std::unique_ptr<ConnTable> t(new ConnTable());
    // Two entries per connection at <= 50% load.
    const uint64_t want = std::bit_ceil(uint64_t(max_conns) * 2 * 2 / kSlotsPerBucket);
    const uint64_t nbuckets = std::max<uint64_t>(want, 2);
    t->buckets_ = static_cast<Bucket*>(table_alloc(name + "_buckets", nbuckets * sizeof(Bucket)));
    t->pool_ = static_cast<ConnSlot*>(table_alloc(name + "_pool", sizeof(ConnSlot) * size_t(max_conns)));
    if (!t->buckets_ || !t->pool_) {
        return make_error("cannot allocate a connection table for " + std::to_string(max_conns) +
                          " connections (" +
                          std::to_string((nbuckets * sizeof(Bucket) + sizeof(ConnSlot) * size_t(max_conns)) >> 20) +
                          " MiB): raise the EAL memory (-m)");
    }
    std::memset(static_cast<void*>(t->buckets_), 0xff, nbuckets * sizeof(Bucket));
    t->bucket_mask_ = static_cast<uint32_t>(nbuckets - 1);
    t->capacity_ = max_conns;
    for (uint32_t i = 0; i < max_conns; ++i) new (&t->pool_[i]) ConnSlot();
    // Pushed last to first, so that slots are handed out from the first (dumps list conns in
    // the order they came while nothing has ended). An odd last slot is a single, handed out
    // once the pairs are all used (alloc).
    t->odd_tail_ = max_conns & 1;
    for (uint32_t i = max_conns & ~1u; i > 0; i -= 2) t->push_free(kPairs, i - 2);
    t->memory_bytes_ = nbuckets * sizeof(Bucket) + size_t(max_conns) * sizeof(ConnSlot);
    return t;
}

ConnTable::~ConnTable() {
    table_free(buckets_);
    table_free(pool_);
}

void ConnTable::push_free(FreeList l, uint32_t i) {
    Conn& c = pool_[i].conn;
    c.taken = false;
    c.proto = 0;
    c.caddr4 = free_head_[l];  // next
    c.vaddr4 = kNil;           // previous
    if (free_head_[l] != kNil) pool_[free_head_[l]].conn.vaddr4 = i;
    free_head_[l] = i;
}

void ConnTable::unlink_free(FreeList l, uint32_t i) {
    const Conn& c = pool_[i].conn;
    if (c.vaddr4 != kNil)
        pool_[c.vaddr4].conn.caddr4 = c.caddr4;
    else
        free_head_[l] = c.caddr4;
    if (c.caddr4 != kNil) pool_[c.caddr4].conn.vaddr4 = c.vaddr4;
}

uint32_t ConnTable::pop_free(FreeList l) {
    const uint32_t i = free_head_[l];
    if (i != kNil) unlink_free(l, i);
    return i;
}

Conn* ConnTable::alloc(bool wide) {
    uint32_t i = kNil;
    if (wide) {
        i = pop_free(kPairs);
    } else if ((i = pop_free(kSingles)) == kNil) {
        if ((i = pop_free(kPairs)) != kNil) {
            push_free(kSingles, i + 1);  // split: its buddy stays free
        } else if (odd_tail_) {
            odd_tail_ = false;
            i = capacity_ - 1;
        }
    }
    if (i == kNil) return nullptr;
    Conn* c = std::construct_at(&pool_[i].conn);
    c->taken = true;
    c->wide = wide;
    if (wide) std::construct_at(&pool_[i + 1].addr6);
    ++live_;
    slots_used_ += 1 + wide;
    return c;
}

void ConnTable::release(Conn* conn) {
    const uint32_t i = index_of(conn);
    const bool wide = conn->wide;
    --live_;
    slots_used_ -= 1 + wide;
    if (wide) {
        std::construct_at(&pool_[i + 1].conn);  // reads as a free slot again
        push_free(kPairs, i);
        return;
    }
    const uint32_t buddy = i ^ 1;
    if (buddy < capacity_ && !pool_[buddy].conn.taken) {  // merge: a free pair again
        unlink_free(kSingles, buddy);
        pool_[i].conn.taken = false;
        pool_[i].conn.proto = 0;
        push_free(kPairs, i & ~1u);
        return;
    }
    push_free(kSingles, i);
}

// Bucket indexes come from a multiplicative mix (CRC is linear: two CRCs of one key differ by
// a constant, which would pair buckets up and break two-choice hashing); the signature is a
// CRC32C, independent of the bucket bits.
[[gnu::always_inline]] inline ConnTable::Hash ConnTable::hash(const ConnKey& key) const {
    static_assert(sizeof(ConnKey) == 40);
    // Word by word, as conn_key stores them: a 16-byte copy of the key would span two of
    // its stores, a wait if they are still in flight.
    const uint64_t k[5] = {key.saddr.word(0), key.saddr.word(1), key.daddr.word(0),
                           key.daddr.word(1), key.tail_word()};
    // k[1], k[3]: the low halves of the addresses (all of an IPv4 one, beside the mapped tag):
    // a is one-to-one in (saddr, daddr) for IPv4. b: ports and proto, plus the IPv6 high
    // halves (constant for IPv4). b times an odd constant (one-to-one, and it carries the
    // ports into the high bits) is folded into a, then one full mix; plus two CRCs.
    const uint64_t a = k[1] ^ std::rotl(k[3], 32);
    const uint64_t b = k[4] ^ k[0] ^ std::rotl(k[2], 29);
    const uint64_t v = mix64(a ^ (b * 0x9e3779b97f4a7c15ULL));
    uint32_t b1 = static_cast<uint32_t>(v) & bucket_mask_;
    uint32_t b2 = static_cast<uint32_t>(v >> 32) & bucket_mask_;
    if (b2 == b1) b2 = (b1 + 1) & bucket_mask_;
    uint32_t sig = static_cast<uint32_t>(_mm_crc32_u64(_mm_crc32_u64(0x7f4a7c15u, a), b));
    if (sig == kEmpty) sig = 0;
    return Hash{b1, b2, sig};
}

[[gnu::always_inline]] inline bool ConnTable::matches(uint32_t ref, const ConnKey& k) const {
    const Conn& c = pool_[ref >> 1].conn;
    if (c.proto != k.proto) return false;
    const bool in = (ref & 1) == uint32_t(ConnDir::In);
    if (!c.wide) [[likely]] {
        // A narrow conn's 4-byte fields against the key's IPv4-mapped words, one test.
        const uint64_t s = net::InetAddr::v4(in ? c.caddr4 : c.daddr4).word(1);
        const uint64_t d = net::InetAddr::v4(in ? c.vaddr4 : c.laddr4).word(1);
        const uint32_t ports = in ? uint32_t{c.vport} << 16 | c.cport : uint32_t{c.lport} << 16 | c.dport;
        return (k.saddr.word(0) | k.daddr.word(0) | (k.saddr.word(1) ^ s) | (k.daddr.word(1) ^ d) |
                ((uint32_t{k.dport} << 16 | k.sport) ^ ports)) == 0;
    }
    if (in)
        return c.caddr() == k.saddr && c.vaddr() == k.daddr && c.cport == k.sport &&
               c.vport == k.dport;
    return c.daddr() == k.saddr && c.laddr_ip() == k.daddr && c.dport == k.sport &&
           c.lport == k.dport;
}

[[gnu::always_inline]] inline uint32_t ConnTable::slot_bits(const uint32_t (&words)[kSlotsPerBucket],
                                                         uint32_t v) {
    static_assert(kSlotsPerBucket == 8);
    const __m128i want = _mm_set1_epi32(static_cast<int>(v));
    __m128i lo, hi;
    std::memcpy(&lo, &words[0], sizeof lo);
    std::memcpy(&hi, &words[4], sizeof hi);
    // Two 4 x 32-bit results narrowed to 8 x 16 bits (each all ones or zero): one bit a slot.
    const __m128i eq = _mm_packs_epi32(_mm_cmpeq_epi32(lo, want), _mm_cmpeq_epi32(hi, want));
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(eq, eq))) & 0xffu;
}

// A slot with a key's signature is never empty: hash() never gives kEmpty, an empty slot's.
ConnRef ConnTable::find_in(const Bucket& b, uint32_t sig, const ConnKey& key) const {
    for (uint32_t m = slot_bits(b.sig, sig); m; m &= m - 1) {
        const uint32_t ref = b.ref[std::countr_zero(m)];
        if (matches(ref, key)) return to_ref(ref);
    }
    return ConnRef{};
}

ConnRef ConnTable::lookup(const ConnKey& key) const {
    Hash h = hash(key);
    ConnRef r = find_in(buckets_[h.b1], h.sig, key);
    return r.conn ? r : find_in(buckets_[h.b2], h.sig, key);
}

void ConnTable::lookup_bulk(const ConnKey* const* keys, unsigned n, ConnRef* refs) {
    if (adds_ != adds_at_bulk_) {
        std::memset(recent_, 0, sizeof recent_);
        adds_at_bulk_ = adds_;
    }
    Hash h[kMaxBulk];
    uint32_t cand[kMaxBulk];
    // Stage 1: hash every key and fetch its first bucket.
    for (unsigned i = 0; i < n; ++i) {
        h[i] = hash(*keys[i]);
        rte_prefetch0(&buckets_[h[i].b1]);
    }
    // Stage 2: first signature match in the first bucket; fetch that Conn.
    for (unsigned i = 0; i < n; ++i) {
        cand[i] = kEmpty;
        const Bucket& b = buckets_[h[i].b1];
        if (const uint32_t m = slot_bits(b.sig, h[i].sig)) {
            cand[i] = b.ref[std::countr_zero(m)];
            // An IPv4 conn is this one line. A wide one's addresses are in the next, which
            // stage 3 then reads cold (IPv6 and NAT64 packets only; not measured to matter).
            rte_prefetch0(&pool_[cand[i] >> 1]);
        } else {
            // No candidate in the first bucket: stage 3 searches the second (a new flow's
            // first packet, or an entry placed there when the first was full).
            rte_prefetch0(&buckets_[h[i].b2]);
        }
    }
    // Stage 3: verify. Without a signature match in the first bucket (a miss, or an entry in
    // the second bucket) only the second bucket is left to search, with the stage 1 hash; a
    // signature collision searches the rest of the first bucket too.
    for (unsigned i = 0; i < n; ++i) {
        if (cand[i] != kEmpty && matches(cand[i], *keys[i])) {
            refs[i] = to_ref(cand[i]);
            continue;
        }
        ConnRef r{};
        if (cand[i] != kEmpty) r = find_in(buckets_[h[i].b1], h[i].sig, *keys[i]);
        if (!r.conn) r = find_in(buckets_[h[i].b2], h[i].sig, *keys[i]);
        if (!r.conn) {
            miss_hash_[i] = h[i];
            r.bulk_index = static_cast<uint8_t>(i);
            r.sig = h[i].sig | ConnRef::kSigTag;
        }
        refs[i] = r;
    }
}

[[gnu::always_inline]] inline bool ConnTable::place(Bucket& b, uint32_t sig, uint32_t ref) {
    const uint32_t m = slot_bits(b.ref, kEmpty);
    if (!m) return false;
    const unsigned i = std::countr_zero(m);
    b.sig[i] = sig;
    b.ref[i] = ref;
    return true;
}

// First free slot of the first bucket, else of the second (most lookups then end in the
// first bucket, which lookup_bulk prefetches); both full: displace(). Inlined into insert,
// which adds two tuples per conn.
[[gnu::always_inline]] inline bool ConnTable::add(const Hash& h, uint32_t ref) {
    ++adds_;
    recent_[recent_word(h.sig)] |= recent_bit(h.sig);
    if (place(buckets_[h.b1], h.sig, ref) || place(buckets_[h.b2], h.sig, ref)) return true;
    return displace(h, ref);
}

// Both buckets full: one entry of either is moved to its own other bucket (one cuckoo step;
// it costs a read of that entry's Conn, on about one insert in a few hundred at full table
// load).
[[gnu::noinline]] bool ConnTable::displace(const Hash& h, uint32_t ref) {
    for (uint32_t bi : {h.b1, h.b2}) {
        Bucket& b = buckets_[bi];
        for (unsigned i = 0; i < kSlotsPerBucket; ++i) {
            const Conn& c = pool_[b.ref[i] >> 1].conn;
            const ConnKey other = (b.ref[i] & 1) == uint32_t(ConnDir::In) ? in_key(c) : out_key(c);
            const Hash oh = hash(other);
            const uint32_t alt = oh.b1 == bi ? oh.b2 : oh.b1;
            if (place(buckets_[alt], b.sig[i], b.ref[i])) {
                b.sig[i] = h.sig;
                b.ref[i] = ref;
                return true;
            }
        }
    }
    return false;
}

void ConnTable::erase(const ConnKey& key, uint32_t ref) {
    Hash h = hash(key);
    for (uint32_t bi : {h.b1, h.b2}) {
        Bucket& b = buckets_[bi];
        if (const uint32_t m = slot_bits(b.ref, ref)) {
            const unsigned i = std::countr_zero(m);
            b.ref[i] = kEmpty;
            b.sig[i] = kEmpty;
            return;
        }
    }
}

ConnTable::Hash ConnTable::hash_prefetch(const ConnKey& key) const {
    const Hash h = hash(key);
    rte_prefetch0(&buckets_[h.b1]);
    rte_prefetch0(&buckets_[h.b2]);
    return h;
}

bool ConnTable::insert(Conn* conn, const ConnRef& in_miss, const Hash* out_hash) {
    const uint32_t idx = index_of(conn);
    const uint32_t in_ref = idx << 1 | uint32_t(ConnDir::In);
    const uint32_t out_ref = idx << 1 | uint32_t(ConnDir::Out);
    // The miss's hash, unless the ref is no miss of the last lookup_bulk (a later call keeps
    // another key's hash at that place; the signatures then differ but for one chance in 2^31,
    // and a ref is used within its burst anyway).
    Hash in_hash;
    const Hash& kept = miss_hash_[in_miss.bulk_index % kMaxBulk];
    if (!in_miss.conn && in_miss.sig != ConnRef::kNoSig &&
        (kept.sig | ConnRef::kSigTag) == in_miss.sig) {
        in_hash = kept;
    } else {
        in_hash = hash(in_key(*conn));
    }
    if (!add(in_hash, in_ref)) return false;
    // A persistence template has only its one key.
    const bool out = xmit_traits(conn->mode).inserts_out_tuple && !conn_is_template(*conn);
    if (!out) return true;
    if (out_hash && n_unsettled_ < kMaxUnsettled) {
        unsettled_[n_unsettled_++] = Unsettled{out_ref, *out_hash};
        return true;
    }
    if (!add(out_hash ? *out_hash : hash(out_key(*conn)), out_ref)) {
        erase(in_key(*conn), in_ref);
        return false;
    }
    return true;
}

unsigned ConnTable::settle(Conn** failed) {
    unsigned n = 0;
    for (unsigned i = 0; i < n_unsettled_; ++i)
        if (!add(unsettled_[i].h, unsettled_[i].ref))
            failed[n++] = &pool_[unsettled_[i].ref >> 1].conn;
    n_unsettled_ = 0;
    return n;
}

void ConnTable::remove(Conn* conn) {
    const uint32_t idx = index_of(conn);
    erase(in_key(*conn), idx << 1 | uint32_t(ConnDir::In));
    // mode is fixed for the conn's life
    if (!xmit_traits(conn->mode).inserts_out_tuple || conn_is_template(*conn)) return;
    const uint32_t out_ref = idx << 1 | uint32_t(ConnDir::Out);
    for (unsigned i = 0; i < n_unsettled_; ++i) {
        if (unsettled_[i].ref == out_ref) {  // still queued: it never reached a bucket
            unsettled_[i] = unsettled_[--n_unsettled_];
            return;
        }
    }
    erase(out_key(*conn), out_ref);
}

}  // namespace xvs::lb
