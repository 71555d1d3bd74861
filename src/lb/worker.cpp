// The worker loop: snapshot, timers, commands, RX, and the burst. A burst is handled in two
// passes (STYLE.md rule 3): pass 1 classifies every frame (stack::eth_input: validates,
// answers ARP/ICMP) and builds the connection keys of load-balanced packets; then one bulk
// hash lookup; pass 2 hands each packet to lb_handle (lb/pipeline.h). Every packet leaves
// through TX or is freed with a named drop counter.
#include "lb/worker.h"

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_prefetch.h>
#include <rte_ring.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "lb/conn_ops.h"
#include "lb/pipeline.h"
#include "lb/proto/icmp.h"
#include "lb/persist.h"
#include "lb/redirect.h"
#include "lb/service.h"
#include "lb/synproxy/handshake.h"
#include "lb/xmit/nat_tunnel.h"
#include "port/ethdev.h"
#include "stack/arp.h"
#include "stack/capture.h"
#include "stack/exception.h"
#include "stack/input.h"
#include "stack/neigh_shared.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// poll_mode adaptive: after kDeepIdleMs without a frame the idle loop sleeps 1 ms at a time,
// after kDeeperIdleMs 2 ms.
constexpr uint64_t kDeepIdleMs = 200;
constexpr uint64_t kDeeperIdleMs = 1000;

std::atomic<unsigned> g_table_seq{0};

// One chunk of the command on ctx's tables: true when it is complete.
bool serve_chunk(Command& cmd, WorkerCtx& ctx) {
    if (cmd.kind == Command::set_capture) {
        ctx.stack.capture = cmd.tap.get();
        ctx.stack.tx.set_capture(cmd.tap.get());
        return true;
    }
    // The neighbour table is one for all workers: its owner dumps it, the others have none.
    if (cmd.kind == Command::dump_neighbours && !ctx.stack.neigh_owner) return true;
    if (cmd.kind == Command::import_conns) {
        for (const SyncRecord& r : cmd.records) {
            if (sync_import(ctx, r))
                ++cmd.imported;
            else
                ++cmd.import_failed;
        }
        return true;
    }
    if (cmd.kind == Command::export_conns) {
        const uint32_t total = ctx.conns->capacity();
        const uint32_t end = static_cast<uint32_t>(
            std::min<uint64_t>(total, uint64_t(cmd.cursor) + kCommandChunk));
        for (uint32_t i = cmd.cursor; i < end; ++i) {
            const Conn* cp = ctx.conns->live(i);
            if (!cp || !sync_wanted(*cp)) continue;
            const Conn& c = *cp;
            if (cmd.records.size() == cmd.records.capacity()) {
                cmd.truncated = true;  // never grow: the worker does not allocate
                continue;
            }
            cmd.records.push_back(sync_record_of(ctx, c));
        }
        cmd.cursor = end;
        return end == total;
    }
    if (cmd.kind != Command::flush_dest)
        return command_serve_chunk(cmd, *ctx.conns, *ctx.stack.neigh, ctx.stack.now_ms);
    auto expire = [](void* w, Conn* c) { conn_expire(*static_cast<WorkerCtx*>(w), c); };
    return command_flush_chunk(cmd, *ctx.conns, expire, &ctx);
}
}  // namespace

Worker::Worker(Director& director, const WorkerConfig& cfg)
    : ctx_(director, cfg, cfg.manual_clock ? 0 : clock_ms()) {
    stack::StackContext& st = ctx_.stack;
    if (!cfg.manual_clock) st.now_ms = clock_ms();
    st.pool = cfg.pool;
    st.tx.init(static_cast<uint16_t>(cfg.id));
    st.exc_tx.init(static_cast<uint16_t>(cfg.id), Counter::exc_to_kernel, Counter::drop_exc_full);
}

Worker::~Worker() {
    release_held();
    stack::neigh_detach(ctx_.stack);
}

uint64_t Worker::held_frames() const {
    uint64_t n = stack::neigh_held(ctx_.stack) + ctx_.stack.tx.pending() + ctx_.stack.exc_tx.pending();
    return n + lb::synproxy_saved_count(ctx_.sp) + stack::fragments_held(ctx_.stack);
}

unsigned Worker::neigh_handoff_in_flight() const {
    return stack::neigh_handoff_in_flight(ctx_.stack);
}

uint64_t Worker::held_mbufs() const {
    return held_frames() - stack::fragments_held(ctx_.stack) + stack::fragments_buffers(ctx_.stack);
}

