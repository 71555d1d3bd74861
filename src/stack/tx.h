// Per-worker TX buffers, one per port: packets are batched and sent with one burst call per
// port at the end of each poll (or when a buffer fills). Unsent packets are freed and counted.
#pragma once

#include <array>
#include <cstdint>

#include "stack/counters.h"
#include "stack/view.h"

struct rte_mbuf;

namespace xvs::stack {

class CaptureTap;

class TxBuffers {
public:
    static constexpr uint16_t kBurst = 64;

    // sent/full: the counters of frames the queue took and of those it refused (the
    // exception path's buffers count exc_to_kernel / drop_exc_full instead).
    void init(uint16_t queue, Counter sent = Counter::tx_packets,
              Counter full = Counter::drop_tx_full) {
        queue_ = queue;
        sent_ = sent;
        full_ = full;
    }
    void set_port_id(uint8_t port, uint16_t port_id) { ports_[port].port_id = port_id; }
    // The armed capture (stack/capture.h): frames handed to the queue (tx) and those it
    // refused (drop); nullptr when none.
    void set_capture(CaptureTap* tap) { capture_ = tap; }
    // Takes ownership of pkt. Inline: once per forwarded packet.
    [[gnu::always_inline]] void enqueue(uint8_t port, rte_mbuf* pkt, Counters& counters) {
        Buffer& b = ports_[port];
        b.pkts[b.count++] = pkt;
        if (b.count == kBurst) flush_port(port, counters);
    }
    void flush(Counters& counters) {
        for (uint8_t p = 0; p < kMaxPorts; ++p) {
            if (ports_[p].count)
                flush_port(p, counters);
            else if (ports_[p].kicks_left)
                kick_port(p);
        }
    }

    // Frames enqueued and not yet handed to the port (conservation: held).
    unsigned pending() const {
        unsigned n = 0;
        for (const Buffer& b : ports_) n += b.count;
        return n;
    }

private:
    void flush_port(uint8_t port, Counters& counters);
    // An empty TX burst: lets PMDs that transmit lazily (AF_XDP in copy mode sends at most a
    // few dozen frames per kick) drain what they accepted earlier, once traffic pauses.
    void kick_port(uint8_t port);
    static constexpr uint16_t kKicksAfterSend = 128;

    struct Buffer {
        uint16_t port_id = 0;
        uint16_t count = 0;
        uint16_t kicks_left = 0;
        std::array<rte_mbuf*, kBurst> pkts{};
    };
    std::array<Buffer, kMaxPorts> ports_{};
    uint16_t queue_ = 0;
    CaptureTap* capture_ = nullptr;
    Counter sent_ = Counter::tx_packets;
    Counter full_ = Counter::drop_tx_full;
};

}  // namespace xvs::stack
