// NatTun (issue 20, seed 003's "new LVS tunnel" from 360): NAT carried over an IP tunnel both
// ways. Inbound, the inner packet is DNATed to RS:rport (the source stays the client) and gets
// an outer header from one of the service's local addresses (laddr pool, as FULLNAT) to the RS:
// IPIP, or GUE to the dest's tunnel port. The RS (`xvs-rs tunnel`) strips it, remembers the
// local address for the client, and wraps its reply toward it; the stack strips that outer
// header at the local address (stack/input.cpp, PktMeta::tunneled) and the reply, RS:rport ->
// client:cport (the conn's outbound tuple, as NAT's), gets VIP:vport as its source here.
// The RS needs no VIP, no ARP sysctls and no route to clients; its sockets see the client.
// MSS in SYN and SYN-ACK is lowered by the tunnel overhead so no segment needs the too-big path;
// an inner packet that does not fit gets frag-needed back to the client (as TUN does).
#pragma once

#include "stack/pkt.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;

template <class Af>
stack::Verdict nat_tunnel_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);
template <class Af>
stack::Verdict nat_tunnel_out(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);
// Wraps a packet already addressed to the RS (an ICMP error from the client's side, translated)
// in the conn's tunnel, without the MTU check (errors are at most 576 / 1280 bytes).
template <class Af>
stack::Verdict nat_tunnel_wrap(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);

}  // namespace xvs::lb
