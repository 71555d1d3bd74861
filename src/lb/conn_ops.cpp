// Connection life cycle on a worker, see lb/conn_ops.h.
#include "lb/conn_ops.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <span>

#include "lb/conserve/proxy_protocol.h"
#include "lb/laddr.h"
#include "lb/passive.h"
#include "lb/persist.h"
#include "lb/redirect.h"
#include "lb/service.h"
#include "lb/snapshot.h"
#include "lb/sync.h"
#include "lb/synproxy/handshake.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/snat.h"
#include "lb/xmit/xmit.h"
#include "net/sip.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

using stack::drop;

namespace {
// Conns whose return traffic the owner table routes (lb/redirect.h): NAT's, over a tunnel or
// not; FULLNAT and SNAT return to a port of ours, DR and TUN do not return.
bool conn_owner_recorded(const Conn& c) {
    return c.mode == FwdMode::Nat || c.mode == FwdMode::NatTun;
}
ConnKey conn_out_key(const Conn& c) {
    return conn_key(c.proto, c.daddr(), c.laddr_ip(), c.dport, c.lport);
}
// A UDP datagram's payload as far as the first mbuf segment holds it (what the per-flow
// payload readers look at: QUIC connection ID, SIP Call-ID); empty when the segment ends
// before the payload.
template <class Af>
std::span<const uint8_t> udp_payload_first_seg(const LbPacket<Af>& lp) {
    const uint8_t* start = rte_pktmbuf_mtod(lp.pkt, const uint8_t*);
    const size_t in_seg = rte_pktmbuf_data_len(lp.pkt);
    const size_t l4_at = static_cast<size_t>(lp.l4 - start);
    const size_t hdr = sizeof(net::UdpHdr);
    if (l4_at + hdr > in_seg || lp.l4_len <= hdr) return {};
    return {lp.l4 + hdr, std::min<size_t>(lp.l4_len - hdr, in_seg - l4_at - hdr)};
}
// The scheduler's pick with `refused` passed over (DestWorkerStats::sched_skip, set around
// this one pick by this worker: no other reader). A scheduler that then finds nothing (sh or
// mh without fallback, or no other dest usable) picks as if nothing had been refused.
// `refused` is touched only when it is in the plan, which keeps it alive.
Dest* pick_passing_over(const ServiceView& view, SchedCursor& cursor, unsigned wid,
                        const FlowKey& flow, Dest* refused) {
    const auto& dests = view.plan.dests;
    if (std::find(dests.begin(), dests.end(), refused) != dests.end()) {
        DestWorkerStats& skip = refused->stats[wid];
        skip.sched_skip = true;
        Dest* dest = view.sched->pick(view.plan, cursor, wid, flow);
        skip.sched_skip = false;
        if (dest) return dest;
    }
    return view.sched->pick(view.plan, cursor, wid, flow);
}

}  // namespace

namespace {
// The round-robin cursor over a service's n local addresses: its position, and the cursor
// moved past it. A compare, not a modulo: a 64-bit division on every new conn is tens of
// cycles of latency that the conn's next steps wait for. A cursor left over from a larger
// set (a reload removed addresses) is reduced once.
size_t laddr_next(uint32_t& cursor, size_t n) {
    const size_t i = cursor < n ? cursor : cursor % n;
    cursor = static_cast<uint32_t>(i + 1 == n ? 0 : i + 1);
    return i;
}

// vip_service's first step: a firewall-mark rule's service, when one matches.
const ServiceView* fwmark_service(const Snapshot& snap, const ConnKey& key, uint8_t proto,
                                  uint32_t* mark) {
    if (!snap.fwmark_rules.empty() && (proto == net::kIpProtoTcp || proto == net::kIpProtoUdp)) {
        if (const FwmarkRule* r =
                fwmark_classify(snap.fwmark_rules, proto, key.daddr, net::ntoh16(key.dport))) {
            *mark = r->mark;
            return r->view;
        }
    }
    return nullptr;
}
}  // namespace

