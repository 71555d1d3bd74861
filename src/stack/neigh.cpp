// Neighbour table storage. Protocol behaviour (sending probes, flushing queues) lives in
// stack/arp.cpp, which owns the packets; this file only keeps the entries consistent, and
// publishes them to the other workers when the table is shared.
#include "stack/neigh.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "common/flat_map.h"

namespace xvs::stack {

Neighbours::Neighbours(size_t capacity, NeighTimes times, bool shared)
    : table_(std::bit_ceil(std::clamp<size_t>(capacity, 16, kMaxSlots))),
      mask_(table_.size() - 1),
      times_(times) {
    if (shared) pub_ = std::make_unique<Published[]>(table_.size());
}

size_t Neighbours::slot_of(const net::InetAddr& addr) const {
    return mix64(addr.fold()) & mask_;
}

NeighEntry* Neighbours::find(const net::InetAddr& addr) {
    for (size_t i = slot_of(addr);; i = (i + 1) & mask_) {
        NeighEntry& e = table_[i];
        if (e.state == NeighState::Empty) return nullptr;
        if (e.addr == addr) return &e;
    }
}

const NeighEntry* Neighbours::find(const net::InetAddr& addr) const {
    return const_cast<Neighbours*>(this)->find(addr);
}

NeighEntry* Neighbours::get_or_create(const net::InetAddr& addr, uint8_t port, uint64_t now_ms) {
    if (NeighEntry* e = find(addr)) return e;
    // Keep probe chains short: at 3/4 load an old entry makes room, or the insert fails.
    if (size_ >= capacity() && !evict_one()) return nullptr;
    for (size_t i = slot_of(addr);; i = (i + 1) & mask_) {
        NeighEntry& e = table_[i];
        if (e.state == NeighState::Empty) {
            e = NeighEntry{};
            e.addr = addr;
            e.state = NeighState::Incomplete;
            e.port = port;
            e.used_ms = now_ms;
            e.next_probe_ms = now_ms;  // probe at once
            ++size_;
            if (pub_) {
                pub_[i].used_ms.store(0, std::memory_order_relaxed);
                publish_at(i);
            }
            return &e;
        }
    }
}

NeighEntry* Neighbours::learn(const net::InetAddr& addr, const net::MacAddr& mac, uint8_t port,
                              uint64_t now_ms, bool create) {
    NeighEntry* e = find(addr);
    if (!e && create) {
        e = get_or_create(addr, port, now_ms);
        if (e) e->used_ms = 0;  // learned from a request: evictable until output uses it
    }
    if (!e || e->port != port) return nullptr;
    if (e->state == NeighState::Static) return e;
    if (!(e->mac == mac)) invalidate_cached();
    e->mac = mac;
    e->port = port;
    e->state = NeighState::Reachable;
    e->probes = 0;
    e->confirmed_ms = now_ms;
    publish(*e);
    return e;
}

void Neighbours::add_static(const net::InetAddr& addr, const net::MacAddr& mac, uint8_t port) {
    NeighEntry* e = get_or_create(addr, port, 0);
    if (!e) return;
    e->mac = mac;
    e->port = port;
    e->state = NeighState::Static;
    publish(*e);
}

void Neighbours::remove(const net::InetAddr& addr) {
    for (size_t i = slot_of(addr);; i = (i + 1) & mask_) {
        if (table_[i].state == NeighState::Empty) return;
        if (table_[i].addr == addr) {
            erase_at(i);
            return;
        }
    }
}

void Neighbours::reset(const NeighTimes& times) {
    times_ = times;
    bump_generation(1);  // odd: slots change
    for (size_t i = 0; i < table_.size(); ++i) {
        if (table_[i].state == NeighState::Empty) continue;
        table_[i] = NeighEntry{};
        if (pub_) publish_at(i);
    }
    size_ = 0;
    pending_total = 0;
    bump_generation(1);
}

uint64_t Neighbours::used_ms(const NeighEntry& e) const {
    if (!pub_) return e.used_ms;
    return std::max(e.used_ms, pub_[index_of(&e)].used_ms.load(std::memory_order_relaxed));
}

// Frees one slot: the least recently used entry nothing waits on, preferring failed and stale
// entries, then reachable ones learned from a request and never used for output. Static
// entries and entries with queued packets stay. O(capacity), only when the table is full.
bool Neighbours::evict_one() {
    size_t victim = table_.size();
    int victim_rank = 0;
    uint64_t victim_age = 0;
    for (size_t i = 0; i < table_.size(); ++i) {
        const NeighEntry& e = table_[i];
        int rank = 0;
        if (e.npending) continue;
        const uint64_t used = used_ms(e);
        if (e.state == NeighState::Failed || e.state == NeighState::Stale)
            rank = 2;
        else if (e.state == NeighState::Reachable && used == 0)
            rank = 1;
        if (rank == 0) continue;
        const uint64_t age = std::max(used, e.confirmed_ms);
        if (rank > victim_rank || (rank == victim_rank && age < victim_age)) {
            victim = i;
            victim_rank = rank;
            victim_age = age;
        }
    }
    if (victim == table_.size()) return false;
    erase_at(victim);
    ++evictions_;
    return true;
}

// Backward-shift deletion keeps every probe chain unbroken without tombstones. Readers racing
// with it may miss an entry being moved (they then hand the packet to the owner) but never
// read a half-moved one: each slot is published whole, and the generation is odd from before
// the first slot changes until after the last (so no reader caches a slot meanwhile), then
// even again and new (so no slot cached before is used).
void Neighbours::erase_at(size_t i) {
    bump_generation(1);  // entries move and one goes
    table_[i].state = NeighState::Empty;
    if (pub_) publish_at(i);
    --size_;
    for (size_t j = (i + 1) & mask_; table_[j].state != NeighState::Empty; j = (j + 1) & mask_) {
        size_t home = slot_of(table_[j].addr);
        // Move j into the hole at i if its home slot is not in (i, j] cyclically.
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            table_[i] = table_[j];
            table_[j].state = NeighState::Empty;
            if (pub_) {
                pub_[i].used_ms.store(pub_[j].used_ms.load(std::memory_order_relaxed),
                                      std::memory_order_relaxed);
                publish_at(i);
                publish_at(j);
            }
            i = j;
        }
    }
    bump_generation(1);
}

