// Neighbour table storage. Protocol behaviour (sending probes, flushing queues) lives in
// stack/arp.cpp, which owns the packets; this file only keeps the entries consistent.
#include "stack/neigh.h"

#include <bit>

#include "common/flat_map.h"

namespace xvs::stack {

Neighbours::Neighbours(size_t capacity, NeighTimes times)
    : table_(std::bit_ceil(std::max<size_t>(capacity, 16))),
      mask_(table_.size() - 1),
      times_(times) {}

size_t Neighbours::slot_of(uint32_t addr) const { return mix64(addr) & mask_; }

NeighEntry* Neighbours::find(uint32_t addr) {
    for (size_t i = slot_of(addr);; i = (i + 1) & mask_) {
        NeighEntry& e = table_[i];
        if (e.state == NeighState::Empty) return nullptr;
        if (e.addr == addr) return &e;
    }
}

const NeighEntry* Neighbours::find(uint32_t addr) const {
    return const_cast<Neighbours*>(this)->find(addr);
}

NeighEntry* Neighbours::get_or_create(uint32_t addr, uint8_t port, uint64_t now_ms) {
    if (NeighEntry* e = find(addr)) return e;
    if (size_ * 4 >= table_.size() * 3) return nullptr;  // keep probe chains short
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

NeighEntry* Neighbours::learn(uint32_t addr, const net::MacAddr& mac, uint8_t port,
                              uint64_t now_ms, bool create) {
    NeighEntry* e = create ? get_or_create(addr, port, now_ms) : find(addr);
    if (!e || e->state == NeighState::Static) return e;
    e->mac = mac;
    e->port = port;
    e->state = NeighState::Reachable;
    e->probes = 0;
    e->confirmed_ms = now_ms;
    return e;
}

void Neighbours::add_static(uint32_t addr, const net::MacAddr& mac, uint8_t port) {
    NeighEntry* e = get_or_create(addr, port, 0);
    if (!e) return;
    e->mac = mac;
    e->port = port;
    e->state = NeighState::Static;
}

void Neighbours::remove(uint32_t addr) {
    for (size_t i = slot_of(addr);; i = (i + 1) & mask_) {
        if (table_[i].state == NeighState::Empty) return;
        if (table_[i].addr == addr) {
            erase_at(i);
            return;
        }
    }
}

// Backward-shift deletion keeps every probe chain unbroken without tombstones.
void Neighbours::erase_at(size_t i) {
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
