#include "lb/xmit/nat.h"

#include "lb/conn.h"
#include "lb/worker_ctx.h"
#include "net/nat_rewrite.h"

namespace xvs::lb {

stack::Verdict nat_in(WorkerCtx&, LbPacket& lp, Conn& c) {
    net::rewrite_daddr_dport(lp.ip, lp.l4, lp.proto, c.daddr, c.dport);
    return stack::Verdict::Accept;
}

stack::Verdict nat_out(WorkerCtx&, LbPacket& lp, Conn& c) {
    net::rewrite_saddr_sport(lp.ip, lp.l4, lp.proto, c.vaddr, c.vport);
    return stack::Verdict::Accept;
}

}  // namespace xvs::lb