// A seqlock write of one slot: odd, fence, the words, even. A reader that saw any word of this
// write sees the odd (or a later) count when it re-reads it after its acquire fence, and the
// generation bumped before it.
void Neighbours::publish_at(size_t i) {
    Published& p = pub_[i];
    const NeighEntry& e = table_[i];
    const uint32_t seq = p.seq.load(std::memory_order_relaxed);
    p.seq.store(seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    p.addr[0].store(e.addr.word(0), std::memory_order_relaxed);
    p.addr[1].store(e.addr.word(1), std::memory_order_relaxed);
    const NeighLink link{e.state, e.port, e.mac};
    p.link.store(link.pack(), std::memory_order_relaxed);
    p.seq.store(seq + 2, std::memory_order_release);
}

bool Neighbours::lookup(const net::InetAddr& addr, NeighLink& link, uint16_t& slot,
                        uint16_t& gen) const {
    const uint16_t g = gen_.load(std::memory_order_acquire);
    const uint64_t w0 = addr.word(0), w1 = addr.word(1);
    size_t i = slot_of(addr);
    for (size_t n = 0; n < table_.size(); ++n, i = (i + 1) & mask_) {
        const Published& p = pub_[i];
        const uint32_t s1 = p.seq.load(std::memory_order_acquire);
        if (s1 & 1) return false;  // being rewritten: unresolved for now
        const uint64_t a0 = p.addr[0].load(std::memory_order_relaxed);
        const uint64_t a1 = p.addr[1].load(std::memory_order_relaxed);
        const uint64_t lk = p.link.load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (p.seq.load(std::memory_order_relaxed) != s1) return false;
        const NeighLink l = NeighLink::unpack(lk);
        if (l.state == NeighState::Empty) return false;
        if (a0 == w0 && a1 == w1) {
            link = l;
            slot = static_cast<uint16_t>(i);
            gen = (g & 1) == 0 && gen_.load(std::memory_order_relaxed) == g ? g : 0;
            return true;
        }
    }
    return false;
}

bool Neighbours::read(uint16_t slot, uint16_t gen, NeighLink& link) const {
    if ((gen & 1) || gen_.load(std::memory_order_acquire) != gen) return false;
    const uint64_t lk = pub_[slot].link.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (gen_.load(std::memory_order_relaxed) != gen) return false;
    link = NeighLink::unpack(lk);
    return true;
}

}  // namespace xvs::stack
