// The exception path, see stack/exception.h.
#include "stack/exception.h"

#include <rte_mbuf.h>

#include "port/ethdev.h"
#include "stack/output.h"

namespace xvs::stack {

void exception_or_drop(StackContext& ctx, uint8_t port, rte_mbuf* m, Counter reason) {
    if (!exception_enabled(ctx, port)) return drop(ctx, m, reason);
    ctx.exc_tx.enqueue(port, m, ctx.counters);
}

unsigned exception_poll(StackContext& ctx, uint16_t queue, uint16_t burst) {
    constexpr uint16_t kBurst = 32;
    if (burst > kBurst) burst = kBurst;
    unsigned total = 0;
    const auto& ports = ctx.view->ports;
    for (size_t p = 0; p < ports.size(); ++p) {
        if (!ports[p].has_exception) continue;
        rte_mbuf* pkts[kBurst];
        const uint16_t n = port::port_rx_burst(ports[p].exception_port_id, queue, pkts, burst);
        if (n == 0) continue;
        ctx.counters.inc(Counter::rx_packets, n);
        ctx.counters.inc(Counter::exc_from_kernel, n);
        // The kernel's frames go out as written: it resolved its own neighbours, and its
        // MAC is the port's (the TAP is given the port's MAC when it is opened).
        for (uint16_t i = 0; i < n; ++i)
            ctx.tx.enqueue(static_cast<uint8_t>(p), pkts[i], ctx.counters);
        total += n;
    }
    return total;
}

}  // namespace xvs::stack
