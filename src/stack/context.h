// Everything the stack layer touches on a worker: counters, TX buffers, neighbour cache, the
// mbuf pool for packets it builds (ARP), the worker clock and the snapshot's stack view.
#pragma once

#include <cstdint>

#include "stack/counters.h"
#include "stack/neigh.h"
#include "stack/tx.h"
#include "stack/view.h"

struct rte_mempool;

namespace xvs::stack {

struct StackContext {
    Counters counters;
    TxBuffers tx;
    Neighbours neigh;
    rte_mempool* pool = nullptr;
    uint64_t now_ms = 0;
    const StackView* view = nullptr;
    uint64_t next_neigh_scan_ms = 0;
};

}  // namespace xvs::stack
