#include "lb/xmit/dr.h"

#include "lb/worker_ctx.h"

namespace xvs::lb {

// Nothing to rewrite: stack::ip_output to the conn's RS address writes the Ethernet header
// (our MAC -> the RS's) and leaves the IP packet as the client sent it.
template <class Af>
stack::Verdict dr_in(WorkerCtx&, LbPacket<Af>&, Conn&) {
    return stack::Verdict::Accept;
}

template stack::Verdict dr_in<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict dr_in<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);

}  // namespace xvs::lb
