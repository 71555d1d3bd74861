// IP output: next hop (from the conn's cache, else route lookup and neighbour resolution,
// queueing while unresolved), Ethernet header, TX enqueue. The packet's data must start at a
// 14-byte Ethernet header whose contents are overwritten here.
#pragma once

#include <cstdint>

#include "net/addr.h"
#include "stack/context.h"
#include "stack/neigh.h"
#include "stack/nh_cache.h"

struct rte_mbuf;

namespace xvs::stack {

// Frees m, counted under reason: how every layer drops a packet it cannot send on. An armed
// capture of drops (stack/capture.h) gets a copy first.
void drop(StackContext& ctx, rte_mbuf* m, Counter reason);
// The capture half of drop, for a frame counted and freed by other means (a bulk free).
void capture_drop(StackContext& ctx, const rte_mbuf* m, Counter reason);
// Sends an IP packet of family Af to daddr; consumes pkt. nh: the conn's next-hop cache for
// this direction, used when valid and refilled when the packet leaves through a usable
// neighbour entry (NhRef{} for frames without a conn).
template <class Af>
void ip_output(StackContext& ctx, rte_mbuf* pkt, const net::InetAddr& daddr, NhRef nh = {});
// The next hop a conn's cache holds for `dir`, when ip_output would send through it now
// (current generation, a reachable or static entry; a reader also takes a stale one): its
// port index and MAC, and the entry is marked used. False otherwise. For handing a flow to
// the XDP fast path (lb/offload.h), which then sends without ip_output.
bool nh_cached(StackContext& ctx, const NhCache& cache, NhDir dir, uint8_t* port,
               net::MacAddr* mac);
// The neighbour owner's part of ip_output once the route is known: sends pkt to next hop addr
// on port, or queues it and probes (also for packets other workers handed over, ref NhRef{}).
void neigh_output(StackContext& ctx, rte_mbuf* pkt, const net::InetAddr& addr, uint8_t port,
                  NhRef ref);
// Sends pkt on port to a resolved neighbour; consumes pkt. The EtherType follows the IP
// version of the packet.
void ether_send(StackContext& ctx, rte_mbuf* pkt, uint8_t port, const net::MacAddr& dst);
// An mbuf for a frame the stack builds itself (ARP request, PROXY header segment, RS SYN...):
// counted as frames_generated, and on an empty pool as drop_mbuf_alloc, so frame conservation
// (stack/conservation.h) holds whether or not the allocation succeeds. nullptr when empty.
rte_mbuf* frame_alloc(StackContext& ctx);
// Frees every packet waiting for resolution, counted as drop_neigh_unresolved (the owner's
// shutdown: a stopped worker holds no mbufs). Nothing on other workers.
void neigh_drop_all_pending(StackContext& ctx);

}  // namespace xvs::stack
