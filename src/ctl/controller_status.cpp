// The status page's data (Controller::status_json, ctl/controller.h) and the history sample
// taken at each rate tick. Everything here is read from the model, the workers' counters and
// the rate estimates: no conn table is walked, so a scrape costs O(services + dests +
// counters x workers + history) whatever the traffic. Worker-owned words are racy snapshots,
// as for stats and metrics.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ctl/controller.h"
#include "ctl/service_label.h"
#include "lb/fwd_mode.h"
#include "lb/laddr.h"
#include "lb/port_pool.h"
#include "lb/service.h"
#include "port/eal.h"
#include "stack/counters.h"

namespace xvs::ctl {

using nlohmann::json;

namespace {

// The settings worth a badge on the page, as keepalived spells them.
json service_flags(const lb::Service& s) {
    json f = json::array();
    if (s.flags & lb::kSvcFlagSynProxy) f.push_back("syn_proxy");
    if (s.flags & lb::kSvcFlagToa) f.push_back("toa");
    if (s.flags & lb::kSvcFlagPpV1) f.push_back("proxy_protocol v1");
    if (s.flags & lb::kSvcFlagPpV2) f.push_back("proxy_protocol v2");
    if (s.flags & lb::kSvcFlagUoaOpp) f.push_back("uoa opp");
    if (s.flags & lb::kSvcFlagUoaIpo) f.push_back("uoa ipo");
    if (s.flags & lb::kSvcFlagOps) f.push_back("ops");
    if (s.flags & lb::kSvcFlagPeSip) f.push_back("pe sip");
    if (s.persistence_s) f.push_back("persistence " + std::to_string(s.persistence_s) + "s");
    if (s.conn_rate) f.push_back("conn_rate " + std::to_string(s.conn_rate) + "/s");
    if (!s.whitelist.empty()) f.push_back("whitelist");
    if (!s.blacklist.empty()) f.push_back("blacklist");
    return f;
}

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

void Controller::status_sample(double dt_s) {
    std::vector<const stack::Counters*> counters;
    counters.reserve(workers_.size());
    for (const lb::Worker* w : workers_) counters.push_back(&w->counters());
    status_history_.sample_begin(unix_now(), dt_s, counters);
    for (const auto* list : {&director_.services(), &director_.matches()}) {
        for (const auto& s : *list) {
            auto it = estimates_.find(s.get());
            status_history_.sample_service(service_label(*s), it != estimates_.end()
                                                                  ? it->second.interval
                                                                  : StatusHistory::ServiceRates{});
        }
    }
    status_history_.sample_end();
}

json Controller::status_json() const {
    auto estimate = [&](const void* obj) {
        auto it = estimates_.find(obj);
        return it != estimates_.end() && !it->second.owner.expired() ? it->second : Estimate{};
    };
    // Totals since the object was added (as /metrics: xvsadm -Z does not zero the page) and
    // the rate estimator's figures (ipvsadm --rate's, per second).
    auto traffic = [](json& j, const Totals& t, const Estimate& e) {
        j["conns"] = t.conns;
        j["inpkts"] = t.inpkts;
        j["outpkts"] = t.outpkts;
        j["inbytes"] = t.inbytes;
        j["outbytes"] = t.outbytes;
        j["cps"] = std::round(e.cps * 10) / 10;
        j["inpps"] = std::round(e.inpps * 10) / 10;
        j["outpps"] = std::round(e.outpps * 10) / 10;
        j["inbps"] = std::round(e.inbps);
        j["outbps"] = std::round(e.outbps);
    };
    const std::vector<health::DestHealth> health =
        dest_health_ ? dest_health_() : std::vector<health::DestHealth>{};
    // The checks' entries of each service, so that matching them to dests costs
    // O(dests x that service's entries), not O(dests x all entries).
    struct KeyHash {
        size_t operator()(const lb::ServiceKey& k) const { return lb::flat_hash(k); }
    };
    std::unordered_map<lb::ServiceKey, std::vector<size_t>, KeyHash> health_by_key;
    for (size_t i = 0; i < health.size(); ++i) health_by_key[health[i].key].push_back(i);
    std::vector<bool> shown(health.size(), false);

    json services = json::array();
    std::vector<const lb::LocalAddr*> laddrs;
    std::unordered_set<const lb::LocalAddr*> seen;
    for (const auto* list : {&director_.services(), &director_.matches()}) {
        for (const auto& sp : *list) {
            const lb::Service& s = *sp;
            for (const auto& l : s.laddrs)
                if (seen.insert(l.get()).second) laddrs.push_back(l.get());
            json j;
            j["name"] = service_label(s);
            if (s.match) {
                j["kind"] = "SNAT";
            } else if (s.key.fwmark) {
                j["kind"] = "FWM";
                j["fwmark"] = s.key.fwmark;
                j["af"] = s.key.vip.is_v4() ? "ipv4" : "ipv6";
            } else {
                j["kind"] = s.key.proto == 6 ? "TCP" : "UDP";
                j["vip"] = net::to_string(s.key.vip);
                j["port"] = net::ntoh16(s.key.port);
            }
            j["mode"] = lb::fwd_names(s.fwd).keepalived;
            j["sched"] = s.sched_name;
            j["flags"] = service_flags(s);
            traffic(j, service_totals(s), estimate(sp.get()));
            uint64_t active = 0, inactive = 0;
            json dests = json::array();
            static const std::vector<size_t> kNone;
            const auto found = s.match ? health_by_key.end() : health_by_key.find(s.key);
            const std::vector<size_t>& mine = found == health_by_key.end() ? kNone : found->second;
            auto health_of = [&](const net::InetAddr& addr,
                                 uint16_t port) -> const health::DestHealth* {
                for (size_t i : mine) {
                    const auto& h = health[i];
                    if (h.addr == addr && h.port == port) {
                        shown[i] = true;
                        return &h;
                    }
                }
                return nullptr;
            };
            auto with_health = [](json& dj, const health::DestHealth* h) {
                dj["health"] = h ? h->state : "up";
                dj["checked"] = h && h->checked;
                dj["check"] = h ? h->last : "";
                dj["check_time"] = h ? h->last_time : 0;
            };
            for (const auto& d : s.dests) {
                json dj;
                dj["name"] = dest_label(*d);
                dj["in_service"] = true;
                dj["weight"] = d->weight.load();
                dj["fwd"] = lb::fwd_names(d->fwd.load()).keepalived;
                dj["active"] = d->sum_active();
                dj["inactive"] = d->sum_inactive();
                active += d->sum_active();
                inactive += d->sum_inactive();
                traffic(dj, dest_totals(*d), estimate(d.get()));
                with_health(dj, health_of(d->addr, d->port));
                dests.push_back(std::move(dj));
            }
            // Real servers the checks took out of the service: still configured, so shown.
            for (size_t i : mine) {
                const auto& h = health[i];
                if (shown[i]) continue;
                json dj;
                dj["name"] = net::to_string(net::InetEndpoint{h.addr, h.port});
                dj["in_service"] = false;
                dj["weight"] = 0;
                dj["fwd"] = lb::fwd_names(s.fwd).keepalived;
                dj["active"] = 0;
                dj["inactive"] = 0;
                traffic(dj, Totals{}, Estimate{});
                with_health(dj, &h);
                dests.push_back(std::move(dj));
            }
            j["active"] = active;
            j["inactive"] = inactive;
            j["dests"] = std::move(dests);
            j["history"] = status_history_.service_json(j["name"].get<std::string>());
            services.push_back(std::move(j));
        }
    }

    // Drop reasons that ever counted, with the last interval's rate.
    const auto& rates = status_history_.counter_rates();
    json reasons = json::array();
    uint64_t drops_total = 0;
    double drops_rate = 0;
    for (size_t c = 0; c < stack::kCounterCount; ++c) {
        if (!stack::kCounterInfo[c].is_drop) continue;
        uint64_t total = 0;
        for (const lb::Worker* w : workers_) total += w->counters().v[c];
        drops_total += total;
        drops_rate += rates[c];
        if (total == 0) continue;
        reasons.push_back({{"reason", stack::kCounterInfo[c].name},
                           {"total", total},
                           {"rate", std::round(rates[c] * 10) / 10},
                           {"help", stack::kCounterInfo[c].description}});
    }

    json workers = json::array();
    uint64_t conns_used = 0, conns_capacity = 0;
    const auto& wrates = status_history_.worker_rates();
    for (size_t i = 0; i < workers_.size(); ++i) {
        const lb::Worker& w = *workers_[i];
        const StatusHistory::WorkerRates r =
            i < wrates.size() ? wrates[i] : StatusHistory::WorkerRates{};
        conns_used += w.conns().in_use();
        conns_capacity += w.conns().capacity();
        workers.push_back({{"id", w.id()},
                           {"rx_pps", std::round(r.rx_pps)},
                           {"tx_pps", std::round(r.tx_pps)},
                           {"forwarded_pps", std::round(r.forwarded_pps)},
                           {"drops_pps", std::round(r.drops_pps * 10) / 10},
                           {"conns", w.conns().in_use()},
                           {"conn_capacity", w.conns().capacity()}});
    }

    json laddr_list = json::array();
    for (const lb::LocalAddr* l : laddrs) {
        uint64_t free_ports = 0, ports = 0;
        for (const lb::Worker* w : workers_)
            if (const auto& pool = l->workers[w->id()].pool) {
                free_ports += pool->available();
                ports += pool->capacity();
            }
        laddr_list.push_back({{"addr", net::to_string(l->addr)},
                              {"port", l->port_name},
                              {"conns", l->sum_refs()},
                              {"free_ports", free_ports},
                              {"ports", ports}});
    }
    json mbufs = json::array();
    for (const auto& p : ports_) {
        if (!p.pool) continue;
        const port::MempoolUse use = port::mempool_use(p.pool);
        mbufs.push_back({{"port", p.name}, {"in_use", use.in_use()}, {"size", use.size}});
    }

    return json{{"time", unix_now()},
                {"period_s", StatusHistory::kPeriodS},
                {"services", std::move(services)},
                {"drops",
                 {{"total", drops_total},
                  {"rate", std::round(drops_rate * 10) / 10},
                  {"reasons", std::move(reasons)}}},
                {"workers", std::move(workers)},
                {"pools",
                 {{"conns", {{"used", conns_used}, {"capacity", conns_capacity}}},
                  {"laddrs", std::move(laddr_list)},
                  {"mbufs", std::move(mbufs)}}},
                {"history", status_history_.director_json()}};
}

}  // namespace xvs::ctl
