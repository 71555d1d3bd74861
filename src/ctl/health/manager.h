// The health manager: runs every checker of the configuration on one loop (loop.h), turns
// their verdicts into keepalived's real-server and quorum states, and applies them to the
// Director one service at a time (dest_add / dest_edit / dest_del of the service, then one
// commit: the workers see a new snapshot in which only that service's dests changed).
//   - a real server is up when all its checkers are (none: always up); down, it is removed
//     from its services, or kept at weight 0 with inhibit_on_failure; MISC_CHECK misc_dynamic
//     sets its weight;
//   - a service whose live weight falls below its quorum (hysteresis, schedule.h) gets its
//     sorry server in place of the real servers, and runs quorum_down; quorum_up when back;
//   - alpha starts real servers down; omega runs notify_down and quorum_down at shutdown;
//   - a service with a `feedback` block takes its real servers' weights from their xvs-agent
//     reports (feedback.h), applied through the same sync as misc_dynamic's.
// Checkers are keyed by (service or virtual_server_group, real server, settings): a reload
// keeps the state of an unchanged checker and restarts a changed or new one.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/result.h"
#include "ctl/config.h"
#include "ctl/health/dest_health.h"
#include "ctl/health/feedback.h"
#include "ctl/health/loop.h"
#include "ctl/health/mux.h"
#include "ctl/health/passive.h"
#include "ctl/health/probe.h"
#include "ctl/health/schedule.h"
#include "ctl/health/script.h"
#include "lb/director.h"

namespace xvs::ctl::health {

class Manager {
  public:
    // `clock`: the loop's monotonic clock (tests inject one); `seed` for warmup's random delay.
    static Result<std::unique_ptr<Manager>> create(lb::Director& director, Loop::Clock clock = {},
                                                   uint32_t seed = 0);
    ~Manager();
    Manager(const Manager&) = delete;
    Manager& operator=(const Manager&) = delete;

    // What the dataplane should run for `next` (start and every reload): next with the dests of
    // every checked service as the checkers would want them once next is configured (unchanged
    // checkers keep their state, new ones start up, or down with alpha). Changes nothing: the
    // daemon applies it (config_apply) and calls configure(next) only if that succeeded, so a
    // failing reload leaves the checkers on the configuration the dataplane still runs.
    Config effective_for(const Config& next) const;
    // Takes the configuration (start and every reload), after config_apply(effective_for(cfg))
    // succeeded.
    void configure(const Config& cfg);
    // cfg (the configured one) with the dests of every checked service as the checkers want
    // them now.
    Config effective(const Config& cfg) const;
    // omega: notify_down of the live real servers and quorum_down of the services with
    // quorum, waited for at most wait_ms. Checks stop.
    void shutdown(Ms wait_ms = 5000);

    int fd() const { return loop_->fd(); }
    void run_once(int timeout_ms) { loop_->run_once(timeout_ms); }
    Loop& loop() { return *loop_; }

    // `xvsctl check show`: every checker with its service, dest, type, state, last result.
    nlohmann::json show() const;
    // The status page's view: every real server of every service key, checked or not.
    std::vector<DestHealth> dest_health() const;
    // `xvsctl feedback show`: {"listeners": counters per socket, "servers": per real server
    // its last report, smoothed load and weights}.
    nlohmann::json feedback_show() const;
    FeedbackHub& feedback() { return *feedback_; }
    // Called after a state change reached the Director (the daemon flushes removed dests).
    std::function<void()> on_change;
    // Each state change, for the log ("real server 10.0.0.2:80 of TCP 10.0.0.1:80 down: ...").
    std::function<void(const std::string&)> log;

    // The dest of service `key` at addr:port is held at weight 0 by inhibit_on_failure (its
    // real server is down): xvsadm -L -n marks it "inhibited", as check show says.
    bool inhibited(const lb::ServiceKey& key, const net::InetAddr& addr, uint16_t port) const;
    size_t checker_count() const;
    uint64_t attempts() const { return attempts_; }
    // For tests: is the real server up (all checkers), and the service's quorum state.
    std::optional<bool> rs_alive(const std::string& owner, const net::InetEndpoint& rs) const;
    std::optional<bool> quorum_up(const std::string& owner) const;
    // The quorum state of the configured service with this key (one of a group's), if any:
    // the VIP announcer (ctl/bgp/announce.h) withdraws a VIP whose services lost it.
    std::optional<bool> quorum_of(const lb::ServiceKey& key) const;
    // The owner name of a virtual server: "group NAME PROTO" or "PROTO VIP:PORT".
    static std::string owner_of(const VirtualServer& vs);

