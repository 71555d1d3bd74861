// ARP responder and resolver (RFC 826). Requests are answered only for addresses owned on the
// receiving port, and only to senders on that port's link (StackView::on_link). Senders are
// learned when they ask us (as Linux does); replies only update entries we created by asking,
// so unsolicited ARP cannot fill the table; and no ARP moves an entry to another port.
#include "stack/arp.h"

#include <rte_mbuf.h>

#include <cstring>

#include "stack/exception.h"
#include "stack/ndp.h"
#include "stack/neigh_shared.h"
#include "stack/output.h"

namespace xvs::stack {

namespace {

using net::ArpHdr;
using net::EtherHdr;

void release_pending(StackContext& ctx, NeighEntry& e) {
    for (unsigned i = 0; i < e.npending; ++i) ether_send(ctx, e.pending[i], e.port, e.mac);
    ctx.neigh->pending_total -= e.npending;
    e.npending = 0;
}

void drop_pending(StackContext& ctx, NeighEntry& e) {
    for (unsigned i = 0; i < e.npending; ++i) {
        if (ctx.capture != nullptr) [[unlikely]]
            capture_drop(ctx, e.pending[i], Counter::drop_neigh_unresolved);
        rte_pktmbuf_free(e.pending[i]);
    }
    ctx.counters.inc(Counter::drop_neigh_unresolved, e.npending);
    ctx.neigh->pending_total -= e.npending;
    e.npending = 0;
}

}  // namespace

void arp_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt) {
    // Only the neighbour owner learns (and answers: the reply comes from its TX queue).
    if (!ctx.neigh_owner) return neigh_handoff_input(ctx, port, pkt, nullptr);
    if (rte_pktmbuf_data_len(pkt) < sizeof(EtherHdr) + sizeof(ArpHdr)) {
        drop(ctx, pkt, Counter::drop_arp_malformed);
        return;
    }
    auto* eth = rte_pktmbuf_mtod(pkt, EtherHdr*);
    auto* arp = reinterpret_cast<ArpHdr*>(eth + 1);
    if (arp->htype != net::hton16(1) || arp->ptype != net::hton16(net::kEtherTypeIpv4) ||
        arp->hlen != 6 || arp->plen != 4 ||
        (arp->op != net::hton16(net::kArpOpRequest) && arp->op != net::hton16(net::kArpOpReply))) {
        drop(ctx, pkt, Counter::drop_arp_malformed);
        return;
    }
    const uint32_t sender_be = arp->spa;
    const uint32_t target_be = arp->tpa;
    const OwnAddr* own = ctx.view->own(net::InetAddr::v4(target_be));
    const bool for_us = own && own->port == port && sender_be != target_be && !own->arp_silent;
    // Not about an address of ours on this port: the kernel's, when the port has an exception
    // path (requests for its addresses, replies to its own requests).
    const bool kernel = !(own && own->port == port);
    const bool is_request = arp->op == net::hton16(net::kArpOpRequest);
    const net::InetAddr sender = net::InetAddr::v4(sender_be);
    const net::MacAddr sender_mac = arp->sha;

    // A sender claiming one of our addresses is a conflict or a spoof: never learned. A
    // sender off this port's link gets neither an entry nor an answer. (0.0.0.0 is an
    // address probe, RFC 5227: nothing to learn, and not ours to answer.)
    if (sender_be != 0 && ctx.view->own(sender)) {
        drop(ctx, pkt, Counter::drop_arp_own_address);
        return;
    }
    if (sender_be != 0 && !ctx.view->on_link(sender, port)) {
        if (kernel) return exception_or_drop(ctx, port, pkt, Counter::drop_arp_off_link);
        drop(ctx, pkt, Counter::drop_arp_off_link);
        return;
    }

    // Learn before answering: a host asking for us is about to talk to us.
    NeighEntry* e = nullptr;
    const uint64_t evicted = ctx.neigh->evictions();
    if (sender_be != 0)
        e = ctx.neigh->learn(sender, sender_mac, port, ctx.now_ms, for_us && is_request);
    ctx.counters.inc(Counter::neigh_evicted, ctx.neigh->evictions() - evicted);
    if (e && e->npending) {
        release_pending(ctx, *e);
    }

    if (!is_request) {
        if (kernel) return exception_or_drop(ctx, port, pkt, Counter::arp_replies_received);
        ctx.counters.inc(Counter::arp_replies_received);
        rte_pktmbuf_free(pkt);
        return;
    }
    if (!for_us) {
        if (kernel) return exception_or_drop(ctx, port, pkt, Counter::drop_arp_not_ours);
        drop(ctx, pkt, Counter::drop_arp_not_ours);
        return;
    }
    // Turn the request into the reply in place.
    const net::MacAddr& our_mac = ctx.view->ports[port].mac;
    arp->op = net::hton16(net::kArpOpReply);
    arp->tha = sender_mac;
    arp->tpa = sender_be;
    arp->sha = our_mac;
    arp->spa = target_be;
    eth->dst = sender_mac;
    eth->src = our_mac;
    ctx.counters.inc(Counter::arp_replies_sent);
    ctx.tx.enqueue(port, pkt, ctx.counters);
}

