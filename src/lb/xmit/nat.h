// NAT (masquerading, LVS/NAT): the destination VIP:vport becomes RS:rport on the way in, and the
// source RS:rport becomes VIP:vport on the way back. The client's address reaches the RS
// untouched, so the RS's default route must be the director (its replies go to the client).
// The conn's outbound tuple is RS:rport -> client:cport (laddr_ip:lport hold the client's).
// The director is the RS's router, so TTL is decremented both ways as IPVS does (its NAT xmit
// decrements on the way in; replies cross the kernel's forwarding path, which decrements);
// a packet whose TTL would reach 0 is dropped with ICMP time exceeded back (lb/xmit/ttl.h).
#pragma once

#include "stack/pkt.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;

template <class Af>
stack::Verdict nat_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);
template <class Af>
stack::Verdict nat_out(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);

}  // namespace xvs::lb
