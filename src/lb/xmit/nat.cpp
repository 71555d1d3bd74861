#include "lb/xmit/nat.h"

#include "lb/conn.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/ttl.h"
#include "net/nat_rewrite.h"

namespace xvs::lb {

template <class Af>
stack::Verdict nat_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    if (!ttl_decrement(w, lp)) return stack::Verdict::Drop;
    net::rewrite_daddr_dport_by<Af>(lp.ip, lp.l4, lp.proto, c.daddr_as<Af>(), c.dport,
                                    c.addr_sum_in());
    return stack::Verdict::Accept;
}

template <class Af>
stack::Verdict nat_out(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    if (!ttl_decrement(w, lp)) return stack::Verdict::Drop;
    net::rewrite_saddr_sport_by<Af>(lp.ip, lp.l4, lp.proto, c.vaddr_as<Af>(), c.vport,
                                    c.addr_sum_out());
    return stack::Verdict::Accept;
}

template stack::Verdict nat_in<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict nat_in<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);
template stack::Verdict nat_out<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict nat_out<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);

}  // namespace xvs::lb
