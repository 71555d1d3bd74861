// The SYN proxy on the packet path (lb/synproxy/handshake.cpp): its per-worker state and the
// free functions the pipeline calls. The pure TCP-header work is in lb/synproxy/synproxy.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lb/synproxy/synproxy.h"
#include "net/addr.h"
#include "net/byteorder.h"
#include "net/headers.h"
#include "net/syncookie.h"

struct rte_mbuf;

namespace xvs::lb {

struct WorkerCtx;
struct Conn;
struct ServiceView;

// Handshake state that lives only between the client's ACK and the RS SYN-ACK.
// synproxy_open writes every field but saved[] (read only below nsaved): a field added here
// must be written there too.
struct SpPending {
    rte_mbuf* saved[kSynProxyMaxAckSaved];
    uint32_t cookie;        // our SYN-ACK ISN: the client's view of the RS ISN
    uint32_t our_tsval;     // our SYN-ACK TSval (echoed by the client's ACK)
    uint32_t client_tsval;  // latest client TSval (RS SYN, window update TSecr)
    uint32_t window_bytes;  // the client's receive window (RS SYN window)
    net::CookieOptions opts;
    bool have_ts;
    uint8_t nsaved;
    uint8_t retries;
    uint8_t dup_acks;
};
// Per conn slot (indexed by ConnTable::index_of): the translation, and the pending index.
struct SpSlot {
    uint32_t seq_delta = 0;
    uint32_t ts_delta = 0;
    uint8_t rs_wscale = 0;
    uint8_t our_wscale = 0;
    uint16_t pending = 0;  // side-pool index while kConnSpWaiting
    SynProxySeq seq() const { return {seq_delta, ts_delta, rs_wscale, our_wscale}; }
};
static_assert(sizeof(SpSlot) == 12, "per-conn SYN proxy bytes (bench memory figure)");
// Filled by synproxy_no_conn for synproxy_open.
struct SpOpen {
    uint32_t cookie, isn, our_tsval, client_tsval, window_bytes;
    net::CookieOptions opts;
    bool have_ts;
};

// One worker's SYN proxy: translation per conn slot, the bounded handshake side pool and its
// free list (all allocated once, by synproxy_init).
struct SynProxyState {
    std::vector<SpSlot> slots;
    std::vector<SpPending> pending;
    std::vector<uint16_t> free;
    SpOpen open{};
};

void synproxy_init(SynProxyState& sp, uint32_t max_conns, uint16_t max_pending);
// SYN proxy memory: per-slot translation array, handshake side pool and its free list.
size_t synproxy_memory_bytes(const SynProxyState& sp);
// Client packets held by SYN proxy handshakes (conservation: frames held). O(side pool).
unsigned synproxy_saved_count(const SynProxyState& sp);
// Frees the held client packets, counted as synproxy_saved_dropped (Worker::release_held).
void synproxy_drop_saved(WorkerCtx& w);

// A TCP packet to a VIP, as the SYN proxy sees it.
// A TCP packet seen by the SYN proxy, of either family (FNAT64: IPv6 from the client, IPv4
// from the RS). l4_off is where the TCP header starts in the frame; packets the proxy keeps
// remember it in the mbuf (l2_len + l3_len) for the replay.
struct SpPacket {
    rte_mbuf* pkt;
    // The packet's source and destination as its conn key holds them (LbPacket::key, which
    // outlives this view): read on every SYN and cookie ACK, so not rebuilt from the header.
    const net::InetAddr* saddr;
    const net::InetAddr* daddr;
    net::TcpHdr* tcp;
    uint16_t tcp_len;  // TCP header + payload
    uint16_t l4_off;
    uint8_t port;  // receiving port index

    const net::InetAddr& src() const { return *saddr; }
    const net::InetAddr& dst() const { return *daddr; }
};
enum class SpVerdict : uint8_t { Pass, Consumed, Open };
// No conn: SYN -> cookie SYN-ACK (Consumed); ACK -> cookie check: Open (the caller creates
// the conn and calls synproxy_open) or Consumed (dropped, counted); Pass when the service
// has no SYN proxy. `view`: the packet's exact (TCP, VIP, port) service, as the caller
// looked it up (Snapshot::service), nullptr when there is none.
SpVerdict synproxy_no_conn(WorkerCtx& w, const SpPacket& sp, bool pure_syn,
                           const ServiceView* view);
// The first RS SYN retry, this long after the SYN; each further retry waits twice as long.
inline constexpr uint32_t kSynProxyRsSynFirstRetryMs = 1000;
// The conn just made for a valid cookie ACK: its handshake state (the ACK saved, SYN_SENT)
// and the RS SYN. The caller armed the conn's timer for the first retry (conn_create's
// expires_ms, kSynProxyRsSynFirstRetryMs ahead).
void synproxy_open(WorkerCtx& w, const SpPacket& sp, Conn* conn);
// A packet of a SYN-proxied conn. Returns true when consumed (handshake), false after
// translating it in place for the normal path.
bool synproxy_conn(WorkerCtx& w, const SpPacket& sp, Conn* conn, bool inbound);
// The conn timer while the RS handshake runs: retransmits the RS SYN (true: still waiting)
// or gives up (false: caller expires the conn).
bool synproxy_rs_syn_timer(WorkerCtx& w, Conn* conn);
void synproxy_release(WorkerCtx& w, Conn* conn);

}  // namespace xvs::lb
