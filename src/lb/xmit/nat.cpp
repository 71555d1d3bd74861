#include "lb/xmit/nat.h"

#include "lb/conn.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/ttl.h"
#include "net/nat_rewrite.h"

namespace xvs::lb {

stack::Verdict nat_in(WorkerCtx& w, LbPacket& lp, Conn& c) {
    if (!ttl_decrement(w, lp)) return stack::Verdict::Drop;
    net::rewrite_daddr_dport(lp.ip, lp.l4, lp.proto, c.daddr, c.dport);
    return stack::Verdict::Accept;
}

stack::Verdict nat_out(WorkerCtx& w, LbPacket& lp, Conn& c) {
    if (!ttl_decrement(w, lp)) return stack::Verdict::Drop;
    net::rewrite_saddr_sport(lp.ip, lp.l4, lp.proto, c.vaddr, c.vport);
    return stack::Verdict::Accept;
}

}  // namespace xvs::lb
