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
    // unlinked, so the callback may re-arm or free it; it may also cancel or re-arm any other
    // node). A node re-armed from a callback to a time already reached fires at the next tick,
    // not again in this call. Stops after `budget` callbacks and resumes at the same tick next
    // time. Returns the number of callbacks made.
    template <typename F>
    size_t advance(uint64_t now_ms, F&& on_expire,
                   size_t budget = std::numeric_limits<size_t>::max());

    size_t size() const { return count_; }
    uint64_t tick_ms() const { return tick_ms_; }

private:
    void link(TimerNode* node);
    void unlink(TimerNode* node);
    // List moves between sentinels; the nodes stay armed and count_ is unchanged.
    static void move_to_tail(TimerNode* node, TimerNode* head);
    static void splice_all(TimerNode* from, TimerNode* to);

    std::vector<TimerNode> slots_;  // sentinel heads of circular lists
    size_t mask_;
    uint64_t tick_ms_;
    uint64_t current_tick_;  // next tick to process (the one after, while its callbacks run)
    size_t count_ = 0;
};

template <typename F>
size_t TimerWheel::advance(uint64_t now_ms, F&& on_expire, size_t budget) {
    const uint64_t target = now_ms / tick_ms_;
    size_t fired = 0;
    while (current_tick_ <= target) {
        const uint64_t tick = current_tick_;
        TimerNode* head = &slots_[tick & mask_];
        // Move the slot's nodes onto a local sentinel and always take the first one: a callback
        // may then cancel or re-arm any node, even the next one in this slot, and the walk
        // never follows a pointer saved before the callback ran.
        TimerNode pending;
        pending.next = pending.prev = &pending;
        splice_all(head, &pending);
        // The tick counts as processed while its callbacks run, so a timer re-armed at or
        // before it goes to tick + 1 instead of being fired again here (an endless loop).
        current_tick_ = tick + 1;
        while (pending.next != &pending) {
            TimerNode* node = pending.next;
            if (node->expires_tick > tick) {  // due in a later revolution: back to its slot
                move_to_tail(node, head);
                continue;
            }
            if (fired == budget) {
                splice_all(&pending, head);
                current_tick_ = tick;  // resume at this tick next time
                return fired;
            }
            unlink(node);
            ++fired;
            on_expire(node);
        }
    }
    return fired;
}

}  // namespace xvs::lb
