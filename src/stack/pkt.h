// The stage types of the packet path: what the stack learned about a frame (PktMeta), handed
// to the lb hooks, and what a hook decided about it (Verdict).
#pragma once

#include <cstdint>

#include "net/af.h"
#include "net/headers.h"
#include "stack/view.h"

struct rte_mbuf;

namespace xvs::stack {

// One validated TCP/UDP (or related ICMP) packet of family Af (net/af.h). ip and l4 point into
// pkt's data (offsets l3_off and l4_off from its start); l4_len counts from the L4 header to
// the end of the IP packet. No default member initializers: a burst array of them is not
// zeroed per burst (eth_input writes every field).
template <class Af>
struct PktMeta {
    rte_mbuf* pkt;
    typename Af::Hdr* ip;
    uint8_t* l4;
    uint16_t l3_off;
    uint16_t l4_off;
    uint16_t l4_len;
    uint8_t port;       // receiving port index
    uint8_t proto;      // IPPROTO_TCP or IPPROTO_UDP
    uint8_t tcp_flags;  // 0 for UDP
    AddrKind kind;      // what the destination is, when local
    bool local;         // destination is an address the director owns
    bool related;       // an ICMP error: lb finds its conn by the quoted packet (lb/proto/icmp.h)
    bool tunneled;      // came in a tunnel to a local address, outer header stripped (NatTun)
};

// What a hook did with a packet: Accept (continue: the caller forwards it), Drop (freed and
// counted by the hook), Stolen (the hook kept it or sent it itself).
enum class Verdict : uint8_t { Accept, Drop, Stolen };

}  // namespace xvs::stack
