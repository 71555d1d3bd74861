// The status page's recent past (ctl/status_page.h): one sample per rate tick of the control
// loop (2 s), the last kSamples of them (5 minutes): per service its conn/s and packets/s,
// director-wide the drops/s; and the rates of the last interval of every packet path counter
// (drop reasons) and of each worker's load. Bounded: kSamples x (3 x services + 2) numbers, a
// series per service now configured (a removed service's series goes at the next sample). Control
// thread only; a sample reads counters, never a conn table.
#pragma once

#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "stack/counters.h"

namespace xvs::ctl {

class StatusHistory {
  public:
    static constexpr size_t kSamples = 150;  // x 2 s = 5 minutes
    static constexpr double kPeriodS = 2.0;  // the control loop's rate tick

    struct ServiceRates {
        double cps = 0, inpps = 0, outpps = 0;
    };
    // One worker's rates over the last interval, per second.
    struct WorkerRates {
        double rx_pps = 0, tx_pps = 0, forwarded_pps = 0, drops_pps = 0;
    };

    // A sample at unix time `unix_s`, `dt_s` seconds after the previous one: the counters of
    // every worker (in worker order) give the interval's rates and the drops/s point. The first
    // call (dt_s <= 0 or no previous counters) records the baseline and adds no point.
    void sample_begin(int64_t unix_s, double dt_s, std::span<const stack::Counters* const> workers);
    // The sample's point of one service (call once per service between begin and end).
    void sample_service(const std::string& name, const ServiceRates& rates);
    // Drops the series of services that had no point in this sample.
    void sample_end();

    // Points so far (at most kSamples).
    size_t size() const { return times_.size(); }
    // {"t": [unix s...], "drops": [drops/s...]}, oldest first.
    nlohmann::json director_json() const;
    // {"cps": [...], "inpps": [...], "outpps": [...]} of one service: as long as "t" or
    // shorter (a new service), its last point at the last "t"; empty arrays when unknown.
    nlohmann::json service_json(const std::string& name) const;
    // Per counter (stack::kCounterInfo order), its rate over the last interval, per second.
    const std::vector<double>& counter_rates() const { return counter_rates_; }
    const std::vector<WorkerRates>& worker_rates() const { return worker_rates_; }

  private:
    struct Series {
        std::deque<double> cps, inpps, outpps;
        uint64_t last_seq = 0;
    };
    bool adding_ = false;  // between sample_begin and sample_end with a point
    uint64_t seq_ = 0;     // points added so far
    std::deque<int64_t> times_;
    std::deque<double> drops_;
    std::unordered_map<std::string, Series> services_;
    std::vector<std::vector<uint64_t>> prev_;  // per worker, per counter
    std::vector<double> counter_rates_ = std::vector<double>(stack::kCounterCount, 0.0);
    std::vector<WorkerRates> worker_rates_;
};

}  // namespace xvs::ctl
