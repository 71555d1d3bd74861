// The per-connection part of the packet path (lb/pipeline.cpp), after classification and the
// bulk conn lookup in lb/worker.cpp: conn_reuse, SYN proxy, new conns, the TCP state machine,
// conserve stages (TOA, PROXY protocol), the conn's xmit (kXmit[conn->mode]), stats and TX.
#pragma once

#include "lb/conn_table.h"

struct rte_mbuf;

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;

template <class Af>
void lb_handle(WorkerCtx& w, LbPacket<Af>& lp, ConnRef ref);
// lb_handle of lbp[i] with refs[i], i < n, in order: the burst's packets in one call, so
// that the fast path's register saves and call are paid once a burst, not once a packet.
template <class Af>
void lb_handle_burst(WorkerCtx& w, LbPacket<Af>* lbp, const ConnRef* refs, unsigned n);
// Runs a stored client packet of conn through the inbound packet path (SYN proxy replay).
void lb_replay(WorkerCtx& w, rte_mbuf* pkt, Conn* conn);

}  // namespace xvs::lb
