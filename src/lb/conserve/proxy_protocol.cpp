// PROXY protocol on the packet path (FULLNAT), see lb/conserve/proxy_protocol.h.
#include "lb/conserve/proxy_protocol.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "lb/conn_egress.h"
#include "lb/worker_ctx.h"
#include "net/checksum.h"
#include "net/proxy_protocol.h"
#include "net/tcp_options.h"
#include "net/tcp_seq.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

using stack::drop;

namespace {
// PROXY header segment retransmission (server speaks first): first RTO, doubled each time.
constexpr uint64_t kPpHeaderRtoMs = 1000;
constexpr uint8_t kPpHeaderMaxRexmits = 5;

// The client and VIP share a family (FNAT64's are both IPv6): TCP4 / 0x11-0x12 or TCP6 /
// 0x21-0x22 follows from it.
size_t pp_build(const Conn* c, uint8_t* out, size_t cap) {
    if (c->flags & kConnPpV1)
        return net::pp_v1_build(out, cap, c->caddr(), c->vaddr(), c->cport, c->vport);
    return net::pp_v2_build(out, cap, c->proto, c->caddr(), c->vaddr(), c->cport, c->vport);
}
}  // namespace

// Grows the (not yet FULLNAT-rewritten) packet by the PROXY header, written in front of the
// L4 payload; IP length (and IPv4 checksum) and the L4 length/checksum are recomputed
// (net::rewrite_both, or the NAT64 translation, then updates them). A result beyond the egress
// MTU (what the packet will be after FNAT64's header swap) or the mbuf's tailroom is
// left unchanged and counted (TCP then sends the header as its own segment first; a UDP
// datagram goes without it). Returns true when the header was inserted.
template <class Af>
bool pp_insert(WorkerCtx& w, LbPacket<Af>& lp, Conn* c, size_t l4_hdr_len) {
    uint8_t hdr[net::kPpV1MaxLen];
    const size_t hlen = pp_build(c, hdr, sizeof(hdr));
    if (hlen == 0) return false;
    const size_t ihl = lp.l4_off - lp.l3_off;  // with IPv4 options or IPv6 extension headers
    const size_t ip_len = ihl + lp.l4_len;
    const size_t new_len = ip_len + hlen;
    const size_t egress_ihl = Af::family == 6 && c->daddr().is_v4() ? sizeof(net::Ipv4Hdr) : ihl;
    const stack::PortView& out_port =
        w.stack.view->ports[conn_egress_port(w, *c, stack::NhDir::ToDest).value_or(0)];
    if (egress_ihl + lp.l4_len + hlen > out_port.mtu) {
        w.stack.counters.inc(Counter::pp_fail_mtu);
        return false;
    }
    // Frames may carry Ethernet padding beyond the IP length: trim it before growing.
    const uint32_t frame = static_cast<uint32_t>(lp.l3_off + ip_len);
    if (rte_pktmbuf_data_len(lp.pkt) > frame)
        rte_pktmbuf_trim(lp.pkt, static_cast<uint16_t>(rte_pktmbuf_data_len(lp.pkt) - frame));
    if (!rte_pktmbuf_append(lp.pkt, static_cast<uint16_t>(hlen))) {
        w.stack.counters.inc(Counter::pp_fail_no_room);
        return false;
    }
    uint8_t* payload = lp.l4 + l4_hdr_len;
    const size_t payload_len = ip_len - ihl - l4_hdr_len;
    std::memmove(payload + hlen, payload, payload_len);
    std::memcpy(payload, hdr, hlen);
    Af::set_packet_len(*lp.ip, static_cast<uint16_t>(new_len));
    const uint16_t l4_len = static_cast<uint16_t>(lp.l4_len + hlen);
    lp.l4_len = l4_len;
    if (lp.proto == net::kIpProtoTcp) {
        auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
        tcp->checksum = 0;
        tcp->checksum = Af::l4_checksum(*lp.ip, lp.proto, lp.l4, l4_len);
    } else {
        auto* udp = reinterpret_cast<net::UdpHdr*>(lp.l4);
        udp->length = net::hton16(l4_len);
        if (udp->checksum != 0) {  // 0 = no checksum (IPv4 only), stays so
            udp->checksum = 0;
            udp->checksum = Af::l4_checksum(*lp.ip, lp.proto, lp.l4, l4_len);
            if (udp->checksum == 0) udp->checksum = 0xffff;
        }
    }
    w.feat_of(c).pp_len = static_cast<uint8_t>(hlen);
    w.stack.counters.inc(Counter::pp_inserted);
    return true;
}

