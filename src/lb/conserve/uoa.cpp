// UOA on the packet path (FULLNAT UDP), see lb/conserve/uoa.h.
#include "lb/conserve/uoa.h"

#include <rte_mbuf.h>

#include "lb/worker_ctx.h"
#include "net/uoa.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

using stack::drop;

namespace {

net::UoaMode uoa_mode_of(const Conn* c) {
    return (c->flags & kConnUoaIpo) ? net::UoaMode::Ipo : net::UoaMode::Opp;
}
}  // namespace

// Client -> RS datagram (already LIP:lport -> RS:rport) of a UOA flow: each of the first
// uoa_max_trail datagrams carries the client address. In place when the grown datagram fits the
// egress MTU and the mbuf; otherwise an empty datagram carrying UOA goes first and this one
// follows unchanged (DPVS does the same), so the RS learns the address before the data.
static void uoa_send_empty(WorkerCtx& w, const Conn* c);

template <class Af>
void uoa_inbound(WorkerCtx& w, LbPacket<Af>& lp, Conn* c) {
    if (--w.feat_of(c).uoa_left == 0) c->flags &= static_cast<uint16_t>(~kConnUoa);
    const net::UoaMode mode = uoa_mode_of(c);
    const size_t grow = net::uoa_insert_len(mode);
    const size_t ip_len = net::ntoh16(lp.ip->total_length);
    const stack::PortView& out_port =
        w.stack.view->ports[w.stack.view->route_lookup(c->daddr).port];
    Counter failure = Counter::uoa_fail_mtu;
    if (ip_len + grow <= out_port.mtu) {
        // Ethernet padding past the IP length goes: the datagram grows from its real end.
        const uint32_t frame = static_cast<uint32_t>(sizeof(net::EtherHdr) + ip_len);
        if (rte_pktmbuf_data_len(lp.pkt) > frame)
            rte_pktmbuf_trim(lp.pkt, static_cast<uint16_t>(rte_pktmbuf_data_len(lp.pkt) - frame));
        failure = Counter::uoa_fail_no_room;
        if (grow <= rte_pktmbuf_tailroom(lp.pkt)) {
            // With MTU and room checked, only a full IPv4 option space (ipo) refuses it.
            failure = Counter::uoa_fail_ip_options;
            if (net::uoa_insert(mode, reinterpret_cast<uint8_t*>(lp.ip), ip_len, ip_len + grow,
                                c->caddr.v4_be(), c->cport)) {
                rte_pktmbuf_append(lp.pkt, static_cast<uint16_t>(grow));
                w.stack.counters.inc(Counter::uoa_inserted);
                return;
            }
        }
    }
    w.stack.counters.inc(failure);
    uoa_send_empty(w, c);
}

// LIP:lport -> RS:rport, no payload, UOA in the flow's mode (IP id 0, TTL 64).
static void uoa_send_empty(WorkerCtx& w, const Conn* c) {
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) {
        w.stack.counters.inc(Counter::uoa_fail_alloc);
        return;
    }
    const size_t ip_len =
        sizeof(net::Ipv4Hdr) + sizeof(net::UdpHdr) + net::uoa_insert_len(uoa_mode_of(c));
    auto* eth = reinterpret_cast<net::EtherHdr*>(
        rte_pktmbuf_append(m, static_cast<uint16_t>(sizeof(net::EtherHdr) + ip_len)));
    net::UoaFlow flow;
    flow.saddr_be = c->laddr_ip.v4_be();
    flow.daddr_be = c->daddr.v4_be();
    flow.sport_be = c->lport;
    flow.dport_be = c->dport;
    flow.client_be = c->caddr.v4_be();
    flow.cport_be = c->cport;
    if (!eth || net::uoa_empty_datagram_build(reinterpret_cast<uint8_t*>(eth + 1), ip_len,
                                              uoa_mode_of(c), flow) != ip_len) {
        w.stack.counters.inc(Counter::uoa_fail_alloc);
        drop(w.stack, m, Counter::drop_mbuf_alloc);
        return;
    }
    w.stack.counters.inc(Counter::uoa_empty_sent);
    stack::ip_output<net::Af4>(w.stack, m, c->daddr);
}
template void uoa_inbound<net::Af4>(WorkerCtx&, LbPacket4&, Conn*);

}  // namespace xvs::lb