namespace {

// A broadcast ARP request from port's MAC, sender address spa, target tpa (network order),
// counted under `sent`.
void send_broadcast_request(StackContext& ctx, uint8_t port, uint32_t spa_be, uint32_t tpa_be,
                            Counter sent) {
    rte_mbuf* m = frame_alloc(ctx);
    if (!m) return;
    auto* eth = reinterpret_cast<EtherHdr*>(
        rte_pktmbuf_append(m, sizeof(EtherHdr) + sizeof(ArpHdr)));
    auto* arp = reinterpret_cast<ArpHdr*>(eth + 1);
    const net::MacAddr& our_mac = ctx.view->ports[port].mac;
    eth->dst = net::kBroadcastMac;
    eth->src = our_mac;
    eth->ether_type = net::hton16(net::kEtherTypeArp);
    arp->htype = net::hton16(1);
    arp->ptype = net::hton16(net::kEtherTypeIpv4);
    arp->hlen = 6;
    arp->plen = 4;
    arp->op = net::hton16(net::kArpOpRequest);
    arp->sha = our_mac;
    arp->spa = spa_be;
    arp->tha = net::MacAddr{};
    arp->tpa = tpa_be;
    ctx.counters.inc(sent);
    ctx.tx.enqueue(port, m, ctx.counters);
}

}  // namespace

void arp_send_request(StackContext& ctx, uint8_t port, const net::InetAddr& target) {
    send_broadcast_request(ctx, port, ctx.view->port_source[port].v4_be(), target.v4_be(),
                           Counter::arp_requests_sent);
}

// A request for our own address (RFC 5227 "ARP announcement"): hosts that have an entry for
// it update it to our MAC.
void arp_send_gratuitous(StackContext& ctx, uint8_t port, const net::InetAddr& addr) {
    send_broadcast_request(ctx, port, addr.v4_be(), addr.v4_be(), Counter::arp_gratuitous_sent);
}

void neigh_tick(StackContext& ctx) {
    if (!ctx.neigh_owner) return;
    const uint64_t now = ctx.now_ms;
    if (ctx.view->garp_generation != ctx.garp_done) {
        ctx.garp_done = ctx.view->garp_generation;
        ctx.garp_left = 3;
        ctx.garp_next_ms = now;
    }
    if (ctx.garp_left && now >= ctx.garp_next_ms) {
        for (const auto& g : ctx.view->garp)
            if (g.addr.is_v4() && g.port < ctx.view->ports.size())
                arp_send_gratuitous(ctx, g.port, g.addr);
        --ctx.garp_left;
        ctx.garp_next_ms = now + 1000;
    }
    if (now < ctx.next_neigh_scan_ms) return;
    ctx.next_neigh_scan_ms = now + 100;
    const NeighTimes& t = ctx.neigh->times();
    net::InetAddr doomed[64];
    unsigned ndoomed = 0;
    ctx.neigh->for_each([&](NeighEntry& e) {
        switch (e.state) {
            case NeighState::Incomplete:
                if (now < e.next_probe_ms) break;
                if (e.probes >= t.max_probes) {
                    drop_pending(ctx, e);
                    e.state = NeighState::Failed;
                    ctx.neigh->publish(e);
                    break;
                }
                if (e.port < ctx.view->ports.size()) neigh_probe(ctx, e.port, e.addr);
                ++e.probes;
                e.next_probe_ms = now + t.retrans_ms;
                break;
            case NeighState::Reachable:
                if (now - e.confirmed_ms > t.reachable_ms) {
                    e.state = NeighState::Stale;  // other workers hand their packets over now
                    ctx.neigh->publish(e);
                }
                break;
            case NeighState::Stale:
                // Other workers send through it without a word to us but their touch: probe it
                // while they use it, as output here does on our own use.
                if (const uint64_t used = ctx.neigh->reader_used_ms(e);
                    used && used + Neighbours::kTouchMs + 200 > now && now >= e.next_probe_ms) {
                    neigh_probe(ctx, e.port, e.addr);
                    e.next_probe_ms = now + t.retrans_ms;
                }
                [[fallthrough]];
            case NeighState::Failed: {
                const uint64_t used = ctx.neigh->used_ms(e);  // by any worker
                if (now > used && now - used > t.gc_ms && ndoomed < 64) doomed[ndoomed++] = e.addr;
                break;
            }
            default:
                break;
        }
    });
    for (unsigned i = 0; i < ndoomed; ++i) ctx.neigh->remove(doomed[i]);
}

}  // namespace xvs::stack