// TCP: the header length depends only on the 4-tuple and the version, so it is fixed when the
// conn is created. From then on the RS's byte stream is header + client data whatever order
// client segments arrive in: every client byte at or after ISN + 1 sits pp_len bytes later for
// the RS, and RS acks/SACK edges map back, whether or not the header already went out.
void pp_conn_init(WorkerCtx& w, Conn* c) {
    uint8_t hdr[net::kPpV1MaxLen];
    w.feat_of(c).pp_len = static_cast<uint8_t>(pp_build(c, hdr, sizeof(hdr)));
}

// Client -> RS. The shift is unconditional (pp_conn_init); what remains is getting the header
// itself to the RS, at RS seq client ISN + 1: in front of the segment that starts there (every
// time it is sent: the RS's TCP discards what it already has), or, when that segment has no
// room for it, as its own segment just ahead of it (the segment then goes shifted). Once a
// header segment went out (kConnPpHdrSeg) its timer resends it and client data is only shifted.
// A FIN at ISN + 1 that no header preceded gets the header segment ahead of it too; the
// server-speaks-first handshake ACK gets it right after. Segments taking no sequence space at
// ISN + 1: a bare ACK goes unshifted while no header was sent (the RS expects the header's first
// byte; once sent, the shifted seq is at or ahead of what it expects, inside its window, which
// is what an ACK needs). A RST must carry exactly the RS's next expected seq, so it goes
// unshifted until the RS acked the header (a RST that missed draws a challenge ACK, acking
// ISN + 1 or past it, and the client's answering RST then matches).
template <class Af>
PpHeaderSegment pp_inbound(WorkerCtx& w, LbPacket<Af>& lp, Conn* c) {
    if (lp.tcp_flags & net::kTcpSyn) return PpHeaderSegment::None;
    auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
    const uint32_t seq = net::ntoh32(tcp->seq);
    const uint32_t insert_seq = w.feat_of(c).client_isn + 1;
    const size_t thl = tcp->header_len();
    const size_t payload_len = lp.l4_len - thl;
    const bool rst = lp.tcp_flags & net::kTcpRst;
    // Takes no sequence space: a bare ACK or RST (see above).
    const bool bare = payload_len == 0 && !(lp.tcp_flags & net::kTcpFin);
    PpHeaderSegment segment = PpHeaderSegment::None;
    if (seq == insert_seq && !rst && !(c->flags & kConnPpHdrSeg)) {
        if (payload_len > 0) {
            if (pp_insert(w, lp, c, thl)) {
                c->flags |= kConnPpSent;
                return PpHeaderSegment::None;  // the header is this segment's first bytes
            }
            w.stack.counters.inc(Counter::pp_header_segment_for_room);
            segment = PpHeaderSegment::Before;
        } else if (!bare) {
            if (!(c->flags & kConnPpSent)) segment = PpHeaderSegment::Before;  // a FIN
        } else {
            // Server speaks first: the handshake-completing bare ACK is followed by the header.
            constexpr uint8_t kMask = net::kTcpSyn | net::kTcpAck | net::kTcpRst | net::kTcpFin;
            if ((lp.tcp_flags & kMask) == net::kTcpAck && (c->flags & kConnSynAckSeen) &&
                net::ntoh32(tcp->ack) == w.feat_of(c).rs_isn + 1)
                segment = PpHeaderSegment::After;
        }
    }
    if (seq == insert_seq && bare && !(c->flags & (rst ? kConnPpHdrAcked : kConnPpSent)))
        return segment;
    const uint32_t shifted =
        net::seq_client_to_rs(seq, net::PpSeqShift{insert_seq, w.feat_of(c).pp_len});
    if (shifted != seq) {
        const uint32_t new_be = net::hton32(shifted);
        net::csum_replace4(&tcp->checksum, tcp->seq, new_be);
        tcp->seq = new_be;
    }
    return segment;
}

