#include "lb/xmit/dr.h"

namespace xvs::lb {

// Nothing to rewrite: stack::ipv4_output to the conn's RS address writes the Ethernet header
// (our MAC -> the RS's) and leaves the IP packet as the client sent it.
stack::Verdict dr_in(WorkerCtx&, LbPacket&, Conn&) {
    return stack::Verdict::Accept;
}

}  // namespace xvs::lb
