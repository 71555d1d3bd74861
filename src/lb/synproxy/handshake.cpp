// The SYN proxy on the packet path (FULLNAT, both families and FNAT64; NatTun, whose RS side
// travels in the conn's tunnel). A SYN to a syn_proxy
// service is answered with a cookie SYN-ACK built in its own mbuf: no conn, no allocation. The
// client's ACK proves the handshake (syncookie_check); only then is a conn created and a SYN sent
// to the RS, while the client's ACK (and what follows, up to max_ack_saved) waits in a bounded side
// pool. The RS SYN-ACK fixes the seq/TS deltas; the saved packets are replayed through the normal
// path and the client, which saw window 0, is told the RS's window at once.
//
// defer_rs_syn: the bare handshake ACK is absorbed without any state (the cookie is checked and
// the packet dropped, counted as synproxy_ack_deferred); the first data segment carries the
// same seq (ISN + 1), ack (cookie + 1) and TSecr, so it passes the same cookie check and opens
// the conn and the RS side. A flood of valid-cookie bare ACKs therefore costs no state at all.
// The SYN-ACK announces room for max_ack_saved segments so the client can send that data.
#include "lb/synproxy/handshake.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "lb/conn_ops.h"
#include "lb/laddr.h"
#include "lb/passive.h"
#include "lb/pipeline.h"
#include "lb/service.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/nat_tunnel.h"
#include "lb/xmit/tunnel.h"
#include "net/checksum.h"
#include "net/proxy_protocol.h"
#include "net/tcp_options.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

using stack::drop;