void Worker::release_held() {
    redirect_flush();
    flush();
    stack::neigh_drop_all_pending(ctx_.stack);
    synproxy_drop_saved(ctx_);
    stack::fragments_release(ctx_.stack);
}

Result<std::unique_ptr<Worker>> Worker::create(Director& director, const WorkerConfig& cfg) {
    if (cfg.id >= director.workers())
        return make_error("worker id " + std::to_string(cfg.id) + " beyond configured workers");
    if (!cfg.pool) return make_error("worker needs an mbuf pool");
    if (cfg.rx_burst == 0 || cfg.rx_burst > kMaxBurst)
        return make_error("rx burst must be 1.." + std::to_string(kMaxBurst));
    std::unique_ptr<Worker> w(new Worker(director, cfg));
    if (auto r = stack::neigh_attach(w->ctx_.stack, director.neigh_shared(), cfg.id,
                                     cfg.neigh_times, cfg.neigh_handoff_ring);
        !r)
        return make_error(r.error());
    auto redirect = director.redirect_init(cfg.max_conns);
    if (!redirect) return make_error(redirect.error());
    w->ctx_.redirect = *redirect;
    auto table = ConnTable::create(
        "xvs_conn_" + std::to_string(cfg.id) + "_" + std::to_string(g_table_seq++), cfg.max_conns);
    if (!table) return make_error(table.error());
    w->ctx_.set_conns(std::move(*table));
    // Per-slot side arrays and the SYN proxy's handshake pool: allocated here, once.
    w->ctx_.feat.resize(cfg.max_conns);
    w->ctx_.laddr.assign(cfg.max_conns, nullptr);
    w->ctx_.persist.assign(cfg.max_conns, PersistSlot{});
    synproxy_init(w->ctx_.sp, cfg.max_conns, cfg.synproxy_pending);
    stack::fragments_init(w->ctx_.stack.frag, cfg.frag, cfg.reasm_pool);
    w->ctx_.offload =
        offload_create(cfg.xdp_offload, cfg.xdp_flows, cfg.id, director.workers(), cfg.max_conns);
    w->refresh_snapshot();
    return w;
}

// CLOCK_MONOTONIC, not a per-worker TSC base: every worker and the control plane must see the
// same time, or SYN cookie counters (net::cookie_count of this clock) would disagree between the
// worker that minted a cookie, the one that checks it and the key rotation (common/clock.h).
uint64_t Worker::clock_ms() {
    return monotonic_ms();
}

void Worker::refresh_snapshot() {
    const Snapshot* snap = ctx_.director->snapshot();
    ctx_.director->worker_quiescent(ctx_.cfg.id, snap->generation);
    // New routes may send a conn's packets elsewhere: the next hops cached on conns go.
    if (snap != ctx_.snap) ++ctx_.stack.nh_epoch;
    ctx_.snap = snap;
    ctx_.stack.set_view(&ctx_.snap->stack);
    for (size_t p = 0; p < ctx_.snap->stack.ports.size(); ++p) {
        const stack::PortView& pv = ctx_.snap->stack.ports[p];
        ctx_.stack.tx.set_port_id(static_cast<uint8_t>(p), pv.port_id);
        if (pv.port_id < kMaxPortIds) port_index_[pv.port_id] = static_cast<uint8_t>(p);
        if (pv.has_exception)
            ctx_.stack.exc_tx.set_port_id(static_cast<uint8_t>(p), pv.exception_port_id);
    }
}

unsigned Worker::poll_once() {
    refresh_snapshot();
    if (!ctx_.cfg.manual_clock) ctx_.stack.now_ms = clock_ms();
    const uint64_t now = ctx_.stack.now_ms;
    ctx_.timers.advance(
        now, [&](TimerNode* node) { conn_timer(ctx_, node, now); }, 4096);
    stack::neigh_tick(ctx_.stack);
    stack::fragments_expire(ctx_.stack);
    if (ctx_.offload) offload_poll(ctx_);
    if (Command* cmd = commands_.pending())
        if (serve_chunk(*cmd, ctx_)) commands_.answer();

    unsigned total = 0;
    const auto& ports = ctx_.snap->stack.ports;
    for (size_t p = 0; p < ports.size(); ++p) {
        rte_mbuf* pkts[kMaxBurst];
        uint16_t n = port::port_rx_burst(ports[p].port_id, static_cast<uint16_t>(ctx_.cfg.id), pkts,
                                         ctx_.cfg.rx_burst);
        if (n) {
            process_burst(static_cast<uint8_t>(p), pkts, n);
            total += n;
        }
    }
    total += stack::neigh_handoff_poll(ctx_.stack);  // the owner: frames other workers handed it
    if (ctx_.redirect) total += redirect_poll();
    total +=
        stack::exception_poll(ctx_.stack, static_cast<uint16_t>(ctx_.cfg.id), ctx_.cfg.rx_burst);
    flush();
    return total;
}

