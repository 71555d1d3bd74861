// The stack's part of a configuration snapshot: ports, own addresses, routes. Immutable once
// published; workers read it once per burst.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/flat_map.h"
#include "net/headers.h"

namespace xvs::lb {
struct LocalAddr;
}

namespace xvs::stack {

inline constexpr unsigned kMaxPorts = 8;

struct PortView {
    uint16_t port_id = 0;  // DPDK port id
    net::MacAddr mac{};
    uint16_t mtu = 1500;   // L3 MTU; frames above mtu + 14 are dropped on RX
    std::string name;
    // Outer source of TUN packets leaving by this port (network order): the configured
    // tunnel_source, else the port's first own address (port_source).
    uint32_t tunnel_source = 0;
};

enum class AddrKind : uint8_t { Director, Vip, Lip };

struct OwnAddr {
    AddrKind kind = AddrKind::Director;
    uint8_t port = 0;             // index into StackView::ports
    lb::LocalAddr* lip = nullptr;  // for kind == Lip
};

struct AddrKey {
    uint32_t be = 0;
    bool operator==(const AddrKey&) const = default;
};
inline uint64_t flat_hash(const AddrKey& k) { return mix64(k.be); }

struct RouteEntry {
    uint32_t prefix = 0;  // host order, masked
    uint32_t mask = 0;    // host order
    uint8_t len = 0;
    uint8_t port = 0;     // index into ports
    uint32_t gateway = 0;  // network order; 0 = directly connected (next hop = destination)
    uint32_t source = 0;   // network order: own address used as source for ARP on this route
};

struct NextHop {
    uint32_t addr = 0;  // network order
    uint8_t port = 0;
    bool found = false;
};

struct StackView {
    std::vector<PortView> ports;
    FlatMap<AddrKey, OwnAddr> addrs;
    std::vector<RouteEntry> routes;  // longest prefix first
    std::vector<uint32_t> port_source;  // per port: an own address (network order) for ARP

    const OwnAddr* own(uint32_t addr_be) const { return addrs.find(AddrKey{addr_be}); }

    // True when addr (network order) is a host we talk to directly on port: a gateway of a
    // route through port, or an address whose best route is a connected one (no gateway)
    // through port. ARP is learned and answered only for such senders, so a frame on one
    // port can never claim a neighbour that lives behind another (an ARP hijack).
    bool on_link(uint32_t addr_be, uint8_t port) const {
        for (const auto& r : routes)
            if (r.gateway == addr_be && r.port == port) return true;
        const uint32_t h = __builtin_bswap32(addr_be);
        for (const auto& r : routes)
            if ((h & r.mask) == r.prefix) return r.gateway == 0 && r.port == port;
        return false;
    }

    // Longest-prefix match. Routes are few on a director (connected subnets, a default, some
    // statics), so a scan in prefix-length order beats a trie in cache misses.
    NextHop route_lookup(uint32_t daddr_be) const {
        uint32_t h = __builtin_bswap32(daddr_be);
        for (const auto& r : routes) {
            if ((h & r.mask) == r.prefix) {
                return NextHop{r.gateway ? r.gateway : daddr_be, r.port, true};
            }
        }
        return NextHop{};
    }
};

}  // namespace xvs::stack