namespace {

constexpr uint16_t kReAckWindow = 1024;

struct TcpSpec {
    net::InetAddr saddr, daddr;  // the family of the packet written
    uint16_t sport, dport;       // network order
    uint32_t seq, ack;           // host order
    uint8_t flags;
    uint16_t window;  // host order
    uint8_t ttl;
    const uint8_t* opts;
    size_t opts_len;  // multiple of 4, <= 40
};

// Turns m into exactly Ethernet (left for the caller) + IP (of saddr's family) + TCP +
// options, no payload, with the checksums computed. Every packet the SYN proxy makes goes
// through here. False when the mbuf cannot hold it (never for mbufs of a real pool: 94 bytes
// at most).
template <class Af>
bool tcp_write_af(rte_mbuf* m, const TcpSpec& s) {
    const uint16_t l4_len = static_cast<uint16_t>(sizeof(net::TcpHdr) + s.opts_len);
    const uint16_t ip_len = static_cast<uint16_t>(sizeof(typename Af::Hdr) + l4_len);
    const uint16_t frame = static_cast<uint16_t>(sizeof(net::EtherHdr) + ip_len);
    const uint16_t have = rte_pktmbuf_data_len(m);
    if (frame > have) {
        if (!rte_pktmbuf_append(m, frame - have)) return false;
    } else if (frame < have) {
        rte_pktmbuf_trim(m, have - frame);
    }
    auto* ip = rte_pktmbuf_mtod_offset(m, typename Af::Hdr*, sizeof(net::EtherHdr));
    Af::write_header(*ip, s.saddr, s.daddr, net::kIpProtoTcp, l4_len, s.ttl);
    auto* tcp = reinterpret_cast<net::TcpHdr*>(ip + 1);
    *tcp = net::TcpHdr{};
    tcp->sport = s.sport;
    tcp->dport = s.dport;
    tcp->seq = net::hton32(s.seq);
    tcp->ack = net::hton32(s.ack);
    tcp->data_off = static_cast<uint8_t>((l4_len / 4) << 4);
    tcp->flags = s.flags;
    tcp->window = net::hton16(s.window);
    // The options are whole 32-bit words (opts_len is, as data_off above needs): copied a
    // word at a time and summed as they go (memcpy's call cost more than the copy of 20 bytes
    // at most), then the header's five words on top, inline.
    uint64_t sum = Af::pseudo_sum(s.saddr, s.daddr, net::kIpProtoTcp, l4_len);
    auto* opts = reinterpret_cast<uint8_t*>(tcp + 1);
    const size_t words = s.opts_len / 4;  // 10 at most
#pragma GCC unroll 10
    for (size_t i = 0; i < words; ++i) {
        const uint64_t word = net::csum_word32(s.opts, i);
        const auto word32 = static_cast<uint32_t>(word);
        std::memcpy(opts + 4 * i, &word32, 4);
        sum += word;
    }
    tcp->checksum = net::csum_fold(net::csum_words32(tcp, sizeof(net::TcpHdr) / 4, sum));
    return true;
}

bool tcp_write(rte_mbuf* m, const TcpSpec& s) {
    return s.saddr.is_v4() ? tcp_write_af<net::Af4>(m, s) : tcp_write_af<net::Af6>(m, s);
}

// Sends a packet the proxy wrote (or forwards one) to daddr, in daddr's family.
void sp_output(WorkerCtx& w, rte_mbuf* m, const net::InetAddr& daddr, stack::NhRef nh) {
    if (daddr.is_v4())
        stack::ip_output<net::Af4>(w.stack, m, daddr, nh);
    else
        stack::ip_output<net::Af6>(w.stack, m, daddr, nh);
}

// Sends a packet the proxy wrote for the RS (its SYN, the re-ACK of its SYN-ACK). FULLNAT's go
// as they are; NatTun's are written client:cport -> RS:rport (the conn's laddr_ip:lport is the
// client's there) and wrapped in the conn's tunnel from its local address, as nat_tunnel_in
// does for the client's own packets.
template <class Af>
void sp_output_rs_af(WorkerCtx& w, rte_mbuf* m, Conn* c) {
    if (c->mode == FwdMode::NatTun) {
        LbPacket<Af> lp{};
        lp.pkt = m;
        lp.ip = rte_pktmbuf_mtod_offset(m, typename Af::Hdr*, sizeof(net::EtherHdr));
        if (nat_tunnel_wrap(w, lp, *c) != stack::Verdict::Accept) return;  // freed, counted
    }
    stack::ip_output<Af>(w.stack, m, c->daddr(), {&c->nh, stack::NhDir::ToDest});
}

void sp_output_rs(WorkerCtx& w, rte_mbuf* m, Conn* c) {
    if (c->daddr().is_v4())
        sp_output_rs_af<net::Af4>(w, m, c);
    else
        sp_output_rs_af<net::Af6>(w, m, c);
}

size_t payload_len(const SpPacket& sp) {
    return sp.tcp_len - sp.tcp->header_len();
}

// A packet the proxy keeps (saved until the RS answers) remembers where its TCP header is.
void sp_keep(const SpPacket& sp) {
    sp.pkt->l2_len = sizeof(net::EtherHdr);
    sp.pkt->l3_len = static_cast<uint16_t>(sp.l4_off - sizeof(net::EtherHdr)) & 0x1ff;
}

// Room the RS side needs in client segments: TOA option or PROXY header, or NatTun's outer
// headers. The dest (IPIP or GUE) is not chosen before the cookie ACK, so NatTun reserves the
// larger GUE overhead of the client's family.
uint16_t mss_reserve(const ServiceView& view, const SpPacket& sp) {
    const net::InetAddr& src = sp.src();
    if (view.fwd == FwdMode::NatTun)
        return static_cast<uint16_t>(tunnel_overhead(src.is_v4(), true));
    if (view.flags & kSvcFlagToa) return src.is_v4() ? net::kTcpOptLenToaV4 : net::kTcpOptLenToaV6;
    uint8_t scratch[net::kPpV1MaxLen];
    if (view.flags & kSvcFlagPpV1)
        return static_cast<uint16_t>(
            net::pp_v1_build(scratch, sizeof scratch, src, sp.dst(), sp.tcp->sport, sp.tcp->dport));
    if (view.flags & kSvcFlagPpV2)
        return static_cast<uint16_t>(net::pp_v2_build(scratch, sizeof scratch, net::kIpProtoTcp,
                                                      src, sp.dst(), sp.tcp->sport, sp.tcp->dport));
    return 0;
}

}  // namespace

