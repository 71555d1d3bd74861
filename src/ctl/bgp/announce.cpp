// The announce decision and BIRD's upkeep (announce.h).
#include "ctl/bgp/announce.h"

#include <algorithm>
#include <map>

#include "ctl/bgp/bird_client.h"
#include "ctl/bgp/bird_config.h"
#include "ctl/metrics.h"

namespace xvs::ctl::bgp {

std::vector<VipDecision> announce_decide(std::span<const ServiceStanding> services,
                                         bool workers_alive) {
    // Per VIP: the best reason among its services (quorum beats a lost health quorum beats no
    // live real server).
    enum Rank { NoDest = 0, HealthLost = 1, Quorum = 2 };
    std::map<net::InetAddr, Rank, net::InetAddrLess> best;
    for (const ServiceStanding& s : services) {
        Rank r = s.live_dests == 0                      ? NoDest
                 : s.health_quorum.value_or(true) ? Quorum
                                                        : HealthLost;
        auto [it, added] = best.emplace(s.vip, r);
        if (!added) it->second = std::max(it->second, r);
    }
    std::vector<VipDecision> out;
    for (const auto& [vip, rank] : best) {
        VipDecision d{vip, false, ""};
        if (rank == NoDest)
            d.why = "no real server up with weight > 0";
        else if (rank == HealthLost)
            d.why = "quorum lost (health checks)";
        else if (!workers_alive)
            d.why = "a worker is stuck";
        else
            d = VipDecision{vip, true, "quorum"};
        out.push_back(std::move(d));
    }
    return out;
}

Announcer::Announcer(RoutingDefs conf) : conf_(std::move(conf)) {}

Result<void> Announcer::open_liveness() {
    auto li = LivenessInterface::open(conf_.liveness_interface);
    if (!li) return make_error(li.error());
    liveness_ = std::move(*li);
    return {};
}

std::string Announcer::configure(RoutingDefs conf) {
    std::string warning;
    if (conf.liveness_interface != conf_.liveness_interface) {
        warning = "liveness_interface changed: takes effect at the next restart (still " +
                  conf_.liveness_interface + ")";
        conf.liveness_interface = conf_.liveness_interface;
    }
    if (!(conf == conf_)) {
        conf_ = std::move(conf);
        conf_changed_ = true;
    }
    return warning;
}

std::vector<net::InetAddr> Announcer::wanted() const {
    std::vector<net::InetAddr> vips;
    for (const VipDecision& d : decisions_)
        if (d.announce) vips.push_back(d.vip);
    return vips;
}

void Announcer::update(std::vector<VipDecision> decisions, Clock::time_point now) {
    // Log each change of decision once (a VIP that went away is withdrawn: removed).
    auto say = [&](const std::string& line) {
        if (log_info) log_info(line);
    };
    for (const VipDecision& d : decisions) {
        auto old = std::find_if(decisions_.begin(), decisions_.end(),
                                [&](const VipDecision& o) { return o.vip == d.vip; });
        const bool was = old != decisions_.end() && old->announce;
        if (d.announce && !was)
            say("announce " + net::to_string(d.vip) + ": " + d.why);
        else if (!d.announce && (was || old == decisions_.end()))
            say((was ? "withdraw " : "not announcing ") + net::to_string(d.vip) + ": " + d.why);
    }
    for (const VipDecision& o : decisions_) {
        const bool gone = std::none_of(decisions.begin(), decisions.end(),
                                       [&](const VipDecision& d) { return d.vip == o.vip; });
        if (gone && o.announce) say("withdraw " + net::to_string(o.vip) + ": no service has it");
    }
    decisions_ = std::move(decisions);

    const std::vector<net::InetAddr> vips = wanted();
    const bool differs = !pushed_once_ || conf_changed_ || vips != in_bird_;
    if (!differs) {
        retry_at_.reset();
        return;
    }
    if (retry_at_ && now < *retry_at_) return;
    auto r = push(vips);
    if (r) {
        in_bird_ = vips;
        pushed_once_ = true;
        conf_changed_ = false;
        retry_at_.reset();
        last_failure_.clear();
        last_result_ = *r;
        say("BIRD reconfigured (" + std::to_string(vips.size()) + " VIPs announced): " + *r);
        return;
    }
    ++failures_;
    retry_at_ = now + kRetry;
    last_result_ = r.error();
    if (r.error() != last_failure_ && log_warning)
        log_warning(r.error() + "; retrying every " + std::to_string(kRetry.count()) + " s");
    last_failure_ = r.error();
}

Result<std::string> Announcer::push(const std::vector<net::InetAddr>& vips) {
    if (auto w = file_write_atomic(conf_.bird_config, bird_config_text(conf_, vips)); !w)
        return make_error("BIRD: " + w.error());
    auto reply = bird_command(conf_.bird_socket, "configure", kBirdTimeout);
    if (!reply) return make_error("BIRD: " + reply.error());
    if (!reply->ok())
        return make_error("BIRD refused its configuration (" + std::to_string(reply->code) +
                          "): " + reply->text() + " (does bird.conf include " +
                          conf_.bird_config + "?)");
    return reply->text();
}

void Announcer::shutdown() {
    if (!pushed_once_ && in_bird_.empty()) {
        liveness_.close();
        return;
    }
    for (const net::InetAddr& vip : in_bird_)
        if (log_info) log_info("withdraw " + net::to_string(vip) + ": xvsd stopping");
    auto r = push({});
    if (r) {
        in_bird_.clear();
        if (log_info) log_info("BIRD reconfigured (0 VIPs announced): " + *r);
    } else if (log_warning) {
        log_warning(r.error() + " (the VIP routes go with the liveness interface " +
                    conf_.liveness_interface + " anyway)");
    }
    decisions_.clear();
    liveness_.close();
}

nlohmann::json Announcer::show() const {
    nlohmann::json vips = nlohmann::json::array();
    for (const VipDecision& d : decisions_) {
        const bool in_bird = std::find(in_bird_.begin(), in_bird_.end(), d.vip) != in_bird_.end();
        vips.push_back({{"vip", net::to_string(d.vip)},
                        {"announce", d.announce},
                        {"why", d.why},
                        {"in_bird", in_bird}});
    }
    std::vector<std::string> protocols;
    if (conf_.bgp.present) protocols.emplace_back("bgp");
    if (conf_.ospf.present) protocols.emplace_back("ospf");
    return {{"bird_socket", conf_.bird_socket},
            {"bird_config", conf_.bird_config},
            {"liveness_interface", conf_.liveness_interface},
            {"liveness_up", liveness_.is_open()},
            {"protocols", protocols},
            {"bird", last_result_},
            {"bird_pending", retry_at_.has_value()},
            {"vips", vips}};
}

std::string Announcer::metrics() const {
    PromText p;
    p.family("xvs_route_announced", "gauge",
             "1 while the VIP is announced through BIRD (decided and in the file BIRD took).");
    for (const VipDecision& d : decisions_) {
        const bool in_bird = std::find(in_bird_.begin(), in_bird_.end(), d.vip) != in_bird_.end();
        p.sample({{"vip", net::to_string(d.vip)}}, uint64_t{d.announce && in_bird});
    }
    p.family("xvs_bird_reload_failures_total", "counter",
             "Times BIRD could not be told the announced VIPs (absent, refused, timed out).");
    p.sample({}, failures_);
    return p.take();
}

}  // namespace xvs::ctl::bgp