  private:
    struct VsRecord;
    struct RsRecord;
    struct Checker {
        explicit Checker(Loop& l) : loop(l) {}
        ~Checker() { loop.timer_cancel(timer); }  // its next attempt refers to it
        Checker(const Checker&) = delete;
        Checker& operator=(const Checker&) = delete;
        Loop& loop;
        CheckerConf conf;
        ProbeTarget target;
        std::unique_ptr<Probe> probe;
        CheckState state;
        Loop::TimerId timer;
        bool running = false;
        std::string last_text = "not run yet";
        int64_t last_time = 0;  // unix seconds of the last result, 0 never
        std::optional<uint32_t> dyn_weight;
        RsRecord* rs = nullptr;
    };
    struct RsRecord {
        RealServer conf;
        std::vector<std::unique_ptr<Checker>> checkers;
        bool alive = true;
        VsRecord* vs = nullptr;
        std::optional<uint32_t> preview_weight;  // effective_for(): a kept misc_dynamic weight
        // Passive checking (conf.health.passive): the window over the dests' counters, and the
        // dests read last time (another dest object, e.g. re-added: a new baseline).
        PassiveWindow passive;
        std::vector<const lb::Dest*> passive_dests;
        FeedbackState fb;                   // with the service's feedback block
        std::optional<uint32_t> fb_weight;  // applied dynamic weight; unset: base_weight()
        uint32_t base_weight() const;       // misc_dynamic's, else the configured one
        uint32_t weight() const { return fb_weight ? *fb_weight : base_weight(); }
    };
    struct VsRecord {
        std::string owner;
        VirtualServer conf;                // the first of a group's expansion
        std::vector<lb::ServiceKey> keys;  // every service it stands for
        std::vector<std::unique_ptr<RsRecord>> rs;
        bool quorum_up = true;
    };

    Manager(lb::Director& director, std::unique_ptr<Loop> loop, uint32_t seed);
    void schedule(Checker& c, Ms delay);
    void attempt(Checker& c);
    void on_result(Checker& c, ProbeResult r);
    // Re-evaluates rs and its service; applies and notifies what changed.
    void rs_update(RsRecord& rs, bool notify);
    bool quorum_update(VsRecord& vs, bool notify);
    std::vector<RealServer> wanted_dests(const VsRecord& vs) const;
    // Every kPassivePollMs while some real server has passive_check: reads the counters of
    // the live ones and marks down those whose window trips (their checkers go down too, so
    // only an active check's success brings them back).
    void passive_arm();
    void passive_poll();
    void sync(VsRecord& vs);
    void notify(const std::vector<std::string>& argv, const std::string& why);
    bool feedback_report(const FeedbackHub::Spec& spec, const net::InetAddr& src,
                         const net::FeedbackReport& r);
    void feedback_apply(RsRecord& rs);  // recomputes rs's dynamic weight, applies a change
    void feedback_tick();               // silence: every 250 ms while a service has feedback
    void say(const std::string& line) {
        if (log) log(line);
    }

    lb::Director& director_;
    std::unique_ptr<Loop> loop_;
    UdpMux udp_;
    IcmpMux icmp_;
    SSL_CTX* ssl_ = nullptr;
    ProbeEnv env_;
    std::map<std::string, std::unique_ptr<VsRecord>> vs_;
    std::vector<std::unique_ptr<Script>> notifiers_;
    std::unique_ptr<FeedbackHub> feedback_;
    Loop::TimerId feedback_timer_;
    uint64_t attempts_ = 0;
    std::minstd_rand rng_;
    Loop::TimerId passive_timer_;
};

}  // namespace xvs::ctl::health
