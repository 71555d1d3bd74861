// The health checkers' event loop: one epoll set with a timerfd for every timer, run on the
// control thread (DESIGN.md "Threads"); thousands of checks share it, none has a thread.
// Its epoll descriptor is readable whenever a timer is due or a watched descriptor is ready,
// so the control loop can wait on it beside the control socket. Callbacks run from
// run_once() only; they may add or remove timers and watches (a removed watch gets no more
// events, even ones of the same epoll batch). Times are ms of a monotonic clock, injectable.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "common/result.h"

namespace xvs::ctl::health {

using Ms = int64_t;

class Loop {
  public:
    using Clock = std::function<Ms()>;
    static Result<std::unique_ptr<Loop>> create(Clock clock = {});
    ~Loop();
    Loop(const Loop&) = delete;
    Loop& operator=(const Loop&) = delete;

    int fd() const { return epoll_fd_; }
    Ms now() const { return clock_(); }

    struct TimerId {
        Ms when = 0;
        uint64_t seq = 0;
        explicit operator bool() const { return seq != 0; }
    };
    TimerId timer_at(Ms when, std::function<void()> fn);
    TimerId timer_in(Ms delay, std::function<void()> fn) {
        return timer_at(now() + delay, std::move(fn));
    }
    void timer_cancel(TimerId& id);  // no-op for an unset or fired timer; resets id
    size_t timer_count() const { return timers_.size(); }
    // When the next timer is due (nullopt: none).
    std::optional<Ms> next_timer() const;

    // events: EPOLLIN / EPOLLOUT. The callback gets the ready events (EPOLLERR/HUP included).
    Result<void> watch(int fd, uint32_t events, std::function<void(uint32_t)> fn);
    void modify(int fd, uint32_t events);
    void unwatch(int fd);

    // Waits up to timeout_ms (0: does not wait) and runs what is ready and the due timers.
    void run_once(int timeout_ms);
    // Runs due timers only (tests with an injected clock).
    void run_timers();

  private:
    Loop(int epoll_fd, int timer_fd, Clock clock);
    void arm();

    int epoll_fd_;
    int timer_fd_;
    Clock clock_;
    uint64_t seq_ = 0;
    std::map<std::pair<Ms, uint64_t>, std::function<void()>> timers_;
    Ms armed_for_ = -1;
    struct Watch {
        uint32_t gen;
        std::function<void(uint32_t)> fn;
    };
    std::unordered_map<int, Watch> watches_;
    uint32_t gen_ = 0;
};

}  // namespace xvs::ctl::health
