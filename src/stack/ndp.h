// IPv6 neighbour discovery (RFC 4861) for the director's addresses: neighbour solicitations
// for an own address on the receiving port are answered (advertisement with the port's MAC),
// from senders on that port's link only (StackView::on_link, as ARP); advertisements update
// entries we created by soliciting; next hops are resolved by solicitations to their
// solicited-node multicast address. No router discovery (routes are configured), no DAD (xvs
// owns its addresses; probes from :: are counted and ignored).
#pragma once

#include <cstdint>

#include "net/addr.h"
#include "stack/context.h"
#include "stack/ipv6.h"

struct rte_mbuf;

namespace xvs::stack {

// Consumes pkt: an ICMPv6 neighbour solicitation or advertisement (v from ipv6_validate).
void nd_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt, const Ipv6View& v);
// Multicasts a solicitation for target on port, from the port's IPv6 source address.
void nd_send_solicit(StackContext& ctx, uint8_t port, const net::InetAddr& target);
// Resolution probe for a next hop of either family: ARP request or neighbour solicitation.
void neigh_probe(StackContext& ctx, uint8_t port, const net::InetAddr& target);

}  // namespace xvs::stack