// Sends the header segment and starts its retransmission timer (which also retries a segment
// that could not be built). ack_be is the client segment's ack (the handshake ACK's is rs_isn + 1,
// pp_inbound checked it); retransmissions ack rs_isn + 1, always acceptable to the RS.
static bool pp_header_segment_emit(WorkerCtx& w, Conn* c, uint32_t ack_be);

void pp_send_header_segment(WorkerCtx& w, Conn* c, uint32_t ack_be, uint16_t window_be) {
    w.feat_of(c).pp_window = window_be;
    w.feat_of(c).pp_rexmits = 0;
    c->flags |= kConnPpSent | kConnPpHdrSeg;
    if (pp_header_segment_emit(w, c, ack_be)) w.stack.counters.inc(Counter::pp_header_segment_sent);
    if (c->flags & kConnSynAckSeen)
        w.timers.arm(&c->timer,
                     std::min(c->expires(w.stack.now_ms), w.stack.now_ms + kPpHeaderRtoMs));
}

// Builds and sends LIP:lport -> RS:dport (the RS's family: IPv4 for FNAT64), seq = client
// ISN + 1, ACK|PSH, carrying only the header, with the window the client advertised. Returns
// false (counted) when not sent.
template <class Af>
static bool pp_header_segment_build(WorkerCtx& w, Conn* c, uint32_t ack_be) {
    uint8_t hdr[net::kPpV1MaxLen];
    const size_t hlen = pp_build(c, hdr, sizeof(hdr));
    if (hlen == 0) return false;
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) {
        w.stack.counters.inc(Counter::pp_fail_alloc);
        return false;
    }
    const size_t l4_len = sizeof(net::TcpHdr) + hlen;
    const size_t ip_len = sizeof(typename Af::Hdr) + l4_len;
    auto* eth = reinterpret_cast<net::EtherHdr*>(
        rte_pktmbuf_append(m, static_cast<uint16_t>(sizeof(net::EtherHdr) + ip_len)));
    if (!eth) {
        w.stack.counters.inc(Counter::pp_fail_alloc);
        drop(w.stack, m, Counter::drop_mbuf_alloc);
        return false;
    }
    std::memset(eth, 0, sizeof(net::EtherHdr));
    auto* ip = reinterpret_cast<typename Af::Hdr*>(eth + 1);
    Af::write_header(*ip, c->laddr_ip(), c->daddr(), net::kIpProtoTcp,
                     static_cast<uint16_t>(l4_len), 64);
    auto* tcp = reinterpret_cast<net::TcpHdr*>(ip + 1);
    *tcp = net::TcpHdr{};
    tcp->sport = c->lport;
    tcp->dport = c->dport;
    tcp->seq = net::hton32(w.feat_of(c).client_isn + 1);
    tcp->ack = ack_be;
    tcp->data_off = 5 << 4;
    tcp->flags = net::kTcpAck | net::kTcpPsh;
    tcp->window = w.feat_of(c).pp_window;
    std::memcpy(tcp + 1, hdr, hlen);
    tcp->checksum = Af::l4_checksum(*ip, net::kIpProtoTcp, tcp, static_cast<uint16_t>(l4_len));
    stack::ip_output<Af>(w.stack, m, c->daddr(), {&c->nh, stack::NhDir::ToDest});
    return true;
}

static bool pp_header_segment_emit(WorkerCtx& w, Conn* c, uint32_t ack_be) {
    return c->daddr().is_v4() ? pp_header_segment_build<net::Af4>(w, c, ack_be)
                              : pp_header_segment_build<net::Af6>(w, c, ack_be);
}

