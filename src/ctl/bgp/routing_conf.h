// The model of `bgp_defs { ... }` and `ospf_defs { ... }`: how xvsd announces the VIPs it
// serves through BIRD 2 (ctl/bgp/announcer.h). The parser (ctl/bgp/config_parser_bgp.cpp)
// fills and checks it; everything here is valid BIRD input once rendered (bird_config.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "net/addr.h"

namespace xvs::ctl {

// `neighbor ADDR remote_as N [port N] [hold_time S] [bfd] [password X] [multihop N]`.
struct BgpNeighbor {
    net::InetAddr addr;
    uint32_t remote_as = 0;
    uint16_t port = 179;
    uint32_t hold_time = 0;  // seconds, 0 = BIRD's default (240); else 3..65535
    bool bfd = false;
    std::string password;    // TCP MD5 signature (RFC 2385); empty: none
    uint32_t multihop = 0;   // eBGP multihop TTL, 0 = directly connected
    bool operator==(const BgpNeighbor&) const = default;
};

// A standard community (RFC 1997) "ASN:VALUE".
struct BgpCommunity {
    uint16_t asn = 0;
    uint16_t value = 0;
    bool operator==(const BgpCommunity&) const = default;
};

struct BgpDefs {
    bool present = false;  // a bgp_defs block was given
    uint32_t local_as = 0;
    std::vector<BgpNeighbor> neighbors;
    std::optional<net::InetAddr> next_hop;        // `next_hop ADDR`: else BIRD's own address
    std::optional<net::InetAddr> source_address;  // `source_address ADDR`: the session's source
    std::vector<BgpCommunity> communities;
    std::optional<uint32_t> med;
    bool operator==(const BgpDefs&) const = default;
};

// `interface NAME [cost N] [hello S] [dead S]`: an OSPF interface of the director's kernel
// (one reaching the router through the exception path).
struct OspfInterface {
    std::string name;
    std::optional<uint32_t> cost;   // 1..65535
    std::optional<uint32_t> hello;  // seconds, 1..65535
    std::optional<uint32_t> dead;   // seconds, 1..65535; BIRD's default 4 x hello
    bool operator==(const OspfInterface&) const = default;
};

struct OspfDefs {
    bool present = false;
    std::string area = "0";  // a number or A.B.C.D, as BIRD writes it
    std::vector<OspfInterface> interfaces;
    std::optional<uint32_t> metric;  // `metric N`: the external (type 2) metric of the VIPs
    bool operator==(const OspfDefs&) const = default;
};

// What both sections share (either may set it; set twice it must agree).
struct RoutingDefs {
    std::string bird_socket = "/run/bird/bird.ctl";  // Debian's bird2 control socket
    std::string bird_config = "/etc/bird/xvs.conf";  // written by xvsd, included by bird.conf
    std::optional<net::InetAddr> router_id;           // IPv4; unset: BIRD picks one
    // The liveness interface: a TAP that only xvsd's open descriptor keeps (ctl/bgp/liveness.h).
    // The VIP routes are static routes through it, so they go the moment xvsd does.
    std::string liveness_interface = "xvs-alive";
    BgpDefs bgp;
    OspfDefs ospf;
    bool enabled() const { return bgp.present || ospf.present; }
    bool operator==(const RoutingDefs&) const = default;
};

}  // namespace xvs::ctl
