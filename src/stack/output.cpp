// IPv4 output path. Unresolved next hops get a bounded queue (per entry and in total) and an
// ARP probe; everything that cannot be queued is counted as a drop.
#include "stack/output.h"

#include <rte_mbuf.h>

#include "stack/arp.h"

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
    eth->ether_type = net::hton16(net::kEtherTypeIpv4);
    ctx.tx.enqueue(port, pkt, ctx.counters);
}

void ipv4_output(StackContext& ctx, rte_mbuf* pkt, uint32_t daddr_be) {
    const NextHop nh = ctx.view->route_lookup(daddr_be);
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
        e->state = NeighState::Incomplete;
        e->probes = 0;
        e->next_probe_ms = ctx.now_ms;
    }
    if (e) {
        switch (e->state) {
            case NeighState::Reachable:
            case NeighState::Static:
                e->used_ms = ctx.now_ms;
                ether_send(ctx, pkt, nh.port, e->mac);
                return;
            case NeighState::Stale:
                // Still usable; ask again so the entry is confirmed or replaced.
                e->used_ms = ctx.now_ms;
                if (ctx.now_ms >= e->next_probe_ms) {
                    e->next_probe_ms = ctx.now_ms + ctx.neigh.times().retrans_ms;
                    arp_send_request(ctx, nh.port, nh.addr);
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
        arp_send_request(ctx, nh.port, nh.addr);
        ++e->probes;
        e->next_probe_ms = ctx.now_ms + ctx.neigh.times().retrans_ms;
    }
}

void neigh_drop_all_pending(StackContext& ctx) {
    ctx.neigh.for_each([&](NeighEntry& e) {
        for (unsigned i = 0; i < e.npending; ++i) rte_pktmbuf_free(e.pending[i]);
        ctx.counters.inc(Counter::drop_neigh_unresolved, e.npending);
        ctx.neigh.pending_total -= e.npending;
        e.npending = 0;
    });
}

}  // namespace xvs::stack
