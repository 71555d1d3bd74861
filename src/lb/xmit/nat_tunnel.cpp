#include "lb/xmit/nat_tunnel.h"

#include "lb/conn.h"
#include "lb/laddr.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/tunnel.h"
#include "net/nat_rewrite.h"
#include "net/tcp_options.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

// SYN or SYN-ACK: the MSS lowered by the tunnel overhead, so the peer's full-sized segments fit
// the tunnel (RFC 4459 section 3.2, what routers with tunnels do). A SYN without MSS keeps the
// default 536 (RFC 9293), which fits any tunnel here.
template <class Af>
void clamp_mss(WorkerCtx& w, LbPacket<Af>& lp, size_t overhead) {
    if (lp.proto != net::kIpProtoTcp || !(lp.tcp_flags & net::kTcpSyn)) return;
    auto* tcp = reinterpret_cast<net::TcpHdr*>(lp.l4);
    auto opts = net::tcp_options_span(tcp, lp.l4_len);
    const auto mss = net::tcp_find_mss(opts);
    if (!mss || *mss <= overhead + 536) return;
    if (net::tcp_set_mss(opts, static_cast<uint16_t>(*mss - overhead), &tcp->checksum))
        w.stack.counters.inc(Counter::nattun_mss_clamped);
}

bool gue_of(const Conn& c) {
    return c.flags & kConnTunGue;
}

}  // namespace

template <class Af>
stack::Verdict nat_tunnel_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    const bool gue = gue_of(c);
    const size_t overhead = tunnel_overhead<Af>(gue);
    // Checked before the rewrite: a frag-needed quotes the packet as the client sent it.
    if (!tunnel_mtu_admit(w, lp, c, overhead)) return stack::Verdict::Drop;
    net::rewrite_daddr_dport<Af>(lp.ip, lp.l4, lp.proto, c.daddr, c.dport);
    clamp_mss(w, lp, overhead);
    return tunnel_push(w, lp, c, w.laddr_of(&c)->addr, overhead, gue);
}

template <class Af>
stack::Verdict nat_tunnel_out(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    // The RS answers through the tunnel only: a bare reply would mean it routes clients
    // through us without `xvs-rs tunnel` (or someone forges its source).
    if (!lp.tunneled) {
        stack::drop(w.stack, lp.pkt, Counter::drop_nattun_bare_reply);
        return stack::Verdict::Drop;
    }
    net::rewrite_saddr_sport<Af>(lp.ip, lp.l4, lp.proto, c.vaddr, c.vport);
    clamp_mss(w, lp, tunnel_overhead<Af>(gue_of(c)));
    return stack::Verdict::Accept;
}

template <class Af>
stack::Verdict nat_tunnel_wrap(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    const bool gue = gue_of(c);
    return tunnel_push(w, lp, c, w.laddr_of(&c)->addr, tunnel_overhead<Af>(gue), gue);
}

template stack::Verdict nat_tunnel_in<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict nat_tunnel_in<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);
template stack::Verdict nat_tunnel_out<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict nat_tunnel_out<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);
template stack::Verdict nat_tunnel_wrap<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict nat_tunnel_wrap<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);

}  // namespace xvs::lb
