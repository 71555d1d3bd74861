// Passive health checking, the packet-path half: each worker counts per dest the TCP
// connections the real server accepted (its first answer a SYN-ACK) and those it refused (a RST
// answering the SYN) or never answered (the conn expired waiting for the SYN-ACK). One count
// per conn, into DestWorkerStats::conn_ok / conn_fail (single writer, no lock); the health
// manager (ctl/health/passive.h) reads their sums and marks down a dest that keeps failing.
#pragma once

#include "lb/conn.h"
#include "net/headers.h"

namespace xvs::lb {

// An RS -> client TCP packet of a conn whose RS has not answered yet (no kConnSynAckSeen).
// The RST case requires SYN_RECV: the client's SYN went to the RS and nothing came back yet.
inline void passive_rs_answer(DestWorkerStats& ds, Conn& c, uint8_t tcp_flags) {
    constexpr uint8_t kSynAck = net::kTcpSyn | net::kTcpAck;
    if ((tcp_flags & (kSynAck | net::kTcpRst)) == kSynAck) {
        c.flags |= kConnSynAckSeen;
        ++ds.conn_ok;
    } else if ((tcp_flags & net::kTcpRst) && c.state == TcpState::SynRecv) {
        ++ds.conn_fail;
    }
}

// A conn's idle timer expired. It failed when the SYN proxy's SYN to the RS went unanswered
// through every retry, or when a FULLNAT/NAT conn (the RS's answers come back through us) is
// still in SYN_RECV without any SYN-ACK. DR and TUN conns are not judged: their RS answers the
// client directly, so an unacked SYN_RECV may just be a client that went away (or a flood).
inline void passive_conn_expired(DestWorkerStats& ds, const Conn& c) {
    if (c.proto != net::kIpProtoTcp) return;
    if (c.flags & kConnSpWaiting) {
        ++ds.conn_fail;
        return;
    }
    if (c.state == TcpState::SynRecv && !(c.flags & kConnSynAckSeen) &&
        (c.mode == FwdMode::FullNat || c.mode == FwdMode::Nat))
        ++ds.conn_fail;
}

}  // namespace xvs::lb
