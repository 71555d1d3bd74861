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

// Path MTU (issue 20): an ICMP error to a local address that quotes a packet we sent in a
// tunnel (from a router between us and the RS: frag-needed / packet too big about the outer
// packet, or any other unreachable) has the quoted outer headers cut, so that it quotes the
// inner client -> RS packet and icmp_related finds the NatTun conn by it and sends it on to
// the client from the VIP; a too-big MTU is lowered by the same bytes (what fits inside the
// tunnel). The packet is then marked tunneled: its conn is a NatTun conn's reply side (the
// owner of the reply tuple, lb_handle's check). Counted as nattun_icmp_unwrapped; anything
// else is left alone.
template <class Af>
void nat_tunnel_icmp_unwrap(WorkerCtx& w, LbPacket<Af>& lp);
// A too-big report for the packets of c to its RS: inner_mtu, the largest inner packet the
// path carries. Recorded (lower only; nattun_pmtu_lowered) as the conn's tunnel path MTU, so
// nat_tunnel_in answers a client packet that cannot fit with frag-needed itself. Reports below
// 552 bytes (IPv4, Linux's min_pmtu) or 1280 (IPv6) of outer MTU are not recorded.
void nat_tunnel_pmtu_lower(WorkerCtx& w, Conn& c, uint16_t inner_mtu);

}  // namespace xvs::lb