// Frames other workers handed over, in runs of one port each (the PMD's port id travels in
// the mbuf).
unsigned Worker::redirect_poll() {
    unsigned total = 0;
    const unsigned n = ctx_.redirect->workers();
    for (unsigned from = 0; from < n; ++from) {
        if (from == ctx_.id) continue;
        rte_mbuf* pkts[kMaxBurst];
        const unsigned got = rte_ring_sc_dequeue_burst(ctx_.redirect->ring(from, ctx_.id),
                                                       reinterpret_cast<void**>(pkts),
                                                       ctx_.cfg.rx_burst, nullptr);
        unsigned start = 0;
        while (start < got) {
            const uint16_t pid = pkts[start]->port;
            unsigned end = start + 1;
            while (end < got && pkts[end]->port == pid) ++end;
            const uint8_t port = pid < kMaxPortIds ? port_index_[pid] : 0;
            burst(port, pkts + start, static_cast<uint16_t>(end - start), true);
            start = end;
        }
        total += got;
    }
    return total;
}

void Worker::redirect_stage(unsigned owner, uint8_t port, rte_mbuf* m, bool tunneled) {
    m->port = ctx_.stack.view->ports[port].port_id;
    if (tunneled) m->ol_flags |= stack::tunneled_mbuf_flag();  // its outer header is gone
    rte_mbuf** buf = rd_buf_[owner];
    uint16_t& count = rd_count_[owner];
    buf[count++] = m;
    if (count == kMaxBurst) redirect_flush();
}

void Worker::redirect_flush() {
    if (!ctx_.redirect) return;
    const unsigned n = ctx_.redirect->workers();
    for (unsigned to = 0; to < n; ++to) {
        const uint16_t count = rd_count_[to];
        if (!count) continue;
        rd_count_[to] = 0;
        rte_ring* ring = ctx_.redirect->ring(ctx_.id, to);
        unsigned sent = rte_ring_sp_enqueue_burst(
            ring, reinterpret_cast<void* const*>(rd_buf_[to]), count, nullptr);
        if (sent < count && (cpu_peers_ >> to & 1u)) {
            // The owner shares this CPU, so it drains nothing while this worker runs: a
            // system call on this rare path is cheaper than the drops and TCP's recovery.
            sched_yield();
            ctx_.stack.counters.inc(Counter::redirect_yield);
            sent += rte_ring_sp_enqueue_burst(
                ring, reinterpret_cast<void* const*>(rd_buf_[to] + sent), count - sent, nullptr);
        }
        ctx_.stack.counters.inc(Counter::redirect_out, sent);
        for (unsigned i = sent; i < count; ++i)
            stack::drop(ctx_.stack, rd_buf_[to][i], Counter::drop_redirect_full);
    }
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
    return command_run(kind, nullptr, timeout_ms, use);
}

Result<void> Worker::set_capture(std::shared_ptr<stack::CaptureTap> tap, uint64_t timeout_ms) {
    return command_run(Command::set_capture, nullptr, timeout_ms, [](const Command&) {},
                       std::move(tap));
}

Result<uint64_t> Worker::flush_dest(std::shared_ptr<const Dest> dest, uint64_t timeout_ms) {
    uint64_t flushed = 0;
    auto r = command_run(Command::flush_dest, std::move(dest), timeout_ms,
                         [&](const Command& cmd) { flushed = cmd.flushed; });
    if (!r) return make_error(r.error());
    return flushed;
}

Result<Worker::SyncCounts> Worker::import_conns(std::vector<SyncRecord> records, uint64_t timeout_ms) {
    if (commands_.state() == CommandChannel::Posted)
        return make_error("worker " + std::to_string(ctx_.cfg.id) +
                          " did not answer (still busy with an earlier command)");
    commands_.command().records = std::move(records);  // Free or Answered: ours
    SyncCounts n;
    auto r = command_run(Command::import_conns, nullptr, timeout_ms, [&](const Command& cmd) {
        n.imported = cmd.imported;
        n.failed = cmd.import_failed;
    });
    if (!r) return make_error(r.error());
    return n;
}

Result<void> Worker::export_conns(uint64_t timeout_ms,
                                  const std::function<void(const std::vector<SyncRecord>&, bool)>& use) {
    return command_run(Command::export_conns, nullptr, timeout_ms,
                       [&](const Command& cmd) { use(cmd.records, cmd.truncated); });
}

