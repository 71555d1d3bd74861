// SYN proxy (FULLNAT, IPv4): configuration the workers read from the snapshot, and the pure
// TCP-header work of the proxy (building the cookie SYN-ACK and the RS SYN option blocks,
// translating seq/ack, SACK blocks, timestamps and windows between the client's view and the
// real server's). No DPDK here: everything works on byte spans and is unit-tested.
//
// The invariant: after the hand-over the client sees the director's SYN-ACK ISN (the cookie)
// and TSval, the RS its own; every packet in either direction is translated for the life of
// the connection (RS->client seq += seq_delta, TSval += ts_delta; client->RS ack and SACK
// edges -= seq_delta, TSecr -= ts_delta).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "net/headers.h"
#include "net/syncookie.h"

namespace xvs::lb {

// ipvs_defs { synproxy { ... } } (DPVS dpvs.conf names), defaults as DPVS ships them.
struct SynProxyConf {
    uint16_t mss = 1452;            // synack_options mss: SYN-ACK MSS = min(client, this)
    uint8_t ttl = 63;               // synack_options ttl
    bool sack = true;               // synack_options sack: echo SACK-permitted when offered
    bool timestamp = true;          // synack_options timestamp: answer timestamps when offered
    uint8_t wscale = 7;             // synack_options wscale: our shift; kSynProxyNoWscale = off
    uint8_t rs_syn_max_retry = 3;   // RS SYN retransmissions (1 s, then doubling)
    uint8_t max_ack_saved = 3;      // client packets kept while the RS handshake runs
    uint8_t ack_storm_thresh = 10;  // duplicate ACKs tolerated while waiting for the RS
    bool defer_rs_syn = false;      // open to the RS only with the first client data
    bool operator==(const SynProxyConf&) const = default;
};
inline constexpr uint8_t kSynProxyNoWscale = 0xFF;
inline constexpr uint8_t kSynProxyMaxAckSaved = 8;  // hard bound of max_ack_saved (side pool)
inline constexpr uint8_t kSynProxyMaxRetry = 10;
// The window the SYN-ACK announces: 0 keeps the client silent until the RS answers (RFC 9293
// zero window; no data, no TFO in the handshake). In defer mode the client must send data to
// make us open the RS side, so it gets room for max_ack_saved segments of our MSS.
uint16_t synproxy_synack_window(const SynProxyConf& conf, uint16_t mss);

// What the client's SYN offered and what the cookie SYN-ACK answers (host order).
struct SynAckPlan {
    net::CookieOptions cookie;  // what the cookie encodes (for the RS SYN)
    uint16_t mss = 0;           // SYN-ACK MSS option
    bool sack = false;
    bool timestamps = false;
    uint8_t our_wscale = kSynProxyNoWscale;  // kSynProxyNoWscale: no wscale option
    uint32_t client_tsval = 0;
};
// Plans the SYN-ACK for the options of a client SYN. mss_reserve is subtracted from the MSS
// we announce (TOA / PROXY header room).
SynAckPlan synproxy_plan_synack(std::span<const uint8_t> syn_opts, const SynProxyConf& conf,
                                uint16_t mss_reserve);

// Writes the SYN-ACK options (MSS, [SACK-perm], [TS], [NOP wscale]), padded to 4 bytes;
// returns their length (<= 20). out must have 20 bytes.
size_t synproxy_write_synack_options(uint8_t* out, const SynAckPlan& plan, uint32_t our_tsval);

// Options of the SYN to the RS, from the cookie: MSS (table value), SACK-perm, TS (client's
// TSval, TSecr 0), wscale (the client's). Returns their length (<= 20); out has 20 bytes.
// mss_less: what the RS's segments grow by on their way to the client (FNAT64: 20).
size_t synproxy_write_rs_syn_options(uint8_t* out, const net::CookieOptions& opts,
                                     uint32_t client_tsval, uint16_t mss_less = 0);

// The translation state of one proxied connection.
struct SynProxySeq {
    uint32_t seq_delta = 0;  // cookie ISN - RS ISN
    uint32_t ts_delta = 0;   // our SYN-ACK TSval - RS SYN-ACK TSval
    uint8_t rs_wscale = 0;   // RS's shift (what its window fields mean)
    uint8_t our_wscale = 0;  // the shift the client was told (what it expects)
};

// Client -> RS, in place: ack -= seq_delta (when ACK set), SACK edges -= seq_delta, TSecr -=
// ts_delta. The TCP checksum is updated incrementally. `avail` bounds the header (bytes from
// the TCP header on); options are walked only as far as they are well formed.
void synproxy_translate_in(net::TcpHdr* tcp, size_t avail, const SynProxySeq& s);
// RS -> client, in place: seq += seq_delta, TSval += ts_delta, window rescaled from the RS's
// shift to ours (saturating at 0xFFFF).
void synproxy_translate_out(net::TcpHdr* tcp, size_t avail, const SynProxySeq& s);

// Adds delta to the TS option's TSval (which = 0) or TSecr (which = 1); checksum updated.
// Returns false when there is no (well-formed) timestamp option.
bool tcp_ts_adjust(std::span<uint8_t> opts, int which, uint32_t delta, uint16_t* csum);

}  // namespace xvs::lb
