// xvsd under systemd (Type=notify): readiness, reload and stop reported to the service
// manager, and the watchdog fed from the control thread's loop. Uses libsystemd's sd_notify
// (Debian's libsystemd-dev): the protocol is small, but the library already handles the
// socket kinds (path, abstract, vsock) and is what every notify service links. Without
// NOTIFY_SOCKET in the environment (run by hand, in tests) every call is a no-op.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace xvs::ctl {

class SystemdNotify {
public:
    // Reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID once (sd_watchdog_enabled).
    SystemdNotify();

    bool active() const { return active_; }
    // The watchdog period systemd expects (WatchdogSec=), zero when none.
    std::chrono::microseconds watchdog() const { return watchdog_; }

    // READY=1 with a STATUS= line: startup done (after the control socket listens).
    void ready(const std::string& status);
    // RELOADING=1 before a SIGHUP reload; ready() again after it, whatever its outcome.
    void reloading();
    // STOPPING=1 when shutdown starts.
    void stopping();
    // WATCHDOG=1 when half the period has passed since the last one (called every loop).
    void watchdog_tick(std::chrono::steady_clock::time_point now);

    // Messages sent so far (what `xvsctl` could show; tests read it).
    uint64_t sent() const { return sent_; }

private:
    void send(const std::string& state);

    bool active_ = false;
    std::string socket_;  // NOTIFY_SOCKET, for messages
    std::chrono::microseconds watchdog_{0};
    std::chrono::steady_clock::time_point last_ping_{};
    uint64_t sent_ = 0;
};

}  // namespace xvs::ctl
