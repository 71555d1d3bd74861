// Worker-side admission control: the per-service client lists and new-connection rate cap
// (admit) and the drop reason when thresholds leave a scheduler nothing to pick. Runs
// per new connection on the packet path: no allocation, no locks, counters only.
#include "lb/admission.h"

#include "lb/service.h"
#include "lb/conn_ops.h"
#include "lb/director.h"
#include "lb/worker_ctx.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// A refusal: counted, and with the packet at hand dropped (captured, freed) under its reason.
bool refuse(WorkerCtx& w, Counter reason, rte_mbuf* pkt) {
    if (pkt != nullptr)
        stack::drop(w.stack, pkt, reason);
    else
        w.stack.counters.inc(reason);
    return false;
}

// admit_source's checks, inlined into admit too: most services have no lists, and a new
// connection then pays the two empty checks, not a second call.
[[gnu::always_inline]] inline bool source_admitted(WorkerCtx& w, const ServiceView& view,
                                                   const net::InetAddr& client, rte_mbuf* pkt) {
    if (!view.blacklist.empty() && view.blacklist.contains(client))
        return refuse(w, Counter::drop_blacklisted, pkt);
    if (!view.whitelist.empty() && !view.whitelist.contains(client))
        return refuse(w, Counter::drop_not_whitelisted, pkt);
    return true;
}

}  // namespace

bool admit_source(WorkerCtx& w, const ServiceView& view, const net::InetAddr& client,
                  rte_mbuf* pkt) {
    return source_admitted(w, view, client, pkt);
}

bool admit(WorkerCtx& w, const ServiceView& view, const net::InetAddr& client, rte_mbuf* pkt) {
    if (!source_admitted(w, view, client, pkt)) return false;
    // Lists first: a refused client must not use up tokens that legitimate ones need.
    if (view.conn_rate != 0) {
        const unsigned wid = w.id;
        const uint32_t share = worker_share(view.conn_rate, wid, w.director->workers());
        if (!token_take(view.svc->workers[wid].conn_rate_bucket, share, w.stack.now_ms))
            return refuse(w, Counter::drop_conn_rate, pkt);
    }
    return true;
}

Counter sched_fail_reason(const SchedPlan& plan) {
    if (plan.limits.empty()) return Counter::drop_no_dest;
    for (int32_t weight : plan.weights)
        if (weight > 0) return Counter::drop_dest_overloaded;
    return Counter::drop_no_dest;
}

}  // namespace xvs::lb
