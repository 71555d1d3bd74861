// An immutable open-addressing hash map built once on the control thread and read lock-free by
// workers (service table, own-address table in a snapshot). Linear probing, load <= 25%: the
// tables are small (a few slots per configured address or service) and looked up for every
// packet, where a second probe costs more than the memory.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace xvs {

inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

// K must provide `uint64_t flat_hash(const K&)` (found by ADL) and operator==.
template <typename K, typename V>
class FlatMap {
public:
    FlatMap() = default;
    explicit FlatMap(const std::vector<std::pair<K, V>>& items) {
        size_t cap = std::bit_ceil(std::max<size_t>(16, items.size() * 4));
        slots_.resize(cap);
        mask_ = cap - 1;
        for (const auto& [k, v] : items) insert(k, v);
    }

    const V* find(const K& key) const {
        if (slots_.empty()) return nullptr;
        for (size_t i = flat_hash(key) & mask_;; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (!s.used) return nullptr;
            if (s.key == key) return &s.value;
        }
    }
    size_t size() const { return size_; }

    template <typename F>
    void for_each(F&& f) const {
        for (const auto& s : slots_)
            if (s.used) f(s.key, s.value);
    }

private:
    struct Slot {
        K key{};
        V value{};
        bool used = false;
    };
    void insert(const K& key, const V& value) {
        for (size_t i = flat_hash(key) & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (!s.used) {
                s = Slot{key, value, true};
                ++size_;
                return;
            }
            if (s.key == key) {
                s.value = value;
                return;
            }
        }
    }

    std::vector<Slot> slots_;
    size_t mask_ = 0;
    size_t size_ = 0;
};

}  // namespace xvs
