// ctl::Config: the plain model of xvs.conf (keepalived syntax, DESIGN.md "Configuration").
// The parser fills it and validates cross references; everything here is already checked, so
// consumers (xvsd, reload) never re-validate names, ports or addresses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ctl/bgp/routing_conf.h"
#include "ctl/health/check_config.h"
#include "ctl/service_types.h"
#include "lb/fwd_mode.h"
#include "lb/fwmark.h"
#include "lb/match.h"
#include "lb/poll_mode.h"
#include "lb/proto/tcp.h"
#include "lb/synproxy/synproxy.h"
#include "net/addr.h"
#include "net/uoa.h"
#include "port/flow_steer.h"

namespace xvs::ctl {

// Where a statement came from, for messages "file:line: ...".
struct SourceLoc {
    std::string file;
    uint32_t line = 0;
};

enum class LogLevel : uint8_t { Debug, Info, Warning, Error };
using lb::PollMode;

struct GlobalDefs {
    LogLevel log_level = LogLevel::Info;
    // `log_facility daemon|local0..local7`: log to syslog with that facility (ctl/log.h; the
    // syslog facility value). Unset: stderr in the foreground, syslog daemon with -d.
    std::optional<int> log_facility;
    std::string control_socket = "/run/xvs/xvs.sock";
    // `control_socket_group NAME`: the socket is chgrp'ed to it and made 0660 (else 0600,
    // root only). Resolved when parsed, so an unknown group is refused at file:line.
    std::string control_socket_group;
    std::optional<uint32_t> control_socket_gid;
    // `metrics_listen ADDR:PORT|off`: Prometheus text on http://ADDR:PORT/metrics (DESIGN.md;
    // default 127.0.0.1:9469, the director's own loopback; unset = off).
    std::optional<net::InetEndpoint> metrics_listen =
        net::InetEndpoint{net::InetAddr::v4(0x0100007fu), 9469};
    // `status_allow PREFIX...` or `status_allow { PREFIX ... }`: the clients that may read the
    // status page (/ and /status.json on metrics_listen, ctl/status_page.h); others get 403.
    // Default: loopback only. /metrics is not limited by it. A reload applies it.
    std::vector<net::InetPrefix> status_allow = default_status_allow();
    static std::vector<net::InetPrefix> default_status_allow() {
        return {*net::parse_inet_prefix("127.0.0.0/8"), *net::parse_inet_prefix("::1/128")};
    }
};

// `exception xdp|tap NAME|off` in a port block: how the director's kernel reaches the port's
// link (stack/exception.h). Default: xdp on net_af_xdp ports (the kernel keeps the interface;
// xvs's XDP program takes only xvs's frames), off elsewhere (frames not for xvs are dropped).
enum class ExceptionKind : uint8_t { Default, Off, Xdp, Tap };

struct PortDef {
    std::string name;
    std::string dev;  // DPDK vdev/devargs string, e.g. "net_af_xdp0,iface=lb-wan"
    uint32_t mtu = 1500;
    ExceptionKind exception = ExceptionKind::Default;
    std::string exception_tap;  // the TAP interface's name, for ExceptionKind::Tap
    SourceLoc loc;

