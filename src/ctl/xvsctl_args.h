// xvsctl's command line, iproute2 style: `xvsctl [options] OBJECT [COMMAND [ARGS]]`, objects
// and commands abbreviable as `ip` allows (`a`, `r s`, `n`). Parsing only: no I/O here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "net/addr.h"

namespace xvs::ctl {

enum class CtlCommandKind {
    Help,
    Version,
    LinkShow,
    AddrShow,
    AddrAdd,
    AddrDel,
    RouteShow,
    RouteAdd,
    RouteDel,
    NeighShow,
    Stats,
    ConnShow,
    ConnFlush,  // conn flush dest A.B.C.D:PORT|[V6]:PORT (filter.dest)
    CheckShow,     // check show: every health checker (ctl/health/)
    FeedbackShow,  // feedback show: load-feedback listeners and real servers
    AnnounceShow,  // announce show: the VIPs announced through BIRD (ctl/bgp/)
    Capture,       // capture [rx|tx|drop [REASON]] ... -w FILE: frames into a pcap file
    SyncShow,      // sync [show]: session sync peers, takeover state, counters
    SyncTakeover,  // sync takeover: answer for the VIPs, claim peers' local addresses
    SyncRelease,   // sync release: back to backup (keepalived notify_backup)
};

// capture: where, which frames, and where they go.
struct CaptureArgs {
    std::string point = "rx";  // rx, tx or drop
    std::string reason;        // drop: one reason ("" = every drop)
    std::string ifname;        // port name ("" = every port)
    std::string filter;        // tcpdump-language expression ("" = every frame)
    std::string file;          // -w: the pcap file ("-" = standard output)
    std::optional<uint64_t> count;    // -c: stop after this many frames
    std::optional<uint64_t> seconds;  // -t: stop after this many seconds
};

// conn show filters, already validated and normalised (proto lower case, state upper case,
// addresses as "a.b.c.d", "a.b.c.d:port", "v6" or "[v6]:port"). Empty = no filter.
struct ConnFilter {
    std::string proto;
    std::string client, vip, dest;
    std::string state;
    std::optional<uint32_t> limit;
};

struct CtlCommand {
    CtlCommandKind kind = CtlCommandKind::Help;
    std::string socket_path;  // --socket, "" = default
    bool link_stats = false;  // link show -s (also the global -s)
    bool all_counters = false;  // stats -a
    bool per_worker = false;    // stats -w / --workers: a column per worker

    // addr add / addr del
    net::InetAddr addr;                 // IPv4 or IPv6
    std::optional<uint8_t> prefix_len;  // addr del may omit it; addr add defaults to 32 / 128
    std::string ifname;                 // addr add/del, route add

    // route add / route del
    net::InetPrefix prefix;  // "default" is 0.0.0.0/0, or ::/0 with an IPv6 gateway
    std::optional<net::InetAddr> gateway;

    ConnFilter filter;
    CaptureArgs capture;
};

// The error text of a usage error is the message alone; the driver adds the --help hint.
Result<CtlCommand> parse_xvsctl_args(const std::vector<std::string>& args);

std::string xvsctl_usage_text();

}  // namespace xvs::ctl
