// ipvsadm command-line parsing: an argv in ipvsadm 1.31 syntax (plus DPVS's extensions) becomes
// a typed Command, or an error whose text is what ipvsadm prints; such errors exit with 2.
// Defaults are resolved here (wlc, DR, weight 1, dest port = service port), so a Command is
// complete and the daemon never guesses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "ctl/service_types.h"
#include "lb/fwd_mode.h"
#include "lb/match.h"
#include "net/addr.h"

namespace xvs::ctl {

// Exit status of every command-line (parse or validation) error, as ipvsadm.
inline constexpr int kArgsErrorExit = 2;

enum class CommandKind {
    AddService,   // -A
    EditService,  // -E
    DelService,   // -D
    Clear,        // -C
    List,         // -L / -l (also no command at all)
    AddDest,      // -a
    DelDest,      // -d
    EditDest,     // -e
    SetTimeout,   // --set
    Restore,      // -R
    Save,         // -S
    Zero,         // -Z
    AddLaddr,     // -P
    DelLaddr,     // -Q
    GetLaddr,     // -G
    Reload,       // --reload
    AddBlacklist,  // -U (DPVS --add-blklst)
    DelBlacklist,  // -V (DPVS --del-blklst)
    GetBlacklist,  // -B (DPVS --get-blklst)
    AddWhitelist,  // -O (DPVS --add-whtlst)
    DelWhitelist,  // -Y (DPVS --del-whtlst)
    GetWhitelist,  // -W (DPVS --get-whtlst)
    Help,         // -h
    Version,      // -v
};

// A virtual service: proto/vip/port, or a firewall mark (fwmark != 0), or a SNAT match
// service (DPVS's -H MATCH; proto/vip/port unused).
struct ServiceKey {
    Proto proto = Proto::Tcp;
    net::InetAddr vip;  // IPv4 or IPv6 (`-t [2001:db8::1]:80`)
    uint16_t port = 0;
    uint32_t fwmark = 0;
    bool fwmark_v6 = false;  // -f N -6: the mark's IPv6 service (IPVS has one per family)
    std::optional<lb::MatchKey> match;
    bool operator==(const ServiceKey&) const = default;
};

struct ServiceOptions {
    std::string sched = "wlc";
    uint32_t persistent = 0;  // seconds; 0 = not persistent
    net::Ipv4 netmask = net::Ipv4{0xffffffff};  // -M of an IPv4 service (-f N too)
    // -M of an IPv6 service (-f N -6 too): a prefix length 1..128, as ipvsadm takes it.
    uint8_t netmask6 = 128;
    std::vector<std::string> sched_flags;  // normalised names, see docs/control-protocol.md
    bool ops = false;
    std::string pe;
    bool hash_qid = false;  // DPVS's conhash hash target qid (shown by -L as DPVS's ipvsadm)
    bool synproxy = false;
    bool toa = false;
    ProxyProtocol proxy_protocol = ProxyProtocol::Off;
    Uoa uoa = Uoa::Off;
    uint32_t conn_rate = 0;  // --conn-rate: new connections per second, 0 = no cap
    // Client lists, filled from the daemon's reply (list/save); commands use Command::acl.
    std::vector<net::InetPrefix> blacklist;
    std::vector<net::InetPrefix> whitelist;
};

struct DestOptions {
    net::InetEndpoint addr;             // "a.b.c.d:port" or "[v6]:port"
    lb::FwdMode fwd = lb::FwdMode::Dr;  // ipvsadm's default (-g)
    uint32_t weight = 1;
    uint32_t u_threshold = 0;
    uint32_t l_threshold = 0;
    std::string tun_type;  // "ipip" | "gue" for Tunnel, else ""
    uint16_t tun_port = 0;
};

// Output selection for -L / -S.
struct ListFormat {
    bool numeric = false;
    bool connections = false;  // -c
    bool timeout = false;      // --timeout
    bool stats = false;
    bool rate = false;
    bool thresholds = false;
    bool persistent_conn = false;
    bool exact = false;
    bool nosort = false;
};

struct Timeouts {
    uint32_t tcp = 0;  // seconds; 0 = leave unchanged
    uint32_t tcpfin = 0;
    uint32_t udp = 0;
};

struct Command {
    CommandKind kind = CommandKind::List;
    std::optional<ServiceKey> service;
    ServiceOptions svc;
    DestOptions dest;
    ListFormat format;
    Timeouts timeouts;
    net::InetAddr laddr;  // -z
    std::string ifname;  // -F
    net::InetPrefix acl;      // -k (blacklist) / -2 (whitelist) entry: ADDR[/LEN]
    std::string socket_path;  // --socket; empty = not given
};

// Parses args (without the program name). On error the message is the exact text to print to
// stderr (no trailing newline; may span lines) and the exit status is kArgsErrorExit.
// `program` is used in the usage hint ("Try `xvsadm -h' ...").
Result<Command> parse_ipvsadm_args(const std::vector<std::string>& args,
                                   std::string_view program = "xvsadm");

// Splits one -R input line into arguments on blanks; a leading "ipvsadm" or "xvsadm" token
// (or a path ending in one) is dropped. Blank lines and '#' comments give an empty vector.
std::vector<std::string> split_restore_line(std::string_view line);

// The -h text (stdout, exit 0).
std::string usage_text(std::string_view program);

// Names used on the wire and in messages.
std::string_view proto_name(Proto proto);      // "tcp" / "udp"
std::string_view proxy_protocol_name(ProxyProtocol pp);  // "off" / "v1" / "v2"
std::string_view uoa_name(Uoa uoa);                      // "off" / "opp" / "ipo"

}  // namespace xvs::ctl
