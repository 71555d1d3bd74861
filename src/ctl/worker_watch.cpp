// WorkerWatch, see ctl/worker_watch.h.
#include "ctl/worker_watch.h"

namespace xvs::ctl {

std::vector<WorkerWatch::Event> WorkerWatch::check(std::span<const uint64_t> beats,
                                                   Clock::time_point now) {
    std::vector<Event> events;
    if (seen_.size() != beats.size()) {
        seen_.clear();
        for (const uint64_t beat : beats) seen_.push_back(Seen{beat, now, false});
        stuck_ = 0;
        return events;
    }
    for (size_t i = 0; i < beats.size(); ++i) {
        Seen& s = seen_[i];
        const auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(now - s.moved);
        if (beats[i] != s.beat) {
            if (s.stuck) {
                events.push_back({static_cast<unsigned>(i), false, silent});
                --stuck_;
            }
            s = Seen{beats[i], now, false};
            continue;
        }
        if (!s.stuck && silent >= (s.beat == 0 ? start_limit_ : stall_limit_)) {
            s.stuck = true;
            ++stuck_;
            events.push_back({static_cast<unsigned>(i), true, silent});
        }
    }
    return events;
}

std::chrono::milliseconds WorkerWatch::stall_limit_for(std::chrono::microseconds watchdog) {
    using std::chrono::milliseconds;
    const milliseconds limit{5000};
    if (watchdog.count() == 0) return limit;
    const auto half = std::chrono::duration_cast<milliseconds>(watchdog / 2);
    return std::clamp(half, milliseconds{1000}, limit);
}

}  // namespace xvs::ctl
