#include "lb/proto/icmp.h"

#include <rte_mbuf.h>

#include <type_traits>

#include "lb/passive.h"
#include "lb/worker_ctx.h"
#include "lb/xmit/ttl.h"
#include "lb/xmit/xmit.h"
#include "net/icmp6.h"
#include "net/icmp_related.h"
#include "net/nat64.h"
#include "stack/exception.h"
#include "stack/output.h"

namespace xvs::lb {

using stack::Counter;

namespace {

template <class Af>
bool parse_error(const LbPacket<Af>& lp, net::IcmpQuote& q) {
    if constexpr (Af::family == 4)
        return net::parse_icmp_error(lp.l4, lp.l4_len, q);
    else
        return net::parse_icmp6_error(*lp.ip, lp.l4, lp.l4_len, q);
}

template <class Af>
bool translate_error(LbPacket<Af>& lp, const net::IcmpQuote& q, const net::IcmpTranslation& t) {
    if constexpr (Af::family == 4)
        return net::translate_icmp_error(lp.ip, lp.l4, lp.l4_len, q, t);
    else
        return net::translate_icmp6_error(lp.ip, lp.l4, lp.l4_len, q, t);
}

// FNAT64: the error changes family with the conn's packets (net::icmp_error_4to6/6to4): an
// ICMPv4 error about LIP -> RS goes to the client from the VIP, an ICMPv6 one about VIP ->
// client to the RS from the local address, each as a new frame quoting the packet its
// receiver sent; the original is consumed (icmp_nat64_translated).
template <class Af>
void icmp_related_nat64(WorkerCtx& w, LbPacket<Af>& lp, const net::IcmpQuote& q, Conn& c,
                        ConnDir dir) {
    // Only these two directions exist: the IPv4 side is the RS's, the IPv6 side the client's.
    if ((Af::family == 4) != (dir == ConnDir::Out)) {
        stack::drop(w.stack, lp.pkt, Counter::drop_icmp_nat64);
        return;
    }
    using Out = std::conditional_t<Af::family == 4, net::Af6, net::Af4>;
    constexpr size_t kMax = Out::family == 4 ? net::kIcmpErrorMaxLen : net::kIcmp6ErrorMaxLen;
    rte_mbuf* m = stack::frame_alloc(w.stack);
    if (!m) {  // counted as drop_mbuf_alloc
        stack::drop(w.stack, lp.pkt, Counter::drop_icmp_nat64);
        return;
    }
    auto* out = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, sizeof(net::EtherHdr) + kMax));
    size_t n = 0;
    if (out) {
        uint8_t* l3 = out + sizeof(net::EtherHdr);
        if constexpr (Af::family == 4)
            n = net::icmp_error_4to6(l3, kMax, lp.l4, q, c.vaddr(),
                                     {c.caddr(), c.vaddr(), c.cport, c.vport});
        else
            n = net::icmp_error_6to4(l3, kMax, lp.l4, q, c.laddr_ip(),
                                     {c.daddr(), c.laddr_ip(), c.dport, c.lport},
                                     net::hton16(w.ip_id++));
    }
    if (n == 0) {
        stack::drop(w.stack, m, Counter::drop_icmp_not_sent);
        stack::drop(w.stack, lp.pkt, Counter::drop_icmp_nat64);
        return;
    }
    rte_pktmbuf_trim(m, static_cast<uint16_t>(kMax - n));
    stack::drop(w.stack, lp.pkt, Counter::icmp_nat64_translated);
    w.stack.counters.inc(Counter::icmp_related_forwarded);
    if constexpr (Af::family == 4)
        stack::ip_output<Out>(w.stack, m, c.caddr(), {&c.nh, stack::NhDir::ToClient});
    else
        stack::ip_output<Out>(w.stack, m, c.daddr(), {&c.nh, stack::NhDir::ToDest});
}

}  // namespace

template <class Af>
bool icmp_related_key(const LbPacket<Af>& lp, ConnKey& key) {
    net::IcmpQuote q;
    if (!parse_error(lp, q)) return false;
    // A quoted echo (parse_icmp_error accepts no other ICMP) carries its identifier in both
    // port positions, as SNAT's echo conns are keyed (lb/xmit/snat.h); other modes have no
    // ICMP conns, so for them it is a miss: unrelated.
    if (q.inner_proto != net::kIpProtoTcp && q.inner_proto != net::kIpProtoUdp &&
        q.inner_proto != Af::icmp_proto)
        return false;
    key = conn_key(q.inner_proto, q.inner_daddr, q.inner_saddr, q.inner_dport, q.inner_sport);
    return true;
}

