// IP output path. Unresolved next hops get a bounded queue (per entry and in total) and an
// ARP probe; everything that cannot be queued is counted as a drop. Only the neighbour owner
// queues and probes; the other workers send through published entries or hand the packet to
// it (stack/neigh_shared.h).
#include "stack/output.h"

#include <rte_mbuf.h>

#include "net/af.h"
#include "stack/capture.h"
#include "stack/fragment.h"
#include "stack/ndp.h"
#include "stack/neigh_shared.h"

namespace xvs::stack {

namespace {
constexpr uint32_t kMaxPendingTotal = 256;
}

void drop(StackContext& ctx, rte_mbuf* m, Counter reason) {
    ctx.counters.inc(reason);
    if (ctx.capture != nullptr) [[unlikely]]
        capture_drop(ctx, m, reason);
    rte_pktmbuf_free(m);
}

void capture_drop(StackContext& ctx, const rte_mbuf* m, Counter reason) {
    // The port the frame came in on, from the PMD's port id in the mbuf (frames the stack
    // built carry the first port's).
    uint8_t port = 0;
    for (size_t p = 0; p < ctx.view->ports.size(); ++p)
        if (ctx.view->ports[p].port_id == m->port) port = static_cast<uint8_t>(p);
    if (capture_wants(ctx.capture, CapturePoint::Drop, port, reason))
        ctx.capture->offer(CapturePoint::Drop, port, reason, m);
}

std::optional<uint8_t> route_port(StackContext& ctx, const net::InetAddr& addr) {
    const NextHop nh = ctx.view->route_lookup(addr);
    if (!nh.found) return std::nullopt;
    return nh.port;
}

rte_mbuf* frame_alloc(StackContext& ctx) {
    ctx.counters.inc(Counter::frames_generated);
    rte_mbuf* m = rte_pktmbuf_alloc(ctx.pool);
    if (!m) ctx.counters.inc(Counter::drop_mbuf_alloc);
    return m;
}

void ether_send(StackContext& ctx, rte_mbuf* pkt, uint8_t port, const net::MacAddr& dst) {
    // The port's fields are read before the header's byte stores, which could alias them.
    const PortView& pv = ctx.view->ports[port];
    const net::MacAddr src = pv.mac;
    const uint32_t max_frame = pv.mtu + sizeof(net::EtherHdr);
    auto* eth = rte_pktmbuf_mtod(pkt, net::EtherHdr*);
    const uint8_t version = *reinterpret_cast<const uint8_t*>(eth + 1) >> 4;
    eth->dst = dst;
    eth->src = src;
    eth->ether_type = net::hton16(version == 6 ? net::kEtherTypeIpv6 : net::kEtherTypeIpv4);
    if (rte_pktmbuf_data_len(pkt) > max_frame) [[unlikely]] {
        const uint32_t mtu = pv.mtu;
        // A reassembled datagram (or a packet grown past a smaller egress MTU): IPv4 without
        // DF is cut into fragments (stack/fragment.h); with DF it goes as before; IPv6 below.
        const auto* ip = reinterpret_cast<const net::Ipv4Hdr*>(eth + 1);
        if (version == 4 && !(net::ntoh16(ip->frag_off) & net::kIpv4DontFragment)) {
            ipv4_fragment_send(ctx, pkt, port, dst, mtu);
            return;
        }
        // IPv6 routers never fragment, but the director is the sender of what it reassembled
        // and rewrote (FNAT66, NAT66 through reassembly): fragment headers of its own.
        if (version == 6) {
            ipv6_fragment_send(ctx, pkt, port, dst, mtu);
            return;
        }
    }
    ctx.tx.enqueue(port, pkt, ctx.counters);
}

namespace {

void nh_remember(NhRef ref, uint16_t gen, uint16_t slot) {
    if (!ref.cache) return;
    NhCache& c = *ref.cache;
    if (c.gen != gen) {  // the other direction's slot is of an older generation: forget it
        c.slot[0] = c.slot[1] = NhCache::kNone;
        c.gen = gen;
    }
    c.slot[static_cast<unsigned>(ref.dir)] = slot;
}

// A worker other than the owner: sends through the published entry when it has a MAC on the
// route's port (a stale one too: the owner probes it, seeing it used), else hands the packet to
// the owner (no entry, being resolved, failed; or another port: the owner resolves it there).
// Never writes the table but for the throttled touch.
void reader_output(StackContext& ctx, rte_mbuf* pkt, const NextHop& nh, NhRef ref) {
    NeighLink link;
    uint16_t slot = 0, gen = 0;
    if (ctx.neigh->lookup(nh.addr, link, slot, gen) && link.sendable() && link.port == nh.port) {
        ctx.neigh->touch(slot, ctx.now_ms);
        if (gen) nh_remember(ref, nh_cache_gen(gen, ctx.nh_epoch), slot);
        ether_send(ctx, pkt, nh.port, link.mac);
        return;
    }
    neigh_handoff_output(ctx, pkt, nh.addr, nh.port);
}

// ip_output without a usable cached next hop: the route scan, then the neighbour table (the
// owner) or the published entries (the others). Kept out of line so the cached path below
// saves and restores few registers.
[[gnu::noinline]] void ip_output_route(StackContext& ctx, rte_mbuf* pkt, const net::InetAddr& daddr,
                                       NhRef ref) {
    const NextHop nh = ctx.view->route_lookup(daddr);
    if (!nh.found) {
        drop(ctx, pkt, Counter::drop_no_route);
        return;
    }
    if (!ctx.neigh_owner) return reader_output(ctx, pkt, nh, ref);
    neigh_output(ctx, pkt, nh.addr, nh.port, ref);
}

}  // namespace

template <class Af>
void ip_output_slow(StackContext& ctx, rte_mbuf* pkt, const net::InetAddr& daddr, NhRef ref) {
    if (ref.cache) {
        if (ctx.neigh_owner) {
            if (nh_owner_send(ctx, pkt, ref)) return;
        } else {
            const uint16_t table_gen = ctx.neigh->generation();
            const uint16_t slot = ref.cache->slot[static_cast<unsigned>(ref.dir)];
            NeighLink link;
            if (ref.cache->gen == nh_cache_gen(table_gen, ctx.nh_epoch) && slot != NhCache::kNone &&
                ctx.neigh->read(slot, table_gen, link) && link.sendable()) {
                ctx.neigh->touch(slot, ctx.now_ms);
                ctx.counters.inc(Counter::nh_cache_hits);
                ether_send_resolved(ctx, pkt, link.port, link.mac);
                return;
            }
        }
    }
    ip_output_route(ctx, pkt, daddr, ref);
}

bool nh_cached(StackContext& ctx, const NhCache& cache, NhDir dir, uint8_t* port,
               net::MacAddr* mac) {
    if (ctx.neigh_owner) {
        NeighEntry* e = nh_owner_entry(ctx, cache, dir);
        if (!e) return false;
        e->used_ms = ctx.now_ms;
        *port = e->port;
        *mac = e->mac;
        return true;
    }
    const uint16_t table_gen = ctx.neigh->generation();
    const uint16_t slot = cache.slot[static_cast<unsigned>(dir)];
    if (cache.gen != nh_cache_gen(table_gen, ctx.nh_epoch) || slot == NhCache::kNone) return false;
    NeighLink link;
    if (!ctx.neigh->read(slot, table_gen, link) || !link.sendable()) return false;
    ctx.neigh->touch(slot, ctx.now_ms);
    *port = link.port;
    *mac = link.mac;
    return true;
}

void neigh_output(StackContext& ctx, rte_mbuf* pkt, const net::InetAddr& addr, uint8_t port,
                  NhRef ref) {
    Neighbours& neigh = *ctx.neigh;
    NeighEntry* e = neigh.find(addr);
    if (e && e->port != port && e->state != NeighState::Static && e->npending == 0) {
        // The route now points out of another port (routes changed): the MAC learned on the
        // old port means nothing there. Resolve again on the route's port.
        e->port = port;
        neigh.invalidate_cached();
        e->state = NeighState::Incomplete;
        e->probes = 0;
        e->next_probe_ms = ctx.now_ms;
        neigh.publish(*e);
    }
    if (e) {
        switch (e->state) {
            case NeighState::Reachable:
            case NeighState::Static:
                e->used_ms = ctx.now_ms;
                nh_remember(ref, nh_cache_gen(neigh.generation(), ctx.nh_epoch), neigh.index_of(e));
                ether_send(ctx, pkt, port, e->mac);
                return;
            case NeighState::Stale:
                // Still usable; ask again so the entry is confirmed or replaced.
                e->used_ms = ctx.now_ms;
                if (ctx.now_ms >= e->next_probe_ms) {
                    e->next_probe_ms = ctx.now_ms + neigh.times().retrans_ms;
                    neigh_probe(ctx, port, addr);
                }
                ether_send(ctx, pkt, port, e->mac);
                return;
            default:
                break;
        }
    } else {
        const uint64_t evicted = neigh.evictions();
        e = neigh.get_or_create(addr, port, ctx.now_ms);
        ctx.counters.inc(Counter::neigh_evicted, neigh.evictions() - evicted);
    }
    if (!e) {
        drop(ctx, pkt, Counter::drop_neigh_queue_full);
        return;
    }
    if (e->state == NeighState::Failed) {  // a new packet restarts resolution
        e->state = NeighState::Incomplete;
        e->probes = 0;
        e->next_probe_ms = ctx.now_ms;
        neigh.publish(*e);
    }
    e->used_ms = ctx.now_ms;
    if (e->npending == NeighEntry::kMaxPending || neigh.pending_total >= kMaxPendingTotal) {
        drop(ctx, pkt, Counter::drop_neigh_queue_full);
    } else {
        e->pending[e->npending++] = pkt;
        ++neigh.pending_total;
        ctx.counters.inc(Counter::neigh_queued);
    }
    if (ctx.now_ms >= e->next_probe_ms) {
        neigh_probe(ctx, port, addr);
        ++e->probes;
        e->next_probe_ms = ctx.now_ms + neigh.times().retrans_ms;
    }
}

template void ip_output_slow<net::Af4>(StackContext&, rte_mbuf*, const net::InetAddr&, NhRef);
template void ip_output_slow<net::Af6>(StackContext&, rte_mbuf*, const net::InetAddr&, NhRef);

void neigh_drop_all_pending(StackContext& ctx) {
    if (!ctx.neigh_owner || !ctx.neigh) return;  // only the owner queues
    ctx.neigh->for_each([&](NeighEntry& e) {
        for (unsigned i = 0; i < e.npending; ++i) rte_pktmbuf_free(e.pending[i]);
        ctx.counters.inc(Counter::drop_neigh_unresolved, e.npending);
        ctx.neigh->pending_total -= e.npending;
        e.npending = 0;
    });
}

}  // namespace xvs::stack
