// The stack's part of a configuration snapshot: ports, own addresses, routes. Immutable once
// published; workers read it once per burst.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/flat_map.h"
#include "net/addr.h"
#include "net/headers.h"

namespace xvs::lb {
struct LocalAddr;
}

namespace xvs::stack {

inline constexpr unsigned kMaxPorts = 8;

struct PortView {
    uint16_t port_id = 0;  // DPDK port id
    net::MacAddr mac{};
    uint16_t mtu = 1500;   // L3 MTU; frames above max_rx_frame are dropped on RX
    std::string name;
    uint32_t max_rx_frame = 1514;  // mtu + 14, or the af_packet frame (PortEntry::max_rx_frame)
    // Outer source of TUN packets leaving by this port: the configured
    // tunnel_source, else the port's first own address (port_source); per family.
    net::InetAddr tunnel_source;
    net::InetAddr tunnel_source6;
    // The exception path (stack/exception.h): the TAP port carrying the kernel's traffic.
    bool has_exception = false;
    uint16_t exception_port_id = 0;
};

enum class AddrKind : uint8_t { Director, Vip, Lip };

struct OwnAddr {
    AddrKind kind = AddrKind::Director;
    uint8_t port = 0;             // index into StackView::ports
    lb::LocalAddr* lip = nullptr;  // for kind == Lip (nullptr: a peer director's, taken over)
    // A VIP of a backup director (session sync, active/backup): owned, but ARP requests for
    // it go unanswered until this director takes over.
    bool arp_silent = false;
};

struct AddrKey {
    net::InetAddr addr;
    bool operator==(const AddrKey&) const = default;
};
// Looked up for every received packet, so the map's low bits must spread well: a full mix64
// of fold(). (One multiply and x ^ (x >> 32) was cheaper by five instructions, but an IPv4
// address sits in fold()'s high half, whose bits never reach the product's low ones: every
// address with the same first octet took the same slot, and a lookup walked them all, four
// probes a packet in bench/engine, where mix64 averages 1.2 at 25% load.)
inline uint64_t flat_hash(const AddrKey& k) {
    return mix64(k.addr.fold());
}

// The own-address lookup (StackView::own) of the last destination the input asked about, and
// its answer (nullptr: not own). A burst's packets mostly go to one VIP or LIP, so the hash
// lookup is made once for a run of them. Addr is the header's form (net::Af4::Addr: 4 bytes;
// net::Af6::Addr). Good for one view only: StackContext::set_view clears it.
template <class Addr>
struct OwnMemo {
    Addr dst{};
    const OwnAddr* own = nullptr;
    bool valid = false;
};

struct RouteEntry {
    net::InetPrefix dst;
    uint8_t port = 0;       // index into ports
    net::InetAddr gateway;  // unspecified: directly connected (next hop = destination)
    net::InetAddr source;   // own address used as source for ARP on this route
    // IPv4 routes: dst as host-order prefix and mask, so the scan is two ALU ops per entry.
    uint32_t v4_prefix = 0;
    uint32_t v4_mask = 0;

    bool connected() const { return gateway.is_unspecified(); }
    bool matches(const net::InetAddr& a) const {
        if (a.is_v4()) return dst.is_v4() && (__builtin_bswap32(a.v4_be()) & v4_mask) == v4_prefix;
        return !dst.is_v4() && dst.contains(a);
    }
};

struct NextHop {
    net::InetAddr addr;
    uint8_t port = 0;
    bool found = false;
};

// A filter over the own addresses: one bit of 256 for each, from a multiply of fold(). A clear
// bit means "not own" for sure; a set one leaves the question to the map. Every new flow's
// source is checked (StackView::is_own), and the answer is nearly always no: the map's miss
// (a full mix64, a probe) cost ~30 instructions of a SYN, the filter's ~6.
class OwnFilter {
  public:
    void add(const net::InetAddr& a) { bits_[bit(a) >> 6] |= uint64_t{1} << (bit(a) & 63); }
    bool may_hold(const net::InetAddr& a) const {
        return (bits_[bit(a) >> 6] >> (bit(a) & 63)) & 1;
    }

