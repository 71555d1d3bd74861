// Session sync on the worker (lb/sync.h): the report ring, which conns are synced, and the
// import of a peer's conn as if this worker had created it (refs, dest stats, timer), without
// taking a local port: the conn keeps the peer's local address and port.
#include "lb/sync.h"

#include <algorithm>
#include <bit>

#include "lb/conn_ops.h"
#include "lb/persist.h"
#include "lb/redirect.h"
#include "lb/service.h"
#include "lb/worker_ctx.h"
#include "net/headers.h"

namespace xvs::lb {

using stack::Counter;

SyncRing::SyncRing(uint32_t size)
    : slots_(std::bit_ceil(std::max<uint32_t>(size, 2))),
      mask_(static_cast<uint32_t>(slots_.size() - 1)) {}

bool SyncRing::push(const SyncRecord& r) {
    const uint32_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) > mask_) return false;
    slots_[head & mask_] = r;
    head_.store(head + 1, std::memory_order_release);
    return true;
}

uint32_t SyncRing::pop(SyncRecord* out, uint32_t max) {
    const uint32_t tail = tail_.load(std::memory_order_relaxed);
    const uint32_t n = std::min(max, head_.load(std::memory_order_acquire) - tail);
    for (uint32_t i = 0; i < n; ++i) out[i] = slots_[(tail + i) & mask_];
    tail_.store(tail + n, std::memory_order_release);
    return n;
}

bool sync_wanted(const Conn& c) {
    if (conn_is_template(c) || (c.flags & (kConnOps | kConnSpWaiting))) return false;
    if (c.mode == FwdMode::NatTun || c.mode == FwdMode::Snat) return false;  // see sync_import
    if (c.proto != net::kIpProtoTcp) return true;
    switch (c.state) {
        case TcpState::Established:
        case TcpState::FinWait:
        case TcpState::TimeWait:
        case TcpState::Close:
        case TcpState::CloseWait:
        case TcpState::LastAck:
            return true;
        default:
            return false;
    }
}

SyncRecord sync_record_of(WorkerCtx& w, const Conn& c) {
    SyncRecord r;
    r.caddr = c.caddr();
    r.vaddr = c.vaddr();
    r.laddr_ip = c.laddr_ip();
    r.daddr = c.daddr();
    r.cport = c.cport;
    r.vport = c.vport;
    r.lport = c.lport;
    r.dport = c.dport;
    r.proto = c.proto;
    r.state = c.state;
    r.mode = c.mode;
    r.flags = c.flags & kSyncConnFlags;
    r.timeout_s = c.proto == net::kIpProtoTcp ? w.snap->timeouts.of(c.state)
                  : c.proto == net::kIpProtoUdp ? w.snap->timeouts.udp
                                                : w.snap->timeouts.icmp;
    const uint32_t slot = w.conns->index_of(&c);
    r.feat = w.feat[slot];
    if (c.flags & kConnSynProxy) r.sp = w.sp.slots[slot].seq();
    return r;
}

void sync_report(WorkerCtx& w, const Conn& c) {
    if (!w.sync_ring || !sync_wanted(c)) return;
    if (w.sync_ring->push(sync_record_of(w, c)))
        w.stack.counters.inc(Counter::sync_reported);
    else
        w.stack.counters.inc(Counter::sync_ring_full);
}

unsigned sync_owner(const SyncRecord& rec, unsigned nworkers) {
    if (nworkers <= 1) return 0;
    if (rec.mode == FwdMode::FullNat) return net::ntoh16(rec.lport) % nworkers;
    return 0;
}