// Internal steps (defined below, in packet order).
static void synproxy_send_syncookie(WorkerCtx& w, const SpPacket& sp, const ServiceView& view);
static void synproxy_send_rs_syn(WorkerCtx& w, Conn* c);
static void synproxy_handover(WorkerCtx& w, const SpPacket& sp, Conn* c);
static void synproxy_reset_client(WorkerCtx& w, rte_mbuf* reuse, Conn* c);

void synproxy_init(SynProxyState& sp, uint32_t max_conns, uint16_t max_pending) {
    sp.slots.resize(max_conns);
    sp.pending.resize(max_pending);
    sp.free.reserve(max_pending);
    for (uint32_t i = max_pending; i > 0; --i) sp.free.push_back(static_cast<uint16_t>(i - 1));
}

unsigned synproxy_saved_count(const SynProxyState& sp) {
    unsigned n = 0;
    for (const SpPending& p : sp.pending) n += p.nsaved;  // free entries hold nsaved 0
    return n;
}

size_t synproxy_memory_bytes(const SynProxyState& sp) {
    return sp.slots.capacity() * sizeof(SpSlot) + sp.pending.capacity() * sizeof(SpPending) +
           sp.free.capacity() * sizeof(uint16_t);
}

void synproxy_drop_saved(WorkerCtx& w) {
    for (SpPending& p : w.sp.pending) {
        for (uint8_t i = 0; i < p.nsaved; ++i)
            drop(w.stack, p.saved[i], Counter::synproxy_saved_dropped);
        p.nsaved = 0;
    }
}

SpVerdict synproxy_no_conn(WorkerCtx& w, const SpPacket& sp, bool pure_syn,
                           const ServiceView* view) {
    const net::TcpHdr* tcp = sp.tcp;
    if (!view || !view->syn_proxied()) return SpVerdict::Pass;
    if (pure_syn) {
        // Admission: a listed-out client never gets a cookie (nothing is kept either way).
        if (admit_source(w, *view, sp.src(), sp.pkt)) synproxy_send_syncookie(w, sp, *view);
        return SpVerdict::Consumed;
    }
    constexpr uint8_t kMask = net::kTcpSyn | net::kTcpRst | net::kTcpAck;
    if ((tcp->flags & kMask) != net::kTcpAck) return SpVerdict::Pass;  // RST etc.: no conn
    const auto tuple = net::CookieTuple::of(sp.src(), sp.dst(), tcp->sport, tcp->dport);
    const uint32_t isn = net::ntoh32(tcp->seq) - 1;
    const uint32_t cookie = net::ntoh32(tcp->ack) - 1;
    const auto opts =
        net::syncookie_check(w.snap->cookie, tuple, isn, cookie, net::cookie_count(w.stack.now_ms));
    if (!opts) {
        drop(w.stack, sp.pkt, Counter::synproxy_bad_cookie);
        return SpVerdict::Consumed;
    }
    if (w.snap->synproxy.defer_rs_syn && payload_len(sp) == 0 && !(tcp->flags & net::kTcpFin)) {
        drop(w.stack, sp.pkt, Counter::synproxy_ack_deferred);
        return SpVerdict::Consumed;
    }
    const auto parsed = net::parse_tcp_options(net::tcp_options_span(tcp, sp.tcp_len));
    w.sp.open = SpOpen{};
    w.sp.open.cookie = cookie;
    w.sp.open.isn = isn;
    w.sp.open.opts = *opts;
    w.sp.open.have_ts = opts->timestamps && parsed.timestamp.has_value();
    if (w.sp.open.have_ts) {
        w.sp.open.client_tsval = parsed.timestamp->first;
        w.sp.open.our_tsval = parsed.timestamp->second;
    }
    const unsigned ws = opts->wscale == net::kCookieWscaleNone ? 0 : opts->wscale;
    w.sp.open.window_bytes = uint32_t(net::ntoh16(tcp->window)) << ws;
    w.stack.counters.inc(Counter::synproxy_ack_valid);
    return SpVerdict::Open;
}

