// DR (direct routing, LVS/DR "gatewaying"): the packet goes to the RS's MAC address with its
// IP header, TTL and checksums untouched; the RS holds the VIP on lo (arp_ignore=1,
// arp_announce=2) and answers the client directly, so the director sees one direction only
// and the conn has no outbound tuple. The RS must share a link with the director (the
// Director refuses a DR dest behind a gateway); the output step resolves the RS's MAC.
#pragma once

#include "stack/pkt.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;

template <class Af>
stack::Verdict dr_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);

}  // namespace xvs::lb
