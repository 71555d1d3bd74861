// Forwarding modes (IPVS semantics, DPVS names) and the one table of their names: the
// keepalived keyword (lb_kind / lvs_method), the control-protocol and ipvsadm long name, the
// ipvsadm -L "Forward" column and the ipvsadm switch that selects it. Config, API, CLI and the
// data path all use FwdMode and this table; no layer keeps a second enum of its own.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace xvs::lb {

// NatTun (issue 20, seed 003's "new LVS tunnel"): NAT whose both directions cross an IP tunnel
// between a local address and the RS (lb/xmit/nat_tunnel.h). keepalived spells it as NAT plus
// `nat_tunnel ipip|gue [port N]`, so its keepalived name is NAT too (NAT, first, wins a lookup).
enum class FwdMode : uint8_t { FullNat, Nat, Dr, Tun, Snat, NatTun };
inline constexpr unsigned kFwdModeCount = 6;

struct FwdModeNames {
    FwdMode mode;
    std::string_view keepalived;  // lb_kind FNAT|NAT|DR|TUN|SNAT
    std::string_view api;         // control protocol and `xvsadm -S`: fullnat masq dr tunnel snat
    std::string_view label;       // ipvsadm -L Forward column: FullNat Masq Route Tunnel SNAT
    std::string_view ipvsadm;     // ipvsadm switch: --fullnat -m -g -i -J (DPVS's; also --snat)
};

inline constexpr std::array<FwdModeNames, kFwdModeCount> kFwdModeNames{{
    {FwdMode::FullNat, "FNAT", "fullnat", "FullNat", "--fullnat"},
    {FwdMode::Nat, "NAT", "masq", "Masq", "-m"},
    {FwdMode::Dr, "DR", "dr", "Route", "-g"},
    {FwdMode::Tun, "TUN", "tunnel", "Tunnel", "-i"},
    {FwdMode::Snat, "SNAT", "snat", "SNAT", "-J"},
    {FwdMode::NatTun, "NAT", "nattun", "NatTun", "--nat-tunnel"},
}};

constexpr const FwdModeNames& fwd_names(FwdMode m) {
    return kFwdModeNames[static_cast<unsigned>(m)];
}

// By keepalived keyword (case-sensitive as keepalived's) or by API name.
constexpr std::optional<FwdMode> fwd_from_keepalived(std::string_view s) {
    for (const auto& n : kFwdModeNames)
        if (n.keepalived == s) return n.mode;
    return std::nullopt;
}
constexpr std::optional<FwdMode> fwd_from_api(std::string_view s) {
    for (const auto& n : kFwdModeNames)
        if (n.api == s) return n.mode;
    return std::nullopt;
}

static_assert(
    [] {
        for (unsigned i = 0; i < kFwdModeCount; ++i)
            if (static_cast<unsigned>(kFwdModeNames[i].mode) != i) return false;
        return true;
    }(),
    "kFwdModeNames is indexed by FwdMode");

// Tunnel encapsulation (TUN and NatTun modes): IPIP (protocol 4) or GUE over UDP (keepalived
// `lvs_method TUN type gue port N`, ipvsadm `--tun-type gue --tun-port N`).
enum class TunType : uint8_t { Ipip, Gue };

}  // namespace xvs::lb