Result<void> Worker::command_run(Command::Kind kind, std::shared_ptr<const Dest> dest,
                                 uint64_t timeout_ms,
                                 const std::function<void(const Command&)>& use,
                                 std::shared_ptr<stack::CaptureTap> tap) {
    using Clock = std::chrono::steady_clock;
    const std::string late = "worker " + std::to_string(ctx_.cfg.id) + " did not answer";
    if (commands_.state() == CommandChannel::Posted)  // an earlier command timed out
        return make_error(late + " (still busy with an earlier command)");
    Command& cmd = commands_.command();  // Free, or Answered late: ours again
    cmd.kind = kind;
    cmd.dest = std::move(dest);
    cmd.tap = std::move(tap);
    cmd.flushed = 0;
    cmd.cursor = 0;
    cmd.truncated = false;
    cmd.conns.clear();
    cmd.neighbours.clear();
    cmd.imported = cmd.import_failed = 0;
    if (kind != Command::import_conns) cmd.records.clear();
    if (kind == Command::export_conns) cmd.records.reserve(ctx_.conns->in_use() + 1024);
    if (kind == Command::dump_conns)
        cmd.conns.reserve(ctx_.conns->capacity());
    else if (kind == Command::dump_neighbours)
        cmd.neighbours.reserve(ctx_.stack.neigh->slot_count());
    commands_.post();
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (commands_.state() != CommandChannel::Answered) {
        if (!polling_.load() && commands_.claim_inline()) {
            if (!polling_.load()) {
                while (!serve_chunk(cmd, ctx_)) {
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
    cmd.records = {};
    cmd.dest.reset();
    cmd.tap.reset();
    commands_.release();
    return {};
}

void Worker::run(const std::atomic<bool>& stop, PollMode mode) {
    Polling polling(*this);
    unsigned idle = 0;
    uint64_t idle_since_ms = 0;
    while (!stop.load(std::memory_order_relaxed)) {
        const unsigned received = poll_once();
        std::atomic<uint64_t>& polls = received ? polls_busy_ : polls_idle_;
        polls.store(polls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        if (received || mode == PollMode::Busy || commands_.pending()) {
            idle = 0;
            continue;
        }
        // Adaptive back-off so an idle director on a shared machine does not burn its core:
        // spin briefly, then sleep 10..100 us, 1 ms after kDeepIdleMs without a frame and
        // 2 ms after kDeeperIdleMs. An idle poll and its wake-up cost 15-60 us on a VM (more
        // with af_packet's TAP reads, and under CPU contention): 100 us sleeps kept an idle
        // xvsd at ~11% of a core. The first frame after a lull waits up to that sleep in the
        // RX ring; from it on the loop spins again.
        if (++idle == 1) idle_since_ms = ctx_.stack.now_ms;
        if (idle < 256) {
            rte_pause();
        } else {
            const uint64_t idle_ms = ctx_.stack.now_ms - idle_since_ms;
            unsigned us = std::min(100u, 10u * ((idle - 256) / 64 + 1));
            if (idle_ms >= kDeeperIdleMs)
                us = 2000;
            else if (idle_ms >= kDeepIdleMs)
                us = 1000;
            std::this_thread::sleep_for(std::chrono::microseconds(us));
        }
    }
}

bool Worker::admit_source(const ServiceView& view, const net::InetAddr& client) {
    return lb::admit_source(ctx_, view, client);
}

bool Worker::admit(const ServiceView& view, const net::InetAddr& client) {
    return lb::admit(ctx_, view, client);
}

// The conn key of a classified packet; false (counted, freed) for an ICMP error that quotes
// nothing of ours.
template <class Af>
bool Worker::key_of(LbPacket<Af>& lp) {
    if (lp.related) {
        // An ICMP error: the key of the conn is the quoted packet's tuple, reversed (for an
        // error about a NatTun tunnel packet, the inner packet's: its quote is unwrapped first).
        nat_tunnel_icmp_unwrap(ctx_, lp);
        if (icmp_related_key(lp, lp.key)) return true;
        if (!lp.local) {  // perhaps about the kernel's traffic (exception path)
            stack::exception_or_drop(ctx_.stack, lp.port, lp.pkt, Counter::drop_icmp_unrelated);
            return false;
        }
        stack::drop(ctx_.stack, lp.pkt, Counter::drop_icmp_unrelated);
        return false;
    }
    // ICMP echo (SNAT ping): the identifier stands in both port positions (lb/xmit/snat.h).
    const bool echo = lp.proto == Af::icmp_proto;
    const uint16_t sport = net::load_wire16(lp.l4 + (echo ? 4 : 0));
    const uint16_t dport = echo ? sport : net::load_wire16(lp.l4 + 2);
    lp.key = conn_key(lp.proto, Af::src(*lp.ip), Af::dst(*lp.ip), sport, dport);
    return true;
}

template <class Af>
unsigned Worker::owner_of(const LbPacket<Af>& lp) const {
    const unsigned n = ctx_.redirect->workers();
    const unsigned self = ctx_.id;
    // RS -> client of a NAT (or NAT-over-tunnel) conn: no port of ours in it.
    if (lp.tunneled || !lp.local) {
        const int o = ctx_.redirect->owners().owner(lp.key);
        return o < 0 ? self : static_cast<unsigned>(o);
    }
    switch (lp.kind) {
        case stack::AddrKind::Lip:  // FULLNAT return: the local port's share
            return net::ntoh16(lp.key.dport) % n;
        case stack::AddrKind::Director:  // a SNAT WAN address's port (or echo identifier)
            return ctx_.snap->matches.empty() ? self : net::ntoh16(lp.key.dport) % n;
        case stack::AddrKind::Vip:
            break;
    }
    // A client flow stays where RSS put it, but a persistent service's conns of one client
    // must meet its one template: they live on the worker its masked address hashes to.
    if (lp.related) return self;
    uint32_t mark = 0;
    const ServiceView* view = vip_service(*ctx_.snap, lp.key, lp.proto, &mark);
    if (!view || !view->persist_s) return self;
    const ConnKey tkey = persist_key(*view, lp.key, mark);
    return static_cast<unsigned>(mix64(tkey.saddr.fold()) % n);
}

template <class Af>
void Worker::handle_all(LbPacket<Af>* lbp, unsigned n) {
    const ConnKey* keys[kMaxBurst];
    ConnRef* refs = refs_;
    if (n == 0 || n > kMaxBurst) return;  // (never: tells GCC keys[0..n) is written)
    for (unsigned i = 0; i < n; ++i) keys[i] = &lbp[i].key;
    ctx_.conns->lookup_bulk(keys, n, refs);
    if (!ctx_.redirect || redirected_) {
        lb_handle_burst(ctx_, lbp, refs, n);
    } else {
        for (unsigned i = 0; i < n; ++i) {
            if (!refs[i].conn) {
                const unsigned owner = owner_of(lbp[i]);
                if (owner != ctx_.id) {
                    redirect_stage(owner, lbp[i].port, lbp[i].pkt, lbp[i].tunneled);
                    continue;
                }
            }
            lb_handle(ctx_, lbp[i], refs[i]);
        }
    }
    // New conns' outbound tuples, queued by conn_create: their buckets were fetched meanwhile.
    // A reply to a packet of this burst can only be received after this function returns.
    if (ctx_.conns->unsettled()) conn_settle(ctx_);
}

void Worker::process_burst(uint8_t port, rte_mbuf** pkts, uint16_t count) {
    if (stack::capture_wants(ctx_.stack.capture, stack::CapturePoint::Rx, port)) [[unlikely]]
        for (uint16_t i = 0; i < count; ++i)
            ctx_.stack.capture->offer(stack::CapturePoint::Rx, port, Counter::Count, pkts[i]);
    burst(port, pkts, count, false);
    redirect_flush();
}

void Worker::burst(uint8_t port, rte_mbuf** pkts, uint16_t count, bool redirected) {
    while (count > kMaxBurst) {
        burst(port, pkts, kMaxBurst, redirected);
        pkts += kMaxBurst;
        count -= kMaxBurst;
    }
    redirected_ = redirected;
    ctx_.stack.counters.inc(redirected ? Counter::redirect_in : Counter::rx_packets, count);
    const stack::PortView& pv = ctx_.stack.view->ports[port];
    const uint32_t max_frame = pv.max_rx_frame;

    // Pass 1 sorts the burst by family (each keeps its order); pass 2 handles IPv4, then IPv6.
    unsigned n4 = 0, n6 = 0;
    for (uint16_t i = 0; i < count; ++i) {
        if (i + 4 < count) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void*));
        LbPacket4& lp4 = burst_[n4];
        LbPacket6& lp6 = burst6_[n6];
        switch (stack::eth_input(ctx_.stack, port, pv, max_frame, pkts[i], lp4, lp6)) {
            case 4:
                n4 += key_of(lp4);
                break;
            case 6:
                n6 += key_of(lp6);
                break;
            default:
                break;
        }
    }
    handle_all(burst_, n4);
    handle_all(burst6_, n6);
}

}  // namespace xvs::lb
