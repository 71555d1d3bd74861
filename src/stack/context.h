// Everything the stack layer touches on a worker: counters, TX buffers, the shared neighbour
// table, the mbuf pool for packets it builds (ARP), the worker clock and the snapshot's stack view.
#pragma once

#include <cstdint>

#include "common/single_writer.h"
#include "stack/counters.h"
#include "stack/fragment.h"
#include "stack/neigh.h"
#include "stack/tx.h"
#include "stack/view.h"

struct rte_mempool;
struct rte_ring;

namespace xvs::stack {

class NeighShared;
class CaptureTap;

struct StackContext {
    Counters counters;
    TxBuffers tx;
    TxBuffers exc_tx;  // to the ports' exception (TAP) ports: stack/exception.h
    // The one neighbour table of all workers (stack/neigh_shared.h). Only its owner writes it
    // and uses NeighEntry; the others read what it publishes and hand the owner, over their
    // ring, what they cannot send and the ARP/ND they receive.
    Neighbours* neigh = nullptr;
    bool neigh_owner = true;
    rte_ring* neigh_handoff = nullptr;  // non-owner: its ring to the owner
    NeighShared* neigh_shared = nullptr;
    // Added to the table's generation for this worker's next-hop caches: bumped on every new
    // snapshot (the routes may differ), which only this worker's conns need to notice.
    uint16_t nh_epoch = 0;
    rte_mempool* pool = nullptr;
    SingleWriter<uint64_t> now_ms;  // the worker's clock; the control thread reads it too
    const StackView* view = nullptr;  // set_view()
    // The last own-address answers (OwnMemo), of the current view.
    OwnMemo<uint32_t> own4;
    OwnMemo<net::InetAddr> own6;
    uint64_t next_neigh_scan_ms = 0;
    // Gratuitous ARP (StackView::garp): the generation announced, and the repeats still due.
    uint32_t garp_done = 0;
    uint8_t garp_left = 0;
    uint64_t garp_next_ms = 0;
    Fragments frag;  // reassembly table and its large mbufs (stack/fragment.h)
    // The armed packet capture (stack/capture.h), set by the worker from its command channel;
    // nullptr (the usual case) makes every capture point one test.
    CaptureTap* capture = nullptr;

    // A new view (a new snapshot): the old view's answers, pointers into it, go with it.
    void set_view(const StackView* v) {
        view = v;
        own4.valid = false;
        own6.valid = false;
    }
};

}  // namespace xvs::stack
