// Everything one worker's packet path touches, in one struct: the snapshot it reads, the stack
// context (counters, TX buffers, neighbours, clock), its connection table and timer wheel, and
// the state of each feature (SYN proxy handshakes; per-conn-slot side data). The features are
// free functions on a WorkerCtx, each in its folder (lb/conserve, lb/synproxy, lb/xmit, ...);
// lb/worker.{h,cpp} is only the loop around them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "lb/conn_table.h"
#include "lb/offload.h"
#include "lb/persist.h"
#include "lb/snapshot.h"
#include "lb/synproxy/handshake.h"
#include "lb/timer_wheel.h"
#include "stack/context.h"
#include "stack/neigh_shared.h"
#include "stack/pkt.h"

struct rte_mempool;

namespace xvs::lb {

class Director;
class Redirect;
class SyncRing;

struct WorkerConfig {
    unsigned id = 0;
    uint32_t max_conns = 1 << 16;
    rte_mempool* pool = nullptr;  // for packets the worker builds (ARP)
    uint16_t rx_burst = 32;
    bool manual_clock = false;     // tests drive time with advance_clock()
    size_t timer_slots = 1 << 12;  // 100 ms ticks: one revolution = 409.6 s
    uint64_t timer_tick_ms = 100;
    stack::NeighTimes neigh_times{};  // the neighbour owner's (worker 0's) count
    uint32_t neigh_handoff_ring = stack::kNeighHandoffRing;  // frames to the owner (power of 2)
    uint16_t synproxy_pending = 4096;  // SYN proxy handshakes in flight (side pool, <= 65535)
    // IP fragment reassembly (stack/fragment.h): limits and the pool of large mbufs (its
    // data room from stack::reasm_data_room); nullptr: fragments dropped (drop_ip_fragment).
    stack::FragConfig frag{};
    rte_mempool* reasm_pool = nullptr;
    // The XDP flow fast path (lb/offload.h): packets before a conn is handed over (0: never),
    // and the ports' flow maps by DPDK port id (nullptr: none).
    uint32_t xdp_offload = 0;
    std::vector<port::XdpFlows*> xdp_flows;
};

// A load-balanced packet of family Af: what the stack classified, plus its connection key.
template <class Af>
struct LbPacket : stack::PktMeta<Af> {
    ConnKey key;
};
using LbPacket4 = LbPacket<net::Af4>;
using LbPacket6 = LbPacket<net::Af6>;

struct WorkerCtx {
    WorkerCtx(Director& d, const WorkerConfig& c, uint64_t now_ms)
        : director(&d), cfg(c), id(c.id), timers(c.timer_slots, c.timer_tick_ms, now_ms) {}

    // The worker's conn table, and its timers linked by pool slot (TimerNode is Conn's first
    // member): before any conn is made.
    void set_conns(std::unique_ptr<ConnTable> table) {
        conns = std::move(table);
        timers.attach(conns->base(), sizeof(Conn), conns->capacity());
    }

    Director* director;
    WorkerConfig cfg;
    unsigned id;
    Redirect* redirect = nullptr;  // several workers: hand-over rings, NAT owner table
    const Snapshot* snap = nullptr;
    stack::StackContext stack;
    std::unique_ptr<ConnTable> conns;
    TimerWheel timers;
    SynProxyState sp;                // lb/synproxy/handshake.h
    uint16_t ip_id = 0;              // IPv4 id of headers this worker writes (TUN outer, ICMP)
    std::vector<ConnFeatSlot> feat;  // per conn slot (ConnTable::index_of): lb/conn.h
    // Per conn slot: its local address or WAN pool (nullptr when the mode needs none,
    // XmitTraits::needs_laddr). Read at creation and expiry only, so not in the hot Conn.
    std::vector<LocalAddr*> laddr;
    std::vector<PersistSlot> persist;  // per conn slot: persistence templates (lb/persist.h)
    SyncRing* sync_ring = nullptr;     // session sync on: where conn events go (lb/sync.h)
    std::unique_ptr<OffloadState> offload;  // the XDP flow fast path; nullptr: off

    ConnFeatSlot& feat_of(const Conn* c) { return feat[conns->index_of(c)]; }
    PersistSlot& persist_of(const Conn* c) { return persist[conns->index_of(c)]; }
    LocalAddr*& laddr_of(const Conn* c) { return laddr[conns->index_of(c)]; }
};

}  // namespace xvs::lb