// The client SYN becomes our SYN-ACK in place: addresses and ports swapped, seq = cookie,
// ack = ISN + 1, options rebuilt, any SYN payload (TFO) dropped, checksums recomputed, and it
// leaves through the port it came in on, to the MAC it came from.
void synproxy_send_syncookie(WorkerCtx& w, const SpPacket& sp, const ServiceView& view) {
    // The caller (synproxy_no_conn) has admitted the source (admit_source).
    const SynProxyConf& conf = w.snap->synproxy;
    net::TcpHdr* tcp = sp.tcp;
    const uint32_t isn = net::ntoh32(tcp->seq);
    const SynAckPlan plan =
        synproxy_plan_synack(net::tcp_options_span(tcp, sp.tcp_len), conf, mss_reserve(view, sp));
    const auto tuple = net::CookieTuple::of(sp.src(), sp.dst(), tcp->sport, tcp->dport);
    const uint32_t cookie = net::syncookie_make(w.snap->cookie, tuple, isn,
                                                net::cookie_count(w.stack.now_ms), plan.cookie);
    // TSval: the worker's millisecond clock (RFC 7323 §5.4: 1 ms..1 s per tick).
    uint8_t opts[20];
    const size_t opts_len =
        synproxy_write_synack_options(opts, plan, static_cast<uint32_t>(w.stack.now_ms));
    const TcpSpec spec{sp.dst(),
                       sp.src(),
                       tcp->dport,
                       tcp->sport,
                       cookie,
                       isn + 1,
                       net::kTcpSyn | net::kTcpAck,
                       synproxy_synack_window(conf, plan.mss),
                       conf.ttl,
                       opts,
                       opts_len};
    if (!tcp_write(sp.pkt, spec)) {
        drop(w.stack, sp.pkt, Counter::drop_mbuf_alloc);
        return;
    }
    auto* eth = rte_pktmbuf_mtod(sp.pkt, net::EtherHdr*);
    eth->dst = eth->src;
    eth->src = w.stack.view->ports[sp.port].mac;
    w.stack.counters.inc(Counter::synproxy_syn_cookie_sent);
    w.stack.tx.enqueue(sp.port, sp.pkt, w.stack.counters);
}

void synproxy_open(WorkerCtx& w, const SpPacket& sp, Conn* c) {
    if (w.sp.free.empty()) {
        conn_expire(w, c);
        drop(w.stack, sp.pkt, Counter::synproxy_pending_full);
        return;
    }
    const uint16_t idx = w.sp.free.back();
    w.sp.free.pop_back();
    // Field by field, not `p = SpPending{}`: saved[] is read only below nsaved, and zeroing
    // the whole entry was a `rep stos` (microcoded, tens of cycles to start) on every
    // handshake.
    SpPending& p = w.sp.pending[idx];
    p.cookie = w.sp.open.cookie;
    p.our_tsval = w.sp.open.our_tsval;
    p.client_tsval = w.sp.open.client_tsval;
    p.window_bytes = w.sp.open.window_bytes;
    p.opts = w.sp.open.opts;
    p.have_ts = w.sp.open.have_ts;
    p.retries = 0;
    p.dup_acks = 0;
    sp_keep(sp);
    p.saved[0] = sp.pkt;
    p.nsaved = 1;
    SpSlot& slot = w.sp.slots[w.conns->index_of(c)];
    slot = SpSlot{};
    slot.pending = idx;
    c->flags |= kConnSynProxy | kConnSpWaiting;
    w.feat_of(c).client_isn = w.sp.open.isn;
    conn_set_state(w, c, TcpState::SynSent);
    synproxy_send_rs_syn(w, c);  // the retry timer: conn_create armed it
}

