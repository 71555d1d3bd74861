// The health event loop: epoll + one timerfd armed for the earliest timer; see loop.h.
#include "ctl/health/loop.h"

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <vector>

namespace xvs::ctl::health {

namespace {

Ms monotonic_now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return Ms(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

constexpr uint64_t kTimerTag = ~uint64_t{0};

}  // namespace

Result<std::unique_ptr<Loop>> Loop::create(Clock clock) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return make_error(std::string("health checks: epoll_create1: ") + strerror(errno));
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (tfd < 0) {
        close(ep);
        return make_error(std::string("health checks: timerfd_create: ") + strerror(errno));
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kTimerTag;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) != 0) {
        close(tfd);
        close(ep);
        return make_error(std::string("health checks: epoll_ctl: ") + strerror(errno));
    }
    if (!clock) clock = monotonic_now;
    return std::unique_ptr<Loop>(new Loop(ep, tfd, std::move(clock)));
}

Loop::Loop(int epoll_fd, int timer_fd, Clock clock)
    : epoll_fd_(epoll_fd), timer_fd_(timer_fd), clock_(std::move(clock)) {}

Loop::~Loop() {
    close(timer_fd_);
    close(epoll_fd_);
}

Loop::TimerId Loop::timer_at(Ms when, std::function<void()> fn) {
    TimerId id{when, ++seq_};
    timers_.emplace(std::make_pair(when, id.seq), std::move(fn));
    if (timers_.begin()->first.second == id.seq) arm();
    return id;
}

void Loop::timer_cancel(TimerId& id) {
    if (id) timers_.erase({id.when, id.seq});
    id = TimerId{};
}

std::optional<Ms> Loop::next_timer() const {
    if (timers_.empty()) return std::nullopt;
    return timers_.begin()->first.first;
}

// The timerfd fires at the earliest timer (absolute monotonic time; with an injected clock,
// relative to the real one, which only matters for waiting, not for what is due).
void Loop::arm() {
    const Ms when = timers_.empty() ? -1 : timers_.begin()->first.first;
    if (when == armed_for_) return;
    armed_for_ = when;
    itimerspec its{};
    if (when >= 0) {
        Ms delay = std::max<Ms>(when - now(), 0);
        const Ms at = monotonic_now() + delay;
        its.it_value.tv_sec = at / 1000;
        its.it_value.tv_nsec = (at % 1000) * 1'000'000 + 1;  // never 0: that disarms
    }
    timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &its, nullptr);
}

Result<void> Loop::watch(int fd, uint32_t events, std::function<void(uint32_t)> fn) {
    const uint32_t gen = ++gen_;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = uint64_t(gen) << 32 | uint32_t(fd);
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0)
        return make_error(std::string("epoll_ctl: ") + strerror(errno));
    watches_[fd] = Watch{gen, std::move(fn)};
    return {};
}

void Loop::modify(int fd, uint32_t events) {
    auto it = watches_.find(fd);
    if (it == watches_.end()) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = uint64_t(it->second.gen) << 32 | uint32_t(fd);
    epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
}

void Loop::unwatch(int fd) {
    if (watches_.erase(fd)) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

void Loop::run_timers() {
    const Ms t = now();
    // Fire in order; a timer added by a callback for `t` or earlier runs in this pass too.
    while (!timers_.empty() && timers_.begin()->first.first <= t) {
        auto node = timers_.extract(timers_.begin());
        node.mapped()();
    }
    arm();
}

void Loop::run_once(int timeout_ms) {
    epoll_event evs[64];
    int n = epoll_wait(epoll_fd_, evs, 64, timeout_ms);
    for (int i = 0; i < n; ++i) {
        const uint64_t tag = evs[i].data.u64;
        if (tag == kTimerTag) {
            uint64_t expirations = 0;
            (void)!read(timer_fd_, &expirations, sizeof expirations);
            armed_for_ = -1;  // fired: arm() must set it again
            continue;
        }
        const int fd = static_cast<int>(uint32_t(tag));
        auto it = watches_.find(fd);
        if (it == watches_.end() || it->second.gen != uint32_t(tag >> 32)) continue;
        auto fn = it->second.fn;  // the callback may unwatch (and destroy its owner)
        fn(evs[i].events);
    }
    run_timers();
}

}  // namespace xvs::ctl::health
