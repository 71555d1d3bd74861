// Load feedback on the director (seed 002, issue 14 item 4): xvs-agent on each real server
// reports its load over UDP (net/feedback_wire.h); here the reports are received on the
// control thread's health loop, checked, and turned into dynamic weights that the health
// manager applies through its one seam (manager.h: dest_edit + commit, as misc_dynamic).
//
// The formula, for a real server whose configured (or misc_dynamic) weight is W:
//   sample  = max over the block's `metric`s of
//               cpu    cpu_permille / 1000
//               runq   running / ncpu           (runnable tasks per CPU now: seed 002's
//                                                measure; a cgroup's with xvs-agent --cgroup)
//               loadavg loadavg / ncpu          (1-minute load average per CPU)
//               mem    mem_permille / 1000
//               conns  established / conns_max
//               custom custom_permille / 1000  (the agent's --load-cmd / --load-file)
//             clamped to 0..1;
//   load    = s * load_prev + (1 - s) * sample   (s = smoothing; the first report: sample);
//   top     = ceiling, or W when ceiling is 0;
//   weight  = clamp(round(top * (1 - load)), min(floor, top), top).
// A real server that has not reported yet keeps W. Once its reports stop for `silence`
// (default 3 intervals) `on_silence` decides: keep the last dynamic weight, go back to W
// (configured, the default), or 0 (zero). Small changes (under 2% of top) are not applied, so
// CPU noise does not publish a snapshot every second.
//
// A report is accepted from a source address only if its MAC verifies with the listener's key
// and its sent_ms is newer than the last accepted one from that address and within max_skew of
// the director's clock; everything else is counted by reason (`xvsctl feedback show`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "ctl/health/check_config.h"
#include "ctl/health/loop.h"
#include "net/feedback_wire.h"

namespace xvs::ctl::health {

// ---- the formula (pure) ---------------------------------------------------------------
double feedback_sample(const FeedbackConf& conf, const net::FeedbackReport& r);

struct FeedbackState {
    std::optional<double> load;  // smoothed, 0..1; unset until the first report
    net::FeedbackReport last;
    Ms last_ms = 0;  // loop time of the last report
    uint64_t reports = 0;
};
void feedback_observe(FeedbackState& st, const FeedbackConf& conf, const net::FeedbackReport& r,
                      Ms now);
bool feedback_silent(const FeedbackState& st, const FeedbackConf& conf, Ms now);
// The dynamic weight now; nullopt: the real server's own weight `base` applies.
std::optional<uint32_t> feedback_weight(const FeedbackState& st, const FeedbackConf& conf,
                                        uint32_t base, Ms now);
// Whether a newly computed weight replaces the applied one (the 2% dead band).
bool feedback_weight_changes(std::optional<uint32_t> applied, std::optional<uint32_t> next,
                             uint32_t top);

// ---- replay check (pure) ----------------------------------------------------------------
enum class FeedbackAdmit : uint8_t { accepted, replayed, stale };
// `last`: the sent_ms last accepted from this source (0 none); updated when accepted.
FeedbackAdmit feedback_admit(uint64_t& last, uint64_t sent_ms, uint64_t wall_now_ms,
                             uint32_t max_skew_ms);

// ---- receivers ----------------------------------------------------------------------------
// Counters of one listener, by reason.
struct FeedbackCounters {
    uint64_t received = 0;
    uint64_t accepted = 0;
    uint64_t bad_size = 0;
    uint64_t bad_magic = 0;
    uint64_t bad_version = 0;
    uint64_t bad_mac = 0;
    uint64_t replayed = 0;
    uint64_t stale = 0;
    uint64_t unknown_source = 0;  // authentic, but no real server of a feedback service has it
    uint64_t rejected() const {
        return bad_size + bad_magic + bad_version + bad_mac + replayed + stale + unknown_source;
    }
};

// One UDP socket per (listen address, port, key); the services that name it share it.
class FeedbackHub {
  public:
    struct Spec {
        std::optional<net::InetAddr> listen;
        uint16_t port = 0;
        std::string secret;
        uint32_t max_skew_ms = 30'000;
    };
    // An authentic, fresh report from `src` to listener `port`. Returns whether some real
    // server took it (else it is counted as unknown_source).
    using OnReport =
        std::function<bool(const Spec& spec, const net::InetAddr& src, const net::FeedbackReport&)>;
    using WallClock = std::function<uint64_t()>;  // unix ms

    FeedbackHub(Loop& loop, OnReport on_report, WallClock wall = {});
    ~FeedbackHub();
    FeedbackHub(const FeedbackHub&) = delete;
    FeedbackHub& operator=(const FeedbackHub&) = delete;

    // Opens the listeners wanted, keeps those unchanged (their counters and replay state),
    // closes the others. Errors (a port in use) are returned per listener, for the log.
    std::vector<std::string> configure(const std::vector<Spec>& specs);
    // A datagram as it arrived (tests call this directly).
    void on_datagram(size_t listener, const net::InetAddr& src, std::span<const uint8_t> data);
    size_t listener_count() const { return listeners_.size(); }
    const FeedbackCounters& counters(size_t listener) const { return listeners_[listener]->c; }
    std::optional<size_t> find(const Spec& s) const;
    nlohmann::json show() const;

  private:
    struct Listener {
        Spec spec;
        net::FeedbackKey key{};
        int fd = -1;
        FeedbackCounters c;
        std::map<std::pair<uint64_t, uint64_t>, uint64_t> last_sent;  // per source (its words)
        std::string error;                                            // bind failure, shown
    };
    void on_readable(Listener& l);

    Loop& loop_;
    OnReport on_report_;
    WallClock wall_;
    std::vector<std::unique_ptr<Listener>> listeners_;
};

}  // namespace xvs::ctl::health