// LIP:lport -> RS:dport (NatTun: client:cport -> RS:dport in the tunnel), seq = the client's
// ISN (so the client's own seq needs no translation), options as the client's SYN asked (from
// the cookie), TSval = client's.
void synproxy_send_rs_syn(WorkerCtx& w, Conn* c) {
    const SpPending& p = w.sp.pending[w.sp.slots[w.conns->index_of(c)].pending];
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) return;  // counted; the retry timer tries again
    uint8_t opts[20];
    net::CookieOptions o = p.opts;
    o.timestamps = p.have_ts;
    // FNAT64: the RS's segments grow by 20 bytes on their way to the IPv6 client; NatTun's by
    // the tunnel's outer headers on their way to us (what clamp_mss takes off a SYN).
    const uint16_t mss_less = static_cast<uint16_t>(
        c->mode == FwdMode::NatTun ? tunnel_overhead(c->daddr().is_v4(), c->flags & kConnTunGue)
        : c->caddr().is_v4() == c->daddr().is_v4() ? 0
                                                   : 20);
    const size_t opts_len = synproxy_write_rs_syn_options(opts, o, p.client_tsval, mss_less);
    const TcpSpec spec{c->laddr_ip(),
                       c->daddr(),
                       c->lport,
                       c->dport,
                       w.feat_of(c).client_isn,
                       0,
                       net::kTcpSyn,
                       static_cast<uint16_t>(std::min<uint32_t>(0xFFFF, p.window_bytes)),
                       64,
                       opts,
                       opts_len};
    if (!tcp_write(m, spec)) {
        drop(w.stack, m, Counter::drop_mbuf_alloc);
        return;
    }
    w.stack.counters.inc(Counter::synproxy_rs_syn_sent);
    sp_output_rs(w, m, c);
    // The conn's first packet to the RS is this SYN, not the client's (lb_slow seeds there).
    conn_seed_dest_nh(*c, w.id);
}

bool synproxy_rs_syn_timer(WorkerCtx& w, Conn* c) {
    SpPending& p = w.sp.pending[w.sp.slots[w.conns->index_of(c)].pending];
    if (p.retries < w.snap->synproxy.rs_syn_max_retry) {
        ++p.retries;
        w.stack.counters.inc(Counter::synproxy_rs_syn_retransmit);
        synproxy_send_rs_syn(w, c);
        const uint64_t retry_ms =
            w.stack.now_ms + (uint64_t(kSynProxyRsSynFirstRetryMs) << p.retries);
        c->set_expires(retry_ms);
        w.timers.arm(&c->timer, retry_ms);
        return true;
    }
    w.stack.counters.inc(Counter::synproxy_rs_timeout);
    synproxy_reset_client(w, nullptr, c);
    return false;
}

void synproxy_release(WorkerCtx& w, Conn* c) {
    SpSlot& slot = w.sp.slots[w.conns->index_of(c)];
    SpPending& p = w.sp.pending[slot.pending];
    for (uint8_t i = 0; i < p.nsaved; ++i) rte_pktmbuf_free(p.saved[i]);
    w.stack.counters.inc(Counter::synproxy_saved_dropped, p.nsaved);  // handover empties it first
    p.nsaved = 0;
    w.sp.free.push_back(slot.pending);
    c->flags &= static_cast<uint16_t>(~kConnSpWaiting);
}

// RST to the client from VIP:vport, seq = cookie + 1: exactly what the client expects next,
// so it is accepted (RFC 5961 §3.2). Built in `reuse` (an RS packet) or a fresh mbuf.
void synproxy_reset_client(WorkerCtx& w, rte_mbuf* m, Conn* c) {
    const SpPending& p = w.sp.pending[w.sp.slots[w.conns->index_of(c)].pending];
    if (!m) {
        if (!(m = stack::frame_alloc(w.stack))) return;  // counted
    }
    const TcpSpec spec{c->vaddr(), c->caddr(), c->vport, c->cport, p.cookie + 1, 0, net::kTcpRst,
                       0,          64,         nullptr,  0};
    if (!tcp_write(m, spec)) {
        drop(w.stack, m, Counter::drop_mbuf_alloc);
        return;
    }
    sp_output(w, m, c->caddr(), {&c->nh, stack::NhDir::ToClient});
}

