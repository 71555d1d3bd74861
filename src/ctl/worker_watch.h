// Worker liveness for the systemd watchdog: every worker advances a heartbeat each loop
// iteration (lb::Worker::poll_counts); the control loop hands the counts here every tick. A
// worker whose count has not moved for `stall_limit` is stuck: reported once, and the
// watchdog goes unfed until it moves again (so systemd restarts a director whose packet path
// hangs, not only one whose control thread does). Time is passed in, so tests drive it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

namespace xvs::ctl {

class WorkerWatch {
  public:
    using Clock = std::chrono::steady_clock;

    // A change worth a log line: a worker found stuck, or moving again.
    struct Event {
        unsigned worker = 0;
        bool stuck = false;                    // false: it recovered
        std::chrono::milliseconds silent{0};  // how long its heartbeat had not moved
    };

    // `start_limit`: the same for a worker that has not made its first iteration yet (a
    // heartbeat of 0): its first poll touches the connection table and the pools, which took
    // over a second on a busy two-core machine.
    explicit WorkerWatch(std::chrono::milliseconds stall_limit,
                         std::chrono::milliseconds start_limit = std::chrono::seconds(30))
        : stall_limit_(stall_limit), start_limit_(std::max(start_limit, stall_limit)) {}

    // beats[i]: worker i's heartbeat now. The first call (or a new worker) starts its clock.
    std::vector<Event> check(std::span<const uint64_t> beats, Clock::time_point now);
    // No worker stuck as of the last check: the watchdog may be fed.
    bool all_alive() const { return stuck_ == 0; }
    unsigned stuck_count() const { return stuck_; }
    std::chrono::milliseconds stall_limit() const { return stall_limit_; }

    // The stall limit for a watchdog period (zero: none): 5 s, or half the period when that
    // is shorter, but never under 1 s (a worker's longest sleep is 100 us; a second covers a
    // busy machine's scheduling hiccups).
    static std::chrono::milliseconds stall_limit_for(std::chrono::microseconds watchdog);

  private:
    struct Seen {
        uint64_t beat = 0;
        Clock::time_point moved{};  // when beat last changed (or was first seen)
        bool stuck = false;
    };
    std::chrono::milliseconds stall_limit_;
    std::chrono::milliseconds start_limit_;
    std::vector<Seen> seen_;
    unsigned stuck_ = 0;
};

}  // namespace xvs::ctl