    bool is_af_xdp() const { return dev.rfind("net_af_xdp", 0) == 0; }
    ExceptionKind exception_kind() const {
        if (exception != ExceptionKind::Default) return exception;
        return is_af_xdp() ? ExceptionKind::Xdp : ExceptionKind::Off;
    }
    bool operator==(const PortDef& o) const {
        return dev == o.dev && mtu == o.mtu && exception == o.exception &&
               exception_tap == o.exception_tap;
    }
};

// mbufs each port's pool needs at least: per worker its RX and TX rings (1024 descriptors
// each, port::PortParams), a burst in flight, and the lcore caches (up to 1.5 x 256 each),
// plus the neighbour queue (256). The default leaves room for bursts, SYN-proxy saves and
// frames crossing to the other port's TX ring.
inline constexpr uint32_t kMbufsPerPortMax = 1u << 24;
inline constexpr uint32_t mbufs_per_port_min(uint32_t workers) {
    return workers * (1024 + 1024 + 64 + 384) + 256;
}
inline constexpr uint32_t mbufs_per_port_default(uint32_t workers) {
    return workers * 4096 + 4095;
}

struct NetifDefs {
    std::string eal_args;  // raw, as written (the daemon splits it)
    std::vector<PortDef> ports;
    // `mbufs_per_port N`: size of each port's mbuf pool; 0 = mbufs_per_port_default(workers).
    uint32_t mbufs_per_port = 0;
    SourceLoc mbufs_per_port_loc;
    // `flow_steering on|off|auto`: rte_flow rules send return traffic to its worker's queue
    // (port/flow_steer.h); auto uses them where every port validates them, else redirects.
    port::FlowSteering flow_steering = port::FlowSteering::Auto;
    SourceLoc flow_steering_loc;
    // `xdp_offload N`: an established conn is handed to the XDP program of its net_af_xdp
    // ports after N of its packets took xvs's fast path (lb/offload.h); 0: never. Restart to
    // change.
    uint32_t xdp_offload = 0;
    SourceLoc xdp_offload_loc;
};

struct WorkerDefs {
    uint32_t workers = 1;   // 1..16 parsed; at most the CPUs xvsd may use (worker_placement.h)
    SourceLoc workers_loc;  // of the `workers` statement, if any
    // `cpus LIST`: worker i on the i-th listed CPU; empty: the default placement (CPU 0 left
    // to the control thread). Restart to change.
    std::vector<unsigned> cpus;
    SourceLoc cpus_loc;
    PollMode poll_mode = PollMode::Adaptive;
};

// `frag_defs { ... }`: IP fragment reassembly per worker (stack/fragment.h). Restart to change.
struct FragDefs {
    uint32_t max_datagrams = 64;         // datagrams in flight per worker; 0: fragments dropped
    uint32_t max_fragments = 64;         // fragments per datagram
    uint32_t max_datagram_size = 65535;  // bytes of a reassembled datagram (IP header included)
    uint32_t timeout_ms = 5000;          // from a datagram's first fragment to its completion
    bool operator==(const FragDefs&) const = default;
};

// `address 10.10.1.1/24 dev wan0`: addr is the director's own address, prefix its subnet.
struct AddressDef {
    net::InetAddr addr;
    net::InetPrefix prefix;  // masked
    std::string port;
    SourceLoc loc;
};

// `route PREFIX|default [via GW] dev PORT`; no gateway = connected route.
struct RouteDef {
    net::InetPrefix prefix;
    std::optional<net::InetAddr> gateway;
    std::string port;
    SourceLoc loc;
};

// `tunnel_source ADDR dev PORT`: the outer source of TUN (IPIP/GUE) packets leaving by PORT,
// one of the director's addresses on it (default: the port's first `address`).
struct TunnelSourceDef {
    net::InetAddr addr;
    std::string port;
    SourceLoc loc;
};

struct IpDefs {
    std::vector<AddressDef> addresses;
    std::vector<RouteDef> routes;
    std::vector<TunnelSourceDef> tunnel_sources;  // at most one per port
};

struct IpvsDefs {
    // Starts from DPVS's values; `tcp` sets ESTABLISHED, `tcpfin` FIN_WAIT, `udp` UDP
    // (as ipvsadm --set), per-state names set that state.
    lb::Timeouts timeouts = lb::Timeouts::dpvs_defaults();
    // `conn_table_size N`: connections each worker can hold (its preallocated pool).
    static constexpr uint32_t kConnTableSizeMin = 1024;
    static constexpr uint32_t kConnTableSizeMax = 1u << 26;
    uint32_t conn_table_size = 1u << 20;
    // `uoa_max_trail N` (DPVS's name): UOA rides on the first N client datagrams of a flow of
    // a UOA service; 0..255, 0 = none.
    uint32_t uoa_max_trail = net::kUoaDefaultMaxTrail;
    bool synproxy_set = false;
    lb::SynProxyConf synproxy;  // synproxy { ... }: DPVS defaults unless set
    // `expire_nodest_conn on|off` (IPVS's sysctl, default off): when a real server is removed,
    // expire its conns at once instead of dropping their packets until they time out (a
    // client's SYN on one is scheduled anew either way: lb/pipeline.cpp).
    bool expire_nodest_conn = false;
    // `expire_quiescent_template on|off` (IPVS's sysctl, default off): a persistence template
    // to a real server of weight 0 is expired when its client comes back, so the client is
    // scheduled anew; off: a quiesced server keeps serving its persistent clients.
    bool expire_quiescent_template = false;
    // `reschedule_refused on|off` (xvs's own, default on): a real server's RST answering a
    // client's SYN (FULLNAT, NAT; not the SYN proxy's, not a persistent service's) is held
    // back once and the client's retransmitted SYN goes to another real server.
    bool reschedule_refused = true;
};

// `fwmark_defs { mark N { VIP[/LEN] [PORT|PORT-PORT] [tcp|udp] ... } }`: xvs's own classifier
// in place of netfilter's marks (lb/fwmark.h); `virtual_server fwmark N` serves what mark N
// matches.
struct FwmarkDefs {
    std::vector<lb::FwmarkDef> marks;
    std::vector<SourceLoc> locs;  // of each `mark N`, parallel to marks
};

struct LocalAddress {
    net::InetAddr addr;
    std::string port;
    bool operator==(const LocalAddress&) const = default;
};

struct LocalAddressGroup {
    std::string name;
    std::vector<LocalAddress> addrs;  // ranges expanded
    SourceLoc loc;
};

// One `VIP[-LAST] PORT` entry of a virtual_server_group: a range in the last octet (IPv4) or
// in the last 16-bit group (IPv6), as keepalived reads it. first and last share the family.
struct VsGroupEntry {
    net::InetAddr first;
    net::InetAddr last;
    uint16_t port = 0;
    SourceLoc loc;
};

// The last part of an address that keepalived's ranges count in: the last octet of IPv4, the
// last 16-bit group of IPv6; and a with that part replaced.
inline unsigned range_last_part(const net::InetAddr& a) {
    return a.is_v4() ? a.b[15] : unsigned(a.b[14]) << 8 | a.b[15];
}
inline net::InetAddr range_with_last_part(net::InetAddr a, unsigned part) {
    if (!a.is_v4()) a.b[14] = static_cast<uint8_t>(part >> 8);
    a.b[15] = static_cast<uint8_t>(part);
    return a;
}
// f(addr) for every address from first to last (equal but for the last part), in order.
template <typename F>
void range_for_each(const net::InetAddr& first, const net::InetAddr& last, F&& f) {
    for (unsigned part = range_last_part(first); part <= range_last_part(last); ++part)
        f(range_with_last_part(first, part));
}

struct VirtualServerGroup {
    std::string name;
    std::vector<VsGroupEntry> entries;
    SourceLoc loc;
};

struct RealServer {
    net::InetAddr addr;
    uint16_t port = 0;
    uint32_t weight = 1;           // 0..65535; 0 = quiescent
    uint32_t upper_threshold = 0;  // 0 = no limit
    uint32_t lower_threshold = 0;
    RsHealth health;  // checkers, inhibit_on_failure, notify scripts (ctl/health/)
    SourceLoc loc;
};

// DPVS keepalived's `deny_address_group NAME { PREFIX ... }`: a named blacklist that a
// virtual_server takes with `daddr_group_name NAME` (entries join its `blacklist`).
struct DenyAddressGroup {
    std::string name;
    std::vector<net::InetPrefix> prefixes;
    SourceLoc loc;
};

struct VirtualServer {
    Proto proto = Proto::Tcp;
    net::InetAddr vip;
    uint16_t port = 0;
    // `virtual_server fwmark N`: port and protocol unused; vip is 0.0.0.0 or ::, the service's
    // family (keepalived's: `ip_family`, else the first real server's, else the sorry
    // server's, else IPv4), as in lb::make_fwmark_key.
    uint32_t fwmark = 0;
    // `persistence_timeout [N]` (no value: 360 s, as ipvsadm -p), 0 = not persistent;
    // `persistence_granularity MASK|LEN` as a prefix length (255 = the whole address).
    uint32_t persistence_timeout = 0;
    uint8_t persist_prefix = 255;
    std::string group;  // virtual_server_group this service was expanded from, else empty
    std::string sched = "wlc";
    // Scheduler flags (keepalived's sh-port, sh-fallback, mh-port, mh-fallback, flag-1..3;
    // lb/sched/sched.h kSchedFlag*) and xvs's `mh_table_size N` (a prime; 0 = 65537).
    uint32_t sched_flags = 0;
    uint32_t mh_table_size = 0;
    // keepalived lb_kind / lvs_method, for every real server of this virtual server; xvs's
    // default is FULLNAT (DPVS FNAT). TUN: `lvs_method TUN [type ipip|gue] [port N]`.
    lb::FwdMode fwd = lb::FwdMode::FullNat;
    lb::TunType tun_type = lb::TunType::Ipip;
    uint16_t tun_port = 0;  // GUE destination port
    std::string laddr_group;
    bool syn_proxy = false;
    bool ops = false;  // keepalived `ops`: one-packet scheduling (UDP)
    bool pe_sip = false;  // keepalived `persistence_engine sip`: templates by SIP Call-ID
    // DPVS keepalived `hash_target sip|qid` (lb_algo conhash; qid: UDP, QUIC connection ID)
    // and xvs's `quic_cid_len N`, the servers' connection-ID length for short headers.
    bool hash_qid = false;
    uint8_t quic_cid_len = 0;
    bool toa = false;
    ProxyProtocol proxy_protocol = ProxyProtocol::Off;
    Uoa uoa = Uoa::Off;
    // Admission control: `blacklist { PREFIX ... }`, `whitelist { PREFIX ... }` and
    // `conn_rate_limit N` (new connections per second, 0 = no cap).
    std::vector<net::InetPrefix> blacklist;
    std::vector<net::InetPrefix> whitelist;
    uint32_t conn_rate_limit = 0;
    std::vector<RealServer> real_servers;
    VsHealth health;  // quorum, hysteresis, sorry server, alpha/omega (ctl/health/)
    SourceLoc loc;
};

// DPVS keepalived's SNAT service: `virtual_server match NAME { protocol TCP|UDP|ICMP;
// lb_algo ...; lb_kind SNAT; src-range A-B; [dst-range C-D;] oif PORT; [iif PORT;]
// real_server WAN_IP 0 { weight N } }`. The real servers are WAN addresses (director
// addresses on the oif port) that inside hosts' connections leave from.
struct MatchServer {
    std::string name;
    lb::MatchKey key;
    std::string sched = "wlc";
    lb::FwdMode fwd = lb::FwdMode::Snat;
    std::vector<RealServer> real_servers;
    SourceLoc loc;
};

// `sync_defs { ... }`: session sync between directors (ctl/sync/, issue 15 items 3 and 4).
// Restart to change.
enum class SyncRoleDef : uint8_t { Master, Backup, Both };
struct SyncDefs {
    bool enabled = false;  // the block is present
    SourceLoc loc;
    uint32_t syncid = 0;                    // 0..255; 0 on receipt: any (as IPVS)
    std::optional<net::InetAddr> source;    // kernel address the socket binds / sends from
    net::InetAddr mcast_group = net::InetAddr::v4(0x510000e0);  // 224.0.0.81
    uint16_t port = 8848;
    std::vector<net::InetAddr> peers;       // unicast peers; none: the multicast group
    SyncRoleDef role = SyncRoleDef::Both;
    uint32_t peer_timeout_ms = 3000;
    uint32_t heartbeat_ms = 1000;
    bool resync = true;                     // ask each peer for its conns when first heard
    uint32_t max_message = 1472;            // bytes per datagram sent
    uint32_t ring_size = 16384;             // conn events per worker between two drains
    std::string claim_dev;                  // port a failed peer's LIPs are claimed on
    SourceLoc claim_dev_loc;
};

// Only what xvs acts on is modelled: keywords it refuses or ignores (config_keywords.h) never
// reach a Config.
struct Config {
    std::string file;  // the main configuration file, for messages without a line
    GlobalDefs global;
    NetifDefs netif;
    WorkerDefs worker;
    FragDefs frag;
    IpDefs ip;
    IpvsDefs ipvs;
    FwmarkDefs fwmark;
    SyncDefs sync;
    std::vector<LocalAddressGroup> laddr_groups;
    std::vector<VirtualServerGroup> vs_groups;
    std::vector<DenyAddressGroup> deny_groups;
    std::vector<VirtualServer> virtual_servers;  // groups expanded: one per VIP/port
    std::vector<MatchServer> match_servers;      // SNAT, in file order (first match wins)
    RoutingDefs routing;                         // bgp_defs, ospf_defs (ctl/bgp/)
    // "file:line: what is accepted but not acted on" lines for xvsd to print at startup.
    std::vector<std::string> warnings;

    const PortDef* find_port(std::string_view name) const;
    const LocalAddressGroup* find_laddr_group(std::string_view name) const;
};

std::string_view to_string(Proto proto);       // "TCP", "UDP"
std::string_view to_string(LogLevel level);    // "debug", ...
std::string_view to_string(ProxyProtocol pp);  // "off", "v1", "v2"
std::string_view to_string(Uoa uoa);           // "off", "opp", "ipo"

}  // namespace xvs::ctl
