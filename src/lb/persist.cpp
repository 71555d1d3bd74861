// Persistence templates on a worker, see lb/persist.h.
#include "lb/persist.h"

#include "lb/conn_table.h"
#include "lb/service.h"
#include "lb/snapshot.h"
#include "lb/worker_ctx.h"

namespace xvs::lb {

namespace {

void refs_bump(std::atomic<uint32_t>& a, int d) {  // single writer: no locked RMW needed
    a.store(a.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

void persist_free(WorkerCtx& w, Conn* t) {
    PersistSlot& ps = w.persist_of(t);
    if (!ps.unhashed) w.conns->remove(t);
    w.timers.cancel(&t->timer);
    refs_bump(t->svc()->workers[w.id].refs, -1);
    DestWorkerStats& ds = t->dest->stats[w.id];
    --ds.persist;
    --ds.refs;
    ps = PersistSlot{};
    w.conns->release(t);
}

}  // namespace

ConnKey persist_key(const ServiceView& view, const ConnKey& flow, uint32_t mark) {
    const net::InetAddr& m = flow.saddr.is_v4() ? view.persist_mask4 : view.persist_mask6;
    const net::InetAddr client =
        net::InetAddr::from_words(flow.saddr.word(0) & m.word(0), flow.saddr.word(1) & m.word(1));
    // A mark stands where the VIP would, in the flow's family, as IPVS puts it there (the mark
    // in the address's first 32 bits; ipvsadm -L -c shows it): 0.0.0.N for the IPv4 service,
    // 0:N:: for the IPv6 one, so the two services of a mark never share a template, even for
    // a client an IPv6 packet gives as ::ffff:a.b.c.d. Both lie in reserved blocks (0.0.0.0/8,
    // ::/8) where no VIP belongs; a template found for another service is expired anyway
    // (persist_lookup).
    const net::InetAddr vaddr = !mark ? flow.daddr
                                : flow.daddr.is_v4()
                                    ? net::InetAddr::v4(net::hton32(mark))
                                    : net::InetAddr::from_words(uint64_t{net::hton32(mark)}, 0);
    const uint16_t vport = (mark || view.svc->key.port == 0) ? uint16_t{0} : flow.dport;
    return conn_key(kProtoTemplate, client, vaddr, 0, vport);
}

Conn* persist_lookup(WorkerCtx& w, const ServiceView& view, const ConnKey& key) {
    Conn* t = w.conns->lookup(key).conn;
    if (!t) return nullptr;
    const Dest* d = t->dest;
    if (t->svc() != view.svc || d->removed.load(std::memory_order_relaxed) ||
        (w.snap->expire_quiescent_template && d->weight.load(std::memory_order_relaxed) == 0)) {
        persist_expire(w, t);
        return nullptr;
    }
    // Used again: a full timeout from now (a changed timeout applies from this use on).
    PersistSlot& ps = w.persist_of(t);
    ps.timeout_s = view.persist_s;
    t->set_expires(w.stack.now_ms + uint64_t(view.persist_s) * 1000);
    return t;
}

Conn* persist_create(WorkerCtx& w, const ServiceView& view, const ConnKey& key, Dest* dest,
                     stack::Counter* why) {
    Conn* t = w.conns->alloc(Conn::needs_wide(key.saddr, key.daddr, net::InetAddr{}, dest->addr));
    if (!t) {
        *why = stack::Counter::drop_conn_pool_full;
        return nullptr;
    }
    t->proto = kProtoTemplate;
    t->tpl_proto = view.svc->key.proto;
    t->dest = dest;
    t->mode = dest->fwd.load(std::memory_order_relaxed);
    t->set_addrs(key.saddr, key.daddr, net::InetAddr{}, dest->addr);  // no local address
    t->cport = 0;
    t->vport = key.dport;
    t->dport = net::hton16(dest->port);
    t->state = TcpState::None;
    w.laddr_of(t) = nullptr;
    if (!w.conns->insert(t)) {
        w.conns->release(t);
        *why = stack::Counter::drop_conn_table_full;
        return nullptr;
    }
    w.persist_of(t) = PersistSlot{0, 0, view.persist_s, false};
    refs_bump(view.svc->workers[w.id].refs, 1);
    DestWorkerStats& ds = dest->stats[w.id];
    ++ds.refs;
    ++ds.persist;
    t->set_expires(w.stack.now_ms + uint64_t(view.persist_s) * 1000);
    w.timers.arm(&t->timer, t->expires(w.stack.now_ms));
    return t;
}

void persist_attach(WorkerCtx& w, Conn* conn, Conn* tpl) {
    w.persist_of(conn).tpl = w.conns->index_of(tpl) + 1;
    conn->flags |= kConnPersist;
    ++w.persist_of(tpl).n_control;
}

void persist_detach(WorkerCtx& w, Conn* conn) {
    PersistSlot& cs = w.persist_of(conn);
    Conn* t = w.conns->live(cs.tpl - 1);  // a template outlives its controlled conns
    cs.tpl = 0;
    PersistSlot& ts = w.persist_of(t);
    if (--ts.n_control != 0) return;
    if (ts.unhashed) return persist_free(w, t);
    // The last conn went: the client keeps its dest for a timeout from now (or longer, if
    // the template was used later than that).
    const uint64_t now = w.stack.now_ms;
    const uint64_t until = now + uint64_t(ts.timeout_s) * 1000;
    if (t->expires(now) < until) t->set_expires(until);
}

void persist_expire(WorkerCtx& w, Conn* t) {
    PersistSlot& ps = w.persist_of(t);
    if (ps.n_control == 0) return persist_free(w, t);
    // Conns still point at it: out of the table (a new template may take its key), freed by
    // the last of them (persist_detach).
    if (!ps.unhashed) {
        w.conns->remove(t);
        ps.unhashed = true;
    }
}

void persist_timer(WorkerCtx& w, Conn* t, uint64_t now) {
    PersistSlot& ps = w.persist_of(t);
    if (ps.n_control != 0) {
        // In use: check again a timeout later (IPVS re-arms likewise); the last conn to go
        // sets the final deadline (persist_detach).
        t->set_expires(now + uint64_t(ps.timeout_s) * 1000);
        w.timers.arm(&t->timer, t->expires(now));
        return;
    }
    const uint64_t expires = t->expires(now);
    if (expires > now)
        w.timers.arm(&t->timer, expires);
    else
        persist_free(w, t);
}

}  // namespace xvs::lb
