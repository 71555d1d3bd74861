// IPv4 output: route lookup, neighbour resolution (queueing while unresolved), Ethernet header,
// TX enqueue. The packet's data must start at a 14-byte Ethernet header whose contents are
// overwritten here.
#pragma once

#include <cstdint>

#include "stack/context.h"
#include "stack/neigh.h"

struct rte_mbuf;

namespace xvs::stack {

// Frees m, counted under reason: how every layer drops a packet it cannot send on.
void drop(StackContext& ctx, rte_mbuf* m, Counter reason);
// Consumes pkt.
void ipv4_output(StackContext& ctx, rte_mbuf* pkt, uint32_t daddr_be);
// Sends pkt on port to a resolved neighbour; consumes pkt.
void ether_send(StackContext& ctx, rte_mbuf* pkt, uint8_t port, const net::MacAddr& dst);
// An mbuf for a frame the stack builds itself (ARP request, PROXY header segment, RS SYN...):
// counted as frames_generated, and on an empty pool as drop_mbuf_alloc, so frame conservation
// (stack/conservation.h) holds whether or not the allocation succeeds. nullptr when empty.
rte_mbuf* frame_alloc(StackContext& ctx);
// Frees every packet waiting for resolution, counted as drop_neigh_unresolved (worker
// shutdown: a stopped worker holds no mbufs).
void neigh_drop_all_pending(StackContext& ctx);

}  // namespace xvs::stack
