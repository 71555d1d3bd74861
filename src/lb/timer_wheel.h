// A hashed timer wheel with intrusive nodes: O(1) arm/cancel, no allocation.
// Entries whose expiry lies more than one revolution ahead stay in their slot and are skipped
// until due. Callers that re-arm on every packet should instead keep their own "expires"
// stamp and re-arm lazily from the expiry callback (lb/conn.cpp does this).
//
// The nodes live in one array the wheel is attached to (the conn pool): a link is a node's
// 32-bit index there, not a pointer, so a node is 12 bytes, not 24.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

#include "common/divider.h"

namespace xvs::lb {

struct TimerNode {
    static constexpr uint32_t kNone = UINT32_MAX;
    uint32_t next = kNone;  // TimerWheel ids: an index in the attached array, or a slot head
    uint32_t prev = kNone;
    uint32_t expires_tick = 0;  // the low 32 bits of the tick it fires at
    bool armed() const { return prev != kNone; }
};
static_assert(sizeof(TimerNode) == 12);

class TimerWheel {
public:
    // slots: rounded up to a power of two. tick_ms: resolution. now_ms: current time.
    TimerWheel(size_t slots, uint64_t tick_ms, uint64_t now_ms);
    TimerWheel(const TimerWheel&) = delete;
    TimerWheel& operator=(const TimerWheel&) = delete;

    // The nodes the wheel can hold: node i (i < count) is the TimerNode at the start of
    // base + i * stride (a power of two): the first member of each element of an array. Once,
    // before the first arm.
    void attach(void* base, size_t stride, uint32_t count);

    // Arms (or re-arms) node to fire at the first tick at or after expires_ms. A time more
    // than 2^31 ticks ahead (over six years at 100 ms ticks) fires then instead, early: the
    // lazy callers re-arm.
    void arm(TimerNode* node, uint64_t expires_ms);
    void cancel(TimerNode* node);
    // When an armed node fires: the start of its tick, in ms.
    uint64_t fires_ms(const TimerNode& node) const {
        const auto ahead =
            static_cast<int32_t>(node.expires_tick - static_cast<uint32_t>(current_tick_));
        return (current_tick_ + static_cast<int64_t>(ahead)) * tick_.divisor();
    }

    // Processes every tick up to now_ms; calls on_expire(TimerNode*) for each due node (already
    // unlinked, so the callback may re-arm or free it; it may also cancel or re-arm any other
    // node). A node re-armed from a callback to a time already reached fires at the next tick,
    // not again in this call. Stops after `budget` callbacks and resumes at the same tick next
    // time. Returns the number of callbacks made.
    template <typename F>
    size_t advance(uint64_t now_ms, F&& on_expire,
                   size_t budget = std::numeric_limits<size_t>::max());

    size_t size() const { return count_; }
    uint64_t tick_ms() const { return tick_.divisor(); }

  private:
    // Ids with this bit name a slot head (heads_[id & ~kHead]); the others a node.
    static constexpr uint32_t kHead = 1u << 31;

    TimerNode& at(uint32_t id) {
        if (id & kHead) return heads_[id & ~kHead];
        return *std::launder(reinterpret_cast<TimerNode*>(base_ + (size_t{id} << shift_)));
    }
    uint32_t id_of(const TimerNode* node) const {
        return static_cast<uint32_t>((reinterpret_cast<const std::byte*>(node) - base_) >> shift_);
    }
    // The list steps under the others: node `id` put last before `head`, or taken out.
    void insert_tail(uint32_t id, TimerNode& node, uint32_t head);
    void detach(TimerNode& node);
    void link(uint32_t id, TimerNode& node);
    void unlink(TimerNode& node);
    // List moves between heads; the nodes stay armed and count_ is unchanged.
    void move_to_tail(uint32_t id, TimerNode& node, uint32_t head);
    void splice_all(uint32_t from, uint32_t to);

    std::vector<TimerNode> heads_;  // the slots' circular lists, then advance()'s pending one
    uint32_t mask_;
    uint32_t pending_;  // the id of advance()'s list
    std::byte* base_ = nullptr;
    unsigned shift_ = 0;
    Divider tick_;           // the tick in ms: every conn arms a timer, which divides by it
    uint64_t current_tick_;  // next tick to process (the one after, while its callbacks run)
    size_t count_ = 0;
};

template <typename F>
size_t TimerWheel::advance(uint64_t now_ms, F&& on_expire, size_t budget) {
    const uint64_t target = tick_.div(now_ms);
    size_t fired = 0;
    while (current_tick_ <= target) {
        const uint64_t tick = current_tick_;
        const uint32_t head = kHead | static_cast<uint32_t>(tick & mask_);
        // Move the slot's nodes onto the pending list and always take the first one: a
        // callback may then cancel or re-arm any node, even the next one in this slot, and the
        // walk never follows a link saved before the callback ran.
        splice_all(head, pending_);
        // The tick counts as processed while its callbacks run, so a timer re-armed at or
        // before it goes to tick + 1 instead of being fired again here (an endless loop).
        current_tick_ = tick + 1;
        TimerNode& pending = at(pending_);
        while (pending.next != pending_) {
            const uint32_t id = pending.next;
            TimerNode& node = at(id);
            // Due in a later revolution: back to its slot.
            if (static_cast<int32_t>(node.expires_tick - static_cast<uint32_t>(tick)) > 0) {
                move_to_tail(id, node, head);
                continue;
            }
            if (fired == budget) {
                splice_all(pending_, head);
                current_tick_ = tick;  // resume at this tick next time
                return fired;
            }
            unlink(node);
            ++fired;
            on_expire(&node);
        }
    }
    return fired;
}

}  // namespace xvs::lb
