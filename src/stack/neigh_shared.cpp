// The neighbour handoff: one SPSC ring per non-owner worker, drained by the owner each poll.
// Handoffs are rare (the packets of a next hop while it resolves, and ARP / ND messages), so
// frames go one at a time and the owner takes a bounded burst per ring and poll.
#include "stack/neigh_shared.h"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <string>

#include "stack/arp.h"
#include "stack/ndp.h"
#include "stack/output.h"

namespace xvs::stack {

namespace {

enum class HandoffKind : uint8_t { Output, Arp, Nd };

// One ring element (rte_ring elements are multiples of 4 bytes).
struct HandoffItem {
    rte_mbuf* pkt;
    net::InetAddr addr;  // Output: the next hop
    uint16_t l3_off, l4_off, l4_len;  // Nd: where ipv6_validate found the headers
    HandoffKind kind;
    uint8_t port;
    uint8_t proto;      // Nd: Ipv6View::proto
    uint8_t multicast;  // Nd: Ipv6View::multicast
};
static_assert(sizeof(HandoffItem) % 4 == 0);

constexpr unsigned kPollBurst = 32;  // per ring and poll

void hand(StackContext& ctx, HandoffItem item) {
    if (!ctx.neigh_handoff ||
        rte_ring_sp_enqueue_elem(ctx.neigh_handoff, &item, sizeof item) != 0) {
        drop(ctx, item.pkt, Counter::drop_neigh_handoff_full);
        return;
    }
    ctx.counters.inc(Counter::neigh_handoff_sent);
}

void take(StackContext& ctx, HandoffItem& item) {
    if (item.port >= ctx.view->ports.size()) {  // (never: every worker has every port)
        drop(ctx, item.pkt, Counter::drop_no_route);
        return;
    }
    switch (item.kind) {
        case HandoffKind::Output:
            neigh_output(ctx, item.pkt, item.addr, item.port, NhRef{});
            return;
        case HandoffKind::Arp:
            arp_input(ctx, item.port, item.pkt);
            return;
        case HandoffKind::Nd: {
            auto* base = rte_pktmbuf_mtod(item.pkt, uint8_t*);
            Ipv6View v;
            v.ip = reinterpret_cast<net::Ipv6Hdr*>(base + item.l3_off);
            v.l4 = base + item.l4_off;
            v.l4_len = item.l4_len;
            v.proto = item.proto;
            v.multicast = item.multicast != 0;
            nd_input(ctx, item.port, item.pkt, v);
            return;
        }
    }
}

}  // namespace

Result<void> neigh_attach(StackContext& ctx, NeighShared& shared, unsigned worker,
                          const NeighTimes& times, uint32_t ring_size) {
    if (worker >= shared.workers() || worker >= kMaxNeighWorkers)
        return make_error("worker " + std::to_string(worker) + " beyond the " +
                          std::to_string(shared.workers()) + " workers of the neighbour table");
    ctx.neigh = &shared.table();
    ctx.neigh_shared = &shared;
    ctx.neigh_owner = worker == kNeighOwner;
    if (ctx.neigh_owner) {
        shared.table().reset(times);
        return {};
    }
    if (ring_size < 2 || (ring_size & (ring_size - 1)))
        return make_error("neighbour handoff ring size " + std::to_string(ring_size) +
                          " is not a power of two >= 2");
    static std::atomic<unsigned> seq{0};
    const std::string name = "xvs_nh_" + std::to_string(worker) + "_" + std::to_string(seq++);
    rte_ring* ring = rte_ring_create_elem(name.c_str(), sizeof(HandoffItem), ring_size,
                                          SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (!ring)
        return make_error("worker " + std::to_string(worker) + ": neighbour handoff ring: " +
                          rte_strerror(rte_errno));
    ctx.neigh_handoff = ring;
    shared.set_ring(worker, ring);
    return {};
}

void neigh_detach(StackContext& ctx) {
    rte_ring* ring = ctx.neigh_handoff;
    if (!ring) return;
    for (unsigned w = 0; w < ctx.neigh_shared->workers(); ++w)
        if (ctx.neigh_shared->ring(w) == ring) ctx.neigh_shared->set_ring(w, nullptr);
    HandoffItem item;
    while (rte_ring_sc_dequeue_elem(ring, &item, sizeof item) == 0) rte_pktmbuf_free(item.pkt);
    rte_ring_free(ring);
    ctx.neigh_handoff = nullptr;
}

void neigh_handoff_output(StackContext& ctx, rte_mbuf* pkt, const net::InetAddr& addr,
                          uint8_t port) {
    HandoffItem item{};
    item.pkt = pkt;
    item.addr = addr;
    item.kind = HandoffKind::Output;
    item.port = port;
    hand(ctx, item);
}

void neigh_handoff_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt, const Ipv6View* v) {
    HandoffItem item{};
    item.pkt = pkt;
    item.port = port;
    item.kind = v ? HandoffKind::Nd : HandoffKind::Arp;
    if (v) {
        auto* base = rte_pktmbuf_mtod(pkt, uint8_t*);
        item.l3_off = static_cast<uint16_t>(reinterpret_cast<uint8_t*>(v->ip) - base);
        item.l4_off = static_cast<uint16_t>(v->l4 - base);
        item.l4_len = v->l4_len;
        item.proto = v->proto;
        item.multicast = v->multicast;
    }
    hand(ctx, item);
}

unsigned neigh_handoff_poll(StackContext& ctx) {
    if (!ctx.neigh_owner || !ctx.neigh_shared) return 0;
    const NeighShared& shared = *ctx.neigh_shared;
    unsigned total = 0;
    for (unsigned w = 0; w < shared.workers(); ++w) {
        rte_ring* ring = shared.ring(w);
        if (!ring) continue;
        HandoffItem items[kPollBurst];
        const unsigned n =
            rte_ring_sc_dequeue_burst_elem(ring, items, sizeof(HandoffItem), kPollBurst, nullptr);
        ctx.counters.inc(Counter::neigh_handoff_received, n);
        for (unsigned i = 0; i < n; ++i) take(ctx, items[i]);
        total += n;
    }
    return total;
}

unsigned neigh_handoff_in_flight(const StackContext& ctx) {
    return ctx.neigh_handoff ? rte_ring_count(ctx.neigh_handoff) : 0;
}

}  // namespace xvs::stack
