// The packet path. A burst is handled in two passes (STYLE.md rule 3): pass 1 parses and
// validates every frame, answers ARP/ICMP and builds the connection keys of load-balanced
// packets; then one bulk hash lookup; pass 2 runs the state machine and FULLNAT rewrite.
// Every packet leaves through TX or is freed with a named drop counter.
#include "lb/worker.h"

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "lb/laddr.h"
#include "lb/service.h"
#include "lb/xmit/fullnat.h"
#include "net/checksum.h"
#include "net/proxy_protocol.h"
#include "net/tcp_options.h"
#include "net/tcp_seq.h"
#include "net/toa.h"
#include "net/uoa.h"
#include "port/ethdev.h"
#include "stack/arp.h"
#include "stack/ipv4.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

struct Worker::LbPacket {
    rte_mbuf* pkt;
    net::Ipv4Hdr* ip;
    uint8_t* l4;
    uint8_t port;
    uint8_t proto;
    uint8_t tcp_flags;
    stack::AddrKind kind;
    ConnKey key;
};

namespace {
constexpr unsigned kMaxBurst = 64;
// PROXY header segment retransmission (server speaks first): first RTO, doubled each time.
constexpr uint64_t kPpHeaderRtoMs = 1000;
constexpr uint8_t kPpHeaderMaxRexmits = 5;
std::atomic<unsigned> g_table_seq{0};

void drop(stack::StackContext& ctx, rte_mbuf* m, Counter reason) {
    ctx.counters.inc(reason);
    rte_pktmbuf_free(m);
}
}  // namespace

Worker::Worker(Director& director, const WorkerConfig& cfg)
    : director_(director),
      cfg_(cfg),
      timers_(cfg.timer_slots, cfg.timer_tick_ms, cfg.manual_clock ? 0 : clock_ms()) {
    if (!cfg.manual_clock) ctx_.now_ms = clock_ms();
    ctx_.neigh = stack::Neighbours(4096, cfg.neigh_times);
    ctx_.pool = cfg.pool;
    ctx_.tx.init(static_cast<uint16_t>(cfg.id));
}

Worker::~Worker() { release_held(); }

uint64_t Worker::held_frames() const {
    uint64_t n = ctx_.neigh.pending_total + ctx_.tx.pending();
    for (const SpPending& p : sp_pending_) n += p.nsaved;
    return n;
}

void Worker::release_held() {
    flush();
    stack::neigh_drop_all_pending(ctx_);
    for (SpPending& p : sp_pending_) {
        for (uint8_t i = 0; i < p.nsaved; ++i)
            drop(ctx_, p.saved[i], Counter::synproxy_saved_dropped);
        p.nsaved = 0;
    }
}

Result<std::unique_ptr<Worker>> Worker::create(Director& director, const WorkerConfig& cfg) {
    if (cfg.id >= director.workers())
        return make_error("worker id " + std::to_string(cfg.id) + " beyond configured workers");
    if (!cfg.pool) return make_error("worker needs an mbuf pool");
    if (cfg.rx_burst == 0 || cfg.rx_burst > kMaxBurst)
        return make_error("rx burst must be 1.." + std::to_string(kMaxBurst));
    std::unique_ptr<Worker> w(new Worker(director, cfg));
    auto table = ConnTable::create(
        "xvs_conn_" + std::to_string(cfg.id) + "_" + std::to_string(g_table_seq++), cfg.max_conns);
    if (!table) return make_error(table.error());
    w->conns_ = std::move(*table);
    // SYN proxy: translation per conn slot, bounded handshake side pool (allocated here, once).
    w->sp_slots_.resize(cfg.max_conns);
    w->sp_pending_.resize(cfg.synproxy_pending);
    w->sp_free_.reserve(cfg.synproxy_pending);
    for (uint32_t i = cfg.synproxy_pending; i > 0; --i) w->sp_free_.push_back(static_cast<uint16_t>(i - 1));
    w->refresh_snapshot();
    return w;
}

// CLOCK_MONOTONIC, not a per-worker TSC base: every worker and the control plane must see the
// same time, or SYN cookie counters (net::cookie_count of this clock) would disagree between the
// worker that minted a cookie, the one that checks it and the key rotation (common/clock.h).
uint64_t Worker::clock_ms() { return monotonic_ms(); }

void Worker::refresh_snapshot() {
    snap_ = director_.snapshot();
    director_.worker_quiescent(cfg_.id, snap_->generation);
    ctx_.view = &snap_->stack;
    for (size_t p = 0; p < snap_->stack.ports.size(); ++p)
        ctx_.tx.set_port_id(static_cast<uint8_t>(p), snap_->stack.ports[p].port_id);
}

unsigned Worker::poll_once() {
    refresh_snapshot();
    if (!cfg_.manual_clock) ctx_.now_ms = clock_ms();
    const uint64_t now = ctx_.now_ms;
    timers_.advance(
        now,
        [&](TimerNode* node) {
            Conn* c = reinterpret_cast<Conn*>(node);
            if (c->expires_ms > now)  // traffic moved the deadline: lazy re-arm
                timers_.arm(node, (c->flags & kConnPpHdrSeg) ? pp_header_timer(c, now)
                                                              : c->expires_ms);
            else if (!(c->flags & kConnSpWaiting) || !synproxy_rs_syn_timer(c))
                conn_expire(c);
        },
        4096);
    stack::neigh_tick(ctx_);
    if (Command* cmd = commands_.pending())
        if (command_serve_chunk(*cmd, *conns_, ctx_.neigh, now)) commands_.answer();

    unsigned total = 0;
    const auto& ports = snap_->stack.ports;
    for (size_t p = 0; p < ports.size(); ++p) {
        rte_mbuf* pkts[kMaxBurst];
        uint16_t n = port::port_rx_burst(ports[p].port_id, static_cast<uint16_t>(cfg_.id), pkts,
                                         cfg_.rx_burst);
        if (n) {
            process_burst(static_cast<uint8_t>(p), pkts, n);
            total += n;
        }
    }
    flush();
    return total;
}

