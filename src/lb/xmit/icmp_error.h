// ICMP errors the director sends itself about a packet it will not forward, in the packet's
// family, quoting it: "too big" (IPv4 frag needed, RFC 1191; ICMPv6 packet too big, RFC 8201)
// when TUN's outer header or FNAT64's translation would not fit the next link, and time
// exceeded for the router step of NAT and SNAT (lb/xmit/ttl.h). Counted as
// icmp_frag_needed_sent / icmp_time_exceeded_sent, or drop_icmp_not_sent when RFC 1122, 1812 or
// 4443 forbid an error for the packet (an ICMP error, a multicast source...).
#pragma once

#include <cstdint>

#include "net/addr.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;

// From `from` to `to`, with the MTU the sender should use.
template <class Af>
void send_too_big(WorkerCtx& w, const LbPacket<Af>& lp, const net::InetAddr& from,
                  const net::InetAddr& to, uint16_t mtu);

// Hop limit / TTL exceeded in transit, from `from` back to the packet's source.
template <class Af>
void send_time_exceeded(WorkerCtx& w, const LbPacket<Af>& lp, const net::InetAddr& from);

}  // namespace xvs::lb