bool synproxy_conn(WorkerCtx& w, const SpPacket& sp, Conn* c, bool inbound) {
    net::TcpHdr* tcp = sp.tcp;
    SpSlot& slot = w.sp.slots[w.conns->index_of(c)];
    const uint8_t flags = tcp->flags;
    if (!(c->flags & kConnSpWaiting)) {
        if (inbound) {
            if (flags & net::kTcpSyn) {
                drop(w.stack, sp.pkt, Counter::synproxy_syn_in_handshake);
                return true;
            }
            synproxy_translate_in(tcp, sp.tcp_len, slot.seq());
            return false;
        }
        if ((flags & (net::kTcpSyn | net::kTcpAck)) == (net::kTcpSyn | net::kTcpAck)) {
            if (!(c->flags & kConnSynAckSeen)) {  // the client reset the handshake first
                drop(w.stack, sp.pkt, Counter::synproxy_rs_unexpected);
                return true;
            }
            // The RS retransmits its SYN-ACK: our replayed ACK was lost. Ack it again (the
            // client never sees an RS SYN-ACK). The client's real window reaches the RS with
            // its next segment; until then a small one (kReAckWindow) cannot overrun it.
            const TcpSpec spec{c->laddr_ip(),
                               c->daddr(),
                               c->lport,
                               c->dport,
                               w.feat_of(c).client_isn + 1,
                               net::ntoh32(tcp->seq) + 1,
                               net::kTcpAck,
                               kReAckWindow,
                               64,
                               nullptr,
                               0};
            if (!tcp_write(sp.pkt, spec)) {
                drop(w.stack, sp.pkt, Counter::drop_mbuf_alloc);
                return true;
            }
            w.stack.counters.inc(Counter::synproxy_rs_synack_reacked);
            sp_output_rs(w, sp.pkt, c);
            return true;
        }
        synproxy_translate_out(tcp, sp.tcp_len, slot.seq());
        return false;
    }

    // Waiting for the RS SYN-ACK.
    SpPending& p = w.sp.pending[slot.pending];
    if (!inbound) {
        if ((flags & (net::kTcpSyn | net::kTcpAck | net::kTcpRst)) ==
                (net::kTcpSyn | net::kTcpAck) &&
            net::ntoh32(tcp->ack) == w.feat_of(c).client_isn + 1) {
            synproxy_handover(w, sp, c);
        } else if ((flags & net::kTcpRst) &&
                   (!(flags & net::kTcpAck) ||
                    net::ntoh32(tcp->ack) == w.feat_of(c).client_isn + 1)) {
            w.stack.counters.inc(Counter::synproxy_rs_rst_relayed);
            passive_failed(c->dest->stats[w.id], *c);  // passive health checking
            synproxy_reset_client(w, sp.pkt, c);
            conn_set_state(w, c, TcpState::Close);
            conn_expire(w, c);
        } else {
            drop(w.stack, sp.pkt, Counter::synproxy_rs_unexpected);
        }
        return true;
    }
    if (flags & net::kTcpSyn) {
        drop(w.stack, sp.pkt, Counter::synproxy_syn_in_handshake);
        return true;
    }
    if (flags & net::kTcpRst) {
        // The client gives up: let the RST reach the RS (its seq is in the client's space,
        // which the RS shares) and close; nothing to translate yet.
        synproxy_release(w, c);
        return false;
    }
    // Duplicate of the handshake ACK (saved[0]; none left after release_held()).
    bool dup = false;
    if (p.nsaved) {
        const rte_mbuf* first = p.saved[0];
        const auto* first_tcp =
            rte_pktmbuf_mtod_offset(first, const net::TcpHdr*, first->l2_len + first->l3_len);
        dup = payload_len(sp) == 0 && !(flags & net::kTcpFin) && tcp->seq == first_tcp->seq &&
              tcp->ack == first_tcp->ack;
    }
    if (dup && ++p.dup_acks > w.snap->synproxy.ack_storm_thresh) {
        drop(w.stack, sp.pkt, Counter::synproxy_ack_storm);
        return true;
    }
    if (p.nsaved >= std::min<uint8_t>(w.snap->synproxy.max_ack_saved, kSynProxyMaxAckSaved)) {
        drop(w.stack, sp.pkt, Counter::synproxy_saved_full);
        return true;
    }
    if (p.have_ts) {
        const auto parsed = net::parse_tcp_options(net::tcp_options_span(tcp, sp.tcp_len));
        if (parsed.timestamp) p.client_tsval = parsed.timestamp->first;
    }
    sp_keep(sp);
    p.saved[p.nsaved++] = sp.pkt;
    return true;
}

