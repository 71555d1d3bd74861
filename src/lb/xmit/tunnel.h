// TUN (LVS/TUN): the client's packet, unchanged, inside an outer IPv4 header director -> RS:
// IPIP (protocol 4) or GUE (UDP to the dest's port, 4-byte GUE header), as the dest says. The
// RS decapsulates (kernel ipip/fou, or `xvs-rs decap`), serves the VIP held on lo and answers
// the client directly: no outbound tuple. The outer source is the port's tunnel source (ip_defs
// `tunnel_source`, else the director's first address on the port towards the RS). An inner packet
// that no longer fits the port MTU with the outer header gets ICMP frag-needed back to the client
// when DF is set (path-MTU discovery), else is dropped and counted (xvs does not fragment).
#pragma once

#include "stack/pkt.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;

template <class Af>
stack::Verdict tunnel_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);

}  // namespace xvs::lb
