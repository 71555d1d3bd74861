// The XDP flow fast path from a worker's side (port/xdp_flows.h, `netif_defs { xdp_offload N }`).
// An established conn whose packets keep taking lb_fast (no SYN proxy, TOA, PROXY protocol,
// one-packet scheduling; FULLNAT, NAT or DR over one address family) is handed, after N such
// packets, to the XDP program of the net_af_xdp ports it arrives on: from then on the kernel
// rewrites and redirects its plain segments itself, without the copy into xvs and back, and
// xvs sees only what changes state (SYN, FIN, RST), what needs its help (TTL expiry,
// packets too long for the egress MTU, fragments) and nothing else.
//   - The conn stays in xvs's table with its timer: when the timer fires, the later of the
//     two directions' last packets in the XDP slots moves its deadline, as a packet would.
//   - The slots' packets and bytes are added to the service's and dest's counters once a
//     second (offload_poll), when the conn is taken back, and when it expires.
//   - Taken back (both map entries removed, counted xdp_taken_back) when its state leaves
//     ESTABLISHED (the FIN or RST came through xvs), when it expires, when its dest is
//     removed, and when a next hop it was handed with is no longer current (new neighbour,
//     routes or any new snapshot): its next packets take xvs's path, which may hand it over
//     again.
//   - Only through ports that take XDP frames (port/xdp_features.h: a veth whose peer has
//     neither an XDP program nor GRO does not, and the kernel would drop the frames after
//     the program): a conn that would leave by another is not handed over (counted
//     xdp_offload_no_xmit), and conns are taken back from a port that stops taking them
//     (asked once a second).
// Each worker owns a share of the XDP slots (XVS_XDP_MAX_FLOWS / workers, two a conn) and
// makes the bpf() calls itself: two to hand a conn over and two to take it back, once a
// conn, so short conns (fewer than N packets) never pay them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "lb/conn.h"
#include "net/headers.h"
#include "port/xdp_features.h"
#include "port/xdp_flows.h"

namespace xvs::lb {

struct WorkerCtx;

struct OffloadEntry {
    Conn* conn = nullptr;     // nullptr: free
    uint8_t in_port = 0;      // port index inbound packets arrive on (and outbound ones leave by)
    uint8_t out_port = 0;     // ... outbound ones arrive on (and inbound ones leave by)
    bool has_out = false;     // DR: inbound only
    net::MacAddr dest_mac{};  // the next hops it was handed over with
    net::MacAddr client_mac{};
    xvs_xdp_flow_key key_in{};
    xvs_xdp_flow_key key_out{};
    port::XdpFlows::Seen folded_in{};  // what of the slots is in the stats already
    port::XdpFlows::Seen folded_out{};
};

struct OffloadState {
    uint32_t after = 0;                  // packets through lb_fast before the hand-over
    std::vector<port::XdpFlows*> ports;  // by port id; nullptr: no fast path there
    std::vector<uint8_t> xmit;           // by port id: 1 when it takes XDP frames (as of the poll)
    std::optional<port::XdpFeatures> features;  // nullopt: the kernel cannot tell (before 6.3)
    uint32_t slot_base = 0;                     // this worker's first XDP slot
    std::vector<OffloadEntry> entries;  // entry i uses slots slot_base + 2i (in), + 2i + 1 (out)
    std::vector<uint32_t> free;         // free entries
    std::vector<uint32_t> entry_of;     // per conn slot: entry + 1, 0: not handed over
    std::vector<uint16_t> count;        // per conn slot: lb_fast packets towards `after`
    uint64_t next_poll_ms = 0;
};

// Per worker, from WorkerConfig: nullptr when xdp_offload is 0 or no port has the program.
// `flows` by DPDK port id.
std::unique_ptr<OffloadState> offload_create(uint32_t after,
                                             const std::vector<port::XdpFlows*>& flows_by_port_id,
                                             unsigned worker, unsigned workers, uint32_t max_conns);

// lb_fast's packet of conn c arrived on port index `port` (inbound: client -> VIP): counts it
// and hands the conn over at the N-th.
void offload_count(WorkerCtx& w, Conn* c, uint8_t port, bool inbound);
// The conn leaves ESTABLISHED, expires or goes: takes it back (no-op when not handed over).
void offload_take_back(WorkerCtx& w, Conn* c);
// conn_timer found c's deadline (`expires`) passed: the deadline its XDP traffic gives, or
// `expires` when it has none later (not handed over, or idle there too).
uint64_t offload_deadline(WorkerCtx& w, Conn* c, uint64_t expires);
// From the worker loop: once a second, the ports' XDP features asked again, the slots'
// counters into the stats, and conns whose dest went, whose next hops changed or whose
// egress port stopped taking XDP frames taken back.
void offload_poll(WorkerCtx& w);

}  // namespace xvs::lb
