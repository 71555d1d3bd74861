// Passive health checking, the packet-path half: each worker counts per dest the TCP
// connections the real server accepted (its first answer a SYN-ACK) and those it failed:
// refused (a RST answering the SYN), reported unreachable (an ICMP destination unreachable
// about the SYN), or left unanswered (the client had to retransmit its SYN, or the conn expired
// waiting for the SYN-ACK). One verdict per conn (kConnRsFailed, kConnSynAckSeen), into
// DestWorkerStats::conn_ok / conn_fail (single writer, no lock); the health manager
// (ctl/health/passive.h) reads their sums and marks down a dest that keeps failing.
#pragma once

#include "lb/conn.h"
#include "net/headers.h"
#include "net/icmp_related.h"

namespace xvs::lb {

// A client SYN on a conn still waiting for its RS is a retransmission by the client's timer
// (RFC 6298 2.1: initial RTO 1 s; Linux TCP_TIMEOUT_INIT) when its previous packet is at least
// this old (ms). A SYN sooner is no evidence against the RS: a duplicate on the way, or two
// sent back to back (a flood), before the RS's SYN-ACK could come back; that conn is judged
// by its answer or its expiry.
inline constexpr uint64_t kPassiveSynRetransmitMs = 500;

// The conn waits for its RS's first answer and passive checking judges it: the SYN proxy's
// SYN to the RS unanswered, or a FULLNAT/NAT conn (the RS's answers come back through us) in
// SYN_RECV without any SYN-ACK; and no verdict yet. DR and TUN conns are never judged: their RS
// answers the client directly, so an unacked SYN_RECV may just be a client that went away (or
// a flood).
inline bool passive_awaiting_rs(const Conn& c) {
    if (c.proto != net::kIpProtoTcp || (c.flags & (kConnSynAckSeen | kConnRsFailed))) return false;
    if (c.flags & kConnSpWaiting) return true;
    return c.state == TcpState::SynRecv && (c.mode == FwdMode::FullNat || c.mode == FwdMode::Nat);
}

// The conn failed: counted once. It stays failed: a later RS answer (a SYN-ACK after the
// client's retransmission or after an ICMP unreachable) is no success, only the next conn is.
inline void passive_failed(DestWorkerStats& ds, Conn& c) {
    if (c.flags & kConnRsFailed) return;
    c.flags |= kConnRsFailed;
    ++ds.conn_fail;
}

// The RS's SYN-ACK (the caller sets kConnSynAckSeen): a success unless already judged failed.
inline void passive_accepted(DestWorkerStats& ds, const Conn& c) {
    if (!(c.flags & kConnRsFailed)) ++ds.conn_ok;
}

// An RS -> client TCP packet of a conn whose RS has not answered yet (no kConnSynAckSeen).
// The RST case requires SYN_RECV: the client's SYN went to the RS and nothing came back yet.
inline void passive_rs_answer(DestWorkerStats& ds, Conn& c, uint8_t tcp_flags) {
    constexpr uint8_t kSynAck = net::kTcpSyn | net::kTcpAck;
    if ((tcp_flags & (kSynAck | net::kTcpRst)) == kSynAck) {
        c.flags |= kConnSynAckSeen;
        passive_accepted(ds, c);
    } else if ((tcp_flags & net::kTcpRst) && c.state == TcpState::SynRecv) {
        passive_failed(ds, c);
    }
}

// A client packet that is a pure SYN, on a conn found in the table. The deadline was set at
// the conn's previous packet to now + its state's timeout (timeout_s: SYN_RECV's, the only
// state this judges), so what is left of it tells how long ago that packet came. (A reload
// that changes the SYN_RECV timeout between the two SYNs skews that once: a longer one may
// count a SYN sooner, a shorter one leaves the conn to its expiry.)
inline void passive_client_syn(DestWorkerStats& ds, Conn& c, uint64_t now_ms, uint32_t timeout_s) {
    if (!passive_awaiting_rs(c) || (c.flags & kConnSpWaiting)) return;  // SYN proxy: its own timer
    const uint64_t deadline = c.expires(now_ms);
    const uint64_t timeout_ms = uint64_t{timeout_s} * 1000;
    // A deadline already past (the timer wheel not there yet): idle the whole timeout at least.
    const uint64_t left = deadline > now_ms ? deadline - now_ms : 0;
    if (left + kPassiveSynRetransmitMs <= timeout_ms) passive_failed(ds, c);
}

// An ICMP error (type, code as received) quoting a packet the director sent to the conn's RS,
// from the RS or a router on its way: destination unreachable (ICMPv4 type 3: net, host,
// protocol or port unreachable, administratively prohibited; ICMPv6 type 1, every code) is a
// failure. Frag-needed (3/4) and packet too big (ICMPv6 2) are path-MTU discovery, time
// exceeded a routing matter: not the RS's fault.
template <class Af>
inline void passive_icmp_error(DestWorkerStats& ds, Conn& c, uint8_t type, uint8_t code) {
    if constexpr (Af::family == 4) {
        // RFC 792 codes 0-3, RFC 1812 5.2.7.1 codes 9, 10 and 13.
        constexpr uint32_t kCodes =
            1u << 0 | 1u << 1 | 1u << 2 | 1u << 3 | 1u << 9 | 1u << 10 | 1u << 13;
        static_assert(!(kCodes & (1u << net::kIcmpFragNeededCode)));
        if (type != net::kIcmpDestUnreach || code > 31 || !(kCodes & (1u << code))) return;
    } else {
        (void)code;
        if (type != net::kIcmp6DestUnreach) return;
    }
    if (passive_awaiting_rs(c)) passive_failed(ds, c);
}

// A conn's idle timer expired while it still waited for its RS (the SYN proxy's SYN through
// every retry, or a FULLNAT/NAT SYN_RECV): a failure unless one was counted already.
inline void passive_conn_expired(DestWorkerStats& ds, const Conn& c) {
    if (passive_awaiting_rs(c)) ++ds.conn_fail;
}

}  // namespace xvs::lb
