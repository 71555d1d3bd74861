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

// A packet whose TTL would reach 0: time exceeded back, the packet freed and counted. False.
template <class Af>
bool ttl_expired(WorkerCtx& w, LbPacket<Af>& lp);

// False: lp.pkt was freed and counted. Inline: every packet of these modes takes it.
template <class Af>
inline bool ttl_decrement(WorkerCtx& w, LbPacket<Af>& lp) {
    if (Af::ttl_decrement(*lp.ip)) [[likely]]
        return true;
    return ttl_expired(w, lp);
}

}  // namespace xvs::lb
