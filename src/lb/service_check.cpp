#include "lb/service_check.h"

#include <string>

#include "lb/service.h"
#include "lb/xmit/xmit.h"

namespace xvs::lb {

bool fwd_mode_implemented(FwdMode mode) {
    return xmit_supported(mode);
}

Result<void> service_check(uint8_t proto, FwdMode mode, uint32_t flags) {
    const std::string m(fwd_names(mode).keepalived);
    if (mode == FwdMode::Snat)
        return make_error(
            "lb_kind SNAT is only for match services: write `virtual_server match NAME { "
            "protocol ...; lb_kind SNAT; src-range A-B; oif PORT; real_server WAN_IP 0 }` "
            "(xvsadm -A -H proto=tcp,src-range=A-B,oif=PORT)");
    if (!fwd_mode_implemented(mode)) {
        std::string have;
        for (const auto& n : kFwdModeNames)
            if (n.mode != FwdMode::Snat && fwd_mode_implemented(n.mode))
                have += (have.empty() ? "" : ", ") + std::string(n.keepalived);
        return make_error("lb_kind " + m + " is not supported yet (use " + have + ")");
    }
    const bool tcp = proto == 6;
    const bool pp = flags & (kSvcFlagPpV1 | kSvcFlagPpV2);
    const bool uoa = flags & (kSvcFlagUoaOpp | kSvcFlagUoaIpo);
    if ((flags & kSvcFlagOps) && proto != 17)
        return make_error("ops (one-packet scheduling) needs protocol UDP");
    if ((flags & kSvcFlagHashQid) && proto != 17)
        return make_error("hash target qid (QUIC connection ID) needs protocol UDP");
    if ((flags & kSvcFlagPeSip) && proto != 17)
        return make_error("persistence_engine sip (--pe sip) needs protocol UDP");
    if ((flags & kSvcFlagSynProxy) && !tcp)
        return make_error("syn_proxy needs protocol TCP (SYN cookies are a TCP handshake)");
    // NAT would work in principle (both directions pass the director); the SYN proxy's RS
    // handshake is written and tested for FULLNAT and NatTun (NAT over a tunnel) only.
    if ((flags & kSvcFlagSynProxy) && mode != FwdMode::FullNat && mode != FwdMode::NatTun)
        return make_error("syn_proxy needs lb_kind FNAT or NAT with nat_tunnel (not done yet for " +
                          m + ")");
    if ((flags & kSvcFlagToa) && !tcp)
        return make_error("toa on needs protocol TCP (UDP clients get UOA)");
    if ((flags & kSvcFlagToa) && pp)
        return make_error(std::string("toa on cannot be combined with proxy_protocol ") +
                          ((flags & kSvcFlagPpV1) ? "v1" : "v2"));
    if ((flags & kSvcFlagPpV1) && !tcp)
        return make_error("proxy_protocol v1 has no UDP form (use v2)");
    if (uoa && tcp)
        return make_error(std::string("uoa ") + ((flags & kSvcFlagUoaOpp) ? "opp" : "ipo") +
                          " needs protocol UDP (TCP clients get toa or proxy_protocol)");
    if (uoa && pp)
        return make_error(std::string("uoa ") + ((flags & kSvcFlagUoaOpp) ? "opp" : "ipo") +
                          " cannot be combined with proxy_protocol v2");
    if ((flags & (kSvcFlagToa | kSvcFlagPpV1 | kSvcFlagPpV2 | kSvcFlagUoaOpp | kSvcFlagUoaIpo)) &&
        mode != FwdMode::FullNat) {
        const char* what = (flags & kSvcFlagToa) ? "toa" : pp ? "proxy_protocol" : "uoa";
        return make_error(std::string(what) + " needs lb_kind FNAT (with " + m +
                          " the real server sees the client's own address)");
    }
    return {};
}

Result<void> match_service_check(uint8_t proto, FwdMode mode, uint32_t flags) {
    if (proto != 6 && proto != 17 && proto != 1)
        return make_error("a match service's protocol must be TCP, UDP or ICMP");
    if (mode != FwdMode::Snat)
        return make_error("a match service forwards by SNAT only, not lb_kind " +
                          std::string(fwd_names(mode).keepalived) +
                          ": use lb_kind SNAT (xvsadm -J), or a VIP:port service for " +
                          std::string(fwd_names(mode).keepalived));
    if (flags & kSvcFlagSynProxy) return make_error("syn_proxy is not for SNAT match services");
    if (flags & kSvcFlagToa) return make_error("toa is not for SNAT match services");
    if (flags & (kSvcFlagPpV1 | kSvcFlagPpV2))
        return make_error("proxy_protocol is not for SNAT match services");
    if (flags & (kSvcFlagUoaOpp | kSvcFlagUoaIpo))
        return make_error("uoa is not for SNAT match services");
    if (!fwd_mode_implemented(mode))
        return make_error("lb_kind SNAT is not supported yet (only FNAT)");
    return {};
}

}  // namespace xvs::lb