// The RS SYN-ACK: fix the deltas, go ESTABLISHED, replay the saved client packets through the
// normal path (translation, TOA/PROXY, FULLNAT), and reuse the SYN-ACK's mbuf for a window
// update to the client, which was told window 0.
void synproxy_handover(WorkerCtx& w, const SpPacket& sp, Conn* c) {
    net::TcpHdr* tcp = sp.tcp;
    SpSlot& slot = w.sp.slots[w.conns->index_of(c)];
    SpPending& p = w.sp.pending[slot.pending];
    const SynProxyConf& conf = w.snap->synproxy;
    const uint32_t rs_isn = net::ntoh32(tcp->seq);
    const auto rs_opts = net::parse_tcp_options(net::tcp_options_span(tcp, sp.tcp_len));
    slot.seq_delta = p.cookie - rs_isn;
    slot.ts_delta = (p.have_ts && rs_opts.timestamp) ? p.our_tsval - rs_opts.timestamp->first : 0;
    if (p.opts.wscale != net::kCookieWscaleNone && conf.wscale != kSynProxyNoWscale) {
        slot.rs_wscale = std::min<uint8_t>(rs_opts.wscale.value_or(0), 14);
        slot.our_wscale = conf.wscale;
    }
    w.feat_of(c).rs_isn = rs_isn;
    c->flags |= kConnSynAckSeen;
    passive_accepted(c->dest->stats[w.id], *c);           // passive health checking
    const uint32_t rs_window = net::ntoh16(tcp->window);  // unscaled in a SYN-ACK
    w.stack.counters.inc(Counter::synproxy_handover);

    // Take the saved packets out before the pending entry goes back to the pool.
    rte_mbuf* saved[kSynProxyMaxAckSaved];
    const uint8_t nsaved = p.nsaved;
    std::copy_n(p.saved, nsaved, saved);
    const uint32_t cookie = p.cookie;
    const uint32_t our_tsval = p.our_tsval;
    const uint32_t client_tsval = p.client_tsval;
    const bool have_ts = p.have_ts && rs_opts.timestamp;
    p.nsaved = 0;
    synproxy_release(w, c);
    conn_set_state(w, c, TcpState::Established);
    const uint64_t idle_ms =
        w.stack.now_ms + uint64_t(w.snap->timeouts.of(TcpState::Established)) * 1000;
    c->set_expires(idle_ms);
    w.timers.arm(&c->timer, idle_ms);

    for (uint8_t i = 0; i < nsaved; ++i) {
        w.stack.counters.inc(Counter::synproxy_saved_replayed);
        lb_replay(w, saved[i], c);
    }
    if (conf.defer_rs_syn) {  // the client was given a window and sent data: the RS acks it
        drop(w.stack, sp.pkt, Counter::synproxy_rs_synack_absorbed);
        return;
    }
    uint8_t opts[12] = {net::kTcpOptNop, net::kTcpOptNop, net::kTcpOptTimestamp,
                        net::kTcpOptLenTimestamp};
    const uint32_t tsval_be = net::hton32(our_tsval), tsecr_be = net::hton32(client_tsval);
    std::memcpy(opts + 4, &tsval_be, 4);
    std::memcpy(opts + 8, &tsecr_be, 4);
    const uint16_t window =
        static_cast<uint16_t>(std::min<uint32_t>(0xFFFF, rs_window >> slot.our_wscale));
    const TcpSpec spec{c->vaddr(),
                       c->caddr(),
                       c->vport,
                       c->cport,
                       cookie + 1,
                       w.feat_of(c).client_isn + 1,
                       net::kTcpAck,
                       window,
                       64,
                       have_ts ? opts : nullptr,
                       have_ts ? 12u : 0u};
    if (!tcp_write(sp.pkt, spec)) {
        drop(w.stack, sp.pkt, Counter::drop_mbuf_alloc);
        return;
    }
    w.stack.counters.inc(Counter::synproxy_window_update);
    sp_output(w, sp.pkt, c->caddr(), {&c->nh, stack::NhDir::ToClient});
}

}  // namespace xvs::lb