Worker::Polling::Polling(Worker& w) : w_(w) {
    w_.polling_.store(true);
    // The control thread may be serving a command inline, having seen no poller: the tables
    // are its until it answers (it checks polling_ after claiming, so one of us sees the other).
    while (w_.commands_.state_seq_cst() == CommandChannel::Inline) rte_pause();
}

Worker::Polling::~Polling() {
    w_.polling_.store(false);
}

Result<void> Worker::command(Command::Kind kind, uint64_t timeout_ms,
                             const std::function<void(const Command&)>& use) {
    using Clock = std::chrono::steady_clock;
    const std::string late = "worker " + std::to_string(cfg_.id) + " did not answer";
    if (commands_.state() == CommandChannel::Posted)  // an earlier command timed out
        return make_error(late + " (still busy with an earlier command)");
    Command& cmd = commands_.command();  // Free, or Answered late: ours again
    cmd.kind = kind;
    cmd.cursor = 0;
    cmd.truncated = false;
    cmd.conns.clear();
    cmd.neighbours.clear();
    if (kind == Command::dump_conns)
        cmd.conns.reserve(conns_->capacity());
    else
        cmd.neighbours.reserve(ctx_.neigh.slot_count());
    commands_.post();
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (commands_.state() != CommandChannel::Answered) {
        if (!polling_.load() && commands_.claim_inline()) {
            if (!polling_.load()) {
                while (!command_serve_chunk(cmd, *conns_, ctx_.neigh, ctx_.now_ms)) {
                }
                commands_.answer();
                break;
            }
            commands_.unclaim_inline();
        }
        if (Clock::now() >= deadline) return make_error(late);
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    use(cmd);
    cmd.conns = {};  // a 1M-conn dump holds tens of MB: give them back
    cmd.neighbours = {};
    commands_.release();
    return {};
}

void Worker::run(const std::atomic<bool>& stop, PollMode mode) {
    Polling polling(*this);
    unsigned idle = 0;
    while (!stop.load(std::memory_order_relaxed)) {
        if (poll_once() || mode == PollMode::Busy || commands_.pending()) {
            idle = 0;
            continue;
        }
        // Adaptive back-off: spin briefly, then sleep 10..100 us so an idle director on a
        // shared machine does not burn its core.
        if (++idle < 256) {
            rte_pause();
        } else {
            unsigned us = std::min(100u, 10u * ((idle - 256) / 64 + 1));
            std::this_thread::sleep_for(std::chrono::microseconds(us));
        }
    }
}

void Worker::process_burst(uint8_t port, rte_mbuf** pkts, uint16_t count) {
    while (count > kMaxBurst) {
        process_burst(port, pkts, kMaxBurst);
        pkts += kMaxBurst;
        count -= kMaxBurst;
    }
    ctx_.counters.inc(Counter::rx_packets, count);
    const stack::PortView& pv = ctx_.view->ports[port];
    const uint32_t max_frame = pv.mtu + sizeof(net::EtherHdr);

    LbPacket lbp[kMaxBurst];
    unsigned nlb = 0;
    for (uint16_t i = 0; i < count; ++i) {
        if (i + 4 < count) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void*));
        rte_mbuf* m = pkts[i];
        const uint32_t len = rte_pktmbuf_data_len(m);
        if (m->nb_segs > 1 || len > max_frame) {
            drop(ctx_, m, Counter::drop_frame_too_big);
            continue;
        }
        if (len < sizeof(net::EtherHdr)) {
            drop(ctx_, m, Counter::drop_frame_truncated);
            continue;
        }
        auto* eth = rte_pktmbuf_mtod(m, net::EtherHdr*);
        if (!(eth->dst == pv.mac) && !eth->dst.is_broadcast()) {
            drop(ctx_, m, Counter::drop_not_for_us);
            continue;
        }
        if (eth->ether_type == net::hton16(net::kEtherTypeArp)) {
            stack::arp_input(ctx_, port, m);
            continue;
        }
        if (eth->ether_type != net::hton16(net::kEtherTypeIpv4)) {
            drop(ctx_, m, Counter::drop_ethertype);
            continue;
        }
        stack::Ipv4View v;
        if (!stack::ipv4_validate(ctx_, m, v)) {
            rte_pktmbuf_free(m);
            continue;
        }
        const stack::OwnAddr* own = ctx_.view->own(v.ip->daddr);
        if (!own) {
            drop(ctx_, m, Counter::drop_not_local);
            continue;
        }
        uint8_t flags = 0;
        switch (v.ip->protocol) {
            case net::kIpProtoIcmp:
                stack::icmp_input(ctx_, port, m, v);
                continue;
            case net::kIpProtoTcp: {
                auto* tcp = reinterpret_cast<net::TcpHdr*>(v.l4);
                if (v.l4_len < sizeof(net::TcpHdr) || tcp->header_len() < sizeof(net::TcpHdr) ||
                    tcp->header_len() > v.l4_len) {
                    drop(ctx_, m, Counter::drop_tcp_header);
                    continue;
                }
                flags = tcp->flags;
                break;
            }
            case net::kIpProtoUdp: {
                auto* udp = reinterpret_cast<net::UdpHdr*>(v.l4);
                if (v.l4_len < sizeof(net::UdpHdr) || net::ntoh16(udp->length) < 8 ||
                    net::ntoh16(udp->length) > v.l4_len) {
                    drop(ctx_, m, Counter::drop_udp_header);
                    continue;
                }
                break;
            }
            default:
                drop(ctx_, m, Counter::drop_ip_proto);
                continue;
        }
        if (own->kind == stack::AddrKind::Director) {
            drop(ctx_, m, Counter::drop_to_director);
            continue;
        }
        LbPacket& lp = lbp[nlb++];
        const ConnKey key = conn_key(v.ip->protocol, v.ip->saddr, v.ip->daddr,
                                     net::load_wire16(v.l4), net::load_wire16(v.l4 + 2));
        lp = LbPacket{m, v.ip, v.l4, port, v.ip->protocol, flags, own->kind, key};
    }
    if (nlb == 0) return;

    const ConnKey* keys[kMaxBurst];
    ConnRef refs[kMaxBurst];
    for (unsigned i = 0; i < nlb; ++i) keys[i] = &lbp[i].key;
    conns_->lookup_bulk(keys, nlb, refs);
    for (unsigned i = 0; i < nlb; ++i) lb_handle(lbp[i], refs[i]);
}

