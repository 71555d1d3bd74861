// Packet capture at named points of a worker (`xvsctl capture`): frames received on a port
// (rx), frames handed to a port's TX queue (tx), and frames dropped under a named reason
// (drop). The control thread arms one CaptureTap per worker through the worker's command
// channel (lb/command.h); the worker copies each frame that matches the tap's point, port,
// drop reason and BPF filter into a slot of the tap's ring, and the control thread drains the
// ring into the client's pcap. With no tap armed a capture point costs one pointer test.
//
// The ring is single-producer (the worker) single-consumer (the control thread), fixed size,
// allocated when the tap is made: a full ring loses the frame (counted in lost()), the worker
// never waits and never allocates. The filter is classic BPF compiled by libpcap on the
// control thread (pcap_compile, the tcpdump language) and run by libpcap's bpf_filter on the
// copied bytes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include <pcap/bpf.h>

#include "stack/counters.h"

struct rte_mbuf;

namespace xvs::stack {

enum class CapturePoint : uint8_t { Rx, Tx, Drop };

inline constexpr uint32_t kCaptureSnapLen = 2048;  // bytes kept of a frame (an MTU-1500 frame whole)

struct CaptureRecord {
    uint64_t ts_ns = 0;  // CLOCK_REALTIME when the worker copied it
    uint32_t wire_len = 0;
    uint16_t len = 0;  // bytes in data
    CapturePoint point = CapturePoint::Rx;
    uint8_t port = 0;
    Counter reason = Counter::Count;  // drop: the reason; else Count
    uint8_t data[kCaptureSnapLen];
};

struct CaptureSpec {
    CapturePoint point = CapturePoint::Rx;
    int port = -1;                      // a port index, or -1 for every port
    Counter reason = Counter::Count;    // drop: one reason, or Count for every drop
    std::vector<bpf_insn> filter;       // empty: every frame
    uint32_t slots = 1024;              // ring size, a power of two (2 KiB a slot)
};

class CaptureTap {
  public:
    explicit CaptureTap(CaptureSpec spec);
    CaptureTap(const CaptureTap&) = delete;
    CaptureTap& operator=(const CaptureTap&) = delete;

    // Worker. Whether a frame at this point, port and reason is wanted (before the filter).
    bool wants(CapturePoint point, uint8_t port, Counter reason) const {
        return point == spec_.point && (spec_.port < 0 || spec_.port == port) &&
               (point != CapturePoint::Drop || spec_.reason == Counter::Count ||
                spec_.reason == reason);
    }
    // Worker. Copies m into the ring if it passes the filter; the mbuf is not touched.
    void offer(CapturePoint point, uint8_t port, Counter reason, const rte_mbuf* m);
    // The same for a frame already in one buffer (tests, and offer's core).
    void offer_bytes(CapturePoint point, uint8_t port, Counter reason, const uint8_t* frame,
                     uint32_t len, uint32_t wire_len);

    // Control thread. Moves up to max records out of the ring; returns how many.
    size_t drain(std::vector<CaptureRecord>& out, size_t max);
    uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }
    uint64_t matched() const { return matched_.load(std::memory_order_relaxed); }
    const CaptureSpec& spec() const { return spec_; }

  private:
    CaptureRecord* reserve();
    void commit(CaptureRecord& r, CapturePoint point, uint8_t port, Counter reason, uint32_t len,
                uint32_t wire_len);

    CaptureSpec spec_;
    std::unique_ptr<CaptureRecord[]> slots_;
    uint32_t mask_;
    alignas(64) std::atomic<uint32_t> head_{0};  // next slot the worker writes
    alignas(64) std::atomic<uint32_t> tail_{0};  // next slot the control thread reads
    std::atomic<uint64_t> lost_{0};
    std::atomic<uint64_t> matched_{0};
};

// Whether a drop reason's frames can be captured exactly. Reassembly keeps the fragments it
// holds as bytes in its buffers, not as frames, so what its drops count (a datagram's earlier
// fragments too) is no longer there to copy; drop_mbuf_alloc has no frame at all.
constexpr bool capture_drop_exact(Counter reason) {
    switch (reason) {
        case Counter::drop_frag_timeout:
        case Counter::drop_frag_table_full:
        case Counter::drop_frag_no_buffer:
        case Counter::drop_frag_too_many:
        case Counter::drop_frag_overlap:
        case Counter::drop_frag_bad_length:
        case Counter::drop_frag_duplicate:
        case Counter::drop_frag_too_big:
        case Counter::drop_mbuf_alloc:
            return false;
        default:
            return kCounterInfo[static_cast<size_t>(reason)].is_drop;
    }
}

// The capture points' one test on the packet path: the tap is armed and wants this frame.
inline bool capture_wants(const CaptureTap* tap, CapturePoint point, uint8_t port,
                          Counter reason = Counter::Count) {
    return tap != nullptr && tap->wants(point, port, reason);
}

}  // namespace xvs::stack
