// Connection life cycle on a worker (lb/conn_ops.cpp): admission, scheduling and creation of a
// conn for the first packet of a flow, its TCP state bookkeeping, its timer and its expiry.
#pragma once

#include <cstdint>

#include "lb/conn.h"
#include "stack/counters.h"

struct rte_mbuf;

namespace xvs::lb {

struct WorkerCtx;
struct ConnRef;
template <class Af>
struct LbPacket;
struct ServiceView;
struct SchedPlan;
struct Snapshot;
struct TimerNode;

// Admission control for a new connection from client_be (network order) to `view`'s
// service, before any state is made: admit_source checks the blacklist and whitelist;
// admit does that and then takes one token of this worker's share of the service's
// new-connection rate. On refusal the drop reason is counted (drop_blacklisted,
// drop_not_whitelisted, drop_conn_rate) and false returned; the caller frees the packet
// without counting it again. conn_create calls admit. The SYN proxy calls admit_source
// before it answers a SYN, so a listed-out client never gets a cookie; the rate token is
// taken only when a cookie-valid ACK creates the connection, so a spoofed SYN flood cannot
// use up the tokens real clients need. Allocation-free, O(log n) in the list sizes.
// (lb/admission.cpp)
// With pkt, a refused packet is dropped (stack::drop: counted, captured, freed); without, the
// refusal is only counted.
bool admit_source(WorkerCtx& w, const ServiceView& view, const net::InetAddr& client,
                  rte_mbuf* pkt = nullptr);
bool admit(WorkerCtx& w, const ServiceView& view, const net::InetAddr& client,
           rte_mbuf* pkt = nullptr);
// Why a scheduler found no dest: drop_dest_overloaded when some dest had a weight (so the
// thresholds kept them all out), else drop_no_dest.
stack::Counter sched_fail_reason(const SchedPlan& plan);

// The service of a flow addressed to a VIP, in IPVS's order (ip_vs_service_find): a
// firewall-mark service whose classifier rule matches (lb/fwmark.h; *mark set), the exact
// (proto, VIP, port) service, then the VIP's port-0 ("all ports") service. nullptr: none.
const ServiceView* vip_service(const Snapshot& snap, const ConnKey& key, uint8_t proto,
                               uint32_t* mark);
// The same with the exact service already looked up by the caller (`exact`, nullptr when
// there is none): the packet path has it from the SYN proxy's check, so a new flow's service
// costs one hash lookup, not two.
const ServiceView* vip_service(const Snapshot& snap, const ConnKey& key, uint8_t proto,
                               uint32_t* mark, const ServiceView* exact);

// The first packet of a flow of service `view` (the caller found it: vip_service, with the
// fwmark rule's `mark`, or snat_match): admission, scheduling, the dest's forwarding mode
// (refused, drop_fwd_mode_unsupported, when it has no xmit), a local address when the mode
// needs one, the conn and its tuples in the table. nullptr when refused: the packet is then
// freed and counted. `refused`: the dest that refused this client's previous SYN
// (reschedule_refused): the scheduler passes it over when it can (a persistence template
// still names it), and the new conn is marked ConnResched::Again. `miss`: the packet's ref
// from the burst's lookup_bulk (a miss: the table inserts the inbound tuple with the hash that
// call kept), or any other ref (the tuple is hashed again). The outbound tuple is queued
// (ConnTable::insert's out_hash): the caller runs conn_settle before any packet of the burst
// leaves the worker. `expires_ms`: when the conn's timer first fires; 0: after its protocol's
// initial timeout (the SYN proxy passes its RS SYN retry, so the timer is armed once).
template <class Af>
Conn* conn_create(WorkerCtx& w, LbPacket<Af>& lp, const ServiceView& view, uint32_t mark,
                  const ConnRef& miss, Dest* refused = nullptr, uint64_t expires_ms = 0);
// Adds the outbound tuples conn_create queued (ConnTable::settle). A conn whose tuple found
// both buckets full is ended at once (counted in conn_out_tuple_full; its first packet has gone,
// so the RS's answer finds no conn and is dropped as such).
void conn_settle(WorkerCtx& w);
// Whether the RS's RST answering conn c's SYN may be held back for a reschedule
// (Snapshot::reschedule_refused): FULLNAT or NAT, no SYN proxy, not rescheduled already, and
// its service, not persistent, has another dest with a weight. Called only on that rare RST.
bool conn_reschedulable(const WorkerCtx& w, const Conn& c);
void conn_expire(WorkerCtx& w, Conn* conn);
// The next hop toward the RS that conn c's first packet to it found (c->nh, filled by
// ip_output) becomes its dest's on worker `wid`, where conn_create seeds the dest's next new
// conn from: the next conn to that RS skips the route scan and the neighbour lookup.
inline void conn_seed_dest_nh(Conn& c, unsigned wid) {
    stack::NhCache& next = c.dest->stats[wid].nh;
    next.slot[unsigned(stack::NhDir::ToDest)] = c.nh.slot[unsigned(stack::NhDir::ToDest)];
    next.gen = c.nh.gen;
}
// A change of state is reported to session sync (lb/sync.h) unless report is false (a synced
// conn being installed: the peer has it already).
void conn_set_state(WorkerCtx& w, Conn* conn, TcpState state, bool report = true);
// The conn's timer fired at `now`: re-armed (traffic moved the deadline; PROXY header
// retransmission; SYN proxy RS SYN retry) or expired.
void conn_timer(WorkerCtx& w, TimerNode* node, uint64_t now);

}  // namespace xvs::lb
