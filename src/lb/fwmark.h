// Firewall marks without netfilter: xvs derives a packet's mark from its own classifier, the
// `fwmark_defs` rules (destination prefix, port range, protocol), so that keepalived's
// `virtual_server fwmark N` services (one service over several VIPs/ports, persistence across
// them) work. The rules are matched only for the first packet of a flow (conn_create), never
// for packets of an existing conn; first rule that matches wins. A mark has a service per
// family (IPVS's -f N and -f N -6): an entry of one family only matches packets of that family
// (an IPv4 rule compares the ::ffff: tag of the mapped form, an IPv6 one is /120 or longer), and
// its rule leads to the mark's service of that family.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "net/addr.h"
#include "net/byteorder.h"

namespace xvs::lb {

struct ServiceView;

// One `VIP[/prefix] [PORT|PORT-PORT] [tcp|udp]` entry of a mark, as the Director takes it.
struct FwmarkEntry {
    net::InetPrefix dst;      // masked; either family
    uint16_t port_first = 0;  // host order; 0-65535 = any port
    uint16_t port_last = 65535;
    uint8_t proto = 0;  // 6, 17, or 0 = both
    bool operator==(const FwmarkEntry&) const = default;
};

struct FwmarkDef {
    uint32_t mark = 0;  // 1..UINT32_MAX
    std::vector<FwmarkEntry> entries;
    bool operator==(const FwmarkDef&) const = default;
};

// Snapshot form: the prefix as two mask words, the mark's service resolved.
struct FwmarkRule {
    uint64_t addr[2];  // masked address words (net::InetAddr::word)
    uint64_t mask[2];
    uint16_t port_first, port_last;  // host order
    uint8_t proto;                   // 0 = any
    uint32_t mark;
    const ServiceView* view;

    bool matches(uint8_t p, const net::InetAddr& daddr, uint16_t dport_host) const {
        return (proto == 0 || proto == p) && dport_host >= port_first && dport_host <= port_last &&
               (daddr.word(0) & mask[0]) == addr[0] && (daddr.word(1) & mask[1]) == addr[1];
    }
};

// An entry stands for at most 2^kFwmarkMaxHostBits = 256 addresses, each a VIP xvs answers
// ARP/ND for: IPv4 /24 or longer, IPv6 /120 or longer.
inline constexpr unsigned kFwmarkMaxHostBits = 8;
inline bool fwmark_prefix_too_wide(const net::InetPrefix& p) {
    return p.len + kFwmarkMaxHostBits < net::family_bits(p.addr);
}
// The shortest prefix length p's family allows, for messages: "/24" or "/120".
inline std::string fwmark_shortest_prefix(const net::InetPrefix& p) {
    return "/" + std::to_string(net::family_bits(p.addr) - kFwmarkMaxHostBits);
}

// The rule of entry e of mark `mark`, leading to `view` (the mark's service of e's family).
inline FwmarkRule fwmark_rule(const FwmarkEntry& e, uint32_t mark, const ServiceView* view) {
    const bool v4 = e.dst.is_v4();
    const net::InetAddr full = v4 ? net::InetAddr::v4(~uint32_t{0})
                                  : net::InetAddr::from_words(~uint64_t{0}, ~uint64_t{0});
    const net::InetAddr mask = net::InetPrefix::masked(full, e.dst.len).addr;
    // IPv4: word 0 must be zero and the ::ffff: tag present, whatever the prefix length.
    const uint64_t mask0 = v4 ? ~uint64_t{0} : mask.word(0);
    return FwmarkRule{{e.dst.addr.word(0) & mask0, e.dst.addr.word(1) & mask.word(1)},
                      {mask0, mask.word(1)},
                      e.port_first,
                      e.port_last,
                      e.proto,
                      mark,
                      view};
}

// Calls f(addr) for every address of p, a prefix not fwmark_prefix_too_wide: the varying bits are all in the last 32-bit word, which
// both families keep in bytes 12..15 (net::InetAddr), so one loop serves both.
template <class F>
void fwmark_entry_addrs(const net::InetPrefix& p, F&& f) {
    const unsigned host_bits = net::family_bits(p.addr) - p.len;
    const uint64_t w1 = p.addr.word(1);
    const uint32_t base = net::ntoh32(static_cast<uint32_t>(w1 >> 32));  // bytes 12..15
    const uint32_t count = 1u << std::min(host_bits, kFwmarkMaxHostBits);
    for (uint32_t i = 0; i < count; ++i) {
        const uint64_t last = uint64_t{net::hton32(base + i)} << 32;
        f(net::InetAddr::from_words(p.addr.word(0), (w1 & 0xffffffffull) | last));
    }
}

// The first rule matching the packet's protocol, destination address and port (host order),
// or nullptr. Linear in the rules: a new connection's cost, no allocation.
inline const FwmarkRule* fwmark_classify(const std::vector<FwmarkRule>& rules, uint8_t proto,
                                         const net::InetAddr& daddr, uint16_t dport_host) {
    for (const FwmarkRule& r : rules)
        if (r.matches(proto, daddr, dport_host)) return &r;
    return nullptr;
}

}  // namespace xvs::lb
