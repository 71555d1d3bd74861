// The per-connection packet path, see lb/pipeline.h.
#include "lb/pipeline.h"

#include <rte_mbuf.h>

#include "lb/conn_ops.h"
#include "lb/conserve/proxy_protocol.h"
#include "lb/conserve/toa.h"
#include "lb/passive.h"
#include "lb/proto/icmp.h"
#include "lb/service.h"
#include "lb/snapshot.h"
#include "lb/synproxy/handshake.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/snat.h"
#include "lb/xmit/xmit.h"
#include "stack/exception.h"
#include "stack/ipv4.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

using stack::drop;

namespace {
template <class Af>
SpPacket sp_packet(const LbPacket<Af>& lp) {
    return SpPacket{lp.pkt,    &lp.key.saddr, &lp.key.daddr, reinterpret_cast<net::TcpHdr*>(lp.l4),
                    lp.l4_len, lp.l4_off,     lp.port};
}
}  // namespace

// The conn's idle deadline moves to now + timeout_s. Lazy timers only move deadlines later;
// a shorter one (FIN, RST) is re-armed now.
[[gnu::always_inline]] inline void conn_touch(WorkerCtx& w, Conn* c, uint32_t timeout_s) {
    const uint64_t expires = w.stack.now_ms + uint64_t(timeout_s) * 1000;
    c->set_expires(expires);
    if (c->timer.armed() && expires < w.timers.fires_ms(c->timer)) w.timers.arm(&c->timer, expires);
}

// What every forwarded packet ends with: its service's and dest's counters, the mode's rewrite
// and the next hop (a PROXY header segment, when one is due, before or after the packet).
template <class Af>
[[gnu::always_inline]] inline void lb_transmit(WorkerCtx& w, LbPacket<Af>& lp, Conn* c,
                                               bool inbound, PpHeaderSegment pp_header_segment) {
    const unsigned wid = w.id;
    const uint32_t bytes = Af::packet_len(*lp.ip);
    ServiceWorkerState& ss = c->svc()->workers[wid];
    DestWorkerStats& ds = c->dest->stats[wid];
    if (inbound) {
        ++ss.inpkts;
        ss.inbytes += bytes;
        ++ds.inpkts;
        ds.inbytes += bytes;
        uint32_t ack_be = 0;
        uint16_t window_be = 0;
        if (pp_header_segment != PpHeaderSegment::None) {
            const auto* tcp = reinterpret_cast<const net::TcpHdr*>(lp.l4);
            ack_be = tcp->ack;
            window_be = tcp->window;
        }
        if (xmit_in(w, lp, *c) != stack::Verdict::Accept) return;  // freed or kept, counted
        if (pp_header_segment == PpHeaderSegment::Before)
            pp_send_header_segment(w, c, ack_be, window_be);
        w.stack.counters.inc(Counter::lb_forwarded);
        stack::ip_output_lazy<Af>(w.stack, lp.pkt, [c] { return c->daddr(); },
                                  {&c->nh, stack::NhDir::ToDest});
        if (pp_header_segment == PpHeaderSegment::After)
            pp_send_header_segment(w, c, ack_be, window_be);
        if (c->flags & kConnOps) conn_expire(w, c);  // the next datagram is scheduled anew
    } else {
        ++ss.outpkts;
        ss.outbytes += bytes;
        ++ds.outpkts;
        ds.outbytes += bytes;
        // Only modes with an outbound tuple see this direction, and they all have out.
        if (xmit_out(w, lp, *c) != stack::Verdict::Accept) return;
        w.stack.counters.inc(Counter::lb_forwarded);
        stack::ip_output_lazy<Af>(w.stack, lp.pkt, [c] { return c->caddr(); },
                                  {&c->nh, stack::NhDir::ToClient});
    }
}

// The common case on a lean path: a segment without SYN, FIN or RST of an established TCP
// conn, or a datagram of a UDP conn, neither with a per-conn feature (SYN proxy, TOA, PROXY
// protocol, one-packet scheduling) nor anything to check on its RS. What it skips of
// lb_handle below cannot apply to such a packet: the state stays ESTABLISHED (the IPVS table
// maps an ACK or no flag there to itself), no passive check or held RST, no conn reuse.
// False: lb_handle takes the packet the long way (also to drop it, counted).
template <class Af>
[[gnu::always_inline]] inline bool lb_fast(WorkerCtx& w, LbPacket<Af>& lp, ConnRef ref) {
    constexpr uint16_t kFeatures = kConnSynProxy | kConnToa | kConnPpV1 | kConnPpV2 | kConnOps;
    Conn* c = ref.conn;
    if (!c || lp.tunneled || lp.related || (c->flags & kFeatures)) return false;
    const bool inbound = ref.dir == ConnDir::In;
    uint32_t timeout_s;
    if (lp.proto == net::kIpProtoTcp) {
        if (c->state != TcpState::Established ||
            (lp.tcp_flags & (net::kTcpSyn | net::kTcpFin | net::kTcpRst)) ||
            (!inbound && !(c->flags & kConnSynAckSeen)))
            return false;
        timeout_s = w.snap->timeouts.of(TcpState::Established);
    } else if (lp.proto == net::kIpProtoUdp) {
        timeout_s = w.snap->timeouts.udp;
    } else {
        return false;
    }
    if (inbound && c->dest->removed.load(std::memory_order_relaxed)) return false;
    conn_touch(w, c, timeout_s);
    lb_transmit(w, lp, c, inbound, PpHeaderSegment::None);
    if (w.offload) [[unlikely]]
        offload_count(w, c, lp.port, inbound);
    return true;
}