void Worker::lb_handle(LbPacket& lp, ConnRef ref) {
    constexpr uint8_t kHandshakeFlags = net::kTcpSyn | net::kTcpAck | net::kTcpRst | net::kTcpFin;
    const bool is_tcp = lp.proto == net::kIpProtoTcp;
    const bool pure_syn = is_tcp && (lp.tcp_flags & kHandshakeFlags) == net::kTcpSyn;
    // A miss may have been created by an earlier packet of this very burst.
    if (!ref.conn) ref = conns_->lookup(lp.key);
    Conn* c = ref.conn;
    // conn_reuse_mode: a new SYN on a closing connection starts a new connection.
    if (c && pure_syn && ref.dir == ConnDir::In &&
        (c->state == TcpState::TimeWait || c->state == TcpState::Close)) {
        conn_expire(c);
        c = nullptr;
    }
    if (!c) {
        // A packet "from" one of our own addresses would make a conn, a cookie SYN-ACK and ARP
        // for ourselves.
        if (stack::ipv4_source_own(*ctx_.view, lp.key.saddr)) {
            drop(ctx_, lp.pkt, Counter::drop_martian_source);
            return;
        }
        if (lp.kind == stack::AddrKind::Lip) {
            drop(ctx_, lp.pkt, Counter::drop_lip_no_conn);
            return;
        }
        if (is_tcp) {
            const SpPacket sp{lp.pkt, lp.ip, reinterpret_cast<net::TcpHdr*>(lp.l4), lp.port};
            switch (synproxy_no_conn(sp, pure_syn)) {
                case SpVerdict::Consumed: return;
                case SpVerdict::Open:
                    if ((c = conn_create(lp))) synproxy_open(sp, c);
                    return;
                case SpVerdict::Pass: break;
            }
        }
        if (is_tcp && !pure_syn) {
            drop(ctx_, lp.pkt, Counter::drop_tcp_no_conn);
            return;
        }
        c = conn_create(lp);
        if (!c) return;  // counted and freed
        ref.dir = ConnDir::In;
    }
    if ((c->flags & kConnSynProxy) &&
        synproxy_conn(SpPacket{lp.pkt, lp.ip, reinterpret_cast<net::TcpHdr*>(lp.l4), lp.port}, c,
                      ref.dir == ConnDir::In))
        return;

    const unsigned w = cfg_.id;
    const bool inbound = ref.dir == ConnDir::In;
    uint32_t timeout_s;
    if (is_tcp) {
        TcpState next = tcp_state_next(c->state, inbound ? FlowDir::Input : FlowDir::Output,
                                       lp.tcp_flags);
        if (next != c->state) conn_set_state(c, next);
        timeout_s = snap_->timeouts.of(c->state);
    } else {
        timeout_s = snap_->timeouts.udp;
    }
    c->expires_ms = ctx_.now_ms + uint64_t(timeout_s) * 1000;
    // Lazy timers only move deadlines later; a shorter one (FIN, RST) is re-armed now.
    if (c->expires_ms < c->timer.expires_tick * timers_.tick_ms()) timers_.arm(&c->timer, c->expires_ms);

    if (c->flags & kConnToa) {
        if (inbound)
            toa_inbound(lp, c);
        else if ((lp.tcp_flags & (net::kTcpSyn | net::kTcpAck)) == (net::kTcpSyn | net::kTcpAck))
            toa_synack(lp, c);
    }
    PpHeaderSegment pp_header_segment = PpHeaderSegment::None;
    if (c->flags & (kConnPpV1 | kConnPpV2)) {
        if (is_tcp) {
            if (inbound)
                pp_header_segment = pp_inbound(lp, c);
            else
                pp_outbound(lp, c);
        } else if (inbound && !(c->flags & kConnPpSent)) {
            // UDP (v2): the header goes in front of the flow's first datagram only.
            c->flags |= kConnPpSent;
            pp_insert(lp, c, sizeof(net::UdpHdr));
        }
    }

    const uint32_t bytes = net::ntoh16(lp.ip->total_length);
    ServiceWorkerState& ss = c->svc->workers[w];
    DestWorkerStats& ds = c->dest->stats[w];
    if (inbound) {
        ++ss.inpkts;
        ss.inbytes += bytes;
        ++ds.inpkts;
        ds.inbytes += bytes;
        uint32_t ack_be = 0;
        uint16_t window_be = 0;
        if (pp_header_segment != PpHeaderSegment::None) {
            const auto* tcp = reinterpret_cast<const net::TcpHdr*>(lp.l4);
            ack_be = tcp->ack;
            window_be = tcp->window;
        }
        fullnat_rewrite(lp.ip, lp.l4, lp.proto, c->laddr_ip, c->daddr, c->lport, c->dport);
        // UOA after the rewrite: fullnat_rewrite finds the ports at lp.l4, which an insert moves.
        if (!is_tcp && c->uoa_left) uoa_inbound(lp, c);
        if (pp_header_segment == PpHeaderSegment::Before) pp_send_header_segment(c, ack_be, window_be);
        ctx_.counters.inc(Counter::lb_forwarded);
        stack::ipv4_output(ctx_, lp.pkt, c->daddr);
        if (pp_header_segment == PpHeaderSegment::After) pp_send_header_segment(c, ack_be, window_be);
    } else {
        ++ss.outpkts;
        ss.outbytes += bytes;
        ++ds.outpkts;
        ds.outbytes += bytes;
        fullnat_rewrite(lp.ip, lp.l4, lp.proto, c->vaddr, c->caddr, c->vport, c->cport);
        ctx_.counters.inc(Counter::lb_forwarded);
        stack::ipv4_output(ctx_, lp.pkt, c->caddr);
    }
}