template <class Af>
void icmp_related(WorkerCtx& w, LbPacket<Af>& lp, ConnRef ref) {
    auto drop = [&](Counter reason) { stack::drop(w.stack, lp.pkt, reason); };
    if (!ref.conn) {
        // Not to an address of ours: maybe about the kernel's own traffic (exception path).
        if (!lp.local)
            return stack::exception_or_drop(w.stack, lp.port, lp.pkt, Counter::drop_icmp_unrelated);
        return drop(Counter::drop_icmp_unrelated);
    }
    Conn& c = *ref.conn;
    net::IcmpQuote q;
    if (!parse_error(lp, q)) return drop(Counter::drop_icmp_malformed);
    // About a packet to the RS: passive health checking may judge the conn by it; the error
    // goes on to the client all the same.
    if (ref.dir == ConnDir::Out) passive_icmp_error<Af>(c.dest->stats[w.id], c, q.type, q.code);
    // NatTun: a too-big report about the tunnel (nat_tunnel_icmp_unwrap lowered it to the inner
    // MTU) or from the RS itself: the conn remembers it; the client hears it below.
    if (ref.dir == ConnDir::Out && c.mode == FwdMode::NatTun && q.next_hop_mtu)
        nat_tunnel_pmtu_lower(w, c, q.next_hop_mtu);
    if (c.caddr().is_v4() != c.daddr().is_v4()) return icmp_related_nat64(w, lp, q, c, ref.dir);
    // NAT and SNAT forward as a router, their conns' errors included (counted and freed if
    // expired); FULLNAT, DR and TUN leave TTL alone, as for their own packets.
    if ((c.mode == FwdMode::Snat || c.mode == FwdMode::Nat) && !ttl_decrement(w, lp)) return;
    if (ref.dir == ConnDir::In) {
        // The quote is a packet to the client (VIP:vport -> client:cport); the error came from
        // the client's side and goes to the RS, about the packet the RS sent.
        if (c.mode == FwdMode::Dr || c.mode == FwdMode::Tun) {
            // The RS sent it as VIP -> client itself: forward unchanged, the way the conn's
            // client packets go (DR: to the RS's MAC; TUN: encapsulated).
            if (xmit_of<Af>(c.mode).in(w, lp, c) != stack::Verdict::Accept) return;
        } else {
            const net::IcmpTranslation t{
                // FULLNAT and SNAT hide the sender behind the local / WAN address.
                c.mode == FwdMode::FullNat || c.mode == FwdMode::Snat ? c.laddr_ip()
                                                                      : Af::src(*lp.ip),
                c.daddr(),
                c.daddr(),
                c.laddr_ip(),
                c.dport,
                c.lport};
            if (!translate_error(lp, q, t)) return drop(Counter::drop_icmp_malformed);
            // NatTun: the RS is reached through the conn's tunnel only.
            if (c.mode == FwdMode::NatTun && nat_tunnel_wrap(w, lp, c) != stack::Verdict::Accept)
                return;
        }
        w.stack.counters.inc(Counter::icmp_related_forwarded);
        stack::ip_output<Af>(w.stack, lp.pkt, c.daddr(), {&c.nh, stack::NhDir::ToDest});
        return;
    }
    // The quote is a packet to the RS (LIP:lport or client:cport -> RS:rport); the error goes
    // to the client, about the packet it sent to the VIP.
    // SNAT: the error comes from the outside (the host or a router on the way) and keeps
    // its source; the other modes answer for the VIP.
    const net::IcmpTranslation t{c.mode == FwdMode::Snat ? Af::src(*lp.ip) : c.vaddr(),
                                 c.caddr(),
                                 c.caddr(),
                                 c.vaddr(),
                                 c.cport,
                                 c.vport};
    if (!translate_error(lp, q, t)) return drop(Counter::drop_icmp_malformed);
    w.stack.counters.inc(Counter::icmp_related_forwarded);
    stack::ip_output<Af>(w.stack, lp.pkt, c.caddr(), {&c.nh, stack::NhDir::ToClient});
}

template bool icmp_related_key<net::Af4>(const LbPacket4&, ConnKey&);
template bool icmp_related_key<net::Af6>(const LbPacket6&, ConnKey&);
template void icmp_related<net::Af4>(WorkerCtx&, LbPacket4&, ConnRef);
template void icmp_related<net::Af6>(WorkerCtx&, LbPacket6&, ConnRef);

}  // namespace xvs::lb
