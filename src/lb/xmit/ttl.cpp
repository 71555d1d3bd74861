// TTL decrement of forwarded packets, see lb/xmit/ttl.h.
#include "lb/xmit/ttl.h"

#include <rte_mbuf.h>

#include "lb/worker_ctx.h"
#include "lb/xmit/icmp_error.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// Time exceeded back to the sender, from the address it sent to when that is ours (a VIP, a
// WAN address), else from the receiving port's own address of its family, as a router answers.
template <class Af>
void time_exceeded(WorkerCtx& w, const LbPacket<Af>& lp) {
    if (lp.related) return;  // RFC 1122 3.2.2, RFC 4443 2.4(e): no error about an error
    const net::InetAddr saddr =
        lp.local ? Af::dst(*lp.ip) : w.stack.view->source_of(lp.port, Af::src(*lp.ip));
    if (saddr.is_unspecified()) return;
    send_time_exceeded(w, lp, saddr);
}

}  // namespace

template <class Af>
bool ttl_expired(WorkerCtx& w, LbPacket<Af>& lp) {
    time_exceeded(w, lp);
    stack::drop(w.stack, lp.pkt, Counter::drop_ttl_expired);
    return false;
}

template bool ttl_expired<net::Af4>(WorkerCtx&, LbPacket4&);
template bool ttl_expired<net::Af6>(WorkerCtx&, LbPacket6&);

}  // namespace xvs::lb
