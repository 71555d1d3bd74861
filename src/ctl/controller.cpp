// Control request handling. Errors carry ipvsadm's texts; anything malformed is
// "Invalid argument" with a detail after a colon so a person can see what was wrong. Request
// decoding is in controller_request.cpp.
#include "ctl/controller.h"

#include <algorithm>
#include <array>
#include <unordered_set>

#include "ctl/controller_request.h"
#include "ctl/log.h"
#include "ctl/match_json.h"
#include "lb/laddr.h"
#include "lb/service.h"
#include "lb/service_check.h"
#include "net/prefix_set.h"
#include "port/ethdev.h"
#include "stack/counters.h"
#include "stack/neigh_shared.h"

namespace xvs::ctl {

using nlohmann::json;
using namespace request;

namespace {
constexpr const char* kVersion = "0.1.0";
// How long a dump waits for a worker's poll loop to copy its table (lb/command.h).
constexpr uint64_t kWorkerCommandTimeoutMs = 2000;

json ok() { return json{{"ok", true}}; }
json err(const std::string& text) {
    return json{{"ok", false}, {"error", text}};
}
}  // namespace

Controller::Controller(lb::Director& director, std::vector<lb::Worker*> workers,
                       std::vector<PortInfoForCtl> ports, std::function<Result<void>()> reload)
    : director_(director), workers_(std::move(workers)), ports_(std::move(ports)),
      reload_(std::move(reload)) {}

namespace {
// Sums the per-worker counters of a service (ServiceWorkerState) or a dest (DestWorkerStats).
template <typename PerWorker>
Controller::Totals sum_workers(const PerWorker& workers) {
    Controller::Totals t;
    for (const auto& w : workers) {
        t.conns += w.conns;
        t.inpkts += w.inpkts;
        t.outpkts += w.outpkts;
        t.inbytes += w.inbytes;
        t.outbytes += w.outbytes;
    }
    return t;
}
}  // namespace

Controller::Totals Controller::service_totals(const lb::Service& s) const { return sum_workers(s.workers); }

Controller::Totals Controller::dest_totals(const lb::Dest& d) const { return sum_workers(d.stats); }

json Controller::stats_json(const void* obj, const Totals& raw) const {
    Totals base{};
    if (auto it = zero_base_.find(obj); it != zero_base_.end() && !it->second.owner.expired())
        base = it->second.totals;
    Estimate est{};
    if (auto it = estimates_.find(obj); it != estimates_.end() && !it->second.owner.expired())
        est = it->second;
    return json{{"conns", raw.conns - base.conns},
                {"inpkts", raw.inpkts - base.inpkts},
                {"outpkts", raw.outpkts - base.outpkts},
                {"inbytes", raw.inbytes - base.inbytes},
                {"outbytes", raw.outbytes - base.outbytes},
                {"cps", uint64_t(est.cps + 0.5)},
                {"inpps", uint64_t(est.inpps + 0.5)},
                {"outpps", uint64_t(est.outpps + 0.5)},
                {"inbps", uint64_t(est.inbps + 0.5)},
                {"outbps", uint64_t(est.outbps + 0.5)}};
}

namespace {

// -M as ipvsadm prints it: a netmask for IPv4 services (a mark's IPv4 one too), a prefix length
// for IPv6 ones (a fwmark service's vip is 0.0.0.0 or ::, its family).
std::string persist_netmask(const lb::Service& s) {
    if (!s.key.vip.is_v4()) return std::to_string(s.persist_prefix);
    const unsigned len = std::min<unsigned>(s.persist_prefix, 32);
    const uint32_t mask = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
    return net::to_string(net::InetAddr::v4(net::hton32(mask)));
}

}  // namespace

json Controller::service_json(const lb::Service& s) const {
    json j{{"sched", s.sched_name},
           {"persistent", s.persistence_s},
           {"netmask", persist_netmask(s)},
           {"sched_flags", lb::sched_flag_names(s.sched_name, s.sched_flags)},
           {"mh_table_size", s.mh_table_size},
           {"hash_target", (s.flags & lb::kSvcFlagHashQid) ? "qid" : "sip"},
           {"quic_cid_len", s.quic_cid_len},
           {"ops", (s.flags & lb::kSvcFlagOps) != 0},
           {"pe", (s.flags & lb::kSvcFlagPeSip) ? "sip" : ""},
           {"synproxy", (s.flags & lb::kSvcFlagSynProxy) != 0},
           {"toa", (s.flags & lb::kSvcFlagToa) != 0},
           {"proxy_protocol", (s.flags & lb::kSvcFlagPpV1)   ? "v1"
                              : (s.flags & lb::kSvcFlagPpV2) ? "v2"
                                                             : "off"},
           {"uoa", (s.flags & lb::kSvcFlagUoaOpp)   ? "opp"
                   : (s.flags & lb::kSvcFlagUoaIpo) ? "ipo"
                                                    : "off"},
           {"conn_rate", s.conn_rate},
           {"stats", stats_json(&s, service_totals(s))}};
    for (const auto* list : {&s.blacklist, &s.whitelist}) {
        json entries = json::array();
        for (const auto& p : *list) entries.push_back(net::to_string(p));
        j[list == &s.blacklist ? "blacklist" : "whitelist"] = entries;
    }
    if (s.match) {
        j["match"] = match_json(*s.match);
        if (!s.match_name.empty()) j["name"] = s.match_name;
    } else if (s.key.fwmark) {
        j["fwmark"] = s.key.fwmark;
        j["af"] = s.key.vip.is_v4() ? "ipv4" : "ipv6";
    } else {
        j["proto"] = s.key.proto == 6 ? "tcp" : "udp";
        j["vip"] = net::to_string(s.key.vip);
        j["port"] = net::ntoh16(s.key.port);
    }
    json laddrs = json::array();
    for (const auto& l : s.laddrs) laddrs.push_back({{"addr", net::to_string(l->addr)}, {"ifname", l->port_name}});
    j["laddrs"] = laddrs;
    json dests = json::array();
    for (const auto& d : s.dests) {
        const lb::FwdMode fwd = d->fwd.load();
        const bool tunnel = fwd == lb::FwdMode::Tun || fwd == lb::FwdMode::NatTun;
        dests.push_back({{"addr", net::to_string(d->addr)},
                         {"port", d->port},
                         {"fwd", fwd_string(d->fwd.load())},
                         {"weight", d->weight.load()},
                         {"u_threshold", d->upper_threshold},
                         {"l_threshold", d->lower_threshold},
                         {"tun_type", !tunnel                           ? ""
                                      : d->tun_type == lb::TunType::Gue ? "gue"
                                                                        : "ipip"},
                         {"tun_port", tunnel ? d->tun_port.load() : uint16_t{0}},
                         {"active", d->sum_active()},
                         {"inactive", d->sum_inactive()},
                         {"persistconns", 0},
                         {"stats", stats_json(d.get(), dest_totals(*d))}});
        dests.back()["persistconns"] = d->sum_persist();  // templates (lb/persist.h)
        if (inhibited_ && inhibited_(s.key, d->addr, d->port)) dests.back()["inhibited"] = true;
    }
    j["dests"] = dests;
    return j;
}

bool Controller::cookie_tick(uint32_t count_now) {
    if (!cookie_rotated_at_) {
        cookie_rotated_at_ = count_now;
        return false;
    }
    if (count_now - *cookie_rotated_at_ < kCookieRotatePeriods) return false;  // wraps safely
    director_.rotate_cookie_secrets(count_now);
    cookie_rotated_at_ = count_now;
    return true;
}

void Controller::estimate_rates(std::chrono::steady_clock::time_point now) {
    double dt = std::chrono::duration<double>(now - last_estimate_).count();
    const bool first = last_estimate_.time_since_epoch().count() == 0;
    last_estimate_ = now;
    std::unordered_map<const void*, Estimate> next;
    auto update = [&](std::shared_ptr<const void> obj, const Totals& cur) {
        Estimate e{};
        if (auto it = estimates_.find(obj.get()); it != estimates_.end() && !it->second.owner.expired())
            e = it->second;
        e.owner = obj;
        if (e.primed && !first && dt > 0) {
            // Kernel-like smoothing: move a quarter of the way toward the last interval's rate.
            auto ewma = [&](double& avg, uint64_t a, uint64_t b) {
                double rate = double(a - b) / dt;
                avg += (rate - avg) / 4;
            };
            ewma(e.cps, cur.conns, e.last.conns);
            ewma(e.inpps, cur.inpkts, e.last.inpkts);
            ewma(e.outpps, cur.outpkts, e.last.outpkts);
            ewma(e.inbps, cur.inbytes, e.last.inbytes);
            ewma(e.outbps, cur.outbytes, e.last.outbytes);
            auto rate = [&](uint64_t a, uint64_t b) { return a >= b ? double(a - b) / dt : 0.0; };
            e.interval = {rate(cur.conns, e.last.conns), rate(cur.inpkts, e.last.inpkts),
                          rate(cur.outpkts, e.last.outpkts)};
        }
        e.last = cur;
        e.primed = true;
        next[obj.get()] = e;
    };
    for (const auto* list : {&director_.services(), &director_.matches()}) {
        for (const auto& s : *list) {
            update(s, service_totals(*s));
            for (const auto& d : s->dests) update(d, dest_totals(*d));
        }
    }
    estimates_ = std::move(next);
    forget_removed();
    status_sample(first ? 0.0 : dt);
}

json Controller::cmd_list(const json& req) {
    json services = json::array();
    if (req.contains("service") && !req.at("service").is_null()) {
        const json& key = req.at("service");
        auto svc = is_match(key) ? director_.match_find(get_match_key(key))
                                 : director_.service_find(get_service_key(key));
        if (!svc) return err("No such service");
        services.push_back(service_json(*svc));
    } else {
        for (const auto& s : director_.services()) services.push_back(service_json(*s));
        for (const auto& s : director_.matches()) services.push_back(service_json(*s));
    }
    json r = ok();
    r["services"] = services;
    // xvsadm -L's banner (IPVS prints its conn hash table size): connections the workers'
    // tables hold in all.
    uint64_t table_size = 0;
    for (const lb::Worker* w : workers_) table_size += w->conns().capacity();
    r["conn_table_size"] = table_size;
    return r;
}

void Controller::forget_removed() {
    std::unordered_set<const void*> live;
    for (const auto* list : {&director_.services(), &director_.matches()}) {
        for (const auto& s : *list) {
            live.insert(s.get());
            for (const auto& d : s->dests) live.insert(d.get());
        }
    }
    std::erase_if(zero_base_, [&](const auto& kv) { return !live.count(kv.first); });
}

json Controller::cmd_zero(const json& req) {
    forget_removed();
    auto zero_one = [&](const std::shared_ptr<lb::Service>& s) {
        zero_base_[s.get()] = Baseline{s, service_totals(*s)};
        for (const auto& d : s->dests) zero_base_[d.get()] = Baseline{d, dest_totals(*d)};
    };
    if (req.contains("service") && !req.at("service").is_null()) {
        const json& key = req.at("service");
        auto svc = is_match(key) ? director_.match_find(get_match_key(key))
                                 : director_.service_find(get_service_key(key));
        if (!svc) return err("No such service");
        zero_one(svc);
    } else {
        for (const auto& s : director_.services()) zero_one(s);
        for (const auto& s : director_.matches()) zero_one(s);
    }
    return ok();
}

json Controller::cmd_conns(const json& req, bool filtered) {
    std::string f_proto, f_client, f_vip, f_dest, f_state;
    uint64_t limit = UINT64_MAX;
    if (filtered) {
        if (req.contains("proto")) f_proto = get_str(req, "proto");
        if (req.contains("client")) f_client = get_str(req, "client");
        if (req.contains("vip")) f_vip = get_str(req, "vip");
        if (req.contains("dest")) f_dest = get_str(req, "dest");
        if (req.contains("state")) f_state = get_str(req, "state");
        limit = opt_uint(req, "limit", UINT64_MAX, UINT64_MAX);
    }
    // "10.0.0.1" or "2001:db8::1" matches the address with any port; "10.0.0.1:80" or
    // "[2001:db8::1]:80" matches exactly. Both sides are compared in their canonical forms.
    auto match = [](const std::string& filter, const std::string& ep) {
        if (filter.empty()) return true;
        auto conn = net::parse_inet_endpoint(ep);
        if (!conn) return false;
        if (auto want = net::parse_inet_endpoint(filter)) return *want == *conn;
        auto addr = net::parse_inet(net::strip_brackets(filter));
        return addr && *addr == conn->addr;
    };
    json conns = json::array();
    for (lb::Worker* w : workers_) {
        auto done = w->command(
            lb::Command::dump_conns, kWorkerCommandTimeoutMs, [&](const lb::Command& cmd) {
                for (const lb::ConnDumpEntry& c : cmd.conns) {
                    if (conns.size() >= limit) return;
                    // A persistence template: its service's protocol ("ip": a firewall-mark
                    // service's), state NONE, client port 0 (as ipvsadm -L -c shows them).
                    std::string proto = c.proto == 6   ? "tcp"
                                        : c.proto == 1 ? "icmp"
                                        : c.proto == 0 ? "ip"
                                                       : "udp";
                    std::string state = c.tpl          ? "NONE"
                                        : c.proto == 6 ? std::string(lb::tcp_state_name(c.state))
                                        : c.proto == 1 ? "ICMP"
                                                       : "UDP";
                    std::string client = ip_port(c.caddr, c.cport);
                    std::string vip = ip_port(c.vaddr, c.vport);
                    std::string dest = ip_port(c.daddr, c.dport);
                    std::string lip = c.tpl ? std::string() : ip_port(c.laddr_ip, c.lport);
                    if (!f_proto.empty() && f_proto != proto) continue;
                    if (!f_state.empty() && f_state != state) continue;
                    if (!match(f_client, client) || !match(f_vip, vip) || !match(f_dest, dest))
                        continue;
                    conns.push_back({{"proto", proto},
                                     {"expire_seconds", c.expire_s},
                                     {"state", state},
                                     {"client", client},
                                     {"vip", vip},
                                     {"dest", dest},
                                     {"lip", lip}});
                }
            });
        if (!done) return err(done.error());
    }
    json r = ok();
    r["conns"] = conns;
    return r;
}

json Controller::handle(const json& req) {
    json reply = dispatch(req);
    flush_removed_dests();
    return reply;
}

Result<uint64_t> Controller::flush_dest(const std::shared_ptr<lb::Dest>& dest) {
    uint64_t total = 0;
    for (lb::Worker* w : workers_) {
        auto n = w->flush_dest(dest, kWorkerCommandTimeoutMs);
        if (!n) return make_error(n.error());
        total += *n;
    }
    return total;
}

void Controller::flush_removed_dests() {
    auto removed = director_.take_removed_dests();
    if (!director_.expire_nodest_conn() || removed.empty()) return;
    for (const auto& d : removed) {
        if (!d->removed) continue;  // added back (from the trash) since
        const std::string name = net::to_string(net::InetEndpoint{d->addr, d->port});
        auto n = flush_dest(d);
        if (!n)
            log_warning("expire_nodest_conn: real server " + name +
                        " removed, its conns stay: " + n.error());
        else if (*n)
            log_info("expire_nodest_conn: expired " + std::to_string(*n) +
                     " conns of removed real server " + name);
    }
    removed.clear();      // our references would keep them from being freed
    director_.reclaim();  // the flushed dests hold no conns now
}

// `xvsctl conn flush dest A.B.C.D:PORT|[V6]:PORT`: every dest with that address and port, in a
// service or removed and still draining.
json Controller::cmd_flush_dest(const json& req) {
    auto ep = net::parse_inet_endpoint(get_str(req, "dest"));
    if (!ep) throw BadRequest{"'dest' is not A.B.C.D:PORT or [IPV6]:PORT"};
    std::vector<std::shared_ptr<lb::Dest>> dests;
    auto consider = [&](const std::shared_ptr<lb::Dest>& d) {
        if (d->addr == ep->addr && d->port == ep->port &&
            std::find(dests.begin(), dests.end(), d) == dests.end())
            dests.push_back(d);
    };
    for (const auto* list : {&director_.services(), &director_.matches()})
        for (const auto& s : *list)
            for (const auto& d : s->dests) consider(d);
    for (const auto& d : director_.removed_dests()) consider(d);
    if (dests.empty()) return err("No such destination");
    uint64_t total = 0;
    for (const auto& d : dests) {
        auto n = flush_dest(d);
        if (!n) return err(n.error());
        total += *n;
    }
    dests.clear();
    director_.reclaim();
    json r = ok();
    r["flushed"] = total;
    return r;
}

json Controller::dispatch(const json& req) {
    try {
        if (!req.is_object()) return err("Invalid argument: request must be a JSON object");
        const std::string cmd = get_str(req, "cmd");
        auto commit_ok = [&](const Result<void>& r) {
            if (!r) return err(r.error());
            director_.commit();
            return ok();
        };
        if (cmd == "version") return json{{"ok", true}, {"version", std::string("xvsd ") + kVersion}};
        if (cmd == "list") return cmd_list(req);
        if (cmd == "zero") return cmd_zero(req);
        if (cmd == "conns") return cmd_conns(req, false);
        if (cmd == "conn_show") return cmd_conns(req, true);
        if (cmd == "flush_dest") return cmd_flush_dest(req);
        if (cmd == "check_show") {
            json r = ok();
            r["checks"] = check_show_ ? check_show_() : json::array();
            return r;
        }
        if (cmd == "sync") {
            if (!sync_request_)
                return err("session sync is off: add a sync_defs block to the configuration");
            return sync_request_(req);
        }
        if (cmd == "announce_show") {
            json r = ok();
            r["announce"] = announce_show_ ? announce_show_() : json(nullptr);
            return r;
        }
        if (cmd == "feedback_show") {
            json r = ok();
            r["feedback"] = feedback_show_
                                ? feedback_show_()
                                : json{{"listeners", json::array()}, {"servers", json::array()}};
            return r;
        }
        if (cmd == "add_service" || cmd == "edit_service") {
            const json& s = field(req, "service");
            if (auto why = unsupported_service_attrs(s)) return err(*why);
            if (is_match(s)) {
                lb::MatchSpec spec{get_match_key(s), "",
                                   s.contains("sched") ? get_str(s, "sched") : "wlc"};
                // Options about real servers behind a VIP (toa, syn proxy, ...) are refused.
                const lb::ServiceSpec flags = service_spec_flags(s);
                if (auto r =
                        lb::match_service_check(spec.key.proto, lb::FwdMode::Snat, flags.flags);
                    !r)
                    return err(r.error());
                if (flags.conn_rate || flags.sched_flags)
                    return err("--conn-rate and -b are not for SNAT match services");
                if (cmd == "edit_service") {
                    if (auto old = director_.match_find(spec.key)) spec.name = old->match_name;
                }
                return commit_ok(cmd == "add_service" ? director_.match_add(spec)
                                                      : director_.match_edit(spec));
            }
            lb::ServiceSpec spec = service_spec(s);
            // ipvsadm has no table size option: an edit without one keeps the configured size.
            if (auto old = director_.service_find(get_service_key(s));
                old && !s.contains("mh_table_size"))
                spec.mh_table_size = old->mh_table_size;
            // Nor a QUIC connection-ID length (the configuration's quic_cid_len): an edit
            // that keeps hash target qid keeps it; a request without a hash target keeps both.
            if (auto old = director_.service_find(get_service_key(s)); old) {
                if (!s.contains("hash_target")) spec.flags |= old->flags & lb::kSvcFlagHashQid;
                if ((spec.flags & lb::kSvcFlagHashQid) && !s.contains("quic_cid_len"))
                    spec.quic_cid_len = old->quic_cid_len;
            }
            return commit_ok(cmd == "add_service" ? director_.service_add(spec) : director_.service_edit(spec));
        }
        if (cmd == "del_service") {
            const json& key = field(req, "service");
            if (is_match(key)) return commit_ok(director_.match_del(get_match_key(key)));
            return commit_ok(director_.service_del(get_service_key(key)));
        }
        if (cmd == "clear") {
            director_.services_clear();
            director_.commit();
            return ok();
        }
        if ((cmd == "add_dest" || cmd == "edit_dest" || cmd == "del_dest") &&
            is_match(field(req, "service"))) {
            const lb::MatchKey key = get_match_key(field(req, "service"));
            const json& d = field(req, "dest");
            if (cmd == "del_dest")
                return commit_ok(director_.match_dest_del(key, get_ip(d, "addr")));
            lb::DestSpec spec = dest_spec(d);
            return commit_ok(cmd == "add_dest" ? director_.match_dest_add(key, spec)
                                               : director_.match_dest_edit(key, spec));
        }
        if (cmd == "add_dest" || cmd == "edit_dest") {
            lb::ServiceKey key = get_service_key(field(req, "service"));
            lb::DestSpec spec = dest_spec(field(req, "dest"));
            return commit_ok(cmd == "add_dest" ? director_.dest_add(key, spec) : director_.dest_edit(key, spec));
        }
        if (cmd == "del_dest") {
            lb::ServiceKey key = get_service_key(field(req, "service"));
            const json& d = field(req, "dest");
            return commit_ok(director_.dest_del(key, get_ip(d, "addr"),
                                                static_cast<uint16_t>(get_uint(d, "port", 65535))));
        }
        if (cmd == "set_timeout") {
            lb::Timeouts t = director_.timeouts();
            auto set = [&](const char* name, lb::TcpState st) {
                uint64_t v = opt_uint(req, name, lb::kMaxTimeoutS, 0);
                if (v) t.tcp[size_t(st)] = uint32_t(v);
            };
            set("tcp", lb::TcpState::Established);
            set("tcpfin", lb::TcpState::FinWait);
            if (uint64_t v = opt_uint(req, "udp", lb::kMaxTimeoutS, 0)) t.udp = uint32_t(v);
            director_.timeouts_set(t);
            director_.commit();
            return ok();
        }
        if (cmd == "get_timeout") {
            const auto& t = director_.timeouts();
            return json{{"ok", true},
                        {"tcp", t.of(lb::TcpState::Established)},
                        {"tcpfin", t.of(lb::TcpState::FinWait)},
                        {"udp", t.udp}};
        }
        if (cmd == "add_laddr" || cmd == "del_laddr") {
            lb::ServiceKey key = get_service_key(field(req, "service"));
            net::InetAddr lip = get_ip(req, "laddr");
            if (cmd == "del_laddr") {
                auto r = director_.laddr_del(key, lip);
                return commit_ok(r);
            }
            std::string ifname = get_str(req, "ifname");
            bool known = std::any_of(ports_.begin(), ports_.end(), [&](const auto& p) { return p.name == ifname; });
            if (!known) return err("No such device");
            return commit_ok(director_.laddr_add(key, lip, ifname));
        }
        if (cmd == "add_blacklist" || cmd == "del_blacklist" || cmd == "add_whitelist" ||
            cmd == "del_whitelist") {
            lb::ServiceKey key = get_service_key(field(req, "service"));
            auto prefix = net::parse_acl_prefix(get_str(req, "prefix"));
            if (!prefix) throw BadRequest{"'prefix': " + prefix.error()};
            const lb::AclKind kind = cmd.ends_with("blacklist") ? lb::AclKind::Black : lb::AclKind::White;
            return commit_ok(cmd.starts_with("add_") ? director_.acl_add(key, kind, *prefix)
                                                     : director_.acl_del(key, kind, *prefix));
        }
        if (cmd == "get_laddr") {
            auto svc = director_.service_find(get_service_key(field(req, "service")));
            if (!svc) return err("No such service");
            json laddrs = json::array();
            for (const auto& l : svc->laddrs) {
                laddrs.push_back({{"addr", net::to_string(l->addr)}, {"ifname", l->port_name},
                                  {"conflicts", 0}, {"conns", l->sum_refs()}});
            }
            return json{{"ok", true}, {"laddrs", laddrs}};
        }
        if (cmd == "reload") {
            if (!reload_) return err("Operation not supported");
            auto r = reload_();
            return r ? ok() : err(r.error());
        }
        // xvsctl
        if (cmd == "link_show") {
            json links = json::array();
            for (const auto& p : ports_) {
                port::PortStats st = p.has_stats ? port::port_stats(p.port_id) : port::PortStats{};
                links.push_back({{"name", p.name}, {"dev", p.dev}, {"mac", mac_string(p.mac)},
                                 {"mtu", p.mtu}, {"port_id", p.port_id},
                                 {"up", p.has_stats ? port::port_link_up(p.port_id) : false},
                                 {"stats", {{"ipackets", st.ipackets}, {"opackets", st.opackets},
                                            {"ibytes", st.ibytes}, {"obytes", st.obytes},
                                            {"imissed", st.imissed}, {"ierrors", st.ierrors},
                                            {"oerrors", st.oerrors}, {"rx_nombuf", st.rx_nombuf},
                                            {"tx_refused", st.tx_refused}}}});
            }
            return json{{"ok", true}, {"links", links}};
        }
        if (cmd == "addr_show") {
            json addrs = json::array();
            for (const auto& a : director_.addresses())
                addrs.push_back({{"addr", net::to_string(a.addr)}, {"prefix_len", a.prefix_len},
                                 {"ifname", a.port}, {"kind", "director"}});
            const lb::Snapshot* snap = director_.snapshot();
            snap->stack.own_addrs().for_each([&](const stack::AddrKey& k, const stack::OwnAddr& o) {
                if (o.kind == stack::AddrKind::Director) return;
                addrs.push_back({{"addr", net::to_string(k.addr)},
                                 {"prefix_len", net::family_bits(k.addr)},
                                 {"ifname", snap->stack.ports[o.port].name},
                                 {"kind", o.kind == stack::AddrKind::Vip ? "vip" : "lip"}});
            });
            return json{{"ok", true}, {"addrs", addrs}};
        }
        if (cmd == "addr_add") {
            std::string ifname = get_str(req, "ifname");
            bool known = std::any_of(ports_.begin(), ports_.end(), [&](const auto& p) { return p.name == ifname; });
            if (!known) return err("No such device");
            net::InetAddr a = get_ip(req, "addr");
            for (const auto& x : director_.addresses())
                if (x.addr == a) return err("File exists");
            const uint8_t len = uint8_t(get_uint(req, "prefix_len", net::family_bits(a)));
            return commit_ok(director_.address_add(a, len, ifname));
        }
        if (cmd == "addr_del") {
            net::InetAddr a = get_ip(req, "addr");
            bool have = std::any_of(director_.addresses().begin(), director_.addresses().end(),
                                    [&](const auto& x) { return x.addr == a; });
            if (!have) return err("No such address");
            return commit_ok(director_.address_del(a));
        }
        if (cmd == "route_show") {
            json routes = json::array();
            for (const auto& r : director_.routes()) {
                routes.push_back({{"prefix", net::to_string(r.prefix)},
                                  {"gateway", r.gateway ? json(net::to_string(*r.gateway)) : json(nullptr)},
                                  {"ifname", r.port}, {"connected", r.connected}});
            }
            return json{{"ok", true}, {"routes", routes}};
        }
        if (cmd == "route_add" || cmd == "route_del") {
            const std::optional<net::InetPrefix> prefix = get_prefix(req, "prefix");
            if (cmd == "route_del") {
                bool have = std::any_of(director_.routes().begin(), director_.routes().end(),
                                        [&](const auto& r) { return r.prefix == *prefix; });
                if (!have) return err("No such route");
                return commit_ok(director_.route_del(*prefix));
            }
            std::string ifname = get_str(req, "ifname");
            bool known = std::any_of(ports_.begin(), ports_.end(), [&](const auto& p) { return p.name == ifname; });
            if (!known) return err("No such device");
            for (const auto& r : director_.routes())
                if (r.prefix == *prefix) return err("File exists");
            std::optional<net::InetAddr> gw;
            if (req.contains("gateway") && !req.at("gateway").is_null()) gw = get_ip(req, "gateway");
            if (gw && gw->is_v4() != prefix->is_v4())
                throw BadRequest{"'gateway' " + net::to_string(*gw) +
                                 " is not of the family of 'prefix' " + net::to_string(*prefix)};
            return commit_ok(director_.route_add(*prefix, gw, ifname));
        }
        if (cmd == "neigh_show") {
            // One table for all workers (stack/neigh_shared.h): its owner lists it.
            json out = json::array();
            for (lb::Worker* w : workers_) {
                if (w->id() != stack::kNeighOwner) continue;
                auto done = w->command(
                    lb::Command::dump_neighbours, kWorkerCommandTimeoutMs,
                    [&](const lb::Command& cmd) {
                        for (const lb::NeighDumpEntry& e : cmd.neighbours)
                            out.push_back(
                                {{"addr", net::to_string(e.addr)},
                                 {"mac", mac_string(e.mac)},
                                 {"ifname", e.port < ports_.size() ? ports_[e.port].name : "?"},
                                 {"state", neigh_state_name(e.state)},
                                 {"worker", w->id()}});
                    });
                if (!done) return err(done.error());
            }
            return json{{"ok", true}, {"neighbours", out}};
        }
        if (cmd.starts_with("capture_")) return capture_request(cmd, req);
        if (cmd == "stats") {
            json counters = json::array();
            for (size_t c = 0; c < stack::kCounterCount; ++c) {
                uint64_t v = 0;
                json per_worker = json::array();
                for (lb::Worker* w : workers_) {
                    const uint64_t mine = w->counters().v[c];  // read once: the sum agrees
                    v += mine;
                    per_worker.push_back(mine);
                }
                counters.push_back({{"name", stack::kCounterInfo[c].name}, {"value", v},
                                    {"per_worker", std::move(per_worker)},
                                    {"drop", stack::kCounterInfo[c].is_drop},
                                    {"description", stack::kCounterInfo[c].description}});
            }
            return json{{"ok", true}, {"workers", workers_.size()}, {"counters", counters}};
        }
        return err("Unknown command");
    } catch (const BadRequest& e) {
        return err("Invalid argument: " + e.what);
    } catch (const std::exception& e) {
        return err(std::string("Invalid argument: ") + e.what());
    }
}

namespace {

// Replies carry strings from the config and the model (port names, reload errors quoting the
// config) that may hold any byte: invalid UTF-8 becomes U+FFFD instead of a type_error 316.
std::string dump_reply(const json& reply) {
    return reply.dump(-1, ' ', false, json::error_handler_t::replace);
}

Controller::LineReply internal_error(std::string_view what) noexcept {
    try {
        std::string text = "Internal error: " + std::string(what);
        return {dump_reply(err(text)), text};
    } catch (...) {
        return {R"({"ok":false,"error":"Internal error"})", "Internal error"};
    }
}

// Requests that change what xvsd runs: logged once each when they succeed.
constexpr std::array<std::string_view, 21> kChangeCommands = {
    "add_service", "edit_service", "del_service", "clear",        "add_dest",
    "edit_dest",   "del_dest",     "set_timeout", "add_laddr",    "del_laddr",
    "add_blacklist", "del_blacklist", "add_whitelist", "del_whitelist", "addr_add",
    "addr_del",    "route_add",    "route_del",   "flush_dest",   "zero",
    "reload"};

// "add_dest {"dest":...,"service":...}": the command and its arguments, for the log.
std::string change_text(const json& req) {
    if (!req.is_object()) return {};
    const auto cmd = req.find("cmd");
    if (cmd == req.end() || !cmd->is_string()) return {};
    const std::string& name = cmd->get_ref<const std::string&>();
    if (std::find(kChangeCommands.begin(), kChangeCommands.end(), name) == kChangeCommands.end())
        return {};
    json args = req;
    args.erase("cmd");
    return args.empty() ? name : name + " " + dump_reply(args);
}

}  // namespace

// The boundary of the control socket: no request byte may take xvsd down. Replies are dumped
// with invalid UTF-8 replaced (a name or message can still carry bytes from outside), and
// anything a handler throws becomes an error reply instead of reaching std::terminate.
Controller::LineReply Controller::serve_line(std::string_view line) noexcept {
    try {
        // parse() refuses invalid UTF-8 inside strings, so requests never carry it further.
        json req = json::parse(line.begin(), line.end(), nullptr, false);
        json reply =
            req.is_discarded() ? err("Invalid argument: request is not valid JSON") : handle(req);
        LineReply out;
        out.text = dump_reply(reply);
        const json* error =
            reply.is_object() && reply.contains("error") ? &reply.at("error") : nullptr;
        // Malformed requests (the protocol's "Invalid argument") are logged; refusals an
        // operator reads on the terminal (No such service, ...) are not.
        if (error && error->is_string() &&
            error->get_ref<const std::string&>().starts_with("Invalid argument"))
            out.problem = error->get<std::string>();
        if (!error && reply.is_object() && reply.value("ok", false)) out.change = change_text(req);
        return out;
    } catch (const std::exception& e) {
        return internal_error(e.what());
    } catch (...) {
        return internal_error("unknown exception");
    }
}

}  // namespace xvs::ctl
