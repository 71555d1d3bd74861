// The router step of the modes where the director forwards packets as a router would (NAT and
// SNAT both ways, and ICMP errors related to their conns): TTL decremented (RFC 1812 5.3.1), the
// header checksum updated incrementally, and a packet whose TTL would reach 0 dropped and
// counted (drop_ttl_expired) with ICMP time exceeded back to its sender, as IPVS and DPVS do
// (icmp_time_exceeded_sent; none about an ICMP error, RFC 1122).
#pragma once

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;

// False: lp.pkt was freed and counted.
template <class Af>
bool ttl_decrement(WorkerCtx& w, LbPacket<Af>& lp);

}  // namespace xvs::lb
