// The XDP flow fast path from a worker's side, see lb/offload.h.
#include "lb/offload.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "lb/dest.h"
#include "lb/service.h"
#include "lb/worker_ctx.h"
#include "net/headers.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;
using stack::NhDir;

namespace {

constexpr uint64_t kPollMs = 1000;

// The DPDK port id of port index `port`, when the fast path runs there (OffloadState's
// vectors are by port id).
std::optional<uint16_t> fast_port_id(const WorkerCtx& w, uint8_t port) {
    const auto& ports = w.snap->stack.ports;
    if (port >= ports.size()) return std::nullopt;
    const uint16_t id = ports[port].port_id;
    if (id >= w.offload->ports.size() || !w.offload->ports[id]) return std::nullopt;
    return id;
}

port::XdpFlows* flows_at(const WorkerCtx& w, uint8_t port) {
    const auto id = fast_port_id(w, port);
    return id ? w.offload->ports[*id] : nullptr;
}

// Whether port index `port` takes the program's frames (bpf_redirect, XDP_TX).
bool xmit_at(const WorkerCtx& w, uint8_t port) {
    const auto id = fast_port_id(w, port);
    return id && w.offload->xmit[*id];
}

// Whether every port e's directions leave by still takes XDP frames.
bool egress_ok(const WorkerCtx& w, const OffloadEntry& e) {
    return xmit_at(w, e.out_port) && (!e.has_out || xmit_at(w, e.in_port));
}

xvs_xdp_flow flow_value(const WorkerCtx& w, const net::InetAddr& saddr, const net::InetAddr& daddr,
                        uint16_t sport, uint16_t dport, uint8_t egress, const net::MacAddr& dmac,
                        uint32_t slot, bool ttl) {
    const stack::PortView& pv = w.snap->stack.ports[egress];
    xvs_xdp_flow f{};
    std::memcpy(f.saddr, saddr.b, sizeof f.saddr);
    std::memcpy(f.daddr, daddr.b, sizeof f.daddr);
    f.sport = sport;
    f.dport = dport;
    std::memcpy(f.dmac, dmac.b, sizeof f.dmac);
    std::memcpy(f.smac, pv.mac.b, sizeof f.smac);
    f.ifindex = flows_at(w, egress)->ifindex();
    f.slot = slot;
    f.mtu = pv.mtu;
    f.flags =
        static_cast<uint16_t>((saddr.is_v4() ? 0 : XVS_XDP_FLOW_V6) | (ttl ? XVS_XDP_FLOW_TTL : 0));
    return f;
}

// The slots' packets and bytes not yet in the service's and dest's counters, added.
void fold(WorkerCtx& w, OffloadEntry& e, uint32_t index) {
    OffloadState& o = *w.offload;
    Conn* c = e.conn;
    ServiceWorkerState& ss = c->svc()->workers[w.id];
    DestWorkerStats& ds = c->dest->stats[w.id];
    const uint32_t slot = o.slot_base + 2 * index;
    const port::XdpFlows::Seen in = flows_at(w, e.in_port)->seen(slot);
    ss.inpkts += in.packets - e.folded_in.packets;
    ss.inbytes += in.bytes - e.folded_in.bytes;
    ds.inpkts += in.packets - e.folded_in.packets;
    ds.inbytes += in.bytes - e.folded_in.bytes;
    e.folded_in = in;
    if (!e.has_out) return;
    const port::XdpFlows::Seen out = flows_at(w, e.out_port)->seen(slot + 1);
    ss.outpkts += out.packets - e.folded_out.packets;
    ss.outbytes += out.bytes - e.folded_out.bytes;
    ds.outpkts += out.packets - e.folded_out.packets;
    ds.outbytes += out.bytes - e.folded_out.bytes;
    e.folded_out = out;
}

// Whether conn c's next hops are still the ones it was handed over with (and marks them
// used, as its packets through xvs would).
bool next_hops_current(WorkerCtx& w, const OffloadEntry& e) {
    uint8_t port = 0;
    net::MacAddr mac{};
    Conn* c = e.conn;
    if (!stack::nh_cached(w.stack, c->nh, NhDir::ToDest, &port, &mac) || port != e.out_port ||
        mac != e.dest_mac)
        return false;
    if (!e.has_out) return true;
    return stack::nh_cached(w.stack, c->nh, NhDir::ToClient, &port, &mac) && port == e.in_port &&
           mac == e.client_mac;
}

void hand_over(WorkerCtx& w, Conn* c, uint8_t port, bool inbound) {
    OffloadState& o = *w.offload;
    if (c->mode != FwdMode::FullNat && c->mode != FwdMode::Nat && c->mode != FwdMode::Dr) return;
    if (c->caddr().is_v4() != c->daddr().is_v4()) return;  // NAT64: translated by xvs
    if (c->flags & kConnUoa) return;  // datagrams still to carry UOA: xvs inserts it
    const bool two_way = c->mode != FwdMode::Dr;
    // Both ways: the RS's answer seen (its passive check done). DR's replies never pass here.
    if (two_way && c->proto == net::kIpProtoTcp && !(c->flags & kConnSynAckSeen)) return;
    uint8_t to_dest = 0, to_client = 0;
    net::MacAddr dest_mac{}, client_mac{};
    if (!stack::nh_cached(w.stack, c->nh, NhDir::ToDest, &to_dest, &dest_mac)) return;
    if (two_way && !stack::nh_cached(w.stack, c->nh, NhDir::ToClient, &to_client, &client_mac))
        return;
    // Each direction is handed to the program of the port it arrives on: where the other
    // direction leaves (this packet's arrival confirms it for its direction).
    const uint8_t in_port = two_way ? to_client : port;
    if (!inbound && !two_way) return;
    if (two_way && port != (inbound ? to_client : to_dest)) return;
    if (!flows_at(w, in_port) || !flows_at(w, to_dest)) return;
    if (!xmit_at(w, to_dest) || (two_way && !xmit_at(w, to_client))) {
        w.stack.counters.inc(Counter::xdp_offload_no_xmit);
        return;
    }
    if (o.free.empty()) {
        w.stack.counters.inc(Counter::xdp_offload_failed);
        return;
    }
    const uint32_t index = o.free.back();
    OffloadEntry& e = o.entries[index];
    e = OffloadEntry{};
    e.conn = c;
    e.in_port = in_port;
    e.out_port = to_dest;
    e.has_out = two_way;
    e.dest_mac = dest_mac;
    e.client_mac = client_mac;
    const uint32_t slot = o.slot_base + 2 * index;
    const bool ttl = c->mode == FwdMode::Nat;  // the director routes: TTL decremented
    e.key_in = port::xdp_flow_key(c->caddr(), c->vaddr(), c->cport, c->vport, c->proto);
    const xvs_xdp_flow in = c->mode == FwdMode::Dr
                                ? flow_value(w, c->caddr(), c->vaddr(), c->cport, c->vport, to_dest,
                                             dest_mac, slot, false)
                                : flow_value(w, c->laddr_ip(), c->daddr(), c->lport, c->dport,
                                             to_dest, dest_mac, slot, ttl);
    if (two_way) {
        e.key_out = port::xdp_flow_key(c->daddr(), c->laddr_ip(), c->dport, c->lport, c->proto);
        const xvs_xdp_flow out = flow_value(w, c->vaddr(), c->caddr(), c->vport, c->cport,
                                            to_client, client_mac, slot + 1, ttl);
        if (!flows_at(w, to_dest)->install(e.key_out, out)) {
            w.stack.counters.inc(Counter::xdp_offload_failed);
            return;
        }
    }
    if (!flows_at(w, in_port)->install(e.key_in, in)) {
        if (two_way) flows_at(w, to_dest)->remove(e.key_out);
        w.stack.counters.inc(Counter::xdp_offload_failed);
        return;
    }
    o.free.pop_back();
    o.entry_of[w.conns->index_of(c)] = index + 1;
    w.stack.counters.inc(Counter::xdp_offloaded);
}

}  // namespace

