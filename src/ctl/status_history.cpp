// The status page's sample ring and interval rates; see status_history.h.
#include "ctl/status_history.h"

#include <algorithm>
#include <cmath>

namespace xvs::ctl {

namespace {

template <typename T>
void push_bounded(std::deque<T>& d, T value) {
    d.push_back(value);
    while (d.size() > StatusHistory::kSamples) d.pop_front();
}

// Counters are racy snapshots of the workers' words; one that went back (a worker restarted
// its count, never expected) is a zero rate, not a huge one.
double rate_of(uint64_t now, uint64_t before, double dt_s) {
    return now >= before ? static_cast<double>(now - before) / dt_s : 0.0;
}

// Two decimals are all a chart shows, and they keep /status.json short.
double round2(double v) {
    return std::round(v * 100) / 100;
}

}  // namespace

void StatusHistory::sample_begin(int64_t unix_s, double dt_s,
                                 std::span<const stack::Counters* const> workers) {
    std::vector<std::vector<uint64_t>> now(workers.size(),
                                           std::vector<uint64_t>(stack::kCounterCount));
    for (size_t w = 0; w < workers.size(); ++w)
        for (size_t c = 0; c < stack::kCounterCount; ++c) now[w][c] = workers[w]->v[c];
    adding_ = dt_s > 0 && prev_.size() == now.size();
    if (adding_) {
        std::fill(counter_rates_.begin(), counter_rates_.end(), 0.0);
        worker_rates_.assign(workers.size(), WorkerRates{});
        double drops = 0;
        for (size_t w = 0; w < now.size(); ++w) {
            WorkerRates& wr = worker_rates_[w];
            for (size_t c = 0; c < stack::kCounterCount; ++c) {
                const double r = rate_of(now[w][c], prev_[w][c], dt_s);
                counter_rates_[c] += r;
                if (stack::kCounterInfo[c].is_drop) wr.drops_pps += r;
            }
            auto at = [&](stack::Counter c) {
                const auto i = static_cast<size_t>(c);
                return rate_of(now[w][i], prev_[w][i], dt_s);
            };
            wr.rx_pps = at(stack::Counter::rx_packets);
            wr.tx_pps = at(stack::Counter::tx_packets);
            wr.forwarded_pps = at(stack::Counter::lb_forwarded);
            drops += wr.drops_pps;
        }
        ++seq_;
        push_bounded(times_, unix_s);
        push_bounded(drops_, round2(drops));
    }
    prev_ = std::move(now);
}

void StatusHistory::sample_service(const std::string& name, const ServiceRates& rates) {
    if (!adding_) return;
    Series& s = services_[name];
    push_bounded(s.cps, round2(rates.cps));
    push_bounded(s.inpps, round2(rates.inpps));
    push_bounded(s.outpps, round2(rates.outpps));
    s.last_seq = seq_;
}

void StatusHistory::sample_end() {
    if (!adding_) return;
    std::erase_if(services_, [&](const auto& kv) { return kv.second.last_seq != seq_; });
    adding_ = false;
}

nlohmann::json StatusHistory::director_json() const {
    return {{"t", nlohmann::json(std::vector<int64_t>(times_.begin(), times_.end()))},
            {"drops", nlohmann::json(std::vector<double>(drops_.begin(), drops_.end()))}};
}

nlohmann::json StatusHistory::service_json(const std::string& name) const {
    auto it = services_.find(name);
    auto arr = [&](const std::deque<double> Series::*member) {
        if (it == services_.end()) return nlohmann::json::array();
        const std::deque<double>& d = it->second.*member;
        return nlohmann::json(std::vector<double>(d.begin(), d.end()));
    };
    return {{"cps", arr(&Series::cps)},
            {"inpps", arr(&Series::inpps)},
            {"outpps", arr(&Series::outpps)}};
}

}  // namespace xvs::ctl
