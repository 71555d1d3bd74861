// UOA (FULLNAT UDP) on the packet path (lb/conserve/uoa.cpp; the wire code is net/uoa.h).
// State: ConnFeatSlot::uoa_left and kConnUoaIpo.
#pragma once

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;

// After the FULLNAT rewrite of a client datagram: inserted in place, or sent ahead in an empty
// datagram when it does not fit.
template <class Af>
void uoa_inbound(WorkerCtx& w, LbPacket<Af>& lp, Conn* conn);

}  // namespace xvs::lb
