// The control socket's request handler (docs/control-protocol.md): turns JSON requests into
// Director calls and reads statistics, connections and neighbours from the workers. Runs on
// the control thread only; reads of worker-owned data are racy snapshots for display.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "ctl/capture_session.h"
#include "ctl/health/dest_health.h"
#include "ctl/status_history.h"
#include "lb/director.h"
#include "lb/worker.h"

struct rte_mempool;

namespace xvs::ctl {

struct PortInfoForCtl {
    std::string name;
    std::string dev;
    uint16_t port_id = 0;
    uint16_t mtu = 1500;
    net::MacAddr mac{};
    bool has_stats = true;  // false in tests without ethdev ports
    const rte_mempool* pool = nullptr;  // its mbuf pool, for the status page; null in tests
};

class Controller {
public:
    Controller(lb::Director& director, std::vector<lb::Worker*> workers,
               std::vector<PortInfoForCtl> ports, std::function<Result<void>()> reload);

    // One request -> one reply (never throws).
    nlohmann::json handle(const nlohmann::json& request);
    // Parses a request line and handles it; returns the reply line (without '\n').
    std::string handle_line(const std::string& line) { return serve_line(line).text; }

    // The reply line to one request line, and what is wrong with the request when it is
    // malformed or failed inside ("" otherwise), for the control socket's log. Never throws,
    // whatever bytes the line or the model hold: replies are valid UTF-8 JSON (invalid
    // sequences from config or port names become U+FFFD), anything thrown is answered
    // "Internal error: ...".
    struct LineReply {
        std::string text;
        std::string problem;
        // A request that changed the configuration and succeeded: "add_dest {...}", for the
        // log (every change is logged once, with the client that made it).
        std::string change;
    };
    LineReply serve_line(std::string_view line) noexcept;

    // Ends a packet capture no client has read for CaptureSession::kIdleLimit (its xvsctl
    // died). Call from the periodic tick.
    void capture_expire(std::chrono::steady_clock::time_point now);

    // Rate estimation: call about every 2 s (the kernel's estimator period).
    void estimate_rates(std::chrono::steady_clock::time_point now);

    // SYN-cookie key rotation, every kCookieRotatePeriods cookie counter periods (60 x 64 s,
    // about 64 minutes). Call from the same periodic tick with net::cookie_count of the shared
    // monotonic clock (common/clock.h, the workers' clock too). The first call only records
    // the start (the Director's keys are fresh); returns true when it rotated.
    static constexpr uint32_t kCookieRotatePeriods = 60;
    bool cookie_tick(uint32_t count_now);

    // expire_nodest_conn (IPVS): expires on every worker the conns of the dests removed since
    // the last call (lb/command.h flush_dest). handle() calls it after each request; the
    // daemon after a SIGHUP reload. With the setting off it only forgets the removals.
    void flush_removed_dests();

    // `check_show` answers {"checks": show()} (the daemon's health manager); unset: no checks.
    void set_check_show(std::function<nlohmann::json()> show) { check_show_ = std::move(show); }
    // Whether a dest of a service is held at weight 0 by inhibit_on_failure (the health
    // manager's verdict): the list reply says "inhibited": true, xvsadm -L -n marks it.
    using InhibitedFn =
        std::function<bool(const lb::ServiceKey&, const net::InetAddr&, uint16_t port)>;
    void set_inhibited(InhibitedFn fn) { inhibited_ = std::move(fn); }
    // `feedback_show` answers {"feedback": show()} (load feedback, ctl/health/feedback.h).
    // `sync` requests (show / takeover / release) go to the session sync daemon
    // (ctl/sync/sync_daemon.h); unset: sync_defs is not configured. Its metrics are appended.
    void set_sync(std::function<nlohmann::json(const nlohmann::json&)> request,
                  std::function<std::string()> metrics) {
        sync_request_ = std::move(request);
        sync_metrics_ = std::move(metrics);
    }
    void set_feedback_show(std::function<nlohmann::json()> show) {
        feedback_show_ = std::move(show);
    }

    // `announce_show` answers {"announce": show()} (the VIP announcer, ctl/bgp/announce.h);
    // unset: {"announce": null}, routing is not configured. `metrics_extra` is appended to
    // the metrics body (the announcer's xvs_route_announced).
    void set_announce_show(std::function<nlohmann::json()> show) {
        announce_show_ = std::move(show);
    }
    void set_metrics_extra(std::function<std::string()> extra) {
        metrics_extra_ = std::move(extra);
    }

