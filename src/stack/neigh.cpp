// Neighbour table storage. Protocol behaviour (sending probes, flushing queues) lives in
// stack/arp.cpp, which owns the packets; this file only keeps the entries consistent.
#include "stack/neigh.h"

#include <algorithm>
#include <bit>

#include "common/flat_map.h"

namespace xvs::stack {

Neighbours::Neighbours(size_t capacity, NeighTimes times)
    : table_(std::bit_ceil(std::clamp<size_t>(capacity, 16, kMaxSlots))),
      mask_(table_.size() - 1),
      times_(times) {}

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
    return e;
}

void Neighbours::add_static(const net::InetAddr& addr, const net::MacAddr& mac, uint8_t port) {
    NeighEntry* e = get_or_create(addr, port, 0);
    if (!e) return;
    e->mac = mac;
    e->port = port;
    e->state = NeighState::Static;
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
        if (e.state == NeighState::Failed || e.state == NeighState::Stale)
            rank = 2;
        else if (e.state == NeighState::Reachable && e.used_ms == 0)
            rank = 1;
        if (rank == 0) continue;
        const uint64_t age = std::max(e.used_ms, e.confirmed_ms);
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

// Backward-shift deletion keeps every probe chain unbroken without tombstones.
void Neighbours::erase_at(size_t i) {
    invalidate_cached();  // entries move and one goes
    table_[i].state = NeighState::Empty;
    --size_;
    for (size_t j = (i + 1) & mask_; table_[j].state != NeighState::Empty; j = (j + 1) & mask_) {
        size_t home = slot_of(table_[j].addr);
        // Move j into the hole at i if its home slot is not in (i, j] cyclically.
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            table_[i] = table_[j];
            table_[j].state = NeighState::Empty;
            i = j;
        }
    }
}

}  // namespace xvs::stack
