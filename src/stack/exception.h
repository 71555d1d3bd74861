// The exception path (DESIGN.md "Packet path"): frames that reach xvs but belong to the
// director's kernel (its own addresses: management, SSH, BGP, health checks) leave through the
// port's exception port, a TAP device whose kernel side holds those addresses; frames the
// kernel writes to the TAP go out on the port unchanged. With net_af_xdp the XDP program
// (port/bpf/xvs_xdp.bpf.c) keeps the kernel's frames away from xvs instead, and ports have no
// exception port. No allocation, no locks: bursts through per-worker TX buffers, a full TAP
// queue drops and counts (drop_exc_full).
#pragma once

#include <cstdint>

#include "stack/context.h"
#include "stack/counters.h"

struct rte_mbuf;

namespace xvs::stack {

// True when port has an exception port.
inline bool exception_enabled(const StackContext& ctx, uint8_t port) {
    return ctx.view->ports[port].has_exception;
}

// The frame xvs has no use for: to the kernel through port's exception port when it has one
// (counted exc_to_kernel once the TAP took it), else dropped under `reason`. Consumes m.
void exception_or_drop(StackContext& ctx, uint8_t port, rte_mbuf* m, Counter reason);

// Polls every exception port (the worker's queue) once and sends what the kernel wrote out
// on the matching port (rx_packets and exc_from_kernel count them). Returns frames read.
unsigned exception_poll(StackContext& ctx, uint16_t queue, uint16_t burst);

}  // namespace xvs::stack
