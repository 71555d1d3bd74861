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
    ConnFlush,  // conn flush dest A.B.C.D:PORT (filter.dest)
};

// conn show filters, already validated and normalised (proto lower case, state upper case,
// addresses as "a.b.c.d" or "a.b.c.d:port"). Empty = no filter.
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

    // addr add / addr del
    net::Ipv4 addr;
    std::optional<uint8_t> prefix_len;  // addr del may omit it; addr add defaults to 32
    std::string ifname;                 // addr add/del, route add

    // route add / route del
    net::Ipv4Prefix prefix;
    std::optional<net::Ipv4> gateway;

    ConnFilter filter;
};

// The error text of a usage error is the message alone; the driver adds the --help hint.
Result<CtlCommand> parse_xvsctl_args(const std::vector<std::string>& args);

std::string xvsctl_usage_text();

}  // namespace xvs::ctl
