// Hashed timer wheel: slot = expires_tick mod slots; circular doubly linked lists with
// sentinel heads so unlink needs no branch on list ends.
#include "lb/timer_wheel.h"

#include <bit>

namespace xvs::lb {

TimerWheel::TimerWheel(size_t slots, uint64_t tick_ms, uint64_t now_ms)
    : slots_(std::bit_ceil(slots < 2 ? size_t(2) : slots)),
      mask_(slots_.size() - 1),
      tick_ms_(tick_ms ? tick_ms : 1),
      current_tick_(now_ms / tick_ms_) {
    for (auto& head : slots_) head.next = head.prev = &head;
}

void TimerWheel::link(TimerNode* node) {
    TimerNode* head = &slots_[node->expires_tick & mask_];
    node->next = head;
    node->prev = head->prev;
    head->prev->next = node;
    head->prev = node;
    ++count_;
}

void TimerWheel::unlink(TimerNode* node) {
    node->prev->next = node->next;
    node->next->prev = node->prev;
    node->next = node->prev = nullptr;
    --count_;
}

void TimerWheel::move_to_tail(TimerNode* node, TimerNode* head) {
    node->prev->next = node->next;
    node->next->prev = node->prev;
    node->next = head;
    node->prev = head->prev;
    head->prev->next = node;
    head->prev = node;
}

void TimerWheel::splice_all(TimerNode* from, TimerNode* to) {
    if (from->next == from) return;
    TimerNode* first = from->next;
    TimerNode* last = from->prev;
    first->prev = to->prev;
    to->prev->next = first;
    last->next = to;
    to->prev = last;
    from->next = from->prev = from;
}

void TimerWheel::arm(TimerNode* node, uint64_t expires_ms) {
    if (node->armed()) unlink(node);
    uint64_t tick = (expires_ms + tick_ms_ - 1) / tick_ms_;
    // A timer in the past fires at the next tick processed, not in a slot already passed
    // (which it would wait a whole revolution for).
    node->expires_tick = tick < current_tick_ ? current_tick_ : tick;
    link(node);
}

void TimerWheel::cancel(TimerNode* node) {
    if (node->armed()) unlink(node);
}

}  // namespace xvs::lb
