// Worker-side admission control: the per-service client lists and new-connection rate cap
// (Worker::admit) and the drop reason when thresholds leave a scheduler nothing to pick. Runs
// per new connection on the packet path: no allocation, no locks, counters only.
#include "lb/admission.h"

#include "lb/service.h"
#include "lb/worker.h"

namespace xvs::lb {

using stack::Counter;

bool Worker::admit_source(const ServiceView& view, uint32_t client_be) {
    if (!view.blacklist.empty() && view.blacklist.contains(client_be)) {
        ctx_.counters.inc(Counter::drop_blacklisted);
        return false;
    }
    if (!view.whitelist.empty() && !view.whitelist.contains(client_be)) {
        ctx_.counters.inc(Counter::drop_not_whitelisted);
        return false;
    }
    return true;
}

bool Worker::admit(const ServiceView& view, uint32_t client_be) {
    if (!admit_source(view, client_be)) return false;
    // Lists first: a refused client must not use up tokens that legitimate ones need.
    if (view.conn_rate != 0) {
        const unsigned w = cfg_.id;
        const uint32_t share = worker_share(view.conn_rate, w, director_.workers());
        if (!token_take(view.svc->workers[w].conn_rate_bucket, share, ctx_.now_ms)) {
            ctx_.counters.inc(Counter::drop_conn_rate);
            return false;
        }
    }
    return true;
}

Counter Worker::sched_fail_reason(const SchedPlan& plan) {
    if (plan.limits.empty()) return Counter::drop_no_dest;
    for (int32_t weight : plan.weights)
        if (weight > 0) return Counter::drop_dest_overloaded;
    return Counter::drop_no_dest;
}

}  // namespace xvs::lb