const ServiceView* vip_service(const Snapshot& snap, const ConnKey& key, uint8_t proto,
                               uint32_t* mark) {
    if (const ServiceView* v = fwmark_service(snap, key, proto, mark)) return v;
    if (const ServiceView* v = snap.service(proto, key.daddr, key.dport)) return v;
    return snap.has_port0 ? snap.service(proto, key.daddr, 0) : nullptr;
}

const ServiceView* vip_service(const Snapshot& snap, const ConnKey& key, uint8_t proto,
                               uint32_t* mark, const ServiceView* exact) {
    if (const ServiceView* v = fwmark_service(snap, key, proto, mark)) return v;
    if (exact) return exact;
    return snap.has_port0 ? snap.service(proto, key.daddr, 0) : nullptr;
}

template <class Af>
Conn* conn_create(WorkerCtx& w, LbPacket<Af>& lp, const ServiceView& service, uint32_t mark,
                  const ConnRef& miss, Dest* refused, uint64_t expires_ms) {
    const unsigned wid = w.id;
    const ServiceView* view = &service;
    if (!admit(w, *view, lp.key.saddr, lp.pkt)) return nullptr;  // dropped by admit
    Service* svc = view->svc;
    FlowKey flow{lp.key.saddr, lp.key.daddr, lp.key.sport, lp.key.dport, lp.proto, w.stack.now_ms};
    if ((view->flags & kSvcFlagHashQid) && lp.proto == net::kIpProtoUdp) {
        // conhash by QUIC connection ID: the DCID in the first segment's part of the payload.
        if (const auto payload = udp_payload_first_seg(lp); !payload.empty())
            flow.cid = net::quic_dcid(payload.data(), payload.size(), view->quic_cid_len);
    }
    // A persistent service: the client's template names the dest; the scheduler only picks
    // for a client without one (and a template is made for it).
    Conn* tpl = nullptr;
    ConnKey tkey;
    if (view->persist_s) {
        tkey = persist_key(*view, lp.key, mark);
        if ((view->flags & kSvcFlagPeSip) && lp.proto == net::kIpProtoUdp) {
            // The Call-ID in the first segment's part of the payload (lb/service.h).
            if (const auto payload = udp_payload_first_seg(lp); !payload.empty())
                if (auto id = net::sip_call_id(payload.data(), payload.size()))
                    tkey.saddr = net::sip_call_key(*id);
        }
        tpl = persist_lookup(w, *view, tkey);
    }
    Dest* dest = nullptr;
    if (tpl) {
        dest = tpl->dest;
    } else if (refused) {
        dest = pick_passing_over(*view, svc->workers[wid].cursor, wid, flow, refused);
    } else {
        dest = view->sched->pick(view->plan, svc->workers[wid].cursor, wid, flow);
    }
    if (!dest) {
        drop(w.stack, lp.pkt, sched_fail_reason(view->plan));
        return nullptr;
    }
    if (view->persist_s && !tpl) {
        stack::Counter why = Counter::drop_conn_pool_full;
        if (!(tpl = persist_create(w, *view, tkey, dest, &why))) {
            drop(w.stack, lp.pkt, why);
            return nullptr;
        }
    }
    // The xmit is bound here, once, from the dest's mode (IPVS ip_vs_bind_xmit).
    const FwdMode mode = dest->fwd.load(std::memory_order_relaxed);
    const XmitTraits& traits = xmit_traits(mode);
    if (!xmit_of<Af>(mode).in) {
        drop(w.stack, lp.pkt, Counter::drop_fwd_mode_unsupported);
        return nullptr;
    }
    LocalAddr* laddr = nullptr;
    uint16_t lport = 0;
    if (mode == FwdMode::Snat) {
        // The dest is a WAN address: its port pool is view->wan at the dest's index.
        for (size_t i = 0; i < view->plan.dests.size(); ++i) {
            if (view->plan.dests[i] != dest) continue;
            if (auto p = view->wan[i]->workers[wid].pool->alloc()) {
                laddr = view->wan[i];
                lport = *p;
            }
            break;
        }
        if (!laddr) {
            drop(w.stack, lp.pkt, Counter::drop_laddr_exhausted);
            return nullptr;
        }
    } else if (mode == FwdMode::NatTun) {
        // The local address is only the outer source of the tunnel (no port taken): the
        // reply comes back to it in a tunnel, keyed by its inner RS -> client tuple.
        const size_t nl = view->laddrs.size();
        if (nl == 0) {
            drop(w.stack, lp.pkt, Counter::drop_no_laddr);
            return nullptr;
        }
        uint32_t& cursor = svc->workers[wid].laddr_cursor;
        for (size_t tries = 0; tries < nl && !laddr; ++tries) {
            LocalAddr* cand = view->laddrs[laddr_next(cursor, nl)];
            if (cand->addr.is_v4() == lp.key.saddr.is_v4()) laddr = cand;
        }
        if (!laddr) {
            drop(w.stack, lp.pkt, Counter::drop_no_laddr);
            return nullptr;
        }
    } else if (traits.needs_laddr) {
        const size_t nl = view->laddrs.size();
        if (nl == 0) {
            drop(w.stack, lp.pkt, Counter::drop_no_laddr);
            return nullptr;
        }
        // Round-robin over the service's local addresses; fall through to the next when one
        // is out of ports.
        uint32_t& cursor = svc->workers[wid].laddr_cursor;
        for (size_t tries = 0; tries < nl && !laddr; ++tries) {
            LocalAddr* cand = view->laddrs[laddr_next(cursor, nl)];
            if (auto p = cand->workers[wid].pool->alloc()) {
                laddr = cand;
                lport = *p;
            }
        }
        if (!laddr) {
            drop(w.stack, lp.pkt, Counter::drop_laddr_exhausted);
            return nullptr;
        }
    }
    auto free_lport = [&] {
        if (laddr && mode != FwdMode::NatTun) laddr->workers[wid].pool->free(lport);
    };
    // The outbound tuple daddr:dport -> laddr:lport (Conn's fields, in network order).
    net::InetAddr out_laddr = lp.key.saddr;
    uint16_t out_lport = lp.key.sport;
    if (laddr && mode != FwdMode::NatTun) {
        out_laddr = laddr->addr;
        out_lport = net::hton16(lport);
    }  // else no local address (or NatTun's, outer only): the tuple ends at the client itself
    net::InetAddr out_daddr = dest->addr;
    // Port 0: the packet's own (firewall-mark and port-0 services, as IPVS).
    uint16_t out_dport = dest->port ? net::hton16(dest->port) : lp.key.dport;
    if (mode == FwdMode::Snat) {
        // The flow goes on to where the inside host sent it; the dest is the WAN address.
        // ICMP echo: the reply carries the mapped identifier in both key positions.
        out_daddr = lp.key.daddr;
        out_dport = lp.proto == Af::icmp_proto ? out_lport : lp.key.dport;
    }
    // Its buckets are a cache miss in a large table: fetched from here, while the conn is
    // filled in and its inbound tuple inserted (whose buckets lookup_bulk fetched).
    ConnTable::Hash out_hash{};
    if (traits.inserts_out_tuple)
        out_hash = w.conns->hash_prefetch(conn_key(lp.proto, out_daddr, out_laddr, out_dport, out_lport));
    Conn* c = w.conns->alloc(Conn::needs_wide(lp.key.saddr, lp.key.daddr, out_laddr, out_daddr));
    if (!c) {
        free_lport();
        drop(w.stack, lp.pkt, Counter::drop_conn_pool_full);
        return nullptr;
    }
    c->dest = dest;
    w.laddr_of(c) = laddr;
    c->mode = mode;
    c->proto = lp.proto;
    c->set_addrs(lp.key.saddr, lp.key.daddr, out_laddr, out_daddr);
    c->cport = lp.key.sport;
    c->vport = lp.key.dport;
    c->lport = out_lport;
    c->dport = out_dport;
    if ((mode == FwdMode::Tun || mode == FwdMode::NatTun) &&
        dest->tun_type.load(std::memory_order_relaxed) == TunType::Gue)
        c->flags |= kConnTunGue;  // the GUE port is the dest's, read per packet as IPVS does
    if (mode == FwdMode::NatTun) w.feat_of(c).nattun_mtu = 0;  // no path MTU learnt yet
    if (mode != FwdMode::Snat) {
        // daddr is the dest's address, so its route and neighbour are those the previous
        // conn to the dest found (DestWorkerStats::nh, generation-checked like any cache).
        c->nh = dest->stats[wid].nh;
    }
    if (!w.conns->insert(c, miss, traits.inserts_out_tuple ? &out_hash : nullptr)) {
        w.conns->release(c);
        free_lport();
        drop(w.stack, lp.pkt, Counter::drop_conn_table_full);
        return nullptr;
    }
    // Several workers: NAT's return tuple names no port of ours, so its owner is recorded
    // (lb/redirect.h) before the first packet can make the RS answer.
    if (w.redirect && conn_owner_recorded(*c) && !w.redirect->owners().insert(conn_out_key(*c), wid)) {
        w.conns->remove(c);
        w.conns->release(c);
        free_lport();
        drop(w.stack, lp.pkt, Counter::drop_owner_table_full);
        return nullptr;
    }
    auto bump = [](std::atomic<uint32_t>& a, int d) {  // single writer: no locked RMW needed
        a.store(a.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
    };
    bump(svc->workers[wid].refs, 1);
    if (laddr) bump(laddr->workers[wid].refs, 1);
    if (tpl) persist_attach(w, c, tpl);
    DestWorkerStats& ds = dest->stats[wid];
    ++ds.refs;
    ++ds.conns;
    ++ds.inactive;  // NONE is inactive; the first transition moves it
    ++svc->workers[wid].conns;
    w.stack.counters.inc(Counter::conns_created);
    c->state = TcpState::None;
    c->resched = refused ? ConnResched::Again : ConnResched::None;
    const bool is_tcp = lp.proto == net::kIpProtoTcp;
    if ((view->flags & kSvcFlagToa) && is_tcp) c->flags |= kConnToa;
    if ((view->flags & kSvcFlagOps) && !is_tcp) c->flags |= kConnOps;
    if (is_tcp && (view->flags & kSvcFlagPpV1))
        c->flags |= kConnPpV1;
    else if (view->flags & kSvcFlagPpV2)
        c->flags |= kConnPpV2;  // v1 has no UDP form: the control plane refuses it
    const bool uoa = !is_tcp && (view->flags & (kSvcFlagUoaOpp | kSvcFlagUoaIpo));
    // The side slot is touched only for a conn that has a feature using it: a plain conn costs
    // no extra cache line (the SYN proxy writes the fields it uses itself).
    if ((c->flags & (kConnToa | kConnPpV1 | kConnPpV2)) || uoa) {
        ConnFeatSlot& f = w.feat_of(c);
        f = ConnFeatSlot{};
        if (is_tcp) f.client_isn = net::ntoh32(reinterpret_cast<const net::TcpHdr*>(lp.l4)->seq);
        if (is_tcp && (c->flags & (kConnPpV1 | kConnPpV2))) pp_conn_init(w, c);
        if (uoa) {
            if (view->flags & kSvcFlagUoaIpo) c->flags |= kConnUoaIpo;
            f.uoa_left = w.snap->uoa_max_trail;
            if (f.uoa_left) c->flags |= kConnUoa;
        }
    }
    if (!expires_ms)
        expires_ms = w.stack.now_ms + uint64_t(w.snap->timeouts.of(TcpState::None)) * 1000;
    c->set_expires(expires_ms);
    w.timers.arm(&c->timer, c->expires(w.stack.now_ms));
    if (!is_tcp && w.sync_ring) [[unlikely]]
        sync_report(w, *c);  // UDP has no state change to wait for
    return c;
}

template Conn* conn_create<net::Af4>(WorkerCtx&, LbPacket4&, const ServiceView&, uint32_t,
                                     const ConnRef&, Dest*, uint64_t);
template Conn* conn_create<net::Af6>(WorkerCtx&, LbPacket6&, const ServiceView&, uint32_t,
                                     const ConnRef&, Dest*, uint64_t);

bool conn_reschedulable(const WorkerCtx& w, const Conn& c) {
    if (!w.snap->reschedule_refused || c.resched != ConnResched::None || (c.flags & kConnSynProxy) ||
        (c.mode != FwdMode::FullNat && c.mode != FwdMode::Nat))
        return false;
    // The conn's service as the current snapshot has it (the RST is rare: one lookup).
    const ConnKey key = conn_key(c.proto, c.caddr(), c.vaddr(), c.cport, c.vport);
    uint32_t mark = 0;
    const ServiceView* view = vip_service(*w.snap, key, c.proto, &mark);
    if (!view || view->svc != c.svc() || view->persist_s) return false;
    // Another dest with a weight (an inhibited or quiesced one takes no new conn).
    const SchedPlan& plan = view->plan;
    for (size_t i = 0; i < plan.dests.size(); ++i)
        if (plan.dests[i] != c.dest && plan.weights[i] > 0) return true;
    return false;
}

// RS SYN-ACK: remember the RS's ISN (TOA goes into client packets acking exactly it + 1) and

void conn_set_state(WorkerCtx& w, Conn* c, TcpState state, bool report) {
    const bool changed = c->state != state;
    c->state = state;
    if (w.offload && state != TcpState::Established) [[unlikely]]
        offload_take_back(w, c);  // a FIN or RST came through xvs: its next packets too
    const bool active = c->proto == net::kIpProtoTcp && tcp_state_is_active(state);
    if (active != bool(c->flags & kConnActive)) {
        DestWorkerStats& ds = c->dest->stats[w.id];
        if (active) {
            ++ds.active;
            --ds.inactive;
        } else {
            --ds.active;
            ++ds.inactive;
        }
        c->flags ^= kConnActive;
    }
    if (changed && report && w.sync_ring) [[unlikely]]
        sync_report(w, *c);
}

void conn_timer(WorkerCtx& w, TimerNode* node, uint64_t now) {
    Conn* c = reinterpret_cast<Conn*>(node);  // the timer is Conn's first member
    if (conn_is_template(*c)) return persist_timer(w, c, now);
    uint64_t expires = c->expires(now);
    if (expires <= now && w.offload) [[unlikely]] {  // its traffic may have gone by XDP
        expires = offload_deadline(w, c, expires);
        c->set_expires(expires);
    }
    if (expires > now) {  // traffic moved the deadline: lazy re-arm
        w.timers.arm(node, (c->flags & kConnPpHdrSeg) ? pp_header_timer(w, c, now) : expires);
        // A live conn: refresh its copies on the peers (at most once per timeout).
        if (w.sync_ring) [[unlikely]]
            sync_report(w, *c);
    }
    else if (!(c->flags & kConnSpWaiting) || !synproxy_rs_syn_timer(w, c)) {
        passive_conn_expired(c->dest->stats[w.id], *c);
        conn_expire(w, c);
    }
}

void conn_settle(WorkerCtx& w) {
    Conn* failed[ConnTable::kMaxUnsettled];
    const unsigned n = w.conns->settle(failed);
    for (unsigned i = 0; i < n; ++i) {
        w.stack.counters.inc(Counter::conn_out_tuple_full);
        conn_expire(w, failed[i]);
    }
}

void conn_expire(WorkerCtx& w, Conn* c) {
    if (conn_is_template(*c)) return persist_expire(w, c);
    const unsigned wid = w.id;
    if (c->flags & kConnSpWaiting) synproxy_release(w, c);
    if (w.offload) offload_take_back(w, c);
    w.timers.cancel(&c->timer);
    w.conns->remove(c);
    if (w.redirect && conn_owner_recorded(*c)) w.redirect->owners().erase(conn_out_key(*c), wid);
    LocalAddr* const laddr = w.laddr_of(c);
    if (laddr && c->mode != FwdMode::NatTun) laddr->workers[wid].pool->free(net::ntoh16(c->lport));
    auto drop_ref = [](std::atomic<uint32_t>& a) {
        a.store(a.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    };
    if (laddr) drop_ref(laddr->workers[wid].refs);
    drop_ref(c->svc()->workers[wid].refs);
    DestWorkerStats& ds = c->dest->stats[wid];
    if (c->flags & kConnActive)
        --ds.active;
    else
        --ds.inactive;
    --ds.refs;
    if (c->flags & kConnPersist) persist_detach(w, c);
    w.conns->release(c);
    w.stack.counters.inc(Counter::conns_expired);
}

}  // namespace xvs::lb