// The client sent no data, so nothing it does would resend a lost header segment: xvs does,
// every RTO (1 s, doubling: at +1, +3, +7, +15, +31 s) until the RS acks past client ISN + 1,
// and after kPpHeaderMaxRexmits counts the give-up once. The conn's idle deadline stays in
// charge: the timer never fires later than expires_ms.
uint64_t pp_header_timer(WorkerCtx& w, Conn* c, uint64_t now) {
    if ((c->flags & kConnPpHdrAcked) || w.feat_of(c).pp_rexmits > kPpHeaderMaxRexmits ||
        c->state == TcpState::Close || c->state == TcpState::TimeWait)
        return c->expires(now);
    if (w.feat_of(c).pp_rexmits == kPpHeaderMaxRexmits) {
        ++w.feat_of(c).pp_rexmits;
        w.stack.counters.inc(Counter::pp_header_gave_up);
        return c->expires(now);
    }
    (void)pp_header_segment_emit(w, c, net::hton32(w.feat_of(c).rs_isn + 1));
    ++w.feat_of(c).pp_rexmits;
    w.stack.counters.inc(Counter::pp_header_retransmitted);
    return std::min(c->expires(now), now + (kPpHeaderRtoMs << w.feat_of(c).pp_rexmits));
}

// RS -> client: remember the RS ISN from the SYN-ACK; acks and SACK edges move down by the
// header length (pp_conn_init), whether or not the header already reached the RS.
template <class Af>
void pp_outbound(WorkerCtx& w, LbPacket<Af>& lp, Conn* c) {
    auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
    if ((lp.tcp_flags & (net::kTcpSyn | net::kTcpAck)) == (net::kTcpSyn | net::kTcpAck)) {
        w.feat_of(c).rs_isn = net::ntoh32(tcp->seq);
        c->flags |= kConnSynAckSeen;
        // Lower the MSS the client sees by the header length, so that a full-size first data
        // segment still fits the MTU once the header is in front of it.
        const size_t hlen = w.feat_of(c).pp_len;  // fixed at conn creation (pp_conn_init)
        const auto opts = net::tcp_options_span(tcp);
        const auto mss = net::tcp_find_mss(opts);
        if (hlen && mss && *mss > hlen + 64 &&
            net::tcp_set_mss(opts, static_cast<uint16_t>(*mss - hlen), &tcp->checksum))
            w.stack.counters.inc(Counter::pp_mss_clamped);
        return;
    }
    if (!(lp.tcp_flags & net::kTcpAck)) return;
    const net::PpSeqShift shift{w.feat_of(c).client_isn + 1, w.feat_of(c).pp_len};
    const uint32_t ack = net::ntoh32(tcp->ack);
    // An ack past client ISN + 1 covers (part of) the header: header segment retransmissions
    // stop, and a client RST at ISN + 1 is shifted from now on.
    if (net::seq_gt(ack, w.feat_of(c).client_isn + 1)) c->flags |= kConnPpHdrAcked;
    const uint32_t mapped = net::ack_rs_to_client(ack, shift);
    if (mapped != ack) {
        const uint32_t new_be = net::hton32(mapped);
        net::csum_replace4(&tcp->checksum, tcp->ack, new_be);
        tcp->ack = new_be;
    }
    net::pp_sack_rs_to_client(net::tcp_options_span(tcp, lp.l4_len), shift, &tcp->checksum);
}
template bool pp_insert<net::Af4>(WorkerCtx&, LbPacket4&, Conn*, size_t);
template bool pp_insert<net::Af6>(WorkerCtx&, LbPacket6&, Conn*, size_t);
template PpHeaderSegment pp_inbound<net::Af4>(WorkerCtx&, LbPacket4&, Conn*);
template PpHeaderSegment pp_inbound<net::Af6>(WorkerCtx&, LbPacket6&, Conn*);
template void pp_outbound<net::Af4>(WorkerCtx&, LbPacket4&, Conn*);
template void pp_outbound<net::Af6>(WorkerCtx&, LbPacket6&, Conn*);

}  // namespace xvs::lb