std::unique_ptr<OffloadState> offload_create(uint32_t after,
                                             const std::vector<port::XdpFlows*>& flows_by_port_id,
                                             unsigned worker, unsigned workers,
                                             uint32_t max_conns) {
    if (!after || workers == 0 ||
        std::none_of(flows_by_port_id.begin(), flows_by_port_id.end(),
                     [](const port::XdpFlows* f) { return f != nullptr; }))
        return nullptr;
    auto o = std::make_unique<OffloadState>();
    o->after = after;
    o->ports = flows_by_port_id;
    o->xmit.assign(flows_by_port_id.size(), 0);  // until the first poll asks
    if (auto f = port::XdpFeatures::open()) o->features.emplace(std::move(*f));
    const uint32_t share = XVS_XDP_MAX_FLOWS / workers;
    o->slot_base = share * worker;
    o->entries.resize(share / 2);
    o->free.reserve(o->entries.size());
    for (uint32_t i = static_cast<uint32_t>(o->entries.size()); i-- > 0;) o->free.push_back(i);
    o->entry_of.assign(max_conns, 0);
    o->count.assign(max_conns, 0);
    return o;
}

void offload_count(WorkerCtx& w, Conn* c, uint8_t port, bool inbound) {
    OffloadState& o = *w.offload;
    const uint32_t idx = w.conns->index_of(c);
    if (o.entry_of[idx]) return;  // handed over: a packet the program left to xvs
    if (++o.count[idx] < o.after) return;
    o.count[idx] = 0;  // refused now (next hop unresolved, ...): again after N more
    hand_over(w, c, port, inbound);
}

