// The stack stage of the packet path for one received frame: Ethernet checks, ARP and ND,
// IPv4/IPv6 validation, ICMP for own addresses, TCP/UDP header checks, and classification into a
// PktMeta for the lb hooks.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "stack/context.h"
#include "stack/pkt.h"

struct rte_mbuf;

namespace xvs::stack {

// Returns 4 or 6 when the frame is a well-formed TCP/UDP (or related ICMP) packet for lb,
// described in meta4 or meta6 by family: addressed to a VIP or LIP (meta.local, meta.kind), or
// to an address the director does not own (!meta.local: lb looks for a conn, e.g. NAT return
// traffic, and counts drop_not_local when there is none). Otherwise 0: the frame was consumed
// (ARP, ND, ICMP) or freed and counted. max_frame is the receiving port's MTU plus the
// Ethernet header.
uint8_t eth_input(StackContext& ctx, uint8_t port, const PortView& pv, uint32_t max_frame,
                  rte_mbuf* m, PktMeta<net::Af4>& meta4, PktMeta<net::Af6>& meta6);

// Several workers (lb/redirect.h): a frame whose tunnel header one worker stripped (NatTun)
// and then handed to another carries this mbuf flag (a DPDK dynamic flag), so that eth_input
// on the owner takes it as having come in the tunnel. 0 until registered (once, on the
// control thread, by the first hand-over rings).
uint64_t tunneled_mbuf_flag();
Result<void> tunneled_mbuf_flag_register();

}  // namespace xvs::stack