  private:
    static unsigned bit(const net::InetAddr& a) {
        return static_cast<unsigned>((a.fold() * 0xd6e8feb86659fd93ULL) >> 56);
    }
    std::array<uint64_t, 4> bits_{};
};

struct StackView {
    std::vector<PortView> ports;
    std::vector<RouteEntry> routes;  // longest prefix first
    std::vector<net::InetAddr> port_source;   // per port: an own IPv4 address for ARP (or none)
    std::vector<net::InetAddr> port_source6;  // per port: an own IPv6 address for ND (or none)
    // NatTun GUE: the UDP ports (network order) whose datagrams to a local address are RS
    // replies in GUE (every NatTun GUE dest's tunnel port); IPIP needs no list.
    std::vector<uint16_t> nattun_gue_ports;
    // Addresses the neighbour owner announces by gratuitous ARP (a takeover or a start with
    // session sync: the VIPs, this director's local addresses, a failed peer's) whenever
    // garp_generation changes, three times 1 s apart.
    struct Garp {
        net::InetAddr addr;
        uint8_t port = 0;
    };
    std::vector<Garp> garp;
    uint32_t garp_generation = 0;

    // The port's own address of the family of `like` (unspecified when it has none).
    const net::InetAddr& source_of(uint8_t port, const net::InetAddr& like) const {
        return like.is_v4() ? port_source[port] : port_source6[port];
    }

    // The own addresses (VIPs, local addresses, the director's), and their filter with them.
    void set_own(const std::vector<std::pair<AddrKey, OwnAddr>>& items) {
        addrs_ = FlatMap<AddrKey, OwnAddr>(items);
        own_filter_ = OwnFilter{};
        for (const auto& item : items) own_filter_.add(item.first.addr);
    }
    const FlatMap<AddrKey, OwnAddr>& own_addrs() const { return addrs_; }
    const OwnAddr* own(const net::InetAddr& addr) const { return addrs_.find(AddrKey{addr}); }
    // The same for an IPv4 header's 4 bytes (network order).
    const OwnAddr* own(uint32_t addr_be) const { return own(net::InetAddr::v4(addr_be)); }
    // own(addr) != nullptr, the filter asked first: for addresses that are seldom own, such as
    // sources. A source that is one of ours (VIP, LIP, the director's) is refused where state
    // would start (a new conn, a cookie SYN-ACK, an echo reply), not per packet.
    bool is_own(const net::InetAddr& addr) const {
        return own_filter_.may_hold(addr) && own(addr) != nullptr;
    }

    // True when addr is a host we talk to directly on port: a gateway of a route through
    // port, or an address whose best route is a connected one (no gateway) through port. ARP
    // is learned and answered only for such senders, so a frame on one port can never claim a
    // neighbour that lives behind another (an ARP hijack).
    bool on_link(const net::InetAddr& addr, uint8_t port) const {
        for (const auto& r : routes)
            if (r.gateway == addr && r.port == port) return true;
        for (const auto& r : routes)
            if (r.matches(addr)) return r.connected() && r.port == port;
        return false;
    }

    // Longest-prefix match. Routes are few on a director (connected subnets, a default, some
    // statics), so a scan in prefix-length order beats a trie in cache misses.
    NextHop route_lookup(const net::InetAddr& daddr) const {
        for (const auto& r : routes) {
            if (r.matches(daddr)) return NextHop{r.connected() ? daddr : r.gateway, r.port, true};
        }
        return NextHop{};
    }

  private:
    FlatMap<AddrKey, OwnAddr> addrs_;  // set_own
    OwnFilter own_filter_;
};

}  // namespace xvs::stack
