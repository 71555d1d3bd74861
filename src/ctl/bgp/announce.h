// Which VIPs the director announces, and keeping BIRD in step. A VIP is announced while the
// director is healthy (no worker stuck: ctl/worker_watch.h) and one of its services has quorum
// (a real server up with weight > 0, and the health manager's quorum held); otherwise it is
// withdrawn, as when its last service goes (reload, xvsadm -D) or xvsd stops. The Announcer
// writes BIRD's file (bird_config.h) and asks BIRD to `configure` (bird_client.h) whenever the
// announced set or the configuration changes, retrying every kRetry while BIRD refuses or is
// not there; each VIP's announce and withdraw is logged once, when the decision changes.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/bgp/liveness.h"
#include "ctl/bgp/routing_conf.h"
#include "net/addr.h"

namespace xvs::ctl::bgp {

// One service's standing, read from the live model and the health manager.
struct ServiceStanding {
    net::InetAddr vip;
    uint32_t live_dests = 0;           // dests with weight > 0 (inhibited ones have weight 0)
    std::optional<bool> health_quorum;  // the health manager's quorum; unset: not configured
};

struct VipDecision {
    net::InetAddr vip;
    bool announce = false;
    std::string why;  // "quorum", or why it is withdrawn
    bool operator==(const VipDecision&) const = default;
};

// The decision per VIP, sorted by address: announced when `workers_alive` and one of the VIP's
// services has live_dests > 0 with a health quorum that is not lost.
std::vector<VipDecision> announce_decide(std::span<const ServiceStanding> services,
                                         bool workers_alive);

class Announcer {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::chrono::seconds kRetry{2};
    static constexpr std::chrono::milliseconds kBirdTimeout{3000};

    explicit Announcer(RoutingDefs conf);

    // Creates the liveness interface (needs CAP_NET_ADMIN); until then no route can be up.
    Result<void> open_liveness();
    // A reload's configuration: BIRD's file is rewritten at the next update(). Returns a
    // warning for what needs a restart (the liveness interface's name), else "".
    std::string configure(RoutingDefs conf);
    // The control loop's tick: the decisions now; writes and reloads BIRD when they or the
    // configuration changed since BIRD last took the file (or a retry is due).
    void update(std::vector<VipDecision> decisions, Clock::time_point now);
    // A clean stop: every VIP withdrawn, BIRD told at once (bounded by kBirdTimeout).
    void shutdown();

    // `xvsctl announce show`: {"bird_socket", "bird_config", "liveness_interface",
    // "bird": last result, "vips": [{"vip", "announce", "why", "in_bird"}]}.
    nlohmann::json show() const;
    // xvs_route_announced{vip="..."} 1|0 (1: announced and BIRD took the file saying so),
    // and xvs_bird_reload_failures_total.
    std::string metrics() const;

    std::function<void(const std::string&)> log_info;
    std::function<void(const std::string&)> log_warning;

  private:
    // Writes the file for `vips` and asks BIRD to configure: BIRD's answer or why not.
    Result<std::string> push(const std::vector<net::InetAddr>& vips);
    std::vector<net::InetAddr> wanted() const;

    RoutingDefs conf_;
    LivenessInterface liveness_;
    std::vector<VipDecision> decisions_;
    std::vector<net::InetAddr> in_bird_;  // the VIPs of the file BIRD last took
    bool pushed_once_ = false;
    bool conf_changed_ = true;
    std::optional<Clock::time_point> retry_at_;  // set while BIRD has not taken the file
    std::string last_result_ = "not told yet";
    std::string last_failure_;  // logged once per distinct text
    uint64_t failures_ = 0;
};

}  // namespace xvs::ctl::bgp
