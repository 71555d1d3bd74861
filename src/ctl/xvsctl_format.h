// Decoding and rendering of xvsd's replies to xvsctl (docs/control-protocol.md, "xvsctl
// commands"), printed the way iproute2 prints the same things. Output is sorted so it does
// not depend on the daemon's table order (stats keep the data plane's counter order).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"
#include "ctl/xvsctl_args.h"
#include "net/addr.h"

namespace xvs::ctl {

struct LinkStats {
    uint64_t ipackets = 0, opackets = 0, ibytes = 0, obytes = 0;
    uint64_t imissed = 0, ierrors = 0, oerrors = 0, rx_nombuf = 0;
    uint64_t tx_refused = 0;  // AF_XDP frames the kernel refused (port::PortStats)
};

struct LinkEntry {
    std::string name, dev, mac;
    uint32_t mtu = 0;
    uint32_t port_id = 0;
    bool up = false;
    LinkStats stats;
};

struct AddrEntry {
    net::InetAddr addr;
    uint8_t prefix_len = 0;
    std::string ifname;
    std::string kind;  // "director" | "vip" | "lip"
};

struct RouteEntry {
    net::InetPrefix prefix;
    std::optional<net::InetAddr> gateway;
    std::string ifname;
    bool connected = false;
};

struct NeighDisplay {
    net::InetAddr addr;
    std::string mac;  // "" when the reply has null (INCOMPLETE, FAILED)
    std::string ifname;
    std::string state;
    uint32_t worker = 0;
};

struct CounterEntry {
    std::string name;
    uint64_t value = 0;
    bool drop = false;
    std::string description;
    std::vector<uint64_t> per_worker;  // [i]: worker i's value (empty from an older xvsd)
};

struct StatsReply {
    uint32_t workers = 0;
    std::vector<CounterEntry> counters;  // the data plane's order
};

Result<std::vector<LinkEntry>> decode_links(const nlohmann::json& reply);
Result<std::vector<AddrEntry>> decode_addrs(const nlohmann::json& reply);
Result<std::vector<RouteEntry>> decode_routes(const nlohmann::json& reply);
Result<std::vector<NeighDisplay>> decode_neighbours(const nlohmann::json& reply);
Result<StatsReply> decode_stats(const nlohmann::json& reply);

std::string format_links(std::vector<LinkEntry> links, bool with_stats);
std::string format_addrs(std::vector<AddrEntry> addrs);
std::string format_routes(std::vector<RouteEntry> routes);
std::string format_neighbours(std::vector<NeighDisplay> neighbours);
// `check show`: one line per checker (service, dest, type, state, last result and its age).
Result<std::string> format_checks(const nlohmann::json& checks, int64_t now_unix);
// `feedback show`: the listeners with their counters by reason, then one line per real server
// of a feedback service (state, configured and dynamic weight, smoothed load, last report).
Result<std::string> format_feedback(const nlohmann::json& feedback);
// `sync show`: this director's sync state, its peers, and the counters, one per line.
Result<std::string> format_sync(const nlohmann::json& sync);
// `announce show`: BIRD's socket, file and last answer, then one line per VIP (announced or
// withdrawn, whether BIRD has it, why); "not configured" without bgp_defs/ospf_defs.
Result<std::string> format_announce(const nlohmann::json& announce);
// Without `all`, counters that are zero are left out. `per_worker`: a table of name, total
// and one column per worker ("w0", "w1", ...), without the descriptions.
std::string format_stats(const StatsReply& stats, bool all, bool per_worker = false);

// Output of `cmd` for xvsd's successful reply ("" for add/del).
Result<std::string> render_xvsctl_reply(const CtlCommand& cmd, const nlohmann::json& reply);

}  // namespace xvs::ctl