// Everything lb_fast does not take: new flows, handshakes and teardowns, features, ICMP
// errors, drops. Out of line, so that its many live values (callee-saved registers pushed
// and popped) cost nothing on the fast path.
template <class Af>
[[gnu::noinline]] static void lb_slow(WorkerCtx& w, LbPacket<Af>& lp, ConnRef ref) {
    constexpr uint8_t kHandshakeFlags = net::kTcpSyn | net::kTcpAck | net::kTcpRst | net::kTcpFin;
    const bool is_tcp = lp.proto == net::kIpProtoTcp;
    const bool pure_syn = is_tcp && (lp.tcp_flags & kHandshakeFlags) == net::kTcpSyn;
    // A miss may have been created by an earlier packet of this very burst; unless a key of
    // its signature was inserted since the burst's lookup_bulk it is still a miss (no second
    // hash per new flow, in a burst of new flows too).
    if (!ref.conn && w.conns->maybe_added(ref)) ref = w.conns->lookup(lp.key);
    // What arrives in a tunnel at a local address is a NatTun RS's reply (or its ICMP error)
    // and nothing else: no conn is ever created from it.
    if (lp.tunneled &&
        (!ref.conn || ref.conn->mode != FwdMode::NatTun || ref.dir != ConnDir::Out)) {
        drop(w.stack, lp.pkt, Counter::drop_tunnel_no_conn);
        return;
    }
    if (lp.related) return icmp_related(w, lp, ref);
    Conn* c = ref.conn;
    // conn_reuse_mode: a new SYN on a closing connection starts a new connection. One whose
    // RS refused the client's SYN (its RST held back, kept in CLOSE: see below) is this SYN's
    // retransmission, scheduled again away from that RS.
    Dest* refused = nullptr;
    bool created = false;  // c made here, for this packet
    if (c && pure_syn && ref.dir == ConnDir::In &&
        (c->state == TcpState::TimeWait || c->state == TcpState::Close)) {
        if (c->state == TcpState::Close && c->resched == ConnResched::RstHeld) refused = c->dest;
        conn_expire(w, c);
        c = nullptr;
    }
    // A client packet of a conn whose dest was removed (IPVS): dropped, the conn kept until its
    // timeout or the dest's return (IPVS's dest trash); with expire_nodest_conn the conn goes
    // at once (its port and refs freed) and, as IPVS since Linux 5.9, a datagram is scheduled
    // anew. A pure SYN is a new connection on a reused client port (the client cannot have
    // two of one tuple): it ends the old conn and is scheduled anew in either setting, where
    // IPVS without the setting drops it, and with it every retransmission, until the old
    // conn times out (SYN_RECV 30 s): a client port reused soon after a failed attempt to
    // the removed server would fail.
    if (c && ref.dir == ConnDir::In && c->dest->removed.load(std::memory_order_relaxed)) {
        const bool anew = pure_syn || (!is_tcp && w.snap->expire_nodest_conn);
        if (anew || w.snap->expire_nodest_conn) conn_expire(w, c);
        if (!anew) {
            drop(w.stack, lp.pkt, Counter::drop_dest_unavailable);
            return;
        }
        c = nullptr;
    }
    if (!c) {
        // Not addressed to the director and no conn of ours: the first packet of an inside
        // host's flow for a SNAT match service (a TCP SYN, any UDP datagram, an ICMP echo
        // request; conn_create matches), else nothing to forward it to.
        if (!lp.local) {
            const bool snat = !w.snap->matches.empty();
            constexpr uint8_t kEchoRequest =
                Af::family == 4 ? net::kIcmpEchoRequest : net::kIcmp6EchoRequest;
            if (!snat || (lp.proto == Af::icmp_proto &&
                          reinterpret_cast<const net::IcmpHdr*>(lp.l4)->type != kEchoRequest)) {
                // Perhaps the kernel's: its own addresses live behind the exception path.
                stack::exception_or_drop(w.stack, lp.port, lp.pkt, Counter::drop_not_local);
                return;
            }
            if (w.stack.view->is_own(lp.key.saddr)) {
                drop(w.stack, lp.pkt, Counter::drop_martian_source);
                return;
            }
            if (is_tcp && !pure_syn) {
                stack::exception_or_drop(w.stack, lp.port, lp.pkt, Counter::drop_tcp_no_conn);
                return;
            }
            const ServiceView* view = snat_match(*w.snap, lp);
            if (!view) {  // no SNAT match: perhaps the kernel's (exception path)
                stack::exception_or_drop(w.stack, lp.port, lp.pkt, Counter::drop_not_local);
                return;
            }
            c = conn_create(w, lp, *view, 0, ref);
            if (!c) return;  // counted and freed
            created = true;
            ref.dir = ConnDir::In;
        }
    }
    if (!c) {
        // A packet "from" one of our own addresses would make a conn, a cookie SYN-ACK and ARP
        // for ourselves.
        if (w.stack.view->is_own(lp.key.saddr)) {
            drop(w.stack, lp.pkt, Counter::drop_martian_source);
            return;
        }
        if (lp.kind == stack::AddrKind::Lip) {
            drop(w.stack, lp.pkt, Counter::drop_lip_no_conn);
            return;
        }
        // To a director address of xvs's (a SNAT WAN address among them) without a conn: an
        // ICMP echo reply is an unhandled ICMP, and TCP/UDP has no socket here (the kernel's
        // own addresses went to the exception path: they are not xvs's).
        if (lp.kind == stack::AddrKind::Director) {
            drop(w.stack, lp.pkt,
                 lp.proto == Af::icmp_proto ? Counter::drop_icmp_unhandled
                                            : Counter::drop_to_director);
            return;
        }
        // The exact (proto, VIP, port) service, looked up once: the SYN proxy's check and,
        // through vip_service, the new conn's service.
        const ServiceView* exact = w.snap->service(lp.proto, lp.key.daddr, lp.key.dport);
        uint32_t mark = 0;
        if (is_tcp && exact && exact->syn_proxied()) {
            const SpPacket sp = sp_packet(lp);
            switch (synproxy_no_conn(w, sp, pure_syn, exact)) {
                case SpVerdict::Consumed:
                    return;
                case SpVerdict::Open:
                    if (const ServiceView* view =
                            vip_service(*w.snap, lp.key, lp.proto, &mark, exact)) {
                        c = conn_create(w, lp, *view, mark, ref, nullptr,
                                        w.stack.now_ms + kSynProxyRsSynFirstRetryMs);
                        if (c) synproxy_open(w, sp, c);
                    } else {
                        drop(w.stack, lp.pkt, Counter::drop_no_service);
                    }
                    return;
                case SpVerdict::Pass:
                    break;
            }
        }
        if (is_tcp && !pure_syn) {
            drop(w.stack, lp.pkt, Counter::drop_tcp_no_conn);
            return;
        }
        const ServiceView* view = vip_service(*w.snap, lp.key, lp.proto, &mark, exact);
        if (!view) {
            drop(w.stack, lp.pkt, Counter::drop_no_service);
            return;
        }
        c = conn_create(w, lp, *view, mark, ref, refused);
        if (!c) return;  // counted and freed
        created = true;
        ref.dir = ConnDir::In;
    }
    if (c->flags & kConnSynProxy) {
        // NatTun's RS answers through the tunnel only (nat_tunnel_out says why); the proxy
        // consumes its SYN-ACK before the xmit step would check.
        if (c->mode == FwdMode::NatTun && ref.dir == ConnDir::Out && !lp.tunneled) {
            drop(w.stack, lp.pkt, Counter::drop_nattun_bare_reply);
            return;
        }
        if (synproxy_conn(w, sp_packet(lp), c, ref.dir == ConnDir::In)) return;
    }

    const unsigned wid = w.id;
    const bool inbound = ref.dir == ConnDir::In;
    bool hold_rst = false;
    uint32_t timeout_s;
    if (is_tcp) {
        // Passive health checking (lb/passive.h): the RS's first answer, or the client's SYN
        // again because none came.
        if (inbound) {
            if (pure_syn)
                passive_client_syn(c->dest->stats[wid], *c, w.stack.now_ms,
                                   w.snap->timeouts.of(TcpState::SynRecv));
        } else if (!(c->flags & kConnSynAckSeen)) {
            // The RS refuses the client's SYN: with reschedule_refused the client does not
            // hear of it. The conn goes to CLOSE as usual; the client's SYN retransmission
            // (about 1 s later) finds it there and is scheduled again (above).
            if ((lp.tcp_flags & net::kTcpRst) && c->state == TcpState::SynRecv &&
                conn_reschedulable(w, *c))
                hold_rst = true;
            passive_rs_answer(c->dest->stats[wid], *c, lp.tcp_flags);
        }
        TcpState next =
            tcp_state_next(c->state, inbound ? FlowDir::Input : FlowDir::Output, lp.tcp_flags);
        if (next != c->state) conn_set_state(w, c, next);
        // A held conn waits in CLOSE as long as one waiting for its SYN-ACK would, not CLOSE's
        // few seconds: a client retransmits after 1 s (Linux; RFC 6298), some after 3 s.
        timeout_s = w.snap->timeouts.of(hold_rst ? TcpState::SynRecv : c->state);
    } else {
        timeout_s = lp.proto == Af::icmp_proto ? w.snap->timeouts.icmp : w.snap->timeouts.udp;
    }
    conn_touch(w, c, timeout_s);
    if (hold_rst) {
        c->resched = ConnResched::RstHeld;
        drop(w.stack, lp.pkt, Counter::drop_rs_refused_held);
        return;
    }

    if (c->flags & kConnToa) {
        if (inbound)
            toa_inbound(w, lp, c);
        else if ((lp.tcp_flags & (net::kTcpSyn | net::kTcpAck)) == (net::kTcpSyn | net::kTcpAck))
            toa_synack(w, lp, c);
    }
    PpHeaderSegment pp_header_segment = PpHeaderSegment::None;
    if (c->flags & (kConnPpV1 | kConnPpV2)) {
        if (is_tcp) {
            if (inbound)
                pp_header_segment = pp_inbound(w, lp, c);
            else
                pp_outbound(w, lp, c);
        } else if (inbound && !(c->flags & kConnPpSent)) {
            // UDP (v2): the header goes in front of the flow's first datagram only.
            c->flags |= kConnPpSent;
            pp_insert(w, lp, c, sizeof(net::UdpHdr));
        }
    }

    // An OPS conn is gone after its datagram; the others pass the next hop their first packet
    // found on to the dest's next new conn (conn_create seeds it from there).
    const bool seed = created && c->mode != FwdMode::Snat && !(c->flags & kConnOps);
    lb_transmit(w, lp, c, inbound, pp_header_segment);
    if (seed) conn_seed_dest_nh(*c, wid);
}