    // The real servers' health for the status page (the daemon's health manager); unset:
    // every dest is shown without a check.
    using DestHealthFn = std::function<std::vector<health::DestHealth>()>;
    void set_dest_health(DestHealthFn fn) { dest_health_ = std::move(fn); }

    struct Totals {
        uint64_t conns = 0, inpkts = 0, outpkts = 0, inbytes = 0, outbytes = 0;
    };

    // The status page's data (GET /status.json, rendered as the page by ctl/status_page.h;
    // ctl/controller_status.cpp, docs in README "Status page"): per service its settings,
    // totals, rates, real servers with their health and a history of conn/s and packets/s;
    // drop reasons with their rates; per-worker load; pools (conn tables, local ports,
    // mbufs). O(services + dests + counters x workers + history), no conn table walked.
    nlohmann::json status_json() const;

    // The metrics endpoint's body, Prometheus text (ctl/controller_metrics.cpp): packet path
    // counters per worker, services and dests (totals since they were added: xvsadm -Z does
    // not reset a Prometheus counter; rate estimates; weights, conns, health inhibition),
    // ports, conn tables, local addresses. Costs O(services + dests + counters x workers):
    // no conn table is walked. Reads of worker-owned words are racy snapshots, as for stats.
    std::string metrics() const;

private:
    // Both maps are keyed by the Service/Dest address and hold a weak_ptr to it: the memory
    // cannot be reused by a new object while an entry exists, and entries of removed objects
    // are dropped, so a re-added service never inherits an old baseline (totals would wrap).
    struct Baseline {
        std::weak_ptr<const void> owner;
        Totals totals{};
    };
    struct Estimate {
        std::weak_ptr<const void> owner;
        Totals last{};
        double cps = 0, inpps = 0, outpps = 0, inbps = 0, outbps = 0;
        // The last interval's own rates (not smoothed): the status page's charts.
        StatusHistory::ServiceRates interval{};
        bool primed = false;
    };

    Totals service_totals(const lb::Service& s) const;
    Totals dest_totals(const lb::Dest& d) const;
    nlohmann::json stats_json(const void* obj, const Totals& raw) const;
    nlohmann::json service_json(const lb::Service& s) const;

    nlohmann::json cmd_list(const nlohmann::json& req);
    nlohmann::json cmd_conns(const nlohmann::json& req, bool filtered);
    nlohmann::json cmd_zero(const nlohmann::json& req);
    nlohmann::json cmd_flush_dest(const nlohmann::json& req);
    nlohmann::json dispatch(const nlohmann::json& request);
    // Expires the conns of `dest` on every worker: how many, or the first worker's error.
    Result<uint64_t> flush_dest(const std::shared_ptr<lb::Dest>& dest);
    // Drops zero baselines of services and dests no longer in the model.
    void forget_removed();
    // One point of the status history, from the estimates just made (estimate_rates).
    void status_sample(double dt_s);

    lb::Director& director_;
    std::vector<lb::Worker*> workers_;
    std::vector<PortInfoForCtl> ports_;
    std::function<Result<void>()> reload_;
    std::unordered_map<const void*, Baseline> zero_base_;  // ipvsadm -Z without racing workers
    std::unordered_map<const void*, Estimate> estimates_;
    nlohmann::json capture_request(const std::string& cmd, const nlohmann::json& req);
    std::unique_ptr<CaptureSession> capture_;  // xvsctl capture: at most one at a time
    uint64_t capture_seq_ = 0;
    std::chrono::steady_clock::time_point last_estimate_{};
    std::optional<uint32_t> cookie_rotated_at_;
    InhibitedFn inhibited_;
    std::function<nlohmann::json()> check_show_;  // counter of the last rotation (or start)
    std::function<nlohmann::json()> feedback_show_;
    std::function<nlohmann::json(const nlohmann::json&)> sync_request_;
    std::function<std::string()> sync_metrics_;
    DestHealthFn dest_health_;
    std::function<nlohmann::json()> announce_show_;
    std::function<std::string()> metrics_extra_;
    StatusHistory status_history_;
};

}  // namespace xvs::ctl
