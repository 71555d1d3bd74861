// Frame conservation: the accounting identity every worker keeps. Between polls, every frame a
// worker received or built is either sent, freed under exactly one drop reason (is_drop),
// consumed under a named non-drop counter, or still held (neighbour queue, SYN-proxy saves,
// TX buffers). Packet tests and the pipeline fuzzer check it after every burst:
//
//   Σ received + frames_generated == tx_packets + Σ is_drop counters + Σ consumed + held
//
// Received is what the port gave the worker plus what other workers handed it: a frame handed
// to the conn's owner (lb/redirect.h: redirect_out, redirect_in) or to the neighbour owner
// (stack/neigh_shared.h: neigh_handoff_sent, neigh_handoff_received) is consumed on one
// worker and received on the other.
//
// frames_generated counts every mbuf the stack tried to allocate for a frame of its own; a
// failed allocation is that frame dropped as drop_mbuf_alloc. A frame turned into another in
// place (ARP request -> reply, SYN -> cookie SYN-ACK, RS SYN-ACK -> window update) is one frame.
#pragma once

#include <array>
#include <cstdint>

#include "stack/counters.h"

namespace xvs::stack {

// Frames that reach a worker: from its RX queues, or handed over by another worker.
inline constexpr std::array kReceivedCounters{
    Counter::rx_packets,
    Counter::neigh_handoff_received,  // to the neighbour owner (stack/neigh_shared.h)
    Counter::redirect_in,             // to the conn's owner (lb/redirect.h)
};

// Non-drop counters that free the frame they count: the frame did its job.
inline constexpr std::array kConsumedCounters{
    Counter::arp_replies_received,         // the reply taught us a MAC
    Counter::nd_adverts_received,          // likewise for IPv6
    Counter::synproxy_ack_deferred,        // the cookie ACK proved the handshake (defer_rs_syn)
    Counter::synproxy_rs_synack_absorbed,  // the RS SYN-ACK completed the RS side (defer_rs_syn)
    Counter::frag_merged,                  // its bytes are in the reassembled datagram
    Counter::frag_split,                   // sent on as the fragments it was cut into
    Counter::icmp_nat64_translated,        // sent on as a new error of the other family
    Counter::exc_to_kernel,                // handed to the kernel through the exception port
    Counter::redirect_out,                 // handed to the worker owning its conn
    Counter::neigh_handoff_sent,           // handed to the neighbour owner worker
};

struct FrameBalance {
    uint64_t received = 0;   // Σ kReceivedCounters
    uint64_t generated = 0;  // frames_generated
    uint64_t sent = 0;       // tx_packets
    uint64_t dropped = 0;    // Σ is_drop counters
    uint64_t consumed = 0;   // Σ kConsumedCounters
    uint64_t held = 0;       // frames the worker still owns
    bool balanced() const { return received + generated == sent + dropped + consumed + held; }
};

inline FrameBalance frame_balance(const Counters& c, uint64_t held) {
    FrameBalance b;
    for (Counter k : kReceivedCounters) b.received += c.get(k);
    b.generated = c.get(Counter::frames_generated);
    b.sent = c.get(Counter::tx_packets);
    for (size_t i = 0; i < kCounterCount; ++i)
        if (kCounterInfo[i].is_drop) b.dropped += c.v[i];
    for (Counter k : kConsumedCounters) b.consumed += c.get(k);
    b.held = held;
    return b;
}

}  // namespace xvs::stack
