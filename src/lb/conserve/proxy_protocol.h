// PROXY protocol v1/v2 (FULLNAT) on the packet path (lb/conserve/proxy_protocol.cpp; the wire
// code is net/proxy_protocol.h). State: ConnFeatSlot (client_isn, rs_isn, pp_len, pp_rexmits,
// pp_window) and the kConnPp* flags.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;

// A PROXY header segment to send around a client packet (pp_inbound).
enum class PpHeaderSegment : uint8_t { None, Before, After };

// pp_conn_init fixes the header length (the TCP seq shift) when the conn is created.
void pp_conn_init(WorkerCtx& w, Conn* conn);
// Runs before the FULLNAT rewrite and says whether a separate header segment must go out just
// before (the segment at client ISN + 1 had no room for it) or just after (server speaks
// first: the handshake ACK) this packet (pp_send_header_segment).
template <class Af>
PpHeaderSegment pp_inbound(WorkerCtx& w, LbPacket<Af>& lp, Conn* conn);
template <class Af>
void pp_outbound(WorkerCtx& w, LbPacket<Af>& lp, Conn* conn);
// Inserts the header in front of the L4 payload (TCP, or a UDP flow's first datagram).
template <class Af>
bool pp_insert(WorkerCtx& w, LbPacket<Af>& lp, Conn* conn, size_t l4_hdr_len);
void pp_send_header_segment(WorkerCtx& w, Conn* conn, uint32_t ack_be, uint16_t window_be);
// The header segment is retransmitted (RTO 1 s, doubling) until the RS acks past it.
// Called from the conn timer while the conn lives; returns when the timer must fire next
// (never later than the idle deadline expires_ms).
uint64_t pp_header_timer(WorkerCtx& w, Conn* conn, uint64_t now_ms);

}  // namespace xvs::lb
