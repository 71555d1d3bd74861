// UOA on the packet path (FULLNAT UDP), see lb/conserve/uoa.h.
#include "lb/conserve/uoa.h"

#include <rte_mbuf.h>

#include <cstring>

#include "lb/conn_egress.h"
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
// uoa_max_trail datagrams carries the client address (4 or 16 bytes, the client's family:
// FNAT64 puts an IPv6 client into an IPv4 datagram). In place when the grown datagram fits the
// egress MTU and the mbuf; otherwise an empty datagram carrying UOA goes first and this one
// follows unchanged (DPVS does the same), so the RS learns the address before the data.
static void uoa_send_empty(WorkerCtx& w, const Conn* c);

void uoa_inbound(WorkerCtx& w, rte_mbuf* m, uint8_t* ip_hdr, Conn* c) {
    if (--w.feat_of(c).uoa_left == 0) c->flags &= static_cast<uint16_t>(~kConnUoa);
    const net::UoaMode mode = uoa_mode_of(c);
    const size_t grow = net::uoa_insert_len(mode, c->caddr());
    uint16_t len_be;
    std::memcpy(&len_be, ip_hdr + (c->daddr().is_v4() ? 2 : 4), sizeof(len_be));
    const size_t ip_len = net::ntoh16(len_be) + (c->daddr().is_v4() ? 0 : sizeof(net::Ipv6Hdr));
    const stack::PortView& out_port =
        w.stack.view->ports[conn_egress_port(w, *c, stack::NhDir::ToDest).value_or(0)];
    Counter failure = Counter::uoa_fail_mtu;
    if (ip_len + grow <= out_port.mtu) {
        // Ethernet padding past the IP length goes: the datagram grows from its real end.
        const auto frame = static_cast<uint32_t>(ip_hdr - rte_pktmbuf_mtod(m, uint8_t*) + ip_len);
        if (rte_pktmbuf_data_len(m) > frame)
            rte_pktmbuf_trim(m, static_cast<uint16_t>(rte_pktmbuf_data_len(m) - frame));
        failure = Counter::uoa_fail_no_room;
        if (grow <= rte_pktmbuf_tailroom(m)) {
            // With MTU and room checked, only a full IPv4 option space (ipo) or IPv6 extension
            // headers (opp) refuse it.
            failure = Counter::uoa_fail_ip_options;
            if (net::uoa_insert(mode, ip_hdr, ip_len, ip_len + grow, c->caddr(), c->cport)) {
                rte_pktmbuf_append(m, static_cast<uint16_t>(grow));
                w.stack.counters.inc(Counter::uoa_inserted);
                return;
            }
        }
    }
    w.stack.counters.inc(failure);
    uoa_send_empty(w, c);
}

// LIP:lport -> RS:rport, no payload, UOA in the flow's mode (IPv4: id 0, TTL 64; IPv6: hop
// limit 64).
static void uoa_send_empty(WorkerCtx& w, const Conn* c) {
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) {
        w.stack.counters.inc(Counter::uoa_fail_alloc);
        return;
    }
    const size_t ip_len = (c->daddr().is_v4() ? sizeof(net::Ipv4Hdr) : sizeof(net::Ipv6Hdr)) +
                          sizeof(net::UdpHdr) + net::uoa_insert_len(uoa_mode_of(c), c->caddr());
    auto* eth = reinterpret_cast<net::EtherHdr*>(
        rte_pktmbuf_append(m, static_cast<uint16_t>(sizeof(net::EtherHdr) + ip_len)));
    net::UoaFlowInet flow;
    flow.saddr = c->laddr_ip();
    flow.daddr = c->daddr();
    flow.sport_be = c->lport;
    flow.dport_be = c->dport;
    flow.client = c->caddr();
    flow.cport_be = c->cport;
    if (!eth || net::uoa_empty_datagram_build(reinterpret_cast<uint8_t*>(eth + 1), ip_len,
                                              uoa_mode_of(c), flow) != ip_len) {
        w.stack.counters.inc(Counter::uoa_fail_alloc);
        drop(w.stack, m, Counter::drop_mbuf_alloc);
        return;
    }
    w.stack.counters.inc(Counter::uoa_empty_sent);
    if (c->daddr().is_v4())
        stack::ip_output<net::Af4>(w.stack, m, c->daddr());
    else
        stack::ip_output<net::Af6>(w.stack, m, c->daddr());
}

}  // namespace xvs::lb
