// FULLNAT rewrite (DNAT + SNAT in one step, net::rewrite_both) of a TCP/UDP packet, with one
// combined RFC 1624 checksum delta for the IP header (addresses) and the L4 header
// (pseudo-header addresses and ports).
//   inbound  client:cport -> VIP:vport  becomes  LIP:lport -> RS:rport
//   outbound RS:rport -> LIP:lport      becomes  VIP:vport -> client:cport
#pragma once

#include <cstdint>

#include "stack/pkt.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;

// The FULLNAT xmit entry (lb/xmit/xmit.h). in: client:cport -> VIP:vport becomes
// LIP:lport -> RS:dport, then UOA for a UDP flow that carries it (lb/conserve/uoa.h).
// out: RS:dport -> LIP:lport becomes VIP:vport -> client:cport.
template <class Af>
stack::Verdict fullnat_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);
template <class Af>
stack::Verdict fullnat_out(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);

}  // namespace xvs::lb
