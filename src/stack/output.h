// IP output: next hop (from the conn's cache, else route lookup and neighbour resolution,
// queueing while unresolved), Ethernet header, TX enqueue. The packet's data must start at a
// 14-byte Ethernet header whose contents are overwritten here.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <optional>

#include "net/addr.h"
#include "net/byteorder.h"
#include "net/headers.h"
#include "stack/context.h"
#include "stack/neigh.h"
#include "stack/nh_cache.h"

namespace xvs::stack {

// Frees m, counted under reason: how every layer drops a packet it cannot send on. An armed
// capture of drops (stack/capture.h) gets a copy first.
void drop(StackContext& ctx, rte_mbuf* m, Counter reason);
// The capture half of drop, for a frame counted and freed by other means (a bulk free).
void capture_drop(StackContext& ctx, const rte_mbuf* m, Counter reason);
// Sends pkt on port to a resolved neighbour; consumes pkt. The EtherType follows the IP
// version of the packet.
void ether_send(StackContext& ctx, rte_mbuf* pkt, uint8_t port, const net::MacAddr& dst);

// ether_send's common case inline (the frame fits the port's MTU); a larger one (to fragment)
// goes to ether_send.
[[gnu::always_inline]] inline void ether_send_resolved(StackContext& ctx, rte_mbuf* pkt,
                                                       uint8_t port, const net::MacAddr& dst) {
    // The port's fields are read before the header's byte stores, which could alias them.
    const PortView& pv = ctx.view->ports[port];
    if (rte_pktmbuf_data_len(pkt) > pv.mtu + sizeof(net::EtherHdr)) [[unlikely]] {
        ether_send(ctx, pkt, port, dst);
        return;
    }
    const net::MacAddr src = pv.mac;
    auto* eth = rte_pktmbuf_mtod(pkt, net::EtherHdr*);
    const uint8_t version = *reinterpret_cast<const uint8_t*>(eth + 1) >> 4;
    eth->dst = dst;
    eth->src = src;
    eth->ether_type = net::hton16(version == 6 ? net::kEtherTypeIpv6 : net::kEtherTypeIpv4);
    ctx.tx.enqueue(port, pkt, ctx.counters);
}

// The generation a conn's next-hop cache is compared with: the table's, plus this worker's
// snapshot epoch. Never 0 (an empty cache).
inline uint16_t nh_cache_gen(uint16_t table_gen, uint16_t epoch) {
    const auto g = static_cast<uint16_t>(table_gen + epoch);
    return g ? g : 1;
}

// The neighbour owner's test of a conn's cache: the entry cached for `dir` when its slot is
// of the current generation and the entry reachable or static (what ip_output sends
// through), else nullptr. Nothing is marked used.
[[gnu::always_inline]] inline NeighEntry* nh_owner_entry(StackContext& ctx, const NhCache& cache,
                                                         NhDir dir) {
    const uint16_t slot = cache.slot[static_cast<unsigned>(dir)];
    if (cache.gen != nh_cache_gen(ctx.neigh->generation(), ctx.nh_epoch) ||
        slot == NhCache::kNone)
        return nullptr;
    NeighEntry& e = ctx.neigh->slot(slot);
    if (e.state != NeighState::Reachable && e.state != NeighState::Static) return nullptr;
    return &e;
}

// The neighbour owner's cache hit: sent through the conn's cached entry for ref.dir (counted
// as nh_cache_hits), true. False: nothing done.
[[gnu::always_inline]] inline bool nh_owner_send(StackContext& ctx, rte_mbuf* pkt, NhRef ref) {
    NeighEntry* e = nh_owner_entry(ctx, *ref.cache, ref.dir);
    if (!e) return false;
    e->used_ms = ctx.now_ms;
    ctx.counters.inc(Counter::nh_cache_hits);
    ether_send_resolved(ctx, pkt, e->port, e->mac);
    return true;
}

// ip_output without the owner's cache hit (output.cpp): a reader's cached entry, else the
// route scan and the neighbour table.
template <class Af>
void ip_output_slow(StackContext& ctx, rte_mbuf* pkt, const net::InetAddr& daddr, NhRef ref);

// Sends an IP packet of family Af to the destination daddr_of() gives (an InetAddr); consumes
// pkt. nh: the conn's next-hop cache for this direction, used when valid and refilled when the
// packet leaves through a usable neighbour entry (NhRef{} for frames without a conn).
// daddr_of is asked only without the cache hit: a conn's address is built from its 4 bytes,
// work the hit does not need. The owner's cache hit (every forwarded packet with one worker)
// is inline: as a call, with ether_send's, it cost ~25 instructions.
template <class Af, class F>
[[gnu::always_inline]] inline void ip_output_lazy(StackContext& ctx, rte_mbuf* pkt, F&& daddr_of,
                                                  NhRef nh) {
    if (nh.cache && ctx.neigh_owner && nh_owner_send(ctx, pkt, nh)) return;
    ip_output_slow<Af>(ctx, pkt, daddr_of(), nh);
}
// The same to an address at hand.
template <class Af>
[[gnu::always_inline]] inline void ip_output(StackContext& ctx, rte_mbuf* pkt,
                                             const net::InetAddr& daddr, NhRef nh = {}) {
    const auto daddr_of = [&]() -> const net::InetAddr& { return daddr; };
    ip_output_lazy<Af>(ctx, pkt, daddr_of, nh);
}
// The next hop a conn's cache holds for `dir`, when ip_output would send through it now
// (current generation, a reachable or static entry; a reader also takes a stale one): its
// port index and MAC, and the entry is marked used. False otherwise. For handing a flow to
// the XDP fast path (lb/offload.h), which then sends without ip_output.
bool nh_cached(StackContext& ctx, const NhCache& cache, NhDir dir, uint8_t* port,
               net::MacAddr* mac);

// The port a conn's next hop for `dir` leaves through, when the cache is one ip_output would
// send through now (nh_cached's test): the port the route to the address it was filled for
// takes, since a route change moves the cache's generation. The tunnel modes' MTU check asks
// this before it scans the routes. False: not cached, the caller looks the route up.
[[gnu::always_inline]] inline bool nh_cached_port(StackContext& ctx, const NhCache& cache,
                                                  NhDir dir, uint8_t* port) {
    if (!ctx.neigh_owner) {
        net::MacAddr mac;
        return nh_cached(ctx, cache, dir, port, &mac);
    }
    const NeighEntry* e = nh_owner_entry(ctx, cache, dir);
    if (!e) return false;
    *port = e->port;
    return true;
}

// The port of the route to addr; nullopt without one. Out of line: egress_port's fallback.
std::optional<uint8_t> route_port(StackContext& ctx, const net::InetAddr& addr);
// The port packets to addr leave by: the next-hop cache's (nh_cached_port, when cache is the
// one ip_output fills for addr in direction dir), else the route's; nullopt without a route.
// For the MTU checks that must know the egress link before the packet is sent.
[[gnu::always_inline]] inline std::optional<uint8_t> egress_port(StackContext& ctx,
                                                                 const NhCache& cache, NhDir dir,
                                                                 const net::InetAddr& addr) {
    uint8_t port;
    if (nh_cached_port(ctx, cache, dir, &port)) return port;
    return route_port(ctx, addr);
}

// The neighbour owner's part of ip_output once the route is known: sends pkt to next hop addr
// on port, or queues it and probes (also for packets other workers handed over, ref NhRef{}).
void neigh_output(StackContext& ctx, rte_mbuf* pkt, const net::InetAddr& addr, uint8_t port,
                  NhRef ref);
// An mbuf for a frame the stack builds itself (ARP request, PROXY header segment, RS SYN...):
// counted as frames_generated, and on an empty pool as drop_mbuf_alloc, so frame conservation
// (stack/conservation.h) holds whether or not the allocation succeeds. nullptr when empty.
rte_mbuf* frame_alloc(StackContext& ctx);
// Frees every packet waiting for resolution, counted as drop_neigh_unresolved (the owner's
// shutdown: a stopped worker holds no mbufs). Nothing on other workers.
void neigh_drop_all_pending(StackContext& ctx);

}  // namespace xvs::stack
