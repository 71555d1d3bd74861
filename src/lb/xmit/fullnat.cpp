// FULLNAT: DNAT + SNAT in one step (net::rewrite_both), both directions through the director.
#include "lb/xmit/fullnat.h"

#include "lb/conn.h"
#include "lb/conserve/uoa.h"
#include "lb/worker_ctx.h"
#include "net/nat_rewrite.h"

namespace xvs::lb {

template <class Af>
stack::Verdict fullnat_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    net::rewrite_both<Af>(lp.ip, lp.l4, lp.proto, c.laddr_ip, c.daddr, c.lport, c.dport);
    // UOA after the rewrite: rewrite_both finds the ports at lp.l4, which an insert moves.
    // kConnUoa (UDP only) keeps the side slot out of the way of every other packet.
    if (c.flags & kConnUoa) uoa_inbound(w, lp, &c);
    return stack::Verdict::Accept;
}

template <class Af>
stack::Verdict fullnat_out(WorkerCtx&, LbPacket<Af>& lp, Conn& c) {
    net::rewrite_both<Af>(lp.ip, lp.l4, lp.proto, c.vaddr, c.caddr, c.vport, c.cport);
    return stack::Verdict::Accept;
}

template stack::Verdict fullnat_in<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict fullnat_out<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);

}  // namespace xvs::lb