template <class Af>
void lb_handle(WorkerCtx& w, LbPacket<Af>& lp, ConnRef ref) {
    if (!lb_fast(w, lp, ref)) lb_slow(w, lp, ref);
}

template <class Af>
void lb_handle_burst(WorkerCtx& w, LbPacket<Af>* lbp, const ConnRef* refs, unsigned n) {
    for (unsigned i = 0; i < n; ++i)
        if (!lb_fast(w, lbp[i], refs[i])) lb_slow(w, lbp[i], refs[i]);
}

template void lb_handle<net::Af4>(WorkerCtx&, LbPacket4&, ConnRef);
template void lb_handle<net::Af6>(WorkerCtx&, LbPacket6&, ConnRef);
template void lb_handle_burst<net::Af4>(WorkerCtx&, LbPacket4*, const ConnRef*, unsigned);
template void lb_handle_burst<net::Af6>(WorkerCtx&, LbPacket6*, const ConnRef*, unsigned);

// A saved client packet (the SYN proxy keeps its TCP offset in l2_len + l3_len) goes through
// lb_handle again, in the client's family.
template <class Af>
static void lb_replay_af(WorkerCtx& w, rte_mbuf* m, Conn* c) {
    auto* ip = rte_pktmbuf_mtod_offset(m, typename Af::Hdr*, sizeof(net::EtherHdr));
    const auto l4_off = static_cast<uint16_t>(m->l2_len + m->l3_len);
    uint8_t* l4 = rte_pktmbuf_mtod_offset(m, uint8_t*, l4_off);
    LbPacket<Af> lp{};
    lp.pkt = m;
    lp.ip = ip;
    lp.l4 = l4;
    lp.l3_off = sizeof(net::EtherHdr);
    lp.l4_off = l4_off;
    lp.l4_len = static_cast<uint16_t>(sizeof(net::EtherHdr) + Af::packet_len(*ip) - l4_off);
    lp.port = 0;
    lp.proto = net::kIpProtoTcp;
    lp.tcp_flags = reinterpret_cast<net::TcpHdr*>(l4)->flags;
    lp.kind = stack::AddrKind::Vip;
    lp.local = true;
    lp.related = false;
    lp.tunneled = false;
    lp.key = conn_key(net::kIpProtoTcp, Af::src(*ip), Af::dst(*ip), net::load_wire16(l4),
                      net::load_wire16(l4 + 2));
    lb_handle(w, lp, ConnRef{c, ConnDir::In});
}

void lb_replay(WorkerCtx& w, rte_mbuf* m, Conn* c) {
    if (c->caddr().is_v4())
        lb_replay_af<net::Af4>(w, m, c);
    else
        lb_replay_af<net::Af6>(w, m, c);
}

}  // namespace xvs::lb