Conn* Worker::conn_create(LbPacket& lp) {
    const unsigned w = cfg_.id;
    const ServiceView* view = snap_->service(lp.proto, lp.key.daddr, lp.key.dport);
    if (!view) {
        drop(ctx_, lp.pkt, Counter::drop_no_service);
        return nullptr;
    }
    if (!admit(*view, lp.key.saddr)) {
        rte_pktmbuf_free(lp.pkt);  // counted by admit
        return nullptr;
    }
    Service* svc = view->svc;
    FlowKey flow{lp.key.saddr, lp.key.daddr, lp.key.sport, lp.key.dport, lp.proto};
    Dest* dest = view->sched->pick(view->plan, svc->workers[w].cursor, w, flow);
    if (!dest) {
        drop(ctx_, lp.pkt, sched_fail_reason(view->plan));
        return nullptr;
    }
    const size_t nl = view->laddrs.size();
    if (nl == 0) {
        drop(ctx_, lp.pkt, Counter::drop_no_laddr);
        return nullptr;
    }
    // Round-robin over the service's local addresses; fall through to the next when one is
    // out of ports.
    LocalAddr* laddr = nullptr;
    uint16_t lport = 0;
    uint32_t& cursor = svc->workers[w].laddr_cursor;
    for (size_t tries = 0; tries < nl && !laddr; ++tries) {
        LocalAddr* cand = view->laddrs[cursor++ % nl];
        if (auto p = cand->workers[w].pool->alloc()) {
            laddr = cand;
            lport = *p;
        }
    }
    if (!laddr) {
        drop(ctx_, lp.pkt, Counter::drop_laddr_exhausted);
        return nullptr;
    }
    Conn* c = conns_->alloc();
    if (!c) {
        laddr->workers[w].pool->free(lport);
        drop(ctx_, lp.pkt, Counter::drop_conn_pool_full);
        return nullptr;
    }
    c->svc = svc;
    c->dest = dest;
    c->laddr = laddr;
    c->proto = lp.proto;
    c->caddr = lp.key.saddr;
    c->vaddr = lp.key.daddr;
    c->cport = lp.key.sport;
    c->vport = lp.key.dport;
    c->laddr_ip = laddr->addr.be;
    c->lport = net::hton16(lport);
    c->daddr = dest->addr.be;
    c->dport = net::hton16(dest->port);
    if (!conns_->insert(c)) {
        conns_->release(c);
        laddr->workers[w].pool->free(lport);
        drop(ctx_, lp.pkt, Counter::drop_conn_table_full);
        return nullptr;
    }
    auto bump = [](std::atomic<uint32_t>& a, int d) {  // single writer: no locked RMW needed
        a.store(a.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
    };
    bump(svc->workers[w].refs, 1);
    bump(laddr->workers[w].refs, 1);
    DestWorkerStats& ds = dest->stats[w];
    ++ds.refs;
    ++ds.conns;
    ++ds.inactive;  // NONE is inactive; the first transition moves it
    ++svc->workers[w].conns;
    ctx_.counters.inc(Counter::conns_created);
    c->state = TcpState::None;
    if ((view->flags & kSvcFlagToa) && lp.proto == net::kIpProtoTcp) c->flags |= kConnToa;
    if (lp.proto == net::kIpProtoTcp) {
        if (view->flags & kSvcFlagPpV1) c->flags |= kConnPpV1;
        else if (view->flags & kSvcFlagPpV2) c->flags |= kConnPpV2;
        c->client_isn = net::ntoh32(reinterpret_cast<const net::TcpHdr*>(lp.l4)->seq);
        if (c->flags & (kConnPpV1 | kConnPpV2)) pp_conn_init(c);
    } else if (view->flags & kSvcFlagPpV2) {
        c->flags |= kConnPpV2;  // v1 has no UDP form: the control plane refuses it
    }
    if (lp.proto == net::kIpProtoUdp && (view->flags & (kSvcFlagUoaOpp | kSvcFlagUoaIpo))) {
        if (view->flags & kSvcFlagUoaIpo) c->flags |= kConnUoaIpo;
        c->uoa_left = snap_->uoa_max_trail;
    }
    c->expires_ms = ctx_.now_ms + uint64_t(snap_->timeouts.of(TcpState::None)) * 1000;
    timers_.arm(&c->timer, c->expires_ms);
    return c;
}

// RS SYN-ACK: remember the RS's ISN (TOA goes into client packets acking exactly it + 1) and
// lower the MSS by the TOA length so full-size client segments still fit with the option.
void Worker::toa_synack(LbPacket& lp, Conn* c) {
    auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
    c->rs_isn = net::ntoh32(tcp->seq);
    c->flags |= kConnSynAckSeen;
    if (net::toa_clamp_mss(net::tcp_options_span(tcp), &tcp->checksum))
        ctx_.counters.inc(Counter::toa_mss_clamped);
}

// Client -> RS: TOA first in the options of every non-SYN, non-RST packet that acks the RS
// SYN-ACK and nothing more (seed 001: third-handshake ACK, ACK+data, FIN+ACK+data, out of
// order, retransmissions). Once the client acks RS data the RS has its address: stop.
void Worker::toa_inbound(LbPacket& lp, Conn* c) {
    constexpr uint8_t kNot = net::kTcpSyn | net::kTcpRst;
    if ((lp.tcp_flags & kNot) || !(lp.tcp_flags & net::kTcpAck) || !(c->flags & kConnSynAckSeen) ||
        (c->flags & kConnToaDone))
        return;
    auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
    const uint32_t ack = net::ntoh32(tcp->ack);
    if (ack != c->rs_isn + 1) {
        if (static_cast<int32_t>(ack - (c->rs_isn + 1)) > 0) c->flags |= kConnToaDone;
        return;
    }
    const size_t ip_len = net::ntoh16(lp.ip->total_length);
    const stack::PortView& out_port = ctx_.view->ports[ctx_.view->route_lookup(c->daddr).port];
    // Room to grow: the mbuf's tailroom, but never past the egress MTU (a full-size segment
    // whose SYN-ACK MSS was not clamped is forwarded without TOA, counted).
    const size_t capacity =
        std::min<size_t>(ip_len + rte_pktmbuf_tailroom(lp.pkt), out_port.mtu);
    const net::ToaResult r = net::toa_insert_ipv4(reinterpret_cast<uint8_t*>(lp.ip), ip_len, capacity,
                                                  c->caddr, c->cport, true);
    if (r.forged_removed) ctx_.counters.inc(Counter::toa_forged_removed, r.forged_removed);
    switch (r.outcome) {
        case net::ToaOutcome::Inserted: ctx_.counters.inc(Counter::toa_inserted); break;
        case net::ToaOutcome::InsertedPrunedNop: ctx_.counters.inc(Counter::toa_pruned_nop); break;
        case net::ToaOutcome::InsertedPrunedSack: ctx_.counters.inc(Counter::toa_pruned_sack); break;
        case net::ToaOutcome::NoRoom: ctx_.counters.inc(Counter::toa_fail_no_room); return;
        case net::ToaOutcome::TooBig: ctx_.counters.inc(Counter::toa_fail_mtu); return;
        case net::ToaOutcome::Malformed: ctx_.counters.inc(Counter::toa_fail_malformed); return;
    }
    const size_t new_len = r.new_pkt_len;
    // The packet grew (or shrank, after pruning) at its end.
    const uint32_t frame = static_cast<uint32_t>(sizeof(net::EtherHdr) + new_len);
    if (frame > rte_pktmbuf_data_len(lp.pkt))
        rte_pktmbuf_append(lp.pkt, static_cast<uint16_t>(frame - rte_pktmbuf_data_len(lp.pkt)));
    else if (frame < rte_pktmbuf_data_len(lp.pkt))
        rte_pktmbuf_trim(lp.pkt, static_cast<uint16_t>(rte_pktmbuf_data_len(lp.pkt) - frame));
}

namespace {
size_t pp_build(const Conn* c, uint8_t* out, size_t cap) {
    if (c->flags & kConnPpV1) return net::pp_v1_build(out, cap, c->caddr, c->vaddr, c->cport, c->vport);
    return net::pp_v2_build(out, cap, c->proto, c->caddr, c->vaddr, c->cport, c->vport);
}
}  // namespace

// Grows the (not yet FULLNAT-rewritten) packet by the PROXY header, written in front of the
// L4 payload; IP length and checksum and the L4 length/checksum are recomputed (fullnat_rewrite
// then updates them incrementally). A result beyond the egress MTU or the mbuf's tailroom is
// left unchanged and counted (TCP then sends the header as its own segment first; a UDP
// datagram goes without it). Returns true when the header was inserted.
bool Worker::pp_insert(LbPacket& lp, Conn* c, size_t l4_hdr_len) {
    uint8_t hdr[net::kPpV1MaxLen];
    const size_t hlen = pp_build(c, hdr, sizeof(hdr));
    if (hlen == 0) return false;
    const size_t ihl = lp.ip->header_len();
    const size_t ip_len = net::ntoh16(lp.ip->total_length);
    const size_t new_len = ip_len + hlen;
    const stack::PortView& out_port = ctx_.view->ports[ctx_.view->route_lookup(c->daddr).port];
    if (new_len > out_port.mtu) {
        ctx_.counters.inc(Counter::pp_fail_mtu);
        return false;
    }
    // Frames may carry Ethernet padding beyond the IP length: trim it before growing.
    const uint32_t frame = static_cast<uint32_t>(sizeof(net::EtherHdr) + ip_len);
    if (rte_pktmbuf_data_len(lp.pkt) > frame)
        rte_pktmbuf_trim(lp.pkt, static_cast<uint16_t>(rte_pktmbuf_data_len(lp.pkt) - frame));
    if (!rte_pktmbuf_append(lp.pkt, static_cast<uint16_t>(hlen))) {
        ctx_.counters.inc(Counter::pp_fail_no_room);
        return false;
    }
    uint8_t* payload = lp.l4 + l4_hdr_len;
    const size_t payload_len = ip_len - ihl - l4_hdr_len;
    std::memmove(payload + hlen, payload, payload_len);
    std::memcpy(payload, hdr, hlen);
    lp.ip->total_length = net::hton16(static_cast<uint16_t>(new_len));
    lp.ip->checksum = 0;
    lp.ip->checksum = net::ipv4_header_checksum(lp.ip);
    const uint16_t l4_len = static_cast<uint16_t>(new_len - ihl);
    if (lp.proto == net::kIpProtoTcp) {
        auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
        tcp->checksum = 0;
        tcp->checksum = net::ipv4_l4_checksum(lp.ip->saddr, lp.ip->daddr, lp.proto, lp.l4, l4_len);
    } else {
        auto* udp = reinterpret_cast<net::UdpHdr*>(lp.l4);
        udp->length = net::hton16(l4_len);
        if (udp->checksum != 0) {  // 0 = no checksum, stays so
            udp->checksum = 0;
            udp->checksum = net::ipv4_l4_checksum(lp.ip->saddr, lp.ip->daddr, lp.proto, lp.l4, l4_len);
            if (udp->checksum == 0) udp->checksum = 0xffff;
        }
    }
    c->pp_len = static_cast<uint8_t>(hlen);
    ctx_.counters.inc(Counter::pp_inserted);
    return true;
}

// TCP: the header length depends only on the 4-tuple and the version, so it is fixed when the
// conn is created. From then on the RS's byte stream is header + client data whatever order
// client segments arrive in: every client byte at or after ISN + 1 sits pp_len bytes later for
// the RS, and RS acks/SACK edges map back, whether or not the header already went out.
void Worker::pp_conn_init(Conn* c) {
    uint8_t hdr[net::kPpV1MaxLen];
    c->pp_len = static_cast<uint8_t>(pp_build(c, hdr, sizeof(hdr)));
}

// Client -> RS. The shift is unconditional (pp_conn_init); what remains is getting the header
// itself to the RS, at RS seq client ISN + 1: in front of the segment that starts there (every
// time it is sent: the RS's TCP discards what it already has), or, when that segment has no
// room for it, as its own segment just ahead of it (the segment then goes shifted). Once a
// header segment went out (kConnPpHdrSeg) its timer resends it and client data is only shifted.
// A FIN at ISN + 1 that no header preceded gets the header segment ahead of it too; the
// server-speaks-first handshake ACK gets it right after. Segments taking no sequence space at
// ISN + 1: a bare ACK goes unshifted while no header was sent (the RS expects the header's first
// byte; once sent, the shifted seq is at or ahead of what it expects, inside its window, which
// is what an ACK needs). A RST must carry exactly the RS's next expected seq, so it goes
// unshifted until the RS acked the header (a RST that missed draws a challenge ACK, acking
// ISN + 1 or past it, and the client's answering RST then matches).
PpHeaderSegment Worker::pp_inbound(LbPacket& lp, Conn* c) {
    if (lp.tcp_flags & net::kTcpSyn) return PpHeaderSegment::None;
    auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
    const uint32_t seq = net::ntoh32(tcp->seq);
    const uint32_t insert_seq = c->client_isn + 1;
    const size_t thl = tcp->header_len();
    const size_t payload_len = net::ntoh16(lp.ip->total_length) - lp.ip->header_len() - thl;
    const bool rst = lp.tcp_flags & net::kTcpRst;
    // Takes no sequence space: a bare ACK or RST (see above).
    const bool bare = payload_len == 0 && !(lp.tcp_flags & net::kTcpFin);
    PpHeaderSegment segment = PpHeaderSegment::None;
    if (seq == insert_seq && !rst && !(c->flags & kConnPpHdrSeg)) {
        if (payload_len > 0) {
            if (pp_insert(lp, c, thl)) {
                c->flags |= kConnPpSent;
                return PpHeaderSegment::None;  // the header is this segment's first bytes
            }
            ctx_.counters.inc(Counter::pp_header_segment_for_room);
            segment = PpHeaderSegment::Before;
        } else if (!bare) {
            if (!(c->flags & kConnPpSent)) segment = PpHeaderSegment::Before;  // a FIN
        } else {
            // Server speaks first: the handshake-completing bare ACK is followed by the header.
            constexpr uint8_t kMask = net::kTcpSyn | net::kTcpAck | net::kTcpRst | net::kTcpFin;
            if ((lp.tcp_flags & kMask) == net::kTcpAck && (c->flags & kConnSynAckSeen) &&
                net::ntoh32(tcp->ack) == c->rs_isn + 1)
                segment = PpHeaderSegment::After;
        }
    }
    if (seq == insert_seq && bare && !(c->flags & (rst ? kConnPpHdrAcked : kConnPpSent)))
        return segment;
    const uint32_t shifted = net::seq_client_to_rs(seq, net::PpSeqShift{insert_seq, c->pp_len});
    if (shifted != seq) {
        const uint32_t new_be = net::hton32(shifted);
        net::csum_replace4(&tcp->checksum, tcp->seq, new_be);
        tcp->seq = new_be;
    }
    return segment;
}

// Sends the header segment and starts its retransmission timer (which also retries a segment
// that could not be built). ack_be is the client segment's ack (the handshake ACK's is rs_isn + 1,
// pp_inbound checked it); retransmissions ack rs_isn + 1, always acceptable to the RS.
void Worker::pp_send_header_segment(Conn* c, uint32_t ack_be, uint16_t window_be) {
    c->pp_window = window_be;
    c->pp_rexmits = 0;
    c->flags |= kConnPpSent | kConnPpHdrSeg;
    if (pp_header_segment_emit(c, ack_be)) ctx_.counters.inc(Counter::pp_header_segment_sent);
    if (c->flags & kConnSynAckSeen)
        timers_.arm(&c->timer, std::min(c->expires_ms, ctx_.now_ms + kPpHeaderRtoMs));
}

// Builds and sends LIP:lport -> RS:dport, seq = client ISN + 1, ACK|PSH, carrying only the
// header, with the window the client advertised. Returns false (counted) when not sent.
bool Worker::pp_header_segment_emit(Conn* c, uint32_t ack_be) {
    uint8_t hdr[net::kPpV1MaxLen];
    const size_t hlen = pp_build(c, hdr, sizeof(hdr));
    if (hlen == 0) return false;
    rte_mbuf* m = stack::frame_alloc(ctx_);
    if (!m) {
        ctx_.counters.inc(Counter::pp_fail_alloc);
        return false;
    }
    const size_t l4_len = sizeof(net::TcpHdr) + hlen;
    const size_t ip_len = sizeof(net::Ipv4Hdr) + l4_len;
    auto* eth = reinterpret_cast<net::EtherHdr*>(
        rte_pktmbuf_append(m, static_cast<uint16_t>(sizeof(net::EtherHdr) + ip_len)));
    if (!eth) {
        ctx_.counters.inc(Counter::pp_fail_alloc);
        drop(ctx_, m, Counter::drop_mbuf_alloc);
        return false;
    }
    std::memset(eth, 0, sizeof(net::EtherHdr) + sizeof(net::Ipv4Hdr) + sizeof(net::TcpHdr));
    auto* ip = reinterpret_cast<net::Ipv4Hdr*>(eth + 1);
    ip->version_ihl = 0x45;
    ip->total_length = net::hton16(static_cast<uint16_t>(ip_len));
    ip->frag_off = net::hton16(net::kIpv4DontFragment);
    ip->ttl = 64;
    ip->protocol = net::kIpProtoTcp;
    ip->saddr = c->laddr_ip;
    ip->daddr = c->daddr;
    ip->checksum = net::ipv4_header_checksum(ip);
    auto* tcp = reinterpret_cast<net::TcpHdr*>(ip + 1);
    tcp->sport = c->lport;
    tcp->dport = c->dport;
    tcp->seq = net::hton32(c->client_isn + 1);
    tcp->ack = ack_be;
    tcp->data_off = 5 << 4;
    tcp->flags = net::kTcpAck | net::kTcpPsh;
    tcp->window = c->pp_window;
    std::memcpy(tcp + 1, hdr, hlen);
    tcp->checksum = net::ipv4_l4_checksum(ip->saddr, ip->daddr, net::kIpProtoTcp, tcp,
                                          static_cast<uint16_t>(l4_len));
    stack::ipv4_output(ctx_, m, c->daddr);
    return true;
}

// The client sent no data, so nothing it does would resend a lost header segment: xvs does,
// every RTO (1 s, doubling: at +1, +3, +7, +15, +31 s) until the RS acks past client ISN + 1,
// and after kPpHeaderMaxRexmits counts the give-up once. The conn's idle deadline stays in
// charge: the timer never fires later than expires_ms.
uint64_t Worker::pp_header_timer(Conn* c, uint64_t now) {
    if ((c->flags & kConnPpHdrAcked) || c->pp_rexmits > kPpHeaderMaxRexmits ||
        c->state == TcpState::Close || c->state == TcpState::TimeWait)
        return c->expires_ms;
    if (c->pp_rexmits == kPpHeaderMaxRexmits) {
        ++c->pp_rexmits;
        ctx_.counters.inc(Counter::pp_header_gave_up);
        return c->expires_ms;
    }
    (void)pp_header_segment_emit(c, net::hton32(c->rs_isn + 1));
    ++c->pp_rexmits;
    ctx_.counters.inc(Counter::pp_header_retransmitted);
    return std::min(c->expires_ms, now + (kPpHeaderRtoMs << c->pp_rexmits));
}

// RS -> client: remember the RS ISN from the SYN-ACK; acks and SACK edges move down by the
// header length (pp_conn_init), whether or not the header already reached the RS.
void Worker::pp_outbound(LbPacket& lp, Conn* c) {
    auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
    if ((lp.tcp_flags & (net::kTcpSyn | net::kTcpAck)) == (net::kTcpSyn | net::kTcpAck)) {
        c->rs_isn = net::ntoh32(tcp->seq);
        c->flags |= kConnSynAckSeen;
        // Lower the MSS the client sees by the header length, so that a full-size first data
        // segment still fits the MTU once the header is in front of it.
        const size_t hlen = c->pp_len;  // fixed at conn creation (pp_conn_init)
        const auto opts = net::tcp_options_span(tcp);
        const auto mss = net::tcp_find_mss(opts);
        if (hlen && mss && *mss > hlen + 64 &&
            net::tcp_set_mss(opts, static_cast<uint16_t>(*mss - hlen), &tcp->checksum))
            ctx_.counters.inc(Counter::pp_mss_clamped);
        return;
    }
    if (!(lp.tcp_flags & net::kTcpAck)) return;
    const net::PpSeqShift shift{c->client_isn + 1, c->pp_len};
    const uint32_t ack = net::ntoh32(tcp->ack);
    // An ack past client ISN + 1 covers (part of) the header: header segment retransmissions
    // stop, and a client RST at ISN + 1 is shifted from now on.
    if (net::seq_gt(ack, c->client_isn + 1)) c->flags |= kConnPpHdrAcked;
    const uint32_t mapped = net::ack_rs_to_client(ack, shift);
    if (mapped != ack) {
        const uint32_t new_be = net::hton32(mapped);
        net::csum_replace4(&tcp->checksum, tcp->ack, new_be);
        tcp->ack = new_be;
    }
    const size_t avail = net::ntoh16(lp.ip->total_length) - lp.ip->header_len();
    net::pp_sack_rs_to_client(net::tcp_options_span(tcp, avail), shift, &tcp->checksum);
}

namespace {
net::UoaMode uoa_mode_of(const Conn* c) {
    return (c->flags & kConnUoaIpo) ? net::UoaMode::Ipo : net::UoaMode::Opp;
}
}  // namespace

// Client -> RS datagram (already LIP:lport -> RS:rport) of a UOA flow: each of the first
// uoa_max_trail datagrams carries the client address. In place when the grown datagram fits the
// egress MTU and the mbuf; otherwise an empty datagram carrying UOA goes first and this one
// follows unchanged (DPVS does the same), so the RS learns the address before the data.
void Worker::uoa_inbound(LbPacket& lp, Conn* c) {
    --c->uoa_left;
    const net::UoaMode mode = uoa_mode_of(c);
    const size_t grow = net::uoa_insert_len(mode);
    const size_t ip_len = net::ntoh16(lp.ip->total_length);
    const stack::PortView& out_port = ctx_.view->ports[ctx_.view->route_lookup(c->daddr).port];
    Counter failure = Counter::uoa_fail_mtu;
    if (ip_len + grow <= out_port.mtu) {
        // Ethernet padding past the IP length goes: the datagram grows from its real end.
        const uint32_t frame = static_cast<uint32_t>(sizeof(net::EtherHdr) + ip_len);
        if (rte_pktmbuf_data_len(lp.pkt) > frame)
            rte_pktmbuf_trim(lp.pkt, static_cast<uint16_t>(rte_pktmbuf_data_len(lp.pkt) - frame));
        failure = Counter::uoa_fail_no_room;
        if (grow <= rte_pktmbuf_tailroom(lp.pkt)) {
            // With MTU and room checked, only a full IPv4 option space (ipo) refuses it.
            failure = Counter::uoa_fail_ip_options;
            if (net::uoa_insert(mode, reinterpret_cast<uint8_t*>(lp.ip), ip_len, ip_len + grow,
                                c->caddr, c->cport)) {
                rte_pktmbuf_append(lp.pkt, static_cast<uint16_t>(grow));
                ctx_.counters.inc(Counter::uoa_inserted);
                return;
            }
        }
    }
    ctx_.counters.inc(failure);
    uoa_send_empty(c);
}

// LIP:lport -> RS:rport, no payload, UOA in the flow's mode (IP id 0, TTL 64).
void Worker::uoa_send_empty(const Conn* c) {
    rte_mbuf* m = stack::frame_alloc(ctx_);
    if (!m) {
        ctx_.counters.inc(Counter::uoa_fail_alloc);
        return;
    }
    const size_t ip_len =
        sizeof(net::Ipv4Hdr) + sizeof(net::UdpHdr) + net::uoa_insert_len(uoa_mode_of(c));
    auto* eth = reinterpret_cast<net::EtherHdr*>(
        rte_pktmbuf_append(m, static_cast<uint16_t>(sizeof(net::EtherHdr) + ip_len)));
    net::UoaFlow flow;
    flow.saddr_be = c->laddr_ip;
    flow.daddr_be = c->daddr;
    flow.sport_be = c->lport;
    flow.dport_be = c->dport;
    flow.client_be = c->caddr;
    flow.cport_be = c->cport;
    if (!eth || net::uoa_empty_datagram_build(reinterpret_cast<uint8_t*>(eth + 1), ip_len,
                                              uoa_mode_of(c), flow) != ip_len) {
        ctx_.counters.inc(Counter::uoa_fail_alloc);
        drop(ctx_, m, Counter::drop_mbuf_alloc);
        return;
    }
    ctx_.counters.inc(Counter::uoa_empty_sent);
    stack::ipv4_output(ctx_, m, c->daddr);
}

void Worker::conn_set_state(Conn* c, TcpState state) {
    c->state = state;
    const bool active = c->proto == net::kIpProtoTcp && tcp_state_is_active(state);
    if (active != bool(c->flags & kConnActive)) {
        DestWorkerStats& ds = c->dest->stats[cfg_.id];
        if (active) {
            ++ds.active;
            --ds.inactive;
        } else {
            --ds.active;
            ++ds.inactive;
        }
        c->flags ^= kConnActive;
    }
}

void Worker::lb_replay(rte_mbuf* m, Conn* c) {
    auto* ip = rte_pktmbuf_mtod_offset(m, net::Ipv4Hdr*, sizeof(net::EtherHdr));
    uint8_t* l4 = reinterpret_cast<uint8_t*>(ip) + ip->header_len();
    const ConnKey key = conn_key(net::kIpProtoTcp, ip->saddr, ip->daddr, net::load_wire16(l4),
                                 net::load_wire16(l4 + 2));
    const uint8_t flags = reinterpret_cast<net::TcpHdr*>(l4)->flags;
    LbPacket lp{m, ip, l4, 0, net::kIpProtoTcp, flags, stack::AddrKind::Vip, key};
    lb_handle(lp, ConnRef{c, ConnDir::In});
}

void Worker::conn_expire(Conn* c) {
    const unsigned w = cfg_.id;
    if (c->flags & kConnSpWaiting) synproxy_release(c);
    timers_.cancel(&c->timer);
    conns_->remove(c);
    c->laddr->workers[w].pool->free(net::ntoh16(c->lport));
    auto drop_ref = [](std::atomic<uint32_t>& a) {
        a.store(a.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    };
    drop_ref(c->laddr->workers[w].refs);
    drop_ref(c->svc->workers[w].refs);
    DestWorkerStats& ds = c->dest->stats[w];
    if (c->flags & kConnActive)
        --ds.active;
    else
        --ds.inactive;
    --ds.refs;
    conns_->release(c);
    ctx_.counters.inc(Counter::conns_expired);
}

}  // namespace xvs::lb
