// FULLNAT: DNAT + SNAT in one step (fullnat_rewrite), both directions through the director.
#include "lb/xmit/fullnat.h"

#include "lb/conn.h"
#include "lb/conserve/uoa.h"
#include "lb/worker_ctx.h"

namespace xvs::lb {

stack::Verdict fullnat_in(WorkerCtx& w, LbPacket& lp, Conn& c) {
    fullnat_rewrite(lp.ip, lp.l4, lp.proto, c.laddr_ip, c.daddr, c.lport, c.dport);
    // UOA after the rewrite: fullnat_rewrite finds the ports at lp.l4, which an insert moves.
    // kConnUoa (UDP only) keeps the side slot out of the way of every other packet.
    if (c.flags & kConnUoa) uoa_inbound(w, lp, &c);
    return stack::Verdict::Accept;
}

stack::Verdict fullnat_out(WorkerCtx&, LbPacket& lp, Conn& c) {
    fullnat_rewrite(lp.ip, lp.l4, lp.proto, c.vaddr, c.caddr, c.vport, c.cport);
    return stack::Verdict::Accept;
}

}  // namespace xvs::lb
