// Rendering of xvsd replies the way ipvsadm 1.31 prints them: the -L table and its --stats,
// --rate, --thresholds and --persistent-conn variants, -c, --timeout, -S (which -R reads back)
// and DPVS's -G. Byte-exact, trailing spaces included; addresses are always numeric.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"
#include "ctl/ipvsadm_args.h"

namespace xvs::ctl {

struct Stats {
    uint64_t conns = 0, inpkts = 0, outpkts = 0, inbytes = 0, outbytes = 0;  // totals
    uint64_t cps = 0, inpps = 0, outpps = 0, inbps = 0, outbps = 0;         // per second
};

struct DestEntry {
    DestOptions opts;  // addr, fwd, weight, thresholds, tunnel
    uint64_t active = 0;
    uint64_t inactive = 0;
    uint64_t persistconns = 0;
    bool inhibited = false;  // at weight 0 by inhibit_on_failure (health checks): marked in -L
    Stats stats;
};

struct LaddrEntry {
    net::InetAddr addr;
    std::string ifname;
    uint64_t conflicts = 0;
    uint64_t conns = 0;
};

struct ServiceEntry {
    ServiceKey key;
    ServiceOptions opts;
    Stats stats;
    std::vector<DestEntry> dests;
    std::vector<LaddrEntry> laddrs;
};

struct ConnEntry {
    std::string proto;  // "tcp" | "udp" | "icmp"
    uint64_t expire_seconds = 0;
    std::string state;
    std::string client, vip, dest;
    std::string lip;  // "" unless FULLNAT/SNAT
};

// Decoding of reply objects (docs/control-protocol.md). Errors name the bad field.
Result<std::vector<ServiceEntry>> decode_services(const nlohmann::json& reply);
Result<std::vector<ConnEntry>> decode_conns(const nlohmann::json& reply);
Result<Timeouts> decode_timeouts(const nlohmann::json& reply);
Result<std::vector<LaddrEntry>> decode_laddrs(const nlohmann::json& reply);

// ipvsadm's print_largenum: %9llu, or K/M/G/T-abbreviated, or exact with a leading space.
std::string format_largenum(uint64_t value, bool exact);

// -L [service]: a banner_size prints "IP Virtual Server version 1.2.1 (size=N)" first (whole
// table only, as ipvsadm's list_all; listing one service omits it). N is the connection table
// size, as IPVS prints its conn hash table's.
std::string format_list(std::vector<ServiceEntry> services, const ListFormat& fmt,
                        std::optional<uint64_t> banner_size);
// The daemon's connection table size (list reply "conn_table_size"); 0 when absent.
uint64_t decode_conn_table_size(const nlohmann::json& reply);
// -S: rules in the syntax -R reads.
std::string format_save(std::vector<ServiceEntry> services, const ListFormat& fmt);
// -L -c. A "local" column is added when any entry has a local address (FULLNAT/SNAT).
std::string format_conns(const std::vector<ConnEntry>& conns);
// -L --timeout.
std::string format_timeout(const Timeouts& t);
// -G (DPVS layout).
std::string format_laddrs(const ServiceKey& key, const std::vector<LaddrEntry>& laddrs);
// -B / -W (DPVS layout): one row per entry, "PROTO VIP:VPORT BLACKLIST|WHITELIST"; a /32
// entry prints as its address.
std::string format_acl(std::vector<ServiceEntry> services, bool whitelist);

// Output of `cmd` for the daemon's successful reply ("" for commands that print nothing).
Result<std::string> render_reply(const Command& cmd, const nlohmann::json& reply);

}  // namespace xvs::ctl
