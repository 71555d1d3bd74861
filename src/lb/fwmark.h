// Firewall marks without netfilter: xvs derives a packet's mark from its own classifier, the
// `fwmark_defs` rules (destination prefix, port range, protocol), so that keepalived's
// `virtual_server fwmark N` services (one service over several VIPs/ports, persistence across
// them) work. The rules are matched only for the first packet of a flow (conn_create), never
// for packets of an existing conn; first rule that matches wins.
#pragma once

#include <cstdint>
#include <vector>

#include "net/addr.h"

namespace xvs::lb {

struct ServiceView;

// One `VIP[/prefix] [PORT|PORT-PORT] [tcp|udp]` entry of a mark, as the Director takes it.
struct FwmarkEntry {
    net::InetPrefix dst;      // masked
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

// The first rule matching the packet's protocol, destination address and port (host order),
// or nullptr. Linear in the rules: a new connection's cost, no allocation.
inline const FwmarkRule* fwmark_classify(const std::vector<FwmarkRule>& rules, uint8_t proto,
                                         const net::InetAddr& daddr, uint16_t dport_host) {
    for (const FwmarkRule& r : rules)
        if (r.matches(proto, daddr, dport_host)) return &r;
    return nullptr;
}

}  // namespace xvs::lb
