// UOA (FULLNAT UDP) on the packet path (lb/conserve/uoa.cpp; the wire code is net/uoa.h).
// State: ConnFeatSlot::uoa_left and kConnUoaIpo.
#pragma once

#include <cstdint>

struct rte_mbuf;

namespace xvs::lb {

struct WorkerCtx;
struct Conn;

// After the FULLNAT rewrite of a client datagram: inserted in place, or sent ahead in an empty
// datagram when it does not fit. ip_hdr is the rewritten datagram's IP header in m, of the
// RS's family (IPv4 after FNAT64's translation of an IPv6 client's datagram).
void uoa_inbound(WorkerCtx& w, rte_mbuf* m, uint8_t* ip_hdr, Conn* conn);

}  // namespace xvs::lb