void offload_take_back(WorkerCtx& w, Conn* c) {
    OffloadState& o = *w.offload;
    const uint32_t idx = w.conns->index_of(c);
    o.count[idx] = 0;
    if (!o.entry_of[idx]) return;
    const uint32_t index = o.entry_of[idx] - 1;
    OffloadEntry& e = o.entries[index];
    flows_at(w, e.in_port)->remove(e.key_in);
    if (e.has_out) flows_at(w, e.out_port)->remove(e.key_out);
    fold(w, e, index);  // after the removal: nothing counts there any more
    e.conn = nullptr;
    o.entry_of[idx] = 0;
    o.free.push_back(index);
    w.stack.counters.inc(Counter::xdp_taken_back);
}

uint64_t offload_deadline(WorkerCtx& w, Conn* c, uint64_t expires) {
    OffloadState& o = *w.offload;
    const uint32_t entry = o.entry_of[w.conns->index_of(c)];
    if (!entry) return expires;
    const uint32_t index = entry - 1;
    OffloadEntry& e = o.entries[index];
    fold(w, e, index);
    const uint64_t last_ns = std::max(e.folded_in.last_ns, e.has_out ? e.folded_out.last_ns : 0);
    if (!last_ns) return expires;
    const uint32_t timeout_s =
        c->proto == net::kIpProtoTcp ? w.snap->timeouts.of(c->state) : w.snap->timeouts.udp;
    // bpf_ktime_get_ns and the worker clock are both CLOCK_MONOTONIC.
    return std::max(expires, last_ns / 1'000'000 + uint64_t(timeout_s) * 1000);
}

void offload_poll(WorkerCtx& w) {
    OffloadState& o = *w.offload;
    const uint64_t now = w.stack.now_ms;
    if (now < o.next_poll_ms) return;
    o.next_poll_ms = now + kPollMs;
    for (size_t id = 0; id < o.ports.size(); ++id) {
        if (!o.ports[id]) continue;
        if (!o.features) {  // nothing to ask: as before the kernel could tell
            o.xmit[id] = 1;
            continue;
        }
        const auto f = o.features->of(o.ports[id]->ifindex());
        o.xmit[id] = f && (*f & port::kXdpActNdoXmit);
    }
    for (uint32_t i = 0; i < o.entries.size(); ++i) {
        OffloadEntry& e = o.entries[i];
        if (!e.conn) continue;
        fold(w, e, i);
        if (e.conn->dest->removed.load(std::memory_order_relaxed) || !next_hops_current(w, e) ||
            !egress_ok(w, e))
            offload_take_back(w, e.conn);
    }
}

}  // namespace xvs::lb
