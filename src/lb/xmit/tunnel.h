// TUN (LVS/TUN): the client's packet, unchanged, inside an outer IPv4 header director -> RS:
// IPIP (protocol 4) or GUE (UDP to the dest's port, 4-byte GUE header), as the dest says. The
// RS decapsulates (kernel ipip/fou, or `xvs-rs decap`), serves the VIP held on lo and answers
// the client directly: no outbound tuple. The outer source is the port's tunnel source (ip_defs
// `tunnel_source`, else the director's first address on the port towards the RS). An inner packet
// that no longer fits the port MTU with the outer header gets ICMP frag-needed back to the client
// when DF is set (path-MTU discovery), else is dropped and counted (xvs does not fragment).
#pragma once

#include <cstddef>
#include <optional>

#include "net/addr.h"
#include "net/tunnel.h"
#include "stack/pkt.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;

template <class Af>
stack::Verdict tunnel_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c);

// The pieces of tunnel_in that NatTun (lb/xmit/nat_tunnel.h) shares.
// Bytes the outer headers add for family Af: IPIP 20 / GUE 32 (IPv4), 40 / 52 (IPv6).
template <class Af>
constexpr size_t tunnel_overhead(bool gue);
// Route to the RS and the MTU check of the packet as the client sent it: the port index of
// the route, or nullopt when the packet was dropped (no route; too big: frag-needed /
// packet-too-big from the VIP back to the client, counted). path_mtu: a smaller MTU known for
// the path beyond the port (NatTun's recorded one), 0 when none.
template <class Af>
std::optional<uint8_t> tunnel_mtu_admit(WorkerCtx& w, LbPacket<Af>& lp, Conn& c, size_t overhead,
                                        size_t path_mtu = 0);
// Prepends the outer header src -> c.daddr (IPIP, or GUE to the dest's tunnel port); lp.ip
// then points at the outer header. Drop (counted) when the mbuf has no headroom.
template <class Af>
stack::Verdict tunnel_push(WorkerCtx& w, LbPacket<Af>& lp, Conn& c, const net::InetAddr& src,
                           size_t overhead, bool gue);

template <class Af>
constexpr size_t tunnel_overhead(bool gue) {
    if constexpr (Af::family == 4)
        return gue ? net::kGueOverhead : net::kIpipOverhead;
    else
        return gue ? net::kGue6Overhead : net::kIp6ip6Overhead;
}
// The same for a family known only at run time (the RS address's: control paths, the SYN
// proxy, MTU bookkeeping).
constexpr size_t tunnel_overhead(bool v4, bool gue) {
    return v4 ? tunnel_overhead<net::Af4>(gue) : tunnel_overhead<net::Af6>(gue);
}

}  // namespace xvs::lb
