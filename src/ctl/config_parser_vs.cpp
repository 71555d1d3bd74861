// Parser sections of xvs.conf for services: local_address_group, virtual_server_group,
// virtual_server (with real_server and the client lists), deny_address_group. The Parser
// class and the other sections are in config_parser_impl.h / config_parser.cpp.
#include "ctl/config_parser_impl.h"
#include "lb/director.h"
#include "lb/sched/sched.h"

namespace xvs::ctl::parser_detail {

namespace {

// "255.255.255.0" -> 24 (255.255.255.255 -> 255, the whole address); "64" -> 64 (IPv6).
std::optional<uint8_t> persist_prefix_text(const std::string& text) {
    if (text.find('.') == std::string::npos) {
        if (text.empty() || text.size() > 3) return std::nullopt;
        unsigned len = 0;
        for (char c : text) {
            if (c < '0' || c > '9') return std::nullopt;
            len = len * 10 + unsigned(c - '0');
        }
        if (len > 128) return std::nullopt;
        return static_cast<uint8_t>(len);
    }
    auto a = net::parse_inet(text);
    if (!a || !a->is_v4()) return std::nullopt;
    const uint32_t mask = net::ntoh32(a->v4_be());
    const auto len = static_cast<uint8_t>(__builtin_popcount(mask));
    if (len != 0 && mask != ~uint32_t{0} << (32 - len)) return std::nullopt;
    return len == 32 ? uint8_t{255} : len;
}

// "80" -> 80-80, "8000-8099" -> that range; nullopt otherwise (1..65535).
std::optional<std::pair<uint16_t, uint16_t>> port_range_text(const std::string& text) {
    auto num = [](std::string_view v) -> std::optional<uint16_t> {
        if (v.empty() || v.size() > 5) return std::nullopt;
        unsigned n = 0;
        for (char c : v) {
            if (c < '0' || c > '9') return std::nullopt;
            n = n * 10 + unsigned(c - '0');
        }
        if (n == 0 || n > 65535) return std::nullopt;
        return static_cast<uint16_t>(n);
    };
    const size_t dash = text.find('-');
    auto lo = num(std::string_view(text).substr(0, dash));
    auto hi = dash == std::string::npos ? lo : num(std::string_view(text).substr(dash + 1));
    if (!lo || !hi || *lo > *hi) return std::nullopt;
    return std::make_pair(*lo, *hi);
}

}  // namespace

void Parser::local_address_group(const Token& kw) {
    const Token* name = value(kw);
    LocalAddressGroup group;
    group.loc = loc(kw);
    if (name) group.name = name->text;
    std::string context = "local_address_group " + quoted(group.name);
    std::vector<SourceLoc> locs;
    block(kw, [&](const Token& entry) {
        // Several `RANGE PORT` pairs may share a line.
        const Token* port = has_value(entry) ? &take() : nullptr;
        auto range = parse_addr_range(entry.text);
        if (!range)
            error(entry,
                  context + ": bad address range " + quoted(entry.text) + " (" + kRangeForms + ")");
        if (port)
            ref_port(*port, context);
        else
            error(entry, context + ": missing port name after " + quoted(entry.text));
        if (!range || !port) return;
        range_for_each(range->first, range->second, [&](const net::InetAddr& a) {
            group.addrs.push_back(LocalAddress{a, port->text});
            locs.push_back(loc(entry));
        });
    });
    if (!name) return;
    if (const LocalAddressGroup* prev = cfg_.find_laddr_group(group.name)) {
        error(kw, "local_address_group " + quoted(group.name) + " already defined at " +
                      prev->loc.file + ":" + std::to_string(prev->loc.line));
        return;
    }
    if (group.addrs.empty()) error(kw, context + ": no address");
    cfg_.laddr_groups.push_back(std::move(group));
    laddr_locs_.push_back(std::move(locs));
}

void Parser::virtual_server_group(const Token& kw) {
    const Token* name = value(kw);
    VirtualServerGroup group;
    group.loc = loc(kw);
    if (name) group.name = name->text;
    block(kw, [&](const Token& entry) {
        if (classified(entry, "virtual_server_group", /*entries=*/true)) return;
        auto range = parse_addr_range(entry.text);
        if (!range)
            error(entry, "virtual_server_group " + quoted(group.name) + ": bad address range " +
                             quoted(entry.text) + " (" + kRangeForms + ")");
        auto port = port_value(entry);  // several `RANGE PORT` pairs may share a line
        if (range && port)
            group.entries.push_back(VsGroupEntry{range->first, range->second, *port, loc(entry)});
    });
    if (!name) return;
    for (const VirtualServerGroup& prev : cfg_.vs_groups) {
        if (prev.name == group.name) {
            error(kw, "virtual_server_group " + quoted(group.name) + " already defined at " +
                          prev.loc.file + ":" + std::to_string(prev.loc.line));
            return;
        }
    }
    cfg_.vs_groups.push_back(std::move(group));
}

void Parser::virtual_server(const Token& kw) {
    PendingVs p;
    p.vs.loc = loc(kw);
    const Token* first = value(kw);
    if (!first) {
        p.kind = PendingVs::Kind::Invalid;
    } else if (first->text == "group") {
        p.kind = PendingVs::Kind::Group;
        if (const Token* name = value(*first))
            p.group_name = name->text;
        else
            p.kind = PendingVs::Kind::Invalid;
    } else if (first->text == "match") {
        return match_server(kw, *first);
    } else if (first->text == "fwmark") {
        // Served packets: those fwmark_defs gives this mark (the validator checks it exists).
        if (auto mark = number_value(*first, 1, UINT32_MAX)) {
            p.vs.fwmark = *mark;
            p.vs.vip = net::InetAddr::v4(0);
        } else {
            p.kind = PendingVs::Kind::Invalid;
        }
    } else {
        auto vip = net::parse_inet(net::strip_brackets(first->text));
        if (!vip) error(*first, "virtual_server: bad IP address " + quoted(first->text));
        auto port = port_value(kw);
        if (vip && port) {
            p.vs.vip = *vip;
            p.vs.port = *port;
        } else {
            p.kind = PendingVs::Kind::Invalid;
        }
    }
    if (has_value(kw)) {
        error(peek() ? *peek() : kw, "virtual_server: unexpected " + quoted(peek()->text));
        while (has_value(kw)) ++pos_;
    }
    std::optional<SourceLoc> toa_loc;
    std::optional<SourceLoc> pp_loc;
    std::optional<SourceLoc> uoa_loc;
    block(kw, [&](const Token& t) { vs_keyword(t, p, toa_loc, pp_loc, uoa_loc); });

    VirtualServer& vs = p.vs;
    fwmark_family(p);
    if (!p.proto_set && !vs.fwmark) warning(kw, "protocol not set, using TCP");
    if (vs.fwmark && p.proto_set)
        warning(*p.proto_loc,
                "protocol of a fwmark service is unused: it takes TCP and UDP "
                "(narrow a mark by protocol in fwmark_defs)");
    if (p.pe_loc && vs.persistence_timeout == 0)
        error(*p.pe_loc,
              "persistence_engine sip needs persistence_timeout: the Call-ID picks a template");
    if (vs.hash_qid && (vs.fwmark || (p.proto_set && vs.proto != Proto::Udp) || !p.proto_set))
        error(*p.hash_target_loc,
              "hash_target qid (QUIC connection ID) needs protocol UDP: add `protocol UDP` or "
              "use hash_target sip");
    if (p.cid_len_loc && !vs.hash_qid)
        error(*p.cid_len_loc,
              "quic_cid_len is the QUIC connection-ID length for hash_target qid: add "
              "`hash_target qid` or remove it");
    if (p.granularity_loc && vs.persistence_timeout == 0)
        error(*p.granularity_loc,
              "persistence_granularity without persistence_timeout has no effect: add "
              "persistence_timeout or remove it");
    if (vs.toa && vs.proxy_protocol != ProxyProtocol::Off) {
        SourceLoc at = std::max(*toa_loc, *pp_loc, [](const SourceLoc& a, const SourceLoc& b) {
            return a.line < b.line;
        });
        error(at, "toa on cannot be combined with proxy_protocol " +
                      std::string(to_string(vs.proxy_protocol)));
    }
    if (vs.proxy_protocol == ProxyProtocol::V1 && p.proto_set && vs.proto != Proto::Tcp)
        error(*pp_loc, "proxy_protocol v1 has no UDP form (use v2)");
    if (vs.uoa != Uoa::Off && vs.proto != Proto::Udp) {
        error(*uoa_loc, "uoa " + std::string(to_string(vs.uoa)) +
                            " needs protocol UDP (TCP clients get toa or proxy_protocol)");
    } else if (vs.uoa != Uoa::Off && vs.proxy_protocol != ProxyProtocol::Off) {
        SourceLoc at = std::max(*uoa_loc, *pp_loc, [](const SourceLoc& a, const SourceLoc& b) {
            return a.line < b.line;
        });
        error(at, "uoa " + std::string(to_string(vs.uoa)) +
                      " cannot be combined with proxy_protocol " +
                      std::string(to_string(vs.proxy_protocol)));
    }
    sched_flags_check(p);
    health_resolve(vs);
    // `nat_tunnel` turns lb_kind NAT into NatTun, whichever of the two came first.
    if (p.nat_tunnel_loc) {
        if (vs.fwd == lb::FwdMode::Nat)
            vs.fwd = lb::FwdMode::NatTun;
        else
            error(*p.nat_tunnel_loc, "nat_tunnel needs lb_kind NAT (it carries NAT over a "
                                     "tunnel; this virtual server has lb_kind " +
                                         std::string(lb::fwd_names(vs.fwd).keepalived) + ")");
    }
    if (vs.fwd == lb::FwdMode::FullNat && vs.laddr_group.empty() && !p.laddr_loc)
        error(kw, "virtual_server: laddr_group_name missing (required for lb_kind FNAT)");
    pending_.push_back(std::move(p));
}

// A fwmark service's family, as keepalived decides it: `ip_family`, else the family of its
// first real server, else of its sorry server, else IPv4. A VIP has its own family, which
// `ip_family` may only repeat.
void Parser::fwmark_family(PendingVs& p) {
    VirtualServer& vs = p.vs;
    if (!vs.fwmark) {
        if (p.ip_family_v6 && p.kind == PendingVs::Kind::Address &&
            *p.ip_family_v6 == vs.vip.is_v4())
            error(*p.ip_family_loc, "ip_family " + std::string(*p.ip_family_v6 ? "inet6" : "inet") +
                                        " but the virtual address " + net::to_string(vs.vip) +
                                        " is " + (vs.vip.is_v4() ? "IPv4" : "IPv6") +
                                        ": ip_family is for fwmark services; remove it");
        return;
    }
    bool v6 = false;
    if (p.ip_family_v6)
        v6 = *p.ip_family_v6;
    else if (!vs.real_servers.empty())
        v6 = !vs.real_servers.front().addr.is_v4();
    else if (vs.health.sorry)
        v6 = !vs.health.sorry->addr.is_v4();
    vs.vip = v6 ? net::InetAddr{} : net::InetAddr::v4(0);
}

// Scheduler flags and mh_table_size must fit lb_algo: sh-* and mh-* name their scheduler,
// flag-N means whatever the scheduler makes of it (sh and mh take flag-1 and flag-2).
void Parser::sched_flags_check(const PendingVs& p) {
    const lb::Scheduler* sched = lb::sched_find(p.vs.sched);
    if (!sched) return;  // an unknown lb_algo has its own error
    for (const auto& [name, at] : p.sched_flag_locs) {
        uint32_t flag = 0;
        (void)lb::sched_flag_parse(name, flag);
        const bool named_other = !name.starts_with("flag-") && !name.starts_with(p.vs.sched + "-");
        if (named_other || (sched->flags & flag) == 0)
            error(at, quoted(name) + " does not apply to lb_algo " + p.vs.sched +
                          " (sh-* need lb_algo sh, mh-* need lb_algo mh)");
    }
    if (p.hash_target_loc && p.vs.sched != "conhash")
        error(*p.hash_target_loc,
              "hash_target applies to lb_algo conhash only (lb_algo is " + p.vs.sched + ")");
    if (p.table_loc && p.vs.sched != "mh")
        error(*p.table_loc,
              "mh_table_size applies to lb_algo mh only (lb_algo is " + p.vs.sched + ")");
}

// `lb_kind|lvs_method NAT|DR|TUN|FNAT|SNAT`, TUN with `[type ipip|gue] [port N]` after it
// (keepalived's syntax; GUE needs the port, as IPVS does).
void Parser::lb_kind(const Token& t, VirtualServer& vs) {
    // NatTun is written `lb_kind NAT` + `nat_tunnel` (Parser::nat_tunnel), not a method here.
    static constexpr auto kMethods = [] {
        std::array<std::pair<std::string_view, lb::FwdMode>, lb::kFwdModeCount - 1> a{};
        unsigned j = 0;
        for (unsigned i = 0; i < lb::kFwdModeCount; ++i)
            if (lb::kFwdModeNames[i].mode != lb::FwdMode::NatTun)
                a[j++] = {lb::kFwdModeNames[i].keepalived, lb::kFwdModeNames[i].mode};
        return a;
    }();
    auto fwd = choice(t, kMethods, /*ignore_case=*/true);
    if (!fwd) return;
    vs.fwd = *fwd;
    bool port_given = false;
    while (has_value(t)) {
        const Token& opt = take();
        if (vs.fwd != lb::FwdMode::Tun) {
            error(opt, t.text + " " + std::string(lb::fwd_names(vs.fwd).keepalived) +
                           ": unexpected " + quoted(opt.text) + " (type and port are for TUN)");
            continue;
        }
        if (opt.text == "type") {
            static constexpr std::array<std::pair<std::string_view, lb::TunType>, 2> kTypes = {
                {{"ipip", lb::TunType::Ipip}, {"gue", lb::TunType::Gue}}};
            const Token* val = peek();
            if (val && same_line(*val, t) && val->text == "gre") {
                ++pos_;
                error(*val, t.text + " TUN type gre is not supported: use type ipip or gue");
                continue;
            }
            if (auto ty = choice(opt, kTypes)) vs.tun_type = *ty;
        } else if (opt.text == "port") {
            if (auto n = number_value(opt, 1, 65535)) {
                vs.tun_port = static_cast<uint16_t>(*n);
                port_given = true;
            }
        } else if (opt.text == "nocsum" || opt.text == "csum" || opt.text == "remcsum") {
            error(opt, t.text + " TUN " + opt.text +
                           " is not supported: xvs sends GUE with UDP checksum 0; remove it");
        } else {
            error(opt, t.text + " TUN: unexpected " + quoted(opt.text) +
                           " (type ipip|gue, port N)");
        }
    }
    if (vs.fwd == lb::FwdMode::Tun && vs.tun_type == lb::TunType::Gue && !port_given)
        error(t, t.text + " TUN type gue needs a port (keepalived: `port 6080`)");
    if (port_given && vs.tun_type != lb::TunType::Gue)
        error(t, t.text + " TUN: port is only for type gue");
}

// xvs's `nat_tunnel ipip|gue [port N]` (issue 20; no keepalived counterpart): lb_kind NAT with
// both directions in a tunnel between a local address (laddr_group_name) and the real server.
// GUE needs the port (the real server's and the director's, both ways).
void Parser::nat_tunnel(const Token& t, PendingVs& p) {
    static constexpr std::array<std::pair<std::string_view, lb::TunType>, 2> kTypes = {
        {{"ipip", lb::TunType::Ipip}, {"gue", lb::TunType::Gue}}};
    p.nat_tunnel_loc = loc(t);
    if (auto ty = choice(t, kTypes)) p.vs.tun_type = *ty;
    bool port_given = false;
    while (has_value(t)) {
        const Token& opt = take();
        if (opt.text == "port") {
            if (auto n = number_value(opt, 1, 65535)) {
                p.vs.tun_port = static_cast<uint16_t>(*n);
                port_given = true;
            }
        } else {
            error(opt, "nat_tunnel: unexpected " + quoted(opt.text) + " (ipip|gue [port N])");
        }
    }
    if (p.vs.tun_type == lb::TunType::Gue && !port_given)
        error(t, "nat_tunnel gue needs a port (`nat_tunnel gue port 6080`)");
    if (port_given && p.vs.tun_type != lb::TunType::Gue)
        error(t, "nat_tunnel: port is only for gue");
}

void Parser::vs_keyword(const Token& t, PendingVs& p, std::optional<SourceLoc>& toa_loc,
                        std::optional<SourceLoc>& pp_loc, std::optional<SourceLoc>& uoa_loc) {
    VirtualServer& vs = p.vs;
    const std::string& k = t.text;
    if (classified(t, "virtual_server")) return;
    if (k == "protocol") {
        const Token* val = value(t);
        if (!val) return;
        std::string proto = upper(val->text);
        if (proto == "TCP")
            vs.proto = Proto::Tcp;
        else if (proto == "UDP")
            vs.proto = Proto::Udp;
        else if (proto == "SCTP")
            return error(*val, "protocol SCTP not supported");
        else if (proto == "ICMP")
            return error(*val,
                         "protocol ICMP is only for SNAT match services "
                         "(`virtual_server match NAME`)");
        else
            return error(*val, "protocol: bad value " + quoted(val->text) + " (TCP|UDP)");
        p.proto_set = true;
        p.proto_loc = loc(t);
    } else if (k == "lb_algo" || k == "lvs_sched") {
        sched_value(t, vs.sched);
    } else if (k == "src-range" || k == "dst-range" || k == "oif" || k == "iif") {
        error(t, quoted(k) + " is only for SNAT match services (`virtual_server match NAME`)");
        skip_statement(t);
    } else if (k == "lb_kind" || k == "lvs_method") {
        lb_kind(t, vs);
    } else if (k == "nat_tunnel") {
        nat_tunnel(t, p);
    } else if (k == "laddr_group_name") {
        if (const Token* val = value(t)) {
            vs.laddr_group = val->text;
            p.laddr_loc = loc(*val);
        }
    } else if (k == "syn_proxy") {
        vs.syn_proxy = true;
    } else if (k == "ops") {
        vs.ops = true;
    } else if (k == "toa") {
        static constexpr std::array<std::pair<std::string_view, bool>, 2> kOnOff = {
            {{"on", true}, {"off", false}}};
        if (auto on = choice(t, kOnOff)) {
            vs.toa = *on;
            toa_loc = loc(t);
        }
    } else if (k == "proxy_protocol") {
        static constexpr std::array<std::pair<std::string_view, ProxyProtocol>, 3> kPp = {
            {{"v1", ProxyProtocol::V1}, {"v2", ProxyProtocol::V2}, {"off", ProxyProtocol::Off}}};
        if (auto pp = choice(t, kPp)) {
            vs.proxy_protocol = *pp;
            pp_loc = loc(t);
        }
    } else if (k == "uoa") {
        static constexpr std::array<std::pair<std::string_view, Uoa>, 3> kUoa = {
            {{"opp", Uoa::Opp}, {"ipo", Uoa::Ipo}, {"off", Uoa::Off}}};
        if (auto uoa = choice(t, kUoa)) {
            vs.uoa = *uoa;
            uoa_loc = loc(t);
        }
    } else if (k == "blacklist" || k == "whitelist") {
        acl_list(t, k == "blacklist" ? vs.blacklist : vs.whitelist);
    } else if (k == "daddr_group_name") {
        if (const Token* val = value(t)) {
            p.deny_group = val->text;
            p.deny_loc = loc(*val);
        }
    } else if (k == "conn_rate_limit") {
        if (auto n = number_value(t, 0, UINT32_MAX)) vs.conn_rate_limit = *n;
    } else if (uint32_t flag = 0; lb::sched_flag_parse(k, flag)) {
        vs.sched_flags |= flag;
        p.sched_flag_locs.emplace_back(k, loc(t));
    } else if (k == "mh_table_size") {
        const Token* val = peek();
        if (auto n = number_value(t, 2, lb::kMhMaxTableSize)) {
            if (!lb::sched_is_prime(*n))
                error(*val,
                      "mh_table_size " + std::to_string(*n) +
                          " is not a prime (Maglev needs one: e.g. 251, 4093, 65537, 131071)");
            vs.mh_table_size = *n;
            p.table_loc = loc(t);
        }
    } else if (k == "hash_target") {
        // DPVS's keepalived: sip (the client address, the default) or qid (QUIC connection ID).
        static constexpr std::array<std::pair<std::string_view, bool>, 2> kTargets = {{
            {"sip", false},
            {"qid", true},
        }};
        if (auto v = choice(t, kTargets)) {
            vs.hash_qid = *v;
            p.hash_target_loc = loc(t);
        }
    } else if (k == "quic_cid_len") {
        if (auto n = number_value(t, 1, net::kQuicMaxCidLen)) {
            vs.quic_cid_len = static_cast<uint8_t>(*n);
            p.cid_len_loc = loc(t);
        }
    } else if (k == "persistence_engine") {
        static constexpr std::array<std::pair<std::string_view, bool>, 1> kEngines = {{
            {"sip", true},
        }};
        if (auto v = choice(t, kEngines)) {
            vs.pe_sip = *v;
            p.pe_loc = loc(t);
        }
    } else if (k == "persistence_timeout") {
        // keepalived and ipvsadm -p: no value is 360 s.
        if (!has_value(t)) {
            vs.persistence_timeout = 360;
        } else if (auto n = number_value(t, 1, lb::kMaxTimeoutS)) {
            vs.persistence_timeout = *n;
        }
    } else if (k == "ip_family") {
        const Token* val = value(t);
        if (!val) return;
        const std::string low = lower(val->text);
        if (low != "inet" && low != "inet6")
            return error(*val, "ip_family: bad value " + quoted(val->text) + " (inet or inet6)");
        p.ip_family_v6 = low == "inet6";
        p.ip_family_loc = loc(t);
    } else if (k == "persistence_granularity") {
        const Token* val = value(t);
        if (!val) return;
        p.granularity_loc = loc(t);
        if (auto len = persist_prefix_text(val->text))
            vs.persist_prefix = *len;
        else
            error(*val, "persistence_granularity: bad value " + quoted(val->text) +
                            " (a contiguous IPv4 netmask such as 255.255.255.0, or an IPv6 "
                            "prefix length such as 64)");
    } else if (k == "real_server") {
        real_server(t, vs);
    } else if (health_vs_keyword(t, vs)) {
    } else {
        unknown(t, "virtual_server");
    }
}

// `fwmark_defs { mark N { VIP[/LEN] [PORT|PORT-PORT] [tcp|udp] ... } }`, one entry a line.
void Parser::fwmark_defs(const Token& kw) {
    if (classified(kw, "fwmark_defs")) return;
    if (kw.text != "mark") return unknown(kw, "fwmark_defs");
    auto mark = number_value(kw, 1, UINT32_MAX);
    lb::FwmarkDef def;
    if (mark) def.mark = *mark;
    const std::string context = "fwmark_defs mark " + (mark ? std::to_string(*mark) : "?");
    block(kw, [&](const Token& entry) {
        lb::FwmarkEntry e;
        bool ok = true;
        if (auto prefix = net::parse_inet_prefix(entry.text);
            prefix && lb::fwmark_prefix_too_wide(*prefix)) {
            // Every address of an entry becomes a VIP xvs answers ARP/NDP for (lb/fwmark.h).
            error(entry, context + ": " + quoted(entry.text) + " stands for more than " +
                             std::to_string(lb::Director::kMaxFwmarkAddrs) + " addresses (" +
                             lb::fwmark_shortest_prefix(*prefix) + " or longer): each becomes a VIP xvs answers ARP/NDP for; "
                             "split it or use a virtual_server per VIP");
            ok = false;
        } else if (prefix) {
            // Either family: IPv4 entries feed the mark's IPv4 service, IPv6 entries its IPv6
            // service (IPVS's -f N -6; keepalived `ip_family inet6`).
            e.dst = *prefix;
        } else {
            error(entry, context + ": bad address " + quoted(entry.text) + " (VIP or VIP/LEN)");
            ok = false;
        }
        bool port_seen = false, proto_seen = false;
        while (has_value(entry)) {
            const Token& opt = take();
            const std::string low = lower(opt.text);
            if ((low == "tcp" || low == "udp") && !proto_seen) {
                e.proto = low == "tcp" ? 6 : 17;
                proto_seen = true;
                continue;
            }
            auto range = port_range_text(opt.text);
            if (range && !port_seen && !proto_seen) {
                e.port_first = range->first;
                e.port_last = range->second;
                port_seen = true;
                continue;
            }
            error(opt, context + ": unexpected " + quoted(opt.text) +
                           " (an entry is VIP[/LEN] [PORT|PORT-PORT] [tcp|udp])");
            ok = false;
        }
        if (ok) def.entries.push_back(e);
    });
    if (!mark) return;
    for (size_t i = 0; i < cfg_.fwmark.marks.size(); ++i) {
        if (cfg_.fwmark.marks[i].mark == def.mark) {
            error(kw, context + " already defined at " + cfg_.fwmark.locs[i].file + ":" +
                          std::to_string(cfg_.fwmark.locs[i].line));
            return;
        }
    }
    if (def.entries.empty()) error(kw, context + ": no entry");
    cfg_.fwmark.marks.push_back(std::move(def));
    cfg_.fwmark.locs.push_back(loc(kw));
}

// `blacklist { 10.0.0.0/8 192.0.2.7 2001:db8::/32 }` (entries may share lines) or, for short
// lists, `blacklist 10.0.0.0/8 192.0.2.7`. Each entry is an address of either family or
// ADDR/LEN without host bits.
void Parser::acl_list(const Token& kw, std::vector<net::InetPrefix>& list) {
    bool given = false;
    while (has_value(kw)) {
        acl_entry(kw, take(), list);
        given = true;
    }
    const Token* next = peek();
    if (next && next->kind == TokenKind::LBrace) {
        acl_block(kw, list);
        given = true;
    }
    if (!given) error(kw, kw.text + ": expected addresses or prefixes, or a '{ }' block of them");
}

void Parser::acl_entry(const Token& kw, const Token& tok, std::vector<net::InetPrefix>& list) {
    auto prefix = net::parse_acl_prefix(tok.text);
    if (!prefix) return error(tok, kw.text + ": " + prefix.error());
    if (std::find(list.begin(), list.end(), *prefix) != list.end())
        return warning(tok, kw.text + ": " + tok.text + " listed twice");
    list.push_back(*prefix);
}

// The `{ ... }` of a list, at the current `{`.
void Parser::acl_block(const Token& kw, std::vector<net::InetPrefix>& list) {
    ++pos_;
    block_body(kw, [&](const Token& entry) {
        acl_entry(kw, entry, list);
        while (has_value(entry)) acl_entry(kw, take(), list);
    });
}

// DPVS keepalived: `deny_address_group NAME { PREFIX ... }`.
void Parser::deny_address_group(const Token& kw) {
    DenyAddressGroup group;
    group.loc = loc(kw);
    const Token* name = value(kw);
    if (name) group.name = name->text;
    if (!open_block_at(kw)) return;
    acl_block(kw, group.prefixes);
    if (!name) return;
    for (const DenyAddressGroup& prev : cfg_.deny_groups) {
        if (prev.name == group.name) {
            error(kw, "deny_address_group " + quoted(group.name) + " already defined at " +
                          prev.loc.file + ":" + std::to_string(prev.loc.line));
            return;
        }
    }
    cfg_.deny_groups.push_back(std::move(group));
}

// Like open_block, without consuming the `{` (acl_block does).
bool Parser::open_block_at(const Token& kw) {
    const Token* next = peek();
    if (next && next->kind == TokenKind::LBrace) return true;
    error(kw, kw.text + ": expected '{'");
    skip_statement(kw);
    return false;
}

void Parser::real_server(const Token& kw, VirtualServer& vs) {
    RealServer rs;
    rs.loc = loc(kw);
    auto addr = inet_value(kw);
    auto port = addr ? port_value(kw) : std::nullopt;
    const Token* next = peek();
    if (next && next->kind == TokenKind::LBrace) {
        block(kw, [&](const Token& t) { rs_keyword(t, rs); });
    } else {
        skip_statement(kw);
    }
    if (!addr || !port) return;
    rs.addr = *addr;
    rs.port = *port;
    // IPVS refuses this (ERANGE) whether or not an upper threshold is set.
    if (rs.lower_threshold > rs.upper_threshold)
        error(kw, "real_server " + endpoint_text(rs.addr, rs.port) + ": lthreshold " +
                      std::to_string(rs.lower_threshold) + " is higher than uthreshold " +
                      std::to_string(rs.upper_threshold));
    for (const RealServer& prev : vs.real_servers) {
        if (prev.addr == rs.addr && prev.port == rs.port) {
            error(kw, "duplicate real_server " + endpoint_text(rs.addr, rs.port) + " (first at " +
                          prev.loc.file + ":" + std::to_string(prev.loc.line) + ")");
            return;
        }
    }
    vs.real_servers.push_back(std::move(rs));
}

void Parser::rs_keyword(const Token& t, RealServer& rs) {
    const std::string& k = t.text;
    if (classified(t, "real_server")) return;
    if (k == "weight") {
        if (auto n = number_value(t, 0, 65535)) rs.weight = *n;
    } else if (k == "upper_threshold" || k == "uthreshold") {
        if (auto n = number_value(t, 0, UINT32_MAX)) rs.upper_threshold = *n;
    } else if (k == "lower_threshold" || k == "lthreshold") {
        if (auto n = number_value(t, 0, UINT32_MAX)) rs.lower_threshold = *n;
    } else if (health_rs_keyword(t, rs)) {
    } else {
        unknown(t, "real_server");
    }
}

}  // namespace xvs::ctl::parser_detail
