// SystemdNotify, see ctl/systemd_notify.h.
#include "ctl/systemd_notify.h"

#include <systemd/sd-daemon.h>
#include <time.h>

#include <cstdlib>

#include "ctl/log.h"

namespace xvs::ctl {

SystemdNotify::SystemdNotify() {
    const char* socket = std::getenv("NOTIFY_SOCKET");
    active_ = socket != nullptr && *socket != '\0';
    if (active_) socket_ = socket;
    uint64_t usec = 0;
    // > 0: the watchdog is on for this process (WATCHDOG_PID is ours or unset).
    if (active_ && sd_watchdog_enabled(0, &usec) > 0) watchdog_ = std::chrono::microseconds(usec);
}

void SystemdNotify::send(const std::string& state) {
    if (!active_) return;
    const int r = sd_notify(0, state.c_str());
    if (r > 0) {
        ++sent_;
    } else if (r < 0) {
        log_warning("systemd notify '" + state.substr(0, state.find('\n')) + "' failed: error " +
                    std::to_string(-r) + " (NOTIFY_SOCKET " + socket_ + ")");
    }
}

void SystemdNotify::ready(const std::string& status) {
    send("READY=1\nSTATUS=" + status);
}

void SystemdNotify::reloading() {
    // MONOTONIC_USEC lets Type=notify-reload managers match the reload to its request.
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const uint64_t usec = uint64_t(ts.tv_sec) * 1'000'000 + uint64_t(ts.tv_nsec) / 1000;
    send("RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=" + std::to_string(usec));
}

void SystemdNotify::stopping() {
    send("STOPPING=1\nSTATUS=stopping");
}

void SystemdNotify::watchdog_tick(std::chrono::steady_clock::time_point now) {
    if (watchdog_.count() == 0 || now - last_ping_ < watchdog_ / 2) return;
    last_ping_ = now;
    send("WATCHDOG=1");
}

}  // namespace xvs::ctl
