// ARP: answers requests for every own address on the port it owns it on, learns senders,
// resolves next hops (probes with retries), releases packets queued for resolution.
#pragma once

#include <cstdint>

#include "stack/context.h"

struct rte_mbuf;

namespace xvs::stack {

// Consumes pkt (an Ethernet frame with ethertype ARP).
void arp_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt);
// Broadcasts a request for target (network order) on port.
void arp_send_request(StackContext& ctx, uint8_t port, const net::InetAddr& target);
// Broadcasts a gratuitous ARP (an announcement) for own address addr on port.
void arp_send_gratuitous(StackContext& ctx, uint8_t port, const net::InetAddr& addr);
// Periodic work (and the gratuitous ARPs of StackView::garp): probes, Incomplete -> Failed (queued packets dropped), Reachable -> Stale,
// garbage collection. Cheap enough to call every poll; scans at most every 100 ms.
void neigh_tick(StackContext& ctx);

}  // namespace xvs::stack
