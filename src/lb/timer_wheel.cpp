// Hashed timer wheel: slot = expires_tick mod slots; circular doubly linked lists with
// head nodes so unlink needs no branch on list ends.
#include "lb/timer_wheel.h"

#include <bit>
#include <cassert>

namespace xvs::lb {

TimerWheel::TimerWheel(size_t slots, uint64_t tick_ms, uint64_t now_ms)
    : heads_(std::bit_ceil(slots < 2 ? size_t(2) : slots) + 1),
      mask_(static_cast<uint32_t>(heads_.size() - 2)),
      pending_(kHead | static_cast<uint32_t>(heads_.size() - 1)),
      tick_(tick_ms ? tick_ms : 1),
      current_tick_(tick_.div(now_ms)) {
    assert(heads_.size() - 1 < kHead);
    for (uint32_t i = 0; i < heads_.size(); ++i) heads_[i].next = heads_[i].prev = kHead | i;
}

void TimerWheel::attach(void* base, size_t stride, uint32_t count) {
    assert(std::has_single_bit(stride) && count < kHead && count_ == 0);
    (void)count;
    base_ = static_cast<std::byte*>(base);
    shift_ = static_cast<unsigned>(std::countr_zero(stride));
}

void TimerWheel::insert_tail(uint32_t id, TimerNode& node, uint32_t head) {
    TimerNode& h = at(head);
    node.next = head;
    node.prev = h.prev;
    at(h.prev).next = id;
    h.prev = id;
}

void TimerWheel::detach(TimerNode& node) {
    at(node.prev).next = node.next;
    at(node.next).prev = node.prev;
}

void TimerWheel::link(uint32_t id, TimerNode& node) {
    insert_tail(id, node, kHead | (node.expires_tick & mask_));
    ++count_;
}

void TimerWheel::unlink(TimerNode& node) {
    detach(node);
    node.next = node.prev = TimerNode::kNone;
    --count_;
}

void TimerWheel::move_to_tail(uint32_t id, TimerNode& node, uint32_t head) {
    detach(node);
    insert_tail(id, node, head);
}

void TimerWheel::splice_all(uint32_t from, uint32_t to) {
    TimerNode& f = at(from);
    if (f.next == from) return;
    const uint32_t first = f.next;
    const uint32_t last = f.prev;
    TimerNode& t = at(to);
    at(first).prev = t.prev;
    at(t.prev).next = first;
    at(last).next = to;
    t.prev = last;
    f.next = f.prev = from;
}

void TimerWheel::arm(TimerNode* node, uint64_t expires_ms) {
    if (node->armed()) unlink(*node);
    uint64_t tick = tick_.div(expires_ms + tick_.divisor() - 1);
    // A timer in the past fires at the next tick processed, not in a slot already passed
    // (which it would wait a whole revolution for).
    if (tick < current_tick_) tick = current_tick_;
    // Ticks are kept in 32 bits and compared as differences: at most 2^31 - 1 ahead.
    constexpr uint64_t kMaxAhead = (uint64_t{1} << 31) - 1;
    if (tick - current_tick_ > kMaxAhead) tick = current_tick_ + kMaxAhead;
    node->expires_tick = static_cast<uint32_t>(tick);
    link(id_of(node), *node);
}

void TimerWheel::cancel(TimerNode* node) {
    if (node->armed()) unlink(*node);
}

}  // namespace xvs::lb
