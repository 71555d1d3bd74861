// FULLNAT's address and port rewrite of a conn that needs nothing else (no NAT64, no UOA):
// inline, so that fullnat_in / fullnat_out (lb/xmit/fullnat.cpp) and lb's lean path
// (lb/pipeline.cpp, which calls no xmit entry for such a conn) share one definition.
#pragma once

#include "lb/conn.h"
#include "net/nat_rewrite.h"
#include "stack/pkt.h"

namespace xvs::lb {

// client:cport -> VIP:vport becomes LIP:lport -> RS:dport without more: not for an IPv6
// client's conn to an IPv4 RS (NAT64), nor one whose datagrams carry UOA.
template <class Af>
[[gnu::always_inline]] inline bool fullnat_plain_in(const Conn& c) {
    if constexpr (Af::family == 6) {
        if (c.daddr_as<Af>().is_v4()) return false;
    }
    return !(c.flags & kConnUoa);
}

// RS:dport -> LIP:lport becomes VIP:vport -> client:cport without more: not for an IPv4
// reply whose conn is wide (its client is IPv6: NAT64).
template <class Af>
[[gnu::always_inline]] inline bool fullnat_plain_out(const Conn& c) {
    if constexpr (Af::family == 4) return !c.wide;
    return true;
}

template <class Af>
[[gnu::always_inline]] inline void fullnat_rewrite_in(const stack::PktMeta<Af>& p, const Conn& c) {
    net::rewrite_both_by<Af>(p.ip, p.l4, p.proto, c.laddr_as<Af>(), c.daddr_as<Af>(), c.lport,
                             c.dport, c.addr_sum_in());
}

template <class Af>
[[gnu::always_inline]] inline void fullnat_rewrite_out(const stack::PktMeta<Af>& p, const Conn& c) {
    net::rewrite_both_by<Af>(p.ip, p.l4, p.proto, c.vaddr_as<Af>(), c.caddr_as<Af>(), c.vport,
                             c.cport, c.addr_sum_out());
}

}  // namespace xvs::lb
