// A hashed timer wheel with intrusive nodes: O(1) arm/cancel, no allocation.
// Entries whose expiry lies more than one revolution ahead stay in their slot and are skipped
// until due. Callers that re-arm on every packet should instead keep their own "expires"
// stamp and re-arm lazily from the expiry callback (lb/conn.cpp does this).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace xvs::lb {

struct TimerNode {
    TimerNode* next = nullptr;
    TimerNode* prev = nullptr;
    uint64_t expires_tick = 0;
    bool armed() const { return prev != nullptr; }
};

class TimerWheel {
public:
    // slots: rounded up to a power of two. tick_ms: resolution. now_ms: current time.
    TimerWheel(size_t slots, uint64_t tick_ms, uint64_t now_ms);
    TimerWheel(const TimerWheel&) = delete;
    TimerWheel& operator=(const TimerWheel&) = delete;

    // Arms (or re-arms) node to fire at the first tick at or after expires_ms.
    void arm(TimerNode* node, uint64_t expires_ms);
    void cancel(TimerNode* node);

    // Processes every tick up to now_ms; calls on_expire(TimerNode*) for each due node (already
    // unlinked, so the callback may re-arm or free it). Stops after `budget` callbacks and
    // resumes at the same tick next time. Returns the number of callbacks made.
    template <typename F>
    size_t advance(uint64_t now_ms, F&& on_expire,
                   size_t budget = std::numeric_limits<size_t>::max());

    size_t size() const { return count_; }
    uint64_t tick_ms() const { return tick_ms_; }

private:
    void link(TimerNode* node);
    void unlink(TimerNode* node);

    std::vector<TimerNode> slots_;  // sentinel heads of circular lists
    size_t mask_;
    uint64_t tick_ms_;
    uint64_t current_tick_;  // next tick to process
    size_t count_ = 0;
};

template <typename F>
size_t TimerWheel::advance(uint64_t now_ms, F&& on_expire, size_t budget) {
    const uint64_t target = now_ms / tick_ms_;
    size_t fired = 0;
    while (current_tick_ <= target) {
        TimerNode* head = &slots_[current_tick_ & mask_];
        TimerNode* node = head->next;
        while (node != head) {
            TimerNode* next = node->next;
            if (node->expires_tick <= current_tick_) {
                if (fired == budget) return fired;
                unlink(node);
                ++fired;
                on_expire(node);
            }
            node = next;
        }
        ++current_tick_;
    }
    return fired;
}

}  // namespace xvs::lb
