// SNAT rewrites and the match service lookup, see lb/xmit/snat.h.
#include "lb/xmit/snat.h"

#include <rte_mbuf.h>

#include "lb/conn.h"
#include "lb/service.h"
#include "lb/snapshot.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/ttl.h"
#include "net/nat_rewrite.h"
#include "stack/output.h"

namespace xvs::lb {

template <class Af>
stack::Verdict snat_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    if (!ttl_decrement(w, lp)) return stack::Verdict::Drop;
    if (lp.proto == Af::icmp_proto)
        net::rewrite_icmp_echo<Af>(lp.ip, lp.l4, net::IcmpEchoSide::Source, c.laddr_ip(), c.lport);
    else
        net::rewrite_saddr_sport<Af>(lp.ip, lp.l4, lp.proto, c.laddr_as<Af>(), c.lport);
    return stack::Verdict::Accept;
}

template <class Af>
stack::Verdict snat_out(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    if (!ttl_decrement(w, lp)) return stack::Verdict::Drop;
    if (lp.proto == Af::icmp_proto)
        net::rewrite_icmp_echo<Af>(lp.ip, lp.l4, net::IcmpEchoSide::Destination, c.caddr(),
                                   c.cport);
    else
        net::rewrite_daddr_dport<Af>(lp.ip, lp.l4, lp.proto, c.caddr_as<Af>(), c.cport);
    return stack::Verdict::Accept;
}

template <class Af>
const ServiceView* snat_match(const Snapshot& snap, const LbPacket<Af>& lp) {
    if (snap.matches.empty()) return nullptr;
    int16_t oif = -2;  // route looked up once, for the first match that asks
    const uint16_t sport = net::ntoh16(lp.key.sport);
    const uint16_t dport = net::ntoh16(lp.key.dport);
    for (const ServiceView* v : snap.matches) {
        const ServiceView::Match& m = v->match;
        // An IPv6 packet is never translated to an IPv4 WAN address, nor the reverse.
        if (m.proto != lp.proto || (m.family != 0 && m.family != Af::family)) continue;
        if (m.iif >= 0 && m.iif != lp.port) continue;
        if (!m.src.contains(lp.key.saddr, sport) || !m.dst.contains(lp.key.daddr, dport)) continue;
        if (oif == -2) {
            const stack::NextHop nh = snap.stack.route_lookup(lp.key.daddr);
            oif = nh.found ? int16_t(nh.port) : int16_t(-1);
        }
        if (m.oif != oif) continue;
        return v;
    }
    return nullptr;
}

template stack::Verdict snat_in<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict snat_in<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);
template stack::Verdict snat_out<net::Af4>(WorkerCtx&, LbPacket4&, Conn&);
template stack::Verdict snat_out<net::Af6>(WorkerCtx&, LbPacket6&, Conn&);
template const ServiceView* snat_match<net::Af4>(const Snapshot&, const LbPacket4&);
template const ServiceView* snat_match<net::Af6>(const Snapshot&, const LbPacket6&);

}  // namespace xvs::lb
