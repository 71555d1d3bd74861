// "Too big" back to a sender: ICMP frag-needed (IPv4, RFC 1191) or ICMPv6 packet too big
// (RFC 8201), from `from` to `to`, quoting the packet that would not fit, with the MTU it
// should use. For TUN (the outer header does not fit) and FNAT64 (the translated packet does
// not fit). Counted as icmp_frag_needed_sent, or drop_icmp_not_sent when RFC 1122/4443 forbid
// an error for the packet.
#pragma once

#include <cstdint>

#include "net/addr.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;

template <class Af>
void send_too_big(WorkerCtx& w, const LbPacket<Af>& lp, const net::InetAddr& from,
                  const net::InetAddr& to, uint16_t mtu);

}  // namespace xvs::lb
