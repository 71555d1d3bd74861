// IP output path. Unresolved next hops get a bounded queue (per entry and in total) and an
// ARP probe; everything that cannot be queued is counted as a drop.
#include "stack/output.h"

#include <rte_mbuf.h>

#include "net/af.h"
#include "stack/ndp.h"

namespace xvs::stack {

namespace {
constexpr uint32_t kMaxPendingTotal = 256;
}

void drop(StackContext& ctx, rte_mbuf* m, Counter reason) {
    ctx.counters.inc(reason);
    rte_pktmbuf_free(m);
}

rte_mbuf* frame_alloc(StackContext& ctx) {
    ctx.counters.inc(Counter::frames_generated);
    rte_mbuf* m = rte_pktmbuf_alloc(ctx.pool);
    if (!m) ctx.counters.inc(Counter::drop_mbuf_alloc);
    return m;
}

void ether_send(StackContext& ctx, rte_mbuf* pkt, uint8_t port, const net::MacAddr& dst) {
    auto* eth = rte_pktmbuf_mtod(pkt, net::EtherHdr*);
    eth->dst = dst;
    eth->src = ctx.view->ports[port].mac;
    const uint8_t version = *reinterpret_cast<const uint8_t*>(eth + 1) >> 4;
    eth->ether_type = net::hton16(version == 6 ? net::kEtherTypeIpv6 : net::kEtherTypeIpv4);
    ctx.tx.enqueue(port, pkt, ctx.counters);
}

namespace {

void nh_remember(StackContext& ctx, NhRef ref, const NeighEntry* e) {
    if (!ref.cache) return;
    NhCache& c = *ref.cache;
    const uint16_t gen = ctx.neigh.generation();
    if (c.gen != gen) {  // the other direction's slot is of an older generation: forget it
        c.slot[0] = c.slot[1] = NhCache::kNone;
        c.gen = gen;
    }
    c.slot[static_cast<unsigned>(ref.dir)] = ctx.neigh.index_of(e);
}

}  // namespace

template <class Af>
void ip_output(StackContext& ctx, rte_mbuf* pkt, const net::InetAddr& daddr, NhRef ref) {
    if (ref.cache && ref.cache->gen == ctx.neigh.generation()) {
        const uint16_t slot = ref.cache->slot[static_cast<unsigned>(ref.dir)];
        if (slot != NhCache::kNone) {
            NeighEntry& e = ctx.neigh.slot(slot);
            if (e.state == NeighState::Reachable || e.state == NeighState::Static) {
                e.used_ms = ctx.now_ms;
                ctx.counters.inc(Counter::nh_cache_hits);
                ether_send(ctx, pkt, e.port, e.mac);
                return;
            }
        }
    }
    const NextHop nh = ctx.view->route_lookup(daddr);
    if (!nh.found) {
        ctx.counters.inc(Counter::drop_no_route);
        rte_pktmbuf_free(pkt);
        return;
    }
    NeighEntry* e = ctx.neigh.find(nh.addr);
    if (e && e->port != nh.port && e->state != NeighState::Static && e->npending == 0) {
        // The route now points out of another port (routes changed): the MAC learned on the
        // old port means nothing there. Resolve again on the route's port.
        e->port = nh.port;
        ctx.neigh.invalidate_cached();
        e->state = NeighState::Incomplete;
        e->probes = 0;
        e->next_probe_ms = ctx.now_ms;
    }
    if (e) {
        switch (e->state) {
            case NeighState::Reachable:
            case NeighState::Static:
                e->used_ms = ctx.now_ms;
                nh_remember(ctx, ref, e);
                ether_send(ctx, pkt, nh.port, e->mac);
                return;
            case NeighState::Stale:
                // Still usable; ask again so the entry is confirmed or replaced.
                e->used_ms = ctx.now_ms;
                if (ctx.now_ms >= e->next_probe_ms) {
                    e->next_probe_ms = ctx.now_ms + ctx.neigh.times().retrans_ms;
                    neigh_probe(ctx, nh.port, nh.addr);
                }
                ether_send(ctx, pkt, nh.port, e->mac);
                return;
            default:
                break;
        }
    } else {
        const uint64_t evicted = ctx.neigh.evictions();
        e = ctx.neigh.get_or_create(nh.addr, nh.port, ctx.now_ms);
        ctx.counters.inc(Counter::neigh_evicted, ctx.neigh.evictions() - evicted);
    }
    if (!e) {
        ctx.counters.inc(Counter::drop_neigh_queue_full);
        rte_pktmbuf_free(pkt);
        return;
    }
    if (e->state == NeighState::Failed) {  // a new packet restarts resolution
        e->state = NeighState::Incomplete;
        e->probes = 0;
        e->next_probe_ms = ctx.now_ms;
    }
    e->used_ms = ctx.now_ms;
    if (e->npending == NeighEntry::kMaxPending || ctx.neigh.pending_total >= kMaxPendingTotal) {
        ctx.counters.inc(Counter::drop_neigh_queue_full);
        rte_pktmbuf_free(pkt);
    } else {
        e->pending[e->npending++] = pkt;
        ++ctx.neigh.pending_total;
        ctx.counters.inc(Counter::neigh_queued);
    }
    if (ctx.now_ms >= e->next_probe_ms) {
        neigh_probe(ctx, nh.port, nh.addr);
        ++e->probes;
        e->next_probe_ms = ctx.now_ms + ctx.neigh.times().retrans_ms;
    }
}

template void ip_output<net::Af4>(StackContext&, rte_mbuf*, const net::InetAddr&, NhRef);
template void ip_output<net::Af6>(StackContext&, rte_mbuf*, const net::InetAddr&, NhRef);

void neigh_drop_all_pending(StackContext& ctx) {
    ctx.neigh.for_each([&](NeighEntry& e) {
        for (unsigned i = 0; i < e.npending; ++i) rte_pktmbuf_free(e.pending[i]);
        ctx.counters.inc(Counter::drop_neigh_unresolved, e.npending);
        ctx.neigh.pending_total -= e.npending;
        e.npending = 0;
    });
}

}  // namespace xvs::stack
