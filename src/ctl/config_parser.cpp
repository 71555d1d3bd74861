// Parser for xvs.conf. Keepalived's grammar is keyword-driven: a keyword's values are the
// tokens that follow it on the same line (never on the next one), a `{ }` block may follow.
// Parsing never stops at the first problem: a bad statement is reported and skipped, and the
// cross-reference checks (config_validate.cpp) run on whatever was parsed. The Parser class is
// in config_parser_impl.h; this file has the top level, the global, netif, worker, ip and ipvs
// sections and the API; config_parser_vs.cpp the service sections.
#include <exception>

#include "ctl/config_parser_impl.h"
#include "ctl/log.h"
#include "ctl/worker_placement.h"

namespace xvs::ctl {

namespace parser_detail {

void Parser::top_level(const Token& kw) {
    const std::string& k = kw.text;
    if (classified(kw, "top")) return;
    if (k == "global_defs")
        block(kw, [&](const Token& t) { global_defs(t); });
    else if (k == "netif_defs")
        block(kw, [&](const Token& t) { netif_defs(t); });
    else if (k == "worker_defs")
        block(kw, [&](const Token& t) { worker_defs(t); });
    else if (k == "frag_defs")
        block(kw, [&](const Token& t) { frag_defs(t); });
    else if (k == "ip_defs")
        block(kw, [&](const Token& t) { ip_defs(t); });
    else if (k == "ipvs_defs")
        block(kw, [&](const Token& t) { ipvs_defs(t); });
    else if (k == "fwmark_defs")
        block(kw, [&](const Token& t) { fwmark_defs(t); });
    else if (k == "sync_defs") {
        cfg_.sync.enabled = true;
        cfg_.sync.loc = loc(kw);
        block(kw, [&](const Token& t) { sync_defs(t); });
    }
    else if (k == "local_address_group")
        local_address_group(kw);
    else if (k == "virtual_server_group")
        virtual_server_group(kw);
    else if (k == "deny_address_group")
        deny_address_group(kw);
    else if (k == "virtual_server")
        virtual_server(kw);
    else if (k == "bgp_defs" || k == "ospf_defs")
        routing_section(kw, k == "bgp_defs");
    else
        unknown(kw, "top");
}

void Parser::global_defs(const Token& kw) {
    const std::string& k = kw.text;
    if (classified(kw, "global_defs")) return;
    if (k == "log_level") {
        static constexpr std::array<std::pair<std::string_view, LogLevel>, 4> kLevels = {
            {{"debug", LogLevel::Debug},
             {"info", LogLevel::Info},
             {"warning", LogLevel::Warning},
             {"error", LogLevel::Error}}};
        if (auto level = choice(kw, kLevels)) cfg_.global.log_level = *level;
    } else if (k == "log_facility") {
        if (const Token* val = value(kw)) {
            if (auto facility = log_facility_parse(val->text))
                cfg_.global.log_facility = *facility;
            else
                error(*val, k + ": " + facility.error());
        }
    } else if (k == "control_socket") {
        if (const Token* val = value(kw)) {
            if (val->text.starts_with('/'))
                cfg_.global.control_socket = val->text;
            else
                error(*val, k + ": " + quoted(val->text) + " is not an absolute path");
        }
    } else if (k == "control_socket_group") {
        if (const Token* val = value(kw)) {
            if (auto gid = group_id(val->text)) {
                cfg_.global.control_socket_group = val->text;
                cfg_.global.control_socket_gid = *gid;
            } else {
                error(*val, k + ": no group " + quoted(val->text) +
                                " on this system (getent group lists them)");
            }
        }
    } else if (k == "metrics_listen") {
        if (const Token* val = value(kw)) {
            if (val->text == "off") {
                cfg_.global.metrics_listen.reset();
            } else if (auto ep = net::parse_inet_endpoint(val->text); ep && ep->port != 0) {
                cfg_.global.metrics_listen = *ep;
            } else {
                error(*val, k + ": " + quoted(val->text) +
                                " is not ADDR:PORT with a port 1..65535 (e.g. 127.0.0.1:9469 or "
                                "[::1]:9469), or off");
            }
        }
    } else if (k == "status_allow") {
        // The statements together are the list; the first one replaces the loopback default.
        if (!status_allow_given_) cfg_.global.status_allow.clear();
        status_allow_given_ = true;
        acl_list(kw, cfg_.global.status_allow);
    } else if (k == "lvs_timeouts") {
        // keepalived's global form of ipvsadm --set: `lvs_timeouts tcp N tcpfin N udp N`.
        if (!has_value(kw)) error(kw, k + ": missing value");
        while (has_value(kw)) timeout_setting(take());
    } else {
        unknown(kw, "global_defs");
    }
}

void Parser::netif_defs(const Token& kw) {
    if (classified(kw, "netif_defs")) return;
    if (kw.text == "eal_args") {
        if (const Token* val = value(kw)) cfg_.netif.eal_args = val->text;
    } else if (kw.text == "mbufs_per_port") {
        // The lower bound depends on `workers` (maybe not parsed yet): config_validate.
        if (auto n = number_value(kw, 1, kMbufsPerPortMax)) {
            cfg_.netif.mbufs_per_port = *n;
            cfg_.netif.mbufs_per_port_loc = loc(kw);
        }
    } else if (kw.text == "flow_steering") {
        static constexpr std::array<std::pair<std::string_view, port::FlowSteering>, 3> kModes = {
            {{"auto", port::FlowSteering::Auto},
             {"on", port::FlowSteering::On},
             {"off", port::FlowSteering::Off}}};
        if (auto mode = choice(kw, kModes)) {
            cfg_.netif.flow_steering = *mode;
            cfg_.netif.flow_steering_loc = loc(kw);
        }
    } else if (kw.text == "xdp_offload") {
        if (auto n = number_value(kw, 0, 1000000)) {
            cfg_.netif.xdp_offload = *n;
            cfg_.netif.xdp_offload_loc = loc(kw);
        }
    } else if (kw.text == "port") {
        const Token* name = value(kw);
        PortDef port;
        port.loc = loc(kw);
        if (name) port.name = name->text;
        bool dev_seen = false;
        block(kw, [&](const Token& t) {
            if (classified(t, "port")) return;
            if (t.text == "dev") {
                if (const Token* val = value(t)) {
                    port.dev = val->text;
                    dev_seen = true;
                }
            } else if (t.text == "mtu") {
                if (auto mtu = number_value(t, 68, 9216)) port.mtu = *mtu;
            } else if (t.text == "exception") {
                static constexpr std::array<std::pair<std::string_view, ExceptionKind>, 3> kKinds =
                    {{{"xdp", ExceptionKind::Xdp},
                      {"tap", ExceptionKind::Tap},
                      {"off", ExceptionKind::Off}}};
                auto kind = choice(t, kKinds);
                if (!kind) return;
                port.exception = *kind;
                if (*kind == ExceptionKind::Tap) {
                    const Token* tap = value(t);
                    if (!tap) return;
                    // IFNAMSIZ 16 with its terminating zero.
                    if (tap->text.empty() || tap->text.size() > 15 ||
                        tap->text.find_first_of("/ \t,=") != std::string::npos)
                        error(*tap, "exception tap: bad interface name " + quoted(tap->text) +
                                        " (1..15 characters, no '/', ',' or '=')");
                    port.exception_tap = tap->text;
                }
            } else {
                unknown(t, "port");
            }
        });
        if (!name) return;
        if (const PortDef* prev = cfg_.find_port(port.name)) {
            error(kw, "port " + quoted(port.name) + " already defined at " + prev->loc.file + ":" +
                          std::to_string(prev->loc.line));
            return;
        }
        if (!dev_seen) error(kw, "port " + quoted(port.name) + ": dev missing");
        if (dev_seen && port.exception == ExceptionKind::Xdp && !port.is_af_xdp())
            error(kw, "port " + quoted(port.name) +
                          ": exception xdp needs a net_af_xdp device (use exception tap NAME)");
        cfg_.netif.ports.push_back(std::move(port));
    } else {
        unknown(kw, "netif_defs");
    }
}

void Parser::worker_defs(const Token& kw) {
    if (classified(kw, "worker_defs")) return;
    if (kw.text == "workers") {
        if (auto n = number_value(kw, 1, kMaxWorkers)) {
            cfg_.worker.workers = *n;
            cfg_.worker.workers_loc = loc(kw);
        }
    } else if (kw.text == "cpus") {
        // `cpus 1-3,5` (Linux cpu-list syntax); `cpus 1 2 3` and `cpus 1-2, 5` read the same.
        std::string list;
        if (const Token* first = value(kw)) {
            list = first->text;
            while (has_value(kw)) {
                const std::string& more = take().text;
                if (!list.ends_with(',') && !more.starts_with(',')) list += ',';
                list += more;
            }
            if (auto cpus = parse_cpu_list(list)) {
                cfg_.worker.cpus = std::move(*cpus);
                cfg_.worker.cpus_loc = loc(kw);
            } else {
                error(kw, "cpus: " + cpus.error());
            }
        }
    } else if (kw.text == "poll_mode") {
        static constexpr std::array<std::pair<std::string_view, PollMode>, 2> kModes = {
            {{"busy", PollMode::Busy}, {"adaptive", PollMode::Adaptive}}};
        if (auto mode = choice(kw, kModes)) cfg_.worker.poll_mode = *mode;
    } else {
        unknown(kw, "worker_defs");
    }
}

// Reassembly limits (stack/fragment.h). The bounds keep a worker's preallocation sane:
// max_datagrams * max_datagram_size bytes of large mbufs (twice, for those on their way out).
void Parser::frag_defs(const Token& kw) {
    if (classified(kw, "frag_defs")) return;
    FragDefs& f = cfg_.frag;
    if (kw.text == "max_datagrams") {
        if (auto n = number_value(kw, 0, 4096)) f.max_datagrams = *n;
    } else if (kw.text == "max_fragments") {
        if (auto n = number_value(kw, 2, 256)) f.max_fragments = *n;
    } else if (kw.text == "max_datagram_size") {
        if (auto n = number_value(kw, 576, 65535)) f.max_datagram_size = *n;  // RFC 791 576
    } else if (kw.text == "timeout_ms") {
        if (auto n = number_value(kw, 100, 60000)) f.timeout_ms = *n;  // RFC 8200: 60 s
    } else {
        unknown(kw, "frag_defs");
    }
}

// `dev PORT` (and `via GW` for routes) options after the prefix of address/route.
void Parser::ip_options(const Token& kw, std::optional<std::string>& dev,
                        std::optional<net::InetAddr>* via, bool& ok) {
    while (has_value(kw)) {
        const Token& opt = take();
        if (opt.text == "dev") {
            if (const Token* val = value(opt)) {
                dev = val->text;
                ref_port(*val, kw.text);
            } else
                ok = false;
        } else if (opt.text == "via" && via) {
            if (auto gw = inet_value(opt))
                *via = gw;
            else
                ok = false;
        } else {
            error(opt, kw.text + ": unexpected " + quoted(opt.text));
            ok = false;
        }
    }
    if (!dev) {
        error(kw, kw.text + ": missing 'dev PORT'");
        ok = false;
    }
}

void Parser::ip_defs(const Token& kw) {
    const std::string& k = kw.text;
    if (classified(kw, "ip_defs")) return;
    if (k == "tunnel_source") return tunnel_source(kw);
    if (k != "address" && k != "route") return unknown(kw, "ip_defs");
    const Token* val = value(kw);
    if (!val) return skip_statement(kw);
    bool ok = true;
    // `address ADDR/LEN` keeps ADDR and its masked prefix; `route PREFIX`, where `default`
    // is 0.0.0.0/0, or ::/0 when the gateway is IPv6 (`route default via 2001:db8::1`).
    const bool is_default = k == "route" && val->text == "default";
    std::optional<net::InetPrefix> prefix = is_default
                                                ? std::optional(net::InetPrefix(net::Ipv4Prefix{}))
                                                : net::parse_inet_prefix(val->text);
    std::optional<net::InetAddr> addr;
    if (k == "address" && prefix) addr = net::parse_inet(val->text.substr(0, val->text.find('/')));
    if (!prefix || (k == "address" && !addr)) {
        error(*val, k + ": bad prefix " + quoted(val->text));
        ok = false;
    }
    std::optional<std::string> dev;
    std::optional<net::InetAddr> via;
    ip_options(kw, dev, k == "route" ? &via : nullptr, ok);
    if (!ok) return;
    if (is_default && via && !via->is_v4()) prefix = net::InetPrefix(net::InetAddr{}, 0);  // ::/0
    if (via && via->is_v4() != prefix->is_v4())
        return error(kw, "route " + net::to_string(*prefix) + " via " + net::to_string(*via) +
                             ": the gateway is not of the prefix's address family");
    if (k == "address")
        cfg_.ip.addresses.push_back(AddressDef{*addr, *prefix, *dev, loc(kw)});
    else
        cfg_.ip.routes.push_back(RouteDef{*prefix, via, *dev, loc(kw)});
}

// `tunnel_source ADDR dev PORT`. Whether ADDR is a director address on PORT is the
// Director's check (tunnel_source_set), run by config_apply at this statement's line.
void Parser::tunnel_source(const Token& kw) {
    auto addr = inet_value(kw);
    std::optional<std::string> dev;
    bool ok = addr.has_value();
    ip_options(kw, dev, nullptr, ok);
    if (!ok) return;
    for (const TunnelSourceDef& prev : cfg_.ip.tunnel_sources) {
        if (prev.port == *dev)
            return error(kw, "tunnel_source for port " + quoted(*dev) + " already set at " +
                                 prev.loc.file + ":" + std::to_string(prev.loc.line) +
                                 " (one outer source per port)");
    }
    cfg_.ip.tunnel_sources.push_back(TunnelSourceDef{*addr, *dev, loc(kw)});
}

// One `name seconds` pair of ipvs_defs timeouts / lvs_timeouts.
void Parser::timeout_setting(const Token& key) {
    static constexpr std::array<std::pair<std::string_view, lb::TcpState>, 11> kStates = {
        {{"none", lb::TcpState::None},
         {"established", lb::TcpState::Established},
         {"syn_sent", lb::TcpState::SynSent},
         {"syn_recv", lb::TcpState::SynRecv},
         {"fin_wait", lb::TcpState::FinWait},
         {"time_wait", lb::TcpState::TimeWait},
         {"close", lb::TcpState::Close},
         {"close_wait", lb::TcpState::CloseWait},
         {"last_ack", lb::TcpState::LastAck},
         {"listen", lb::TcpState::Listen},
         {"synack", lb::TcpState::SynAck}}};
    static_assert(kStates.size() == lb::kTcpStateCount);
    lb::Timeouts& t = cfg_.ipvs.timeouts;
    uint32_t* slot = nullptr;
    // As ipvsadm --set: tcp = ESTABLISHED, tcpfin = FIN_WAIT.
    if (key.text == "tcp")
        slot = &t.tcp[static_cast<size_t>(lb::TcpState::Established)];
    else if (key.text == "tcpfin")
        slot = &t.tcp[static_cast<size_t>(lb::TcpState::FinWait)];
    else if (key.text == "udp")
        slot = &t.udp;
    else if (key.text == "icmp")  // SNAT echo conns (DPVS has the timeout, ipvsadm not)
        slot = &t.icmp;
    for (const auto& [name, state] : kStates)
        if (key.text == name) slot = &t.tcp[static_cast<size_t>(state)];
    if (!slot) return unknown(key, "timeouts");
    if (auto n = number_value(key, 1, kMaxTimeout)) *slot = *n;
}

// A switch: bare (on) or followed by on|off on its line.
std::optional<bool> Parser::switch_value(const Token& kw) {
    const Token* next = peek();
    if (!next || !is_value(*next) || !same_line(*next, kw) ||
        (next->text != "on" && next->text != "off"))
        return true;
    return take().text == "on";
}

// ipvs_defs { synproxy { ... } }: DPVS's dpvs.conf names (the synack_options block may be
// written out or its keys given directly), plus the short forms `defer` and `syn_retry`.
void Parser::synproxy_setting(const Token& t) {
    lb::SynProxyConf& c = cfg_.ipvs.synproxy;
    const std::string& k = t.text;
    if (classified(t, "synproxy")) return;
    if (k == "synack_options") {
        block(t, [&](const Token& o) { synproxy_setting(o); });
    } else if (k == "mss") {
        if (auto n = number_value(t, 536, 65535)) c.mss = static_cast<uint16_t>(*n);
    } else if (k == "ttl") {
        if (auto n = number_value(t, 1, 255)) c.ttl = static_cast<uint8_t>(*n);
    } else if (k == "sack") {
        if (auto on = switch_value(t)) c.sack = *on;
    } else if (k == "timestamp") {
        if (auto on = switch_value(t)) c.timestamp = *on;
    } else if (k == "wscale") {
        const Token* val = value(t);
        if (!val) return;
        if (val->text == "off")
            c.wscale = lb::kSynProxyNoWscale;
        else if (auto n = number(t, *val, 0, 14))  // RFC 7323 §2.3: at most 14
            c.wscale = static_cast<uint8_t>(*n);
    } else if (k == "defer_rs_syn" || k == "defer") {
        if (auto on = switch_value(t)) c.defer_rs_syn = *on;
    } else if (k == "rs_syn_max_retry" || k == "syn_retry") {
        if (auto n = number_value(t, 0, lb::kSynProxyMaxRetry))
            c.rs_syn_max_retry = static_cast<uint8_t>(*n);
    } else if (k == "max_ack_saved") {
        if (auto n = number_value(t, 1, lb::kSynProxyMaxAckSaved))
            c.max_ack_saved = static_cast<uint8_t>(*n);
    } else if (k == "ack_storm_thresh") {
        if (auto n = number_value(t, 1, 255)) c.ack_storm_thresh = static_cast<uint8_t>(*n);
    } else {
        unknown(t, "synproxy");
    }
}

void Parser::ipvs_defs(const Token& kw) {
    if (classified(kw, "ipvs_defs")) return;
    if (kw.text == "timeouts") {
        block(kw, [&](const Token& t) { timeout_setting(t); });
    } else if (kw.text == "conn_table_size") {
        if (auto n = number_value(kw, IpvsDefs::kConnTableSizeMin, IpvsDefs::kConnTableSizeMax))
            cfg_.ipvs.conn_table_size = *n;
    } else if (kw.text == "uoa_max_trail") {
        // DPVS's name (its `udp` block); a uint8 per connection counts it down.
        if (auto n = number_value(kw, 0, 255)) cfg_.ipvs.uoa_max_trail = *n;
    } else if (kw.text == "expire_nodest_conn") {
        if (auto on = switch_value(kw)) cfg_.ipvs.expire_nodest_conn = *on;
    } else if (kw.text == "expire_quiescent_template") {
        if (auto on = switch_value(kw)) cfg_.ipvs.expire_quiescent_template = *on;
    } else if (kw.text == "reschedule_refused") {
        if (auto on = switch_value(kw)) cfg_.ipvs.reschedule_refused = *on;
    } else if (kw.text == "synproxy") {
        cfg_.ipvs.synproxy_set = true;
        block(kw, [&](const Token& t) { synproxy_setting(t); });
    } else {
        unknown(kw, "ipvs_defs");
    }
}

}  // namespace parser_detail

namespace {

using namespace parser_detail;

ParseOutcome finish(const TokenStream& ts, Diagnostics& diag) {
    ParseOutcome out;
    ParsedConfig parsed = Parser(ts, diag).run();
    config_validate(parsed, diag);
    Config cfg = std::move(parsed.cfg);
    cfg.file = ts.files.empty() ? std::string() : ts.files.front();
    out.errors = std::move(diag.errors);
    out.warnings = std::move(diag.warnings);
    if (out.errors.empty()) {
        cfg.warnings = out.warnings;
        out.config = std::move(cfg);
    }
    return out;
}

Result<Config> to_result(ParseOutcome out) {
    if (out.config) return std::move(*out.config);
    std::string text;
    for (const std::string& line : out.errors) text += (text.empty() ? "" : "\n") + line;
    return make_error(std::move(text));
}

// No exception may leave the API (bad_alloc on absurd input, glob/regex surprises).
template <typename F>
ParseOutcome guarded(const std::string& name, F&& body) {
    try {
        return body();
    } catch (const std::exception& e) {
        ParseOutcome out;
        out.errors.push_back(name + ": internal error while parsing: " + e.what());
        return out;
    }
}

}  // namespace

bool sched_name_supported(std::string_view name) {
    return contains(kSupportedScheds, name);
}
bool sched_name_known(std::string_view name) {
    return sched_name_supported(name) || contains(kKnownScheds, name);
}

ParseOutcome parse_config(std::string_view text, const std::string& name) {
    return guarded(name, [&] {
        TokenStream ts;
        Diagnostics diag;
        config_lex(text, name, 0, ts, diag);
        return finish(ts, diag);
    });
}

ParseOutcome parse_config_path(const std::string& path) {
    return guarded(path, [&] {
        TokenStream ts;
        Diagnostics diag;
        if (!config_lex_file(path, ts, diag)) {
            ParseOutcome out;
            out.errors = std::move(diag.errors);
            return out;
        }
        return finish(ts, diag);
    });
}

Result<Config> parse_config_string(std::string_view text, std::string name) {
    return to_result(parse_config(text, name));
}

Result<Config> parse_config_file(const std::string& path) {
    return to_result(parse_config_path(path));
}

}  // namespace xvs::ctl
