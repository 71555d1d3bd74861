// The forwarding-mode seam (IPVS ip_vs_bind_xmit): one XmitOps entry per lb::FwdMode, bound to
// a conn once, at creation, from its dest's mode. An entry says whether the mode needs a local
// address (FULLNAT's LIP:lport; the conn's outbound tuple then ends there) and whether the
// conn's outbound tuple goes into the table (DR and TUN see only client -> RS traffic), and
// rewrites a packet of the conn in each direction. Stats, the TCP state machine, conserve
// stages around the rewrite and the TX step stay shared in lb/pipeline.cpp, which reaches the
// entries through xmit_in / xmit_out (below): they do FULLNAT's rewrite inline when it is all
// a packet needs (lb/xmit/fullnat_rewrite.h), so the common mode costs no call.
//
// A mode without an entry (in == nullptr) is not wired yet: conn_create refuses its dests,
// counted as drop_fwd_mode_unsupported.
#pragma once

#include <array>

#include "lb/fwd_mode.h"
#include "lb/xmit/dr.h"
#include "lb/xmit/fullnat.h"
#include "lb/xmit/fullnat_rewrite.h"
#include "lb/xmit/nat.h"
#include "lb/xmit/nat_tunnel.h"
#include "lb/xmit/snat.h"
#include "lb/xmit/tunnel.h"
#include "stack/pkt.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;
struct Conn;

// What a mode is, whatever the family: the same for every Af (conn_create and ConnTable read
// it before a packet's family matters).
struct XmitTraits {
    bool needs_laddr = false;        // conn_create allocates a local address and port
    bool inserts_out_tuple = false;  // ConnTable holds RS(daddr:dport) -> (laddr_ip:lport)
};

inline constexpr std::array<XmitTraits, kFwdModeCount> kXmitTraits{{
    /* FullNat */ {true, true},
    /* Nat     */ {false, true},
    /* Dr      */ {false, false},
    /* Tun     */ {false, false},
    /* Snat    */ {true, true},
    /* NatTun  */ {true, true},  // the LIP is only the outer source: no lport, NAT's out tuple
}};

constexpr const XmitTraits& xmit_traits(FwdMode m) {
    return kXmitTraits[static_cast<unsigned>(m)];
}

// The rewrite of a mode for packets of family Af.
template <class Af>
struct XmitOps {
    // client -> RS. Accept: the caller counts and sends the packet to the conn's RS.
    stack::Verdict (*in)(WorkerCtx&, LbPacket<Af>&, Conn&) = nullptr;
    // RS -> client (nullptr when the mode never sees that direction). Accept: the caller
    // sends it to the client.
    stack::Verdict (*out)(WorkerCtx&, LbPacket<Af>&, Conn&) = nullptr;
};

template <class Af>
inline constexpr std::array<XmitOps<Af>, kFwdModeCount> kXmit{{
    /* FullNat */ {&fullnat_in<Af>, &fullnat_out<Af>},
    /* Nat     */ {&nat_in<Af>, &nat_out<Af>},
    /* Dr      */ {&dr_in<Af>, nullptr},
    /* Tun     */ {&tunnel_in<Af>, nullptr},
    /* Snat    */ {&snat_in<Af>, &snat_out<Af>},
    /* NatTun  */ {&nat_tunnel_in<Af>, &nat_tunnel_out<Af>},
}};

template <class Af>
constexpr const XmitOps<Af>& xmit_of(FwdMode m) {
    return kXmit<Af>[static_cast<unsigned>(m)];
}
// A packet's rewrite by its conn's mode, client -> RS (in) or RS -> client (out; the mode
// has that direction): its entry's verdict. FULLNAT without NAT64 or UOA is the rewrite
// alone, done here without the call.
template <class Af>
[[gnu::always_inline]] inline stack::Verdict xmit_in(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    if (c.mode == FwdMode::FullNat && fullnat_plain_in<Af>(c)) {
        fullnat_rewrite_in(lp, c);
        return stack::Verdict::Accept;
    }
    return xmit_of<Af>(c.mode).in(w, lp, c);
}
template <class Af>
[[gnu::always_inline]] inline stack::Verdict xmit_out(WorkerCtx& w, LbPacket<Af>& lp, Conn& c) {
    if (c.mode == FwdMode::FullNat && fullnat_plain_out<Af>(c)) {
        fullnat_rewrite_out(lp, c);
        return stack::Verdict::Accept;
    }
    return xmit_of<Af>(c.mode).out(w, lp, c);
}

// Wired for IPv4, the one family the data path takes today.
constexpr bool xmit_supported(FwdMode m) {
    return xmit_of<net::Af4>(m).in != nullptr;
}

}  // namespace xvs::lb
