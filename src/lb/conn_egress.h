// The egress port of a conn's packets, for the MTU checks that must know the link before the
// packet is sent (TOA, PROXY protocol, UOA, the tunnel modes, FNAT64's too-big checks).
#pragma once

#include <cstdint>
#include <optional>

#include "lb/conn.h"
#include "lb/worker_ctx.h"
#include "stack/output.h"

namespace xvs::lb {

// The port the conn's packets in direction dir leave by (toward its dest, or back toward its
// client): the conn's next-hop cache's while no route changed, else the route's
// (stack::egress_port); nullopt without a route.
[[gnu::always_inline]] inline std::optional<uint8_t> conn_egress_port(WorkerCtx& w, const Conn& c,
                                                                      stack::NhDir dir) {
    return stack::egress_port(w.stack, c.nh, dir,
                              dir == stack::NhDir::ToDest ? c.daddr() : c.caddr());
}

}  // namespace xvs::lb
