// Packet capture rings, see stack/capture.h.
#include "stack/capture.h"

#include <rte_mbuf.h>

#include <bit>
#include <cstring>
#include <ctime>

namespace xvs::stack {

CaptureTap::CaptureTap(CaptureSpec spec) : spec_(std::move(spec)) {
    spec_.slots = std::bit_ceil(spec_.slots < 2 ? 2u : spec_.slots);
    slots_ = std::make_unique<CaptureRecord[]>(spec_.slots);
    mask_ = spec_.slots - 1;
}

// Reserves the next slot: nullptr (counted lost) when the control thread has not drained it.
CaptureRecord* CaptureTap::reserve() {
    const uint32_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) > mask_) {
        lost_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    return &slots_[head & mask_];
}

// The slot's data holds len bytes of the frame: kept (published to the reader) if they pass
// the filter, else the slot is reused by the next frame.
void CaptureTap::commit(CaptureRecord& r, CapturePoint point, uint8_t port, Counter reason,
                        uint32_t len, uint32_t wire_len) {
    if (!spec_.filter.empty() && bpf_filter(spec_.filter.data(), r.data, wire_len, len) == 0)
        return;
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    r.ts_ns = static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
    r.wire_len = wire_len;
    r.len = static_cast<uint16_t>(len);
    r.point = point;
    r.port = port;
    r.reason = reason;
    matched_.fetch_add(1, std::memory_order_relaxed);
    head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void CaptureTap::offer(CapturePoint point, uint8_t port, Counter reason, const rte_mbuf* m) {
    CaptureRecord* r = reserve();
    if (r == nullptr) return;
    const uint32_t wire = rte_pktmbuf_pkt_len(m);
    const uint32_t len = wire < kCaptureSnapLen ? wire : kCaptureSnapLen;
    // The frame may span segments: rte_pktmbuf_read gathers them into the slot.
    const void* p = rte_pktmbuf_read(m, 0, len, r->data);
    if (p == nullptr) return;
    if (p != r->data) std::memcpy(r->data, p, len);
    commit(*r, point, port, reason, len, wire);
}

void CaptureTap::offer_bytes(CapturePoint point, uint8_t port, Counter reason,
                             const uint8_t* frame, uint32_t len, uint32_t wire_len) {
    CaptureRecord* r = reserve();
    if (r == nullptr) return;
    if (len > kCaptureSnapLen) len = kCaptureSnapLen;
    std::memcpy(r->data, frame, len);
    commit(*r, point, port, reason, len, wire_len);
}

size_t CaptureTap::drain(std::vector<CaptureRecord>& out, size_t max) {
    uint32_t tail = tail_.load(std::memory_order_relaxed);
    const uint32_t head = head_.load(std::memory_order_acquire);
    size_t n = 0;
    while (tail != head && n < max) {
        out.push_back(slots_[tail & mask_]);
        ++tail;
        ++n;
    }
    tail_.store(tail, std::memory_order_release);
    return n;
}

}  // namespace xvs::stack
