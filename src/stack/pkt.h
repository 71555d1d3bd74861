// The stage types of the packet path: what the stack learned about a frame (PktMeta), handed
// to the lb hooks, and what a hook decided about it (Verdict).
#pragma once

#include <cstdint>

#include "net/headers.h"
#include "stack/view.h"

struct rte_mbuf;

namespace xvs::stack {

// One validated IPv4 TCP/UDP packet. ip and l4 point into pkt's data (offsets l3_off and
// l4_off from its start); l4_len counts from the L4 header to the end of the IP packet.
struct PktMeta {
    rte_mbuf* pkt = nullptr;
    net::Ipv4Hdr* ip = nullptr;
    uint8_t* l4 = nullptr;
    uint16_t l3_off = 0;
    uint16_t l4_off = 0;
    uint16_t l4_len = 0;
    uint8_t port = 0;               // receiving port index
    uint8_t proto = 0;              // IPPROTO_TCP or IPPROTO_UDP
    uint8_t tcp_flags = 0;          // 0 for UDP
    AddrKind kind = AddrKind::Vip;  // what the destination is, when local
    bool local = true;              // destination is an address the director owns
};

// What a hook did with a packet: Accept (continue: the caller forwards it), Drop (freed and
// counted by the hook), Stolen (the hook kept it or sent it itself).
enum class Verdict : uint8_t { Accept, Drop, Stolen };

}  // namespace xvs::stack
