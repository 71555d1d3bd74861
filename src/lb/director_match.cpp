// Director: SNAT match services (DPVS's "match" services, seed 002's masquerading). A match
// service is a Service kept in its own list and selected by its MatchKey; its dests are WAN
// addresses, which must be the director's own addresses on the service's oif port, and each
// WAN address has one port pool (a LocalAddr, as FULLNAT's LIPs) for all services using it.
#include <algorithm>

#include "lb/director.h"
#include "lb/service_check.h"

namespace xvs::lb {

namespace {

std::string match_str(const MatchKey& k) {
    return "match " + to_string(k);
}

}  // namespace

Result<void> Director::match_check(const MatchSpec& spec) const {
    const MatchKey& k = spec.key;
    if (auto r = match_service_check(k.proto, FwdMode::Snat, 0); !r) return r;
    if (!sched_find(spec.sched)) return make_error("Scheduler not found");
    if (k.oif.empty())
        return make_error(match_str(k) +
                          ": oif missing (the port whose address the inside hosts are hidden "
                          "behind, e.g. oif=wan0)");
    if (!port_index(k.oif)) return make_error("oif: no such port '" + k.oif + "'");
    if (!k.iif.empty() && !port_index(k.iif))
        return make_error("iif: no such port '" + k.iif + "'");
    if (auto f = match_family(k, k.family); !f) return make_error(match_str(k) + ": " + f.error());
    if (k.proto == 1 && (!k.src.any_port() || !k.dst.any_port()))
        return make_error(match_str(k) + ": ICMP has no ports: give address ranges only");
    return {};
}

std::shared_ptr<Service> Director::match_find(const MatchKey& key) const {
    for (const auto& s : matches_)
        if (*s->match == key) return s;
    return nullptr;
}

Result<void> Director::match_add(const MatchSpec& spec) {
    if (auto r = match_check(spec); !r) return r;
    if (match_find(spec.key)) return make_error("Service already exists");
    auto svc = std::make_shared<Service>();
    svc->key = ServiceKey{net::InetAddr{}, 0, spec.key.proto};
    svc->sched_name = spec.sched;
    svc->fwd = FwdMode::Snat;
    svc->match = spec.key;
    svc->match_name = spec.name;
    matches_.push_back(std::move(svc));
    return {};
}

Result<void> Director::match_edit(const MatchSpec& spec) {
    auto svc = match_find(spec.key);
    if (!svc) return make_error("No such service");
    if (auto r = match_check(spec); !r) return r;
    svc->sched_name = spec.sched;  // new connections; existing ones keep their WAN address
    svc->match_name = spec.name;
    return {};
}

Result<void> Director::match_del(const MatchKey& key) {
    auto it = std::find_if(matches_.begin(), matches_.end(),
                           [&](const auto& s) { return *s->match == key; });
    if (it == matches_.end()) return make_error("No such service");
    service_retire(*it);
    matches_.erase(it);
    wans_prune();
    return {};
}

Result<void> Director::match_dest_check(const Service& svc, const DestSpec& spec) const {
    const MatchKey& k = *svc.match;
    if (spec.fwd != FwdMode::Snat)
        return make_error(
            "a match service forwards by SNAT only: add its WAN address with -J "
            "(--snat), not " +
            std::string(fwd_names(spec.fwd).ipvsadm));
    if (spec.weight < 0 || spec.weight > 65535) return make_error("Illegal weight specified");
    if (spec.lower_threshold > spec.upper_threshold)
        return make_error("lower threshold " + std::to_string(spec.lower_threshold) +
                          " is higher than upper threshold " +
                          std::to_string(spec.upper_threshold));
    const std::string wan = net::to_string(spec.addr);
    if (spec.port != 0)
        return make_error("WAN address " + wan + ":" + std::to_string(spec.port) +
                          ": the port must be 0 (SNAT takes ports from the address's pool)");
    auto a = std::find_if(addresses_.begin(), addresses_.end(),
                          [&](const AddressEntry& e) { return e.addr == spec.addr; });
    if (a == addresses_.end())
        return make_error("WAN address " + wan +
                          " is not a director address: add it first (ip_defs `address " + wan +
                          "/LEN dev " + k.oif + "`, or xvsctl addr add)");
    if (a->port != k.oif)
        return make_error("WAN address " + wan + " is on port '" + a->port + "', not on oif '" +
                          k.oif + "': use an address of port '" + k.oif + "'");
    // One family per match service: its WAN addresses and address ranges are of the packets
    // it translates (MatchKey::family).
    if (spec.addr.is_v4() != (k.family == 4))
        return make_error("WAN address " + wan + " is " + (spec.addr.is_v4() ? "IPv4" : "IPv6") +
                          " but the match service translates IPv" + std::to_string(k.family) +
                          " packets: use an IPv" + std::to_string(k.family) +
                          " WAN address, or a match service of that family (af=ipv" +
                          std::string(spec.addr.is_v4() ? "4" : "6") + ", or ranges of it)");
    return match_service_check(k.proto, spec.fwd, 0);
}

Result<void> Director::match_dest_add(const MatchKey& key, const DestSpec& spec) {
    auto svc = match_find(key);
    if (!svc) return make_error("No such service");
    if (auto r = match_dest_check(*svc, spec); !r) return r;
    for (const auto& d : svc->dests)
        if (d->addr == spec.addr) return make_error("Destination already exists");
    auto it = std::find_if(wans_.begin(), wans_.end(),
                           [&](const auto& l) { return l->addr == spec.addr; });
    std::shared_ptr<LocalAddr> pool;
    if (it != wans_.end()) {
        pool = *it;
    } else {
        // A WAN address dropped earlier may still carry connections: take its pool back, so
        // it never hands out a port those connections hold.
        auto dead = std::find_if(dead_laddrs_.begin(), dead_laddrs_.end(), [&](const auto& l) {
            return l->addr == spec.addr && l->port_name == key.oif;
        });
        if (dead != dead_laddrs_.end()) {
            pool = *dead;
            dead_laddrs_.erase(dead);
        } else {
            pool = std::make_shared<LocalAddr>(spec.addr, key.oif, nworkers_);
        }
        wans_.push_back(pool);
    }
    auto dest = std::make_shared<Dest>();
    dest->svc = svc.get();
    dest->addr = spec.addr;
    dest->port = 0;
    dest->fwd = FwdMode::Snat;
    dest->weight = spec.weight;
    dest->upper_threshold = spec.upper_threshold;
    dest->lower_threshold = spec.lower_threshold;
    svc->dests.push_back(std::move(dest));
    svc->wan_pools.push_back(std::move(pool));
    return {};
}

Result<void> Director::match_dest_edit(const MatchKey& key, const DestSpec& spec) {
    auto svc = match_find(key);
    if (!svc) return make_error("No such service");
    if (auto r = match_dest_check(*svc, spec); !r) return r;
    for (auto& d : svc->dests) {
        if (d->addr == spec.addr) {
            d->weight = spec.weight;
            d->upper_threshold = spec.upper_threshold;
            d->lower_threshold = spec.lower_threshold;
            return {};
        }
    }
    return make_error("No such destination");
}

Result<void> Director::match_dest_del(const MatchKey& key, net::InetAddr wan) {
    auto svc = match_find(key);
    if (!svc) return make_error("No such service");
    for (size_t i = 0; i < svc->dests.size(); ++i) {
        if (svc->dests[i]->addr != wan) continue;
        svc->dests[i]->removed = true;
        dead_dests_.push_back(svc->dests[i]);  // its conns drain as a VIP dest's do (dest_del)
        removed_.push_back(svc->dests[i]);
        svc->dests.erase(svc->dests.begin() + static_cast<std::ptrdiff_t>(i));
        svc->wan_pools.erase(svc->wan_pools.begin() + static_cast<std::ptrdiff_t>(i));
        wans_prune();
        return {};
    }
    return make_error("No such destination");
}

const Service* Director::wan_user(net::InetAddr addr) const {
    for (const auto& s : matches_)
        for (const auto& d : s->dests)
            if (d->addr == addr) return s.get();
    return nullptr;
}

// Pools of WAN addresses no match service uses any more go with the other retired local
// addresses: freed once no connection holds one of their ports.
void Director::wans_prune() {
    for (auto it = wans_.begin(); it != wans_.end();) {
        if (!wan_user((*it)->addr)) {
            dead_laddrs_.push_back(*it);
            it = wans_.erase(it);
        } else {
            ++it;
        }
    }
}

void Director::build_matches(Snapshot& snap) const {
    for (const auto& svc : matches_) {
        const MatchKey& k = *svc->match;
        auto view = std::make_unique<ServiceView>();
        view->svc = svc.get();
        view->sched = sched_find(svc->sched_name);
        view->fwd = FwdMode::Snat;
        view->match.proto = k.proto == 1 && k.family == 6 ? uint8_t{58} : k.proto;
        view->match.src = k.src;
        view->match.dst = k.dst;
        view->match.iif = k.iif.empty() ? int16_t(-1) : int16_t(*port_index(k.iif));
        view->match.oif = int16_t(*port_index(k.oif));
        view->match.family = k.family;
        for (size_t i = 0; i < svc->dests.size(); ++i) {
            view->plan.dests.push_back(svc->dests[i].get());
            view->plan.weights.push_back(svc->dests[i]->weight.load(std::memory_order_relaxed));
            view->wan.push_back(svc->wan_pools[i].get());
            snap.keep_dests.push_back(svc->dests[i]);
            snap.keep_laddrs.push_back(svc->wan_pools[i]);
        }
        view->plan.workers = nworkers_;
        if (std::any_of(svc->dests.begin(), svc->dests.end(),
                        [](const auto& d) { return d->upper_threshold != 0; })) {
            for (const auto& d : svc->dests)
                view->plan.limits.push_back(DestLimit{d->upper_threshold, d->lower_threshold});
        }
        sched_plan_inputs(*svc, view->plan, *view->sched, nworkers_);
        view->sched->build(view->plan);
        snap.matches.push_back(view.get());
        snap.service_views.push_back(std::move(view));
        snap.keep_services.push_back(svc);
    }
}

}  // namespace xvs::lb
