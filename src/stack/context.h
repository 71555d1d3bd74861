// Everything the stack layer touches on a worker: counters, TX buffers, neighbour cache, the
// mbuf pool for packets it builds (ARP), the worker clock and the snapshot's stack view.
#pragma once

#include <cstdint>

#include "common/single_writer.h"
#include "stack/counters.h"
#include "stack/fragment.h"
#include "stack/neigh.h"
#include "stack/tx.h"
#include "stack/view.h"

struct rte_mempool;

namespace xvs::stack {

struct StackContext {
    Counters counters;
    TxBuffers tx;
    TxBuffers exc_tx;  // to the ports' exception (TAP) ports: stack/exception.h
    Neighbours neigh;
    rte_mempool* pool = nullptr;
    SingleWriter<uint64_t> now_ms;  // the worker's clock; the control thread reads it too
    const StackView* view = nullptr;
    uint64_t next_neigh_scan_ms = 0;
    Fragments frag;  // reassembly table and its large mbufs (stack/fragment.h)
};

}  // namespace xvs::stack
