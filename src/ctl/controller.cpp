// Control request handling. Errors carry ipvsadm's texts; anything malformed is
// "Invalid argument" with a detail after a colon so a person can see what was wrong.
#include "ctl/controller.h"

#include <cstdio>
#include <unordered_set>

#include "ctl/log.h"
#include "ctl/match_json.h"
#include "lb/laddr.h"
#include "lb/service.h"
#include "lb/service_check.h"
#include "net/prefix_set.h"
#include "port/ethdev.h"
#include "stack/counters.h"

namespace xvs::ctl {

using nlohmann::json;

namespace {

constexpr const char* kVersion = "0.1.0";
// How long a dump waits for a worker's poll loop to copy its table (lb/command.h).
constexpr uint64_t kWorkerCommandTimeoutMs = 2000;

json ok() { return json{{"ok", true}}; }
json err(const std::string& text) { return json{{"ok", false}, {"error", text}}; }

struct BadRequest {
    std::string what;
};

const json& field(const json& obj, const char* name) {
    if (!obj.is_object() || !obj.contains(name)) throw BadRequest{std::string("missing '") + name + "'"};
    return obj.at(name);
}

std::string get_str(const json& obj, const char* name) {
    const json& v = field(obj, name);
    if (!v.is_string()) throw BadRequest{std::string("'") + name + "' must be a string"};
    return v.get<std::string>();
}

uint64_t get_uint(const json& obj, const char* name, uint64_t max) {
    const json& v = field(obj, name);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
        throw BadRequest{std::string("'") + name + "' must be a non-negative integer"};
    uint64_t x = v.get<uint64_t>();
    if (x > max) throw BadRequest{std::string("'") + name + "' out of range"};
    return x;
}

uint64_t opt_uint(const json& obj, const char* name, uint64_t max, uint64_t dflt) {
    return obj.is_object() && obj.contains(name) && !obj.at(name).is_null() ? get_uint(obj, name, max) : dflt;
}

net::Ipv4 get_ip(const json& obj, const char* name) {
    auto a = net::parse_ipv4(get_str(obj, name));
    if (!a) throw BadRequest{std::string("'") + name + "' is not an IPv4 address"};
    return *a;
}

uint8_t get_proto(const json& obj) {
    std::string p = get_str(obj, "proto");
    if (p == "tcp") return 6;
    if (p == "udp") return 17;
    throw BadRequest{"'proto' must be tcp or udp"};
}

struct UnsupportedFwmark {};

bool is_match(const json& obj) {
    return obj.is_object() && obj.contains("match");
}

// The key of a SNAT match service ({"match": {...}}, see ctl/match_json.h).
lb::MatchKey get_match_key(const json& obj) {
    auto k = match_from_json(obj.at("match"));
    if (!k) throw BadRequest{k.error()};
    return *k;
}

lb::ServiceKey get_service_key(const json& obj) {
    if (obj.is_object() && obj.contains("fwmark")) throw UnsupportedFwmark{};
    if (is_match(obj))
        throw BadRequest{"SNAT match services have no local addresses or client lists"};
    return lb::make_service_key(get_proto(obj), get_ip(obj, "vip"),
                                static_cast<uint16_t>(get_uint(obj, "port", 65535)));
}

std::string ip_port(const net::InetAddr& addr, uint16_t port_be) {
    return net::to_string(addr) + ":" + std::to_string(net::ntoh16(port_be));
}

std::string mac_string(const net::MacAddr& m) {
    char buf[18];
    std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", m.b[0], m.b[1], m.b[2], m.b[3],
                  m.b[4], m.b[5]);
    return buf;
}

std::string fwd_string(lb::FwdMode m) { return std::string(lb::fwd_names(m).api); }

lb::FwdMode parse_fwd(const std::string& s) {
    if (auto m = lb::fwd_from_api(s)) return *m;
    throw BadRequest{"unknown 'fwd' " + s + " (fullnat, masq, dr, tunnel or snat)"};
}

lb::TunType parse_tun_type(const std::string& s) {
    if (s == "ipip" || s.empty()) return lb::TunType::Ipip;
    if (s == "gue") return lb::TunType::Gue;
    throw BadRequest{"unknown 'tun_type' " + s + " (ipip or gue; GRE is not supported)"};
}

// Features the protocol carries but the data plane does not do yet: refused, never ignored.
std::optional<std::string> unsupported_service_attrs(const json& s) {
    if (opt_uint(s, "persistent", 2678400, 0) != 0) return "Persistence is not supported yet";
    // Which options combine is lb::service_check's call (Director::service_add/edit); here
    // only the shape of the values.
    if (s.contains("proxy_protocol")) {
        const json& pp = s.at("proxy_protocol");
        if (!pp.is_string() || (pp != "off" && pp != "v1" && pp != "v2"))
            return "'proxy_protocol' must be \"v1\", \"v2\" or \"off\"";
    }
    if (s.contains("uoa")) {
        const json& uoa = s.at("uoa");
        if (!uoa.is_string() || (uoa != "off" && uoa != "opp" && uoa != "ipo"))
            return "'uoa' must be \"opp\", \"ipo\" or \"off\"";
    }
    // The persistence granularity (-M) and engines (--pe) would be stored and never used.
    if (s.contains("netmask") &&
        (!s.at("netmask").is_string() || s.at("netmask").get<std::string>() != "255.255.255.255"))
        return "Persistence is not supported yet (-M is the persistence netmask): remove -M";
    if (s.contains("sched_flags") &&
        !lb::sched_flags_parse(s.value("sched_flags", std::vector<std::string>{})))
        return "invalid scheduler flag (sh-fallback, sh-port, mh-fallback, mh-port, flag-1..3)";
    if (s.contains("pe") && !s.at("pe").is_null() &&
        (!s.at("pe").is_string() || !s.at("pe").get<std::string>().empty()))
        return "Persistence engines are not supported yet: remove --pe";
    return std::nullopt;
}

// The flags and conn_rate of a service object (the rest of ServiceSpec left default).
lb::ServiceSpec service_spec_flags(const json& s) {
    lb::ServiceSpec spec;
    if (s.contains("toa") && s.at("toa").is_boolean() && s.at("toa").get<bool>()) spec.flags |= lb::kSvcFlagToa;
    if (s.contains("ops") && s.at("ops").is_boolean() && s.at("ops").get<bool>())
        spec.flags |= lb::kSvcFlagOps;
    if (s.contains("synproxy") && s.at("synproxy").is_boolean() && s.at("synproxy").get<bool>())
        spec.flags |= lb::kSvcFlagSynProxy;
    if (s.contains("proxy_protocol") && s.at("proxy_protocol").is_string()) {
        const std::string pp = s.at("proxy_protocol").get<std::string>();
        if (pp == "v1") spec.flags |= lb::kSvcFlagPpV1;
        else if (pp == "v2") spec.flags |= lb::kSvcFlagPpV2;
    }
    if (s.contains("uoa") && s.at("uoa").is_string()) {
        const std::string uoa = s.at("uoa").get<std::string>();
        if (uoa == "opp") spec.flags |= lb::kSvcFlagUoaOpp;
        else if (uoa == "ipo") spec.flags |= lb::kSvcFlagUoaIpo;
    }
    spec.conn_rate = static_cast<uint32_t>(opt_uint(s, "conn_rate", UINT32_MAX, 0));
    spec.sched_flags =
        lb::sched_flags_parse(s.value("sched_flags", std::vector<std::string>{})).value_or(0);
    spec.mh_table_size = static_cast<uint32_t>(opt_uint(s, "mh_table_size", UINT32_MAX, 0));
    return spec;
}

lb::ServiceSpec service_spec(const json& s) {
    lb::ServiceSpec spec = service_spec_flags(s);
    spec.proto = get_proto(s);
    spec.vip = get_ip(s, "vip");
    spec.port = static_cast<uint16_t>(get_uint(s, "port", 65535));
    spec.sched = s.contains("sched") ? get_str(s, "sched") : "wlc";
    spec.fwd = lb::FwdMode::FullNat;
    return spec;
}

lb::DestSpec dest_spec(const json& d) {
    lb::DestSpec spec;
    spec.addr = get_ip(d, "addr");
    spec.port = static_cast<uint16_t>(get_uint(d, "port", 65535));
    spec.weight = static_cast<int32_t>(opt_uint(d, "weight", 65535, 1));
    spec.fwd = d.contains("fwd") ? parse_fwd(get_str(d, "fwd")) : lb::FwdMode::FullNat;
    spec.upper_threshold = static_cast<uint32_t>(opt_uint(d, "u_threshold", UINT32_MAX, 0));
    spec.lower_threshold = static_cast<uint32_t>(opt_uint(d, "l_threshold", UINT32_MAX, 0));
    if (spec.fwd == lb::FwdMode::Tun) {
        spec.tun_type = parse_tun_type(d.contains("tun_type") ? get_str(d, "tun_type") : "");
        spec.tun_port = static_cast<uint16_t>(opt_uint(d, "tun_port", 65535, 0));
        if (spec.tun_type == lb::TunType::Gue && spec.tun_port == 0)
            throw BadRequest{"GUE tunnels need a destination port ('tun_port')"};
    }
    return spec;
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

json Controller::service_json(const lb::Service& s) const {
    json j{{"sched", s.sched_name},
           {"persistent", 0},
           {"netmask", "255.255.255.255"},
           {"sched_flags", lb::sched_flag_names(s.sched_name, s.sched_flags)},
           {"mh_table_size", s.mh_table_size},
           {"ops", (s.flags & lb::kSvcFlagOps) != 0},
           {"pe", ""},
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
        dests.push_back({{"addr", net::to_string(d->addr)},
                         {"port", d->port},
                         {"fwd", fwd_string(d->fwd.load())},
                         {"weight", d->weight.load()},
                         {"u_threshold", d->upper_threshold},
                         {"l_threshold", d->lower_threshold},
                         {"tun_type", d->fwd != lb::FwdMode::Tun          ? ""
                                      : d->tun_type == lb::TunType::Gue ? "gue"
                                                                        : "ipip"},
                         {"tun_port", d->fwd == lb::FwdMode::Tun ? d->tun_port.load() : uint16_t{0}},
                         {"active", d->sum_active()},
                         {"inactive", d->sum_inactive()},
                         {"persistconns", 0},
                         {"stats", stats_json(d.get(), dest_totals(*d))}});
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
    // "10.0.0.1" matches the address with any port; "10.0.0.1:80" matches exactly.
    auto match = [](const std::string& filter, const std::string& ep) {
        if (filter.empty()) return true;
        if (filter.find(':') != std::string::npos) return filter == ep;
        return ep.compare(0, ep.find(':'), filter) == 0 && ep.find(':') == filter.size();
    };
    json conns = json::array();
    for (lb::Worker* w : workers_) {
        auto done = w->command(
            lb::Command::dump_conns, kWorkerCommandTimeoutMs, [&](const lb::Command& cmd) {
                for (const lb::ConnDumpEntry& c : cmd.conns) {
                    if (conns.size() >= limit) return;
                    std::string proto = c.proto == 6 ? "tcp" : c.proto == 1 ? "icmp" : "udp";
                    std::string state = c.proto == 6   ? std::string(lb::tcp_state_name(c.state))
                                        : c.proto == 1 ? "ICMP"
                                                       : "UDP";
                    std::string client = ip_port(c.caddr, c.cport);
                    std::string vip = ip_port(c.vaddr, c.vport);
                    std::string dest = ip_port(c.daddr, c.dport);
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
                                     {"lip", ip_port(c.laddr_ip, c.lport)}});
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
        const std::string name = net::to_string(d->addr) + ":" + std::to_string(d->port);
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

// `xvsctl conn flush dest A.B.C.D:PORT`: every dest with that address and port, in a service
// or removed and still draining.
json Controller::cmd_flush_dest(const json& req) {
    auto ep = net::parse_ipv4_endpoint(get_str(req, "dest"));
    if (!ep) throw BadRequest{"'dest' is not A.B.C.D:PORT"};
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
        if (cmd == "add_service" || cmd == "edit_service") {
            const json& s = field(req, "service");
            if (s.contains("fwmark")) throw UnsupportedFwmark{};
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
            net::Ipv4 lip = get_ip(req, "laddr");
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
                                            {"oerrors", st.oerrors}, {"rx_nombuf", st.rx_nombuf}}}});
            }
            return json{{"ok", true}, {"links", links}};
        }
        if (cmd == "addr_show") {
            json addrs = json::array();
            for (const auto& a : director_.addresses())
                addrs.push_back({{"addr", net::to_string(a.addr)}, {"prefix_len", a.prefix_len},
                                 {"ifname", a.port}, {"kind", "director"}});
            const lb::Snapshot* snap = director_.snapshot();
            snap->stack.addrs.for_each([&](const stack::AddrKey& k, const stack::OwnAddr& o) {
                if (o.kind == stack::AddrKind::Director) return;
                addrs.push_back({{"addr", net::to_string(k.addr)},
                                 {"prefix_len", 32},
                                 {"ifname", snap->stack.ports[o.port].name},
                                 {"kind", o.kind == stack::AddrKind::Vip ? "vip" : "lip"}});
            });
            return json{{"ok", true}, {"addrs", addrs}};
        }
        if (cmd == "addr_add") {
            std::string ifname = get_str(req, "ifname");
            bool known = std::any_of(ports_.begin(), ports_.end(), [&](const auto& p) { return p.name == ifname; });
            if (!known) return err("No such device");
            net::Ipv4 a = get_ip(req, "addr");
            for (const auto& x : director_.addresses())
                if (x.addr == a) return err("File exists");
            return commit_ok(director_.address_add(a, uint8_t(get_uint(req, "prefix_len", 32)), ifname));
        }
        if (cmd == "addr_del") {
            net::Ipv4 a = get_ip(req, "addr");
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
            auto prefix = net::parse_ipv4_prefix(get_str(req, "prefix"));
            if (!prefix) throw BadRequest{"'prefix' is not an IPv4 prefix"};
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
            std::optional<net::Ipv4> gw;
            if (req.contains("gateway") && !req.at("gateway").is_null()) gw = get_ip(req, "gateway");
            return commit_ok(director_.route_add(*prefix, gw, ifname));
        }
        if (cmd == "neigh_show") {
            json out = json::array();
            for (lb::Worker* w : workers_) {
                auto done = w->command(
                    lb::Command::dump_neighbours, kWorkerCommandTimeoutMs,
                    [&](const lb::Command& cmd) {
                        for (const lb::NeighDumpEntry& e : cmd.neighbours)
                            out.push_back(
                                {{"addr", net::to_string(e.addr)},
                                 {"mac", mac_string(e.mac)},
                                 {"ifname", e.port < ports_.size() ? ports_[e.port].name : "?"},
                                 {"state", stack::neigh_state_name(e.state)},
                                 {"worker", w->id()}});
                    });
                if (!done) return err(done.error());
            }
            return json{{"ok", true}, {"neighbours", out}};
        }
        if (cmd == "stats") {
            json counters = json::array();
            for (size_t c = 0; c < stack::kCounterCount; ++c) {
                uint64_t v = 0;
                for (lb::Worker* w : workers_) v += w->counters().v[c];
                counters.push_back({{"name", stack::kCounterInfo[c].name}, {"value", v},
                                    {"drop", stack::kCounterInfo[c].is_drop},
                                    {"description", stack::kCounterInfo[c].description}});
            }
            return json{{"ok", true}, {"workers", workers_.size()}, {"counters", counters}};
        }
        return err("Unknown command");
    } catch (const BadRequest& e) {
        return err("Invalid argument: " + e.what);
    } catch (const UnsupportedFwmark&) {
        return err("Operation not supported: fwmark services are not supported yet");
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
        return out;
    } catch (const std::exception& e) {
        return internal_error(e.what());
    } catch (...) {
        return internal_error("unknown exception");
    }
}

}  // namespace xvs::ctl
