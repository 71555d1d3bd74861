// SNAT "match" services (DPVS's name): instead of VIP:port, a service is selected by what a
// packet from an inside host looks like: protocol, source and destination address/port
// ranges, and the director ports it comes in on (iif) and would leave by (oif). MatchKey is
// the service's identity (ipvsadm -H, keepalived `virtual_server match NAME`), and its text
// form is DPVS's: "proto=tcp,src-range=A-B[:P-Q],dst-range=...,iif=PORT,oif=PORT".
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "common/result.h"
#include "net/addr.h"

namespace xvs::lb {

// Addresses first..last and ports port_first..port_last, both inclusive. An all-zero range
// (DPVS's 0.0.0.0-0.0.0.0:0-0) matches everything; ports 0-0 match every port.
struct AddrRange {
    net::InetAddr first;  // one family; compared as big-endian 128-bit numbers
    net::InetAddr last;
    uint16_t port_first = 0;  // host order
    uint16_t port_last = 0;
    bool operator==(const AddrRange&) const = default;

    bool any_addr() const { return first.is_unspecified() && last.is_unspecified(); }
    bool any_port() const { return port_first == 0 && port_last == 0; }
    bool any() const { return any_addr() && any_port(); }
    // port in host order.
    bool contains(const net::InetAddr& addr, uint16_t port) const {
        if (!any_addr() &&
            (std::memcmp(addr.b, first.b, 16) < 0 || std::memcmp(addr.b, last.b, 16) > 0))
            return false;
        return any_port() || (port >= port_first && port <= port_last);
    }
};

// DPVS's RANGE: "A.B.C.D[-A.B.C.D][:P[-Q]]" for IPv4; for IPv6 "[A[-B]]:P[-Q]" with ports or
// "A[-B]" without. "" is the any-range. Errors say what is wrong.
Result<AddrRange> parse_addr_range(std::string_view text);
// "A-B" (or "A" for a single address), ":P-Q" appended when ports are set (an IPv6 range in
// brackets then); "" for any.
std::string to_string(const AddrRange& r);
// 4 or 6 for a range with addresses; 0 for one that matches every address.
inline uint8_t range_family(const AddrRange& r) { return r.any_addr() ? 0 : r.first.is_v4() ? 4 : 6; }

struct MatchKey {
    uint8_t proto = 6;   // 6 TCP, 17 UDP, 1 ICMP
    uint8_t family = 4;  // of the packets it translates (DPVS af=): its ranges' and WANs' family
    AddrRange src;
    AddrRange dst;
    std::string iif;  // director port name; "" = any
    std::string oif;
    bool operator==(const MatchKey&) const = default;
};

// "tcp" | "udp" | "icmp"; nullopt for other numbers / names.
std::string_view match_proto_name(uint8_t proto);
std::optional<uint8_t> match_proto_from_name(std::string_view name);

// ipvsadm -H text: "proto=tcp,src-range=A-B,oif=wan0" with empty parts left out (the form
// -L and -S print and -H reads back); ",af=ipv6" follows proto for an IPv6 service.
std::string to_string(const MatchKey& k);
// Parses DPVS's -H value: comma-separated key=value, keys proto (required), af (ipv4|ipv6),
// src-range, dst-range, iif, oif; an empty value (as DPVS's -S writes "iif=") is "not set".
// The family is af's, or the ranges' (which must agree), IPv4 when neither says.
Result<MatchKey> parse_match(std::string_view text);
// The family of a key whose ranges are set: `stated` (4, 6, or 0 for not stated) checked
// against the ranges', which must agree; IPv4 when neither says.
Result<uint8_t> match_family(const MatchKey& k, uint8_t stated);

}  // namespace xvs::lb
