// TOA (FULLNAT TCP): the client address as TCP option 254 in client packets up to the first
// acked RS data (lb/conserve/toa.cpp; the wire code is net/toa.h). State: ConnFeatSlot::rs_isn
// and the kConnToa* flags.
#pragma once

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;

// Client -> RS (before the FULLNAT rewrite).
template <class Af>
void toa_inbound(WorkerCtx& w, LbPacket<Af>& lp, Conn* conn);
// RS SYN-ACK: remember the RS ISN, clamp the MSS by the option length.
template <class Af>
void toa_synack(WorkerCtx& w, LbPacket<Af>& lp, Conn* conn);

}  // namespace xvs::lb
