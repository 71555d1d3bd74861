// Cross-reference checks of xvs.conf, run once the whole token stream (every include) is
// parsed: netif ports named by addresses/routes/local addresses, local_address_group and
// virtual_server_group names, group expansion, duplicate services, overlapping local addresses.
// Internal to the parser (config_parser.cpp); not part of the ctl API.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ctl/config.h"
#include "ctl/config_lexer.h"

namespace xvs::ctl {

// A virtual_server statement before group expansion and cross-reference checks.
struct PendingVs {
    enum class Kind { Address, Group, Invalid } kind = Kind::Address;
    VirtualServer vs;
    std::string group_name;
    bool proto_set = false;
    std::optional<SourceLoc> laddr_loc;  // where laddr_group_name was given
    std::optional<SourceLoc> nat_tunnel_loc;  // where nat_tunnel was given (lb_kind NAT -> NatTun)
    std::string deny_group;              // daddr_group_name (DPVS), resolved by the validator
    std::optional<SourceLoc> deny_loc;
    // Scheduler flag keywords (sh-port, flag-1, ...) and mh_table_size as written, checked
    // against lb_algo once the block is read (either may come first).
    std::vector<std::pair<std::string, SourceLoc>> sched_flag_locs;
    std::optional<SourceLoc> table_loc;
    std::optional<SourceLoc> proto_loc;        // where protocol was given
    std::optional<SourceLoc> granularity_loc;  // where persistence_granularity was given
    std::optional<SourceLoc> hash_target_loc;  // where `hash_target qid` was given
    std::optional<SourceLoc> cid_len_loc;      // where quic_cid_len was given
    std::optional<SourceLoc> pe_loc;           // where persistence_engine was given
    std::optional<bool> ip_family_v6;          // keepalived `ip_family inet|inet6`
    std::optional<SourceLoc> ip_family_loc;
};

// A netif port named somewhere, checked against netif_defs at the end.
struct PortRef {
    std::string port;
    std::string context;  // e.g. "address", "local_address_group 'lan'"
    SourceLoc loc;
};

struct ParsedConfig {
    Config cfg;  // virtual_servers still empty: filled from `pending` by config_validate
    std::vector<PendingVs> pending;
    std::vector<PortRef> port_refs;
    std::vector<std::vector<SourceLoc>> laddr_locs;  // parallel to cfg.laddr_groups[].addrs
};

// Reports every problem to `diag` and fills parsed.cfg.virtual_servers (one per VIP/port).
void config_validate(ParsedConfig& parsed, Diagnostics& diag);

}  // namespace xvs::ctl
