// SNAT (masquerading, seed 002; DPVS's "match" services): inside hosts route through the
// director, which rewrites their source to a WAN address and a port from that address's pool
// (lb/laddr.h), so the outside only ever sees the WAN address; replies to WAN:port are
// rewritten back to the inside host. The director acts as a router here: TTL is decremented
// both ways, and a packet that would leave with TTL 0 is dropped (drop_ttl_expired) with ICMP
// time exceeded back to its sender (lb/xmit/ttl.h).
//
// Tuples (lb/conn.h): caddr:cport = inside host, vaddr:vport = daddr:dport = the outside
// host, laddr_ip:lport = WAN address and port. The outbound tuple outside:dport -> WAN:lport
// goes into the table. ICMP echo is keyed by its identifier in both port positions (a
// request inside -> outside has sport = dport = id, its reply outside -> WAN has sport =
// dport = the mapped id), so for ICMP the conn's dport is the mapped id too.
#pragma once

#include <cstdint>

#include "stack/pkt.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;
struct ServiceView;
struct Snapshot;

// The SNAT xmit entry (lb/xmit/xmit.h). in: inside:port -> outside becomes WAN:lport ->
// outside (ICMP echo: source address and identifier). out: outside -> WAN:lport becomes
// outside -> inside:cport.
template <class Af>
stack::Verdict snat_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);
template <class Af>
stack::Verdict snat_out(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);

// The match service for the first packet of an inside flow (not addressed to the director):
// the first in configuration order whose protocol, source range, destination range, iif
// (the receiving port) and oif (the port of the route to the destination) all hold; nullptr
// if none. Per new flow only: a scan of the few match services and one route lookup.
template <class Af>
const ServiceView* snat_match(const Snapshot& snap, const LbPacket<Af>& lp);

}  // namespace xvs::lb
