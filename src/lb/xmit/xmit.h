// The forwarding-mode seam (IPVS ip_vs_bind_xmit): one XmitOps entry per lb::FwdMode, bound to
// a conn once, at creation, from its dest's mode. An entry says whether the mode needs a local
// address (FULLNAT's LIP:lport; the conn's outbound tuple then ends there) and whether the
// conn's outbound tuple goes into the table (DR and TUN see only client -> RS traffic), and
// rewrites a packet of the conn in each direction. Stats, the TCP state machine, conserve
// stages around the rewrite and the TX step stay shared in lb/pipeline.cpp.
//
// A mode without an entry (in == nullptr) is not wired yet: conn_create refuses its dests,
// counted as drop_fwd_mode_unsupported.
#pragma once

#include <array>

#include "lb/fwd_mode.h"
#include "lb/xmit/dr.h"
#include "lb/xmit/fullnat.h"
#include "lb/xmit/nat.h"
#include "lb/xmit/tunnel.h"
#include "lb/xmit/snat.h"
#include "stack/pkt.h"

namespace xvs::lb {

struct WorkerCtx;
struct LbPacket;
struct Conn;

struct XmitOps {
    bool needs_laddr = false;        // conn_create allocates a local address and port
    bool inserts_out_tuple = false;  // ConnTable holds RS(daddr:dport) -> (laddr_ip:lport)
    // client -> RS. Accept: the caller counts and sends the packet to the conn's RS.
    stack::Verdict (*in)(WorkerCtx&, LbPacket&, Conn&) = nullptr;
    // RS -> client (nullptr when the mode never sees that direction). Accept: the caller
    // sends it to the client.
    stack::Verdict (*out)(WorkerCtx&, LbPacket&, Conn&) = nullptr;
};

inline constexpr std::array<XmitOps, kFwdModeCount> kXmit{{
    /* FullNat */ {true, true, &fullnat_in, &fullnat_out},
    /* Nat     */ {false, true, &nat_in, &nat_out},
    /* Dr      */ {false, false, &dr_in, nullptr},
    /* Tun     */ {false, false, &tunnel_in, nullptr},
    /* Snat    */ {true, true, &snat_in, &snat_out},
}};

constexpr const XmitOps& xmit_of(FwdMode m) {
    return kXmit[static_cast<unsigned>(m)];
}
constexpr bool xmit_supported(FwdMode m) {
    return xmit_of(m).in != nullptr;
}

}  // namespace xvs::lb