bool sync_import(WorkerCtx& w, const SyncRecord& r) {
    auto fail = [&] {
        w.stack.counters.inc(Counter::sync_import_failed);
        return false;
    };
    // NatTun and SNAT conns hold a LocalAddr their xmit reads; a peer's is not ours.
    if (static_cast<unsigned>(r.mode) >= kFwdModeCount || r.mode == FwdMode::NatTun ||
        r.mode == FwdMode::Snat || r.proto == 0 || r.proto == kProtoTemplate ||
        (r.proto == net::kIpProtoTcp && r.state >= TcpState::Count))
        return fail();
    const uint64_t now = w.stack.now_ms;
    // The master refreshes a conn when its own timer finds traffic moved the deadline, that
    // is at most once per timeout: half a timeout more keeps the copy alive in between.
    const uint32_t own = r.proto == net::kIpProtoTcp ? w.snap->timeouts.of(r.state)
                         : r.proto == net::kIpProtoUdp ? w.snap->timeouts.udp
                                                       : w.snap->timeouts.icmp;
    const uint64_t timeout_s = std::min<uint64_t>(std::max(r.timeout_s, own), kMaxTimeoutS);
    const uint64_t deadline = now + timeout_s * 1500;
    const ConnKey in = conn_key(r.proto, r.caddr, r.vaddr, r.cport, r.vport);
    if (const ConnRef ref = w.conns->lookup(in); ref.conn) {
        Conn* c = ref.conn;
        // The tuple is taken by another conn (another dest): the local one stands.
        if (conn_is_template(*c) || ref.dir != ConnDir::In || c->daddr() != r.daddr ||
            c->dport != r.dport)
            return fail();
        const bool new_state = c->proto == net::kIpProtoTcp && c->state != r.state;
        if (new_state) conn_set_state(w, c, r.state, false);
        if (deadline > c->expires(now)) {
            c->set_expires(deadline);  // later: the timer re-arms lazily
        } else if (new_state) {
            // A closing state's shorter timeout: the timer must fire earlier.
            c->set_expires(deadline);
            w.timers.arm(&c->timer, deadline);
        }
        w.stack.counters.inc(Counter::sync_imported);
        return true;
    }
    uint32_t mark = 0;
    const ServiceView* view = vip_service(*w.snap, in, r.proto, &mark);
    if (!view) return fail();
    Dest* dest = nullptr;
    for (Dest* d : view->plan.dests)
        if (d->addr == r.daddr && (d->port == 0 || net::hton16(d->port) == r.dport)) dest = d;
    if (!dest) return fail();
    Conn* c = w.conns->alloc(Conn::needs_wide(r.caddr, r.vaddr, r.laddr_ip, r.daddr));
    if (!c) return fail();
    const unsigned wid = w.id;
    c->dest = dest;
    w.laddr_of(c) = nullptr;  // the peer's local port: not from a pool of ours
    c->mode = r.mode;
    c->proto = r.proto;
    c->set_addrs(r.caddr, r.vaddr, r.laddr_ip, r.daddr);
    c->cport = r.cport;
    c->vport = r.vport;
    c->lport = r.lport;
    c->dport = r.dport;
    c->flags = r.flags & kSyncConnFlags;
    c->state = TcpState::None;
    c->resched = ConnResched::None;
    if (!w.conns->insert(c)) {
        w.conns->release(c);
        return fail();
    }
    if (w.redirect && (c->mode == FwdMode::Nat) &&
        !w.redirect->owners().insert(
            conn_key(c->proto, c->daddr(), c->laddr_ip(), c->dport, c->lport), wid)) {
        w.conns->remove(c);
        w.conns->release(c);
        return fail();
    }
    auto bump = [](std::atomic<uint32_t>& a) {  // single writer: no locked RMW needed
        a.store(a.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    };
    bump(c->svc()->workers[wid].refs);
    DestWorkerStats& ds = dest->stats[wid];
    ++ds.refs;
    ++ds.inactive;  // NONE is inactive; conn_set_state moves it
    const uint32_t slot = w.conns->index_of(c);
    w.feat[slot] = r.feat;
    if (c->flags & kConnSynProxy) {
        SpSlot& s = w.sp.slots[slot];
        s.seq_delta = r.sp.seq_delta;
        s.ts_delta = r.sp.ts_delta;
        s.rs_wscale = r.sp.rs_wscale;
        s.our_wscale = r.sp.our_wscale;
        s.pending = 0;
    }
    conn_set_state(w, c, c->proto == net::kIpProtoTcp ? r.state : TcpState::None, false);
    c->set_expires(deadline);
    w.timers.arm(&c->timer, deadline);
    w.stack.counters.inc(Counter::sync_imported);
    return true;
}

}  // namespace xvs::lb
