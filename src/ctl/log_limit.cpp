// LogRateLimit, see ctl/log_limit.h.
#include "ctl/log_limit.h"

#include <algorithm>

namespace xvs::ctl {

LogRateLimit::LogRateLimit(Params params) : params_(params) {
    params_.burst = std::max(params_.burst, 1u);
    if (params_.refill.count() <= 0) params_.refill = std::chrono::milliseconds(1);
}

void LogRateLimit::refill(Bucket& b, Clock::time_point now) const {
    if (b.tokens >= params_.burst || now <= b.last_refill) {
        if (b.tokens >= params_.burst) b.last_refill = now;
        return;
    }
    const auto periods = static_cast<uint64_t>((now - b.last_refill) / params_.refill);
    if (periods == 0) return;
    const uint64_t tokens = std::min<uint64_t>(params_.burst, b.tokens + periods);
    b.tokens = static_cast<unsigned>(tokens);
    // A full bucket starts its next period now; a partial one keeps the remainder of the
    // current period, so the long-run rate is exactly one per refill.
    b.last_refill = b.tokens >= params_.burst
                        ? now
                        : b.last_refill + params_.refill * static_cast<int64_t>(periods);
}

void LogRateLimit::forget_idle(Clock::time_point now) {
    if (buckets_.size() < params_.max_kinds) return;
    for (auto it = buckets_.begin(); it != buckets_.end();) {
        refill(it->second, now);
        if (it->second.tokens >= params_.burst && it->second.suppressed == 0)
            it = buckets_.erase(it);
        else
            ++it;
    }
}

LogRateLimit::Verdict LogRateLimit::admit(std::string_view kind, Clock::time_point now) {
    auto it = buckets_.find(kind);
    if (it == buckets_.end()) {
        forget_idle(now);
        it = buckets_.emplace(std::string(kind), Bucket{params_.burst, now, 0}).first;
    }
    Bucket& b = it->second;
    refill(b, now);
    if (b.tokens == 0) {
        ++b.suppressed;
        ++suppressed_total_;
        return {false, 0};
    }
    --b.tokens;
    const uint64_t held = b.suppressed;
    b.suppressed = 0;
    return {true, held};
}

std::vector<LogRateLimit::Resumed> LogRateLimit::take_resumed(Clock::time_point now) {
    std::vector<Resumed> out;
    for (auto& [kind, b] : buckets_) {
        if (b.suppressed == 0) continue;
        refill(b, now);
        if (b.tokens == 0) continue;
        --b.tokens;
        out.push_back({kind, b.suppressed});
        b.suppressed = 0;
    }
    return out;
}

std::string log_suppressed_text(uint64_t n, const LogRateLimit::Params& params) {
    return std::to_string(n) + " similar message" + (n == 1 ? "" : "s") +
           " suppressed (at most " + std::to_string(params.burst) + " at once, then 1 per " +
           std::to_string(params.refill.count()) + " ms)";
}

}  // namespace xvs::ctl
