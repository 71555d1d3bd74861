// TOA on the packet path (FULLNAT TCP), see lb/conserve/toa.h.
#include "lb/conserve/toa.h"

#include <rte_mbuf.h>

#include <algorithm>

#include "lb/conn_egress.h"
#include "lb/worker_ctx.h"
#include "net/tcp_options.h"
#include "net/toa.h"
#include "stack/view.h"

namespace xvs::lb {

using stack::Counter;

// RS SYN-ACK: remember the RS's ISN (TOA goes into client packets acking exactly it + 1) and
// lower the MSS by the TOA length so full-size client segments still fit with the option.
template <class Af>
void toa_synack(WorkerCtx& w, LbPacket<Af>& lp, Conn* c) {
    auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
    w.feat_of(c).rs_isn = net::ntoh32(tcp->seq);
    c->flags |= kConnSynAckSeen;
    if (net::toa_clamp_mss(net::tcp_options_span(tcp), &tcp->checksum, net::toa_len(c->caddr())))
        w.stack.counters.inc(Counter::toa_mss_clamped);
}

// Client -> RS: TOA first in the options of every non-SYN, non-RST packet that acks the RS
// SYN-ACK and nothing more (seed 001: third-handshake ACK, ACK+data, FIN+ACK+data, out of
// order, retransmissions). Once the client acks RS data the RS has its address: stop.
template <class Af>
void toa_inbound(WorkerCtx& w, LbPacket<Af>& lp, Conn* c) {
    constexpr uint8_t kNot = net::kTcpSyn | net::kTcpRst;
    if ((lp.tcp_flags & kNot) || !(lp.tcp_flags & net::kTcpAck) || !(c->flags & kConnSynAckSeen) ||
        (c->flags & kConnToaDone))
        return;
    auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
    const uint32_t ack = net::ntoh32(tcp->ack);
    if (ack != w.feat_of(c).rs_isn + 1) {
        if (static_cast<int32_t>(ack - (w.feat_of(c).rs_isn + 1)) > 0) c->flags |= kConnToaDone;
        return;
    }
    const size_t ip_len = Af::packet_len(*lp.ip);
    const stack::PortView& out_port =
        w.stack.view->ports[conn_egress_port(w, *c, stack::NhDir::ToDest).value_or(0)];
    // Room to grow: the mbuf's tailroom, but never past the egress MTU (a full-size segment
    // whose SYN-ACK MSS was not clamped is forwarded without TOA, counted). FNAT64's IPv4
    // packet will be 20 bytes shorter than this IPv6 one.
    const size_t mtu = out_port.mtu + (Af::family == 6 && c->daddr().is_v4() ? 20 : 0);
    const size_t capacity = std::min<size_t>(ip_len + rte_pktmbuf_tailroom(lp.pkt), mtu);
    auto* ip = reinterpret_cast<uint8_t*>(lp.ip);
    // The 8-byte form for an IPv4 client, the 20-byte one for an IPv6 client.
    net::ToaResult r;
    if constexpr (Af::family == 4)
        r = net::toa_insert_ipv4(ip, ip_len, capacity, c->caddr(), c->cport, true);
    else
        r = net::toa_insert_ipv6(ip, ip_len, capacity, c->caddr(), c->cport, true);
    if (r.forged_removed) w.stack.counters.inc(Counter::toa_forged_removed, r.forged_removed);
    switch (r.outcome) {
        case net::ToaOutcome::Inserted:
            w.stack.counters.inc(Counter::toa_inserted);
            break;
        case net::ToaOutcome::InsertedPrunedNop:
            w.stack.counters.inc(Counter::toa_pruned_nop);
            break;
        case net::ToaOutcome::InsertedPrunedSack:
            w.stack.counters.inc(Counter::toa_pruned_sack);
            break;
        case net::ToaOutcome::NoRoom:
            w.stack.counters.inc(Counter::toa_fail_no_room);
            return;
        case net::ToaOutcome::TooBig:
            w.stack.counters.inc(Counter::toa_fail_mtu);
            return;
        case net::ToaOutcome::Malformed:
            w.stack.counters.inc(Counter::toa_fail_malformed);
            return;
    }
    const size_t new_len = r.new_pkt_len;
    lp.l4_len = static_cast<uint16_t>(new_len - (lp.l4_off - lp.l3_off));  // FNAT64 reads it
    // The packet grew (or shrank, after pruning) at its end.
    const uint32_t frame = static_cast<uint32_t>(sizeof(net::EtherHdr) + new_len);
    if (frame > rte_pktmbuf_data_len(lp.pkt))
        rte_pktmbuf_append(lp.pkt, static_cast<uint16_t>(frame - rte_pktmbuf_data_len(lp.pkt)));
    else if (frame < rte_pktmbuf_data_len(lp.pkt))
        rte_pktmbuf_trim(lp.pkt, static_cast<uint16_t>(rte_pktmbuf_data_len(lp.pkt) - frame));
}

template void toa_synack<net::Af4>(WorkerCtx&, LbPacket4&, Conn*);
template void toa_synack<net::Af6>(WorkerCtx&, LbPacket6&, Conn*);
template void toa_inbound<net::Af4>(WorkerCtx&, LbPacket4&, Conn*);
template void toa_inbound<net::Af6>(WorkerCtx&, LbPacket6&, Conn*);

}  // namespace xvs::lb
