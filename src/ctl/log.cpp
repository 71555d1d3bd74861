// stderr logger: "2026-11-30T05:10:00Z xvsd[123] info: message".
#include "ctl/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace xvs::ctl {

namespace {
std::atomic<LogLevel> g_level{LogLevel::Info};
std::mutex g_mutex;
}  // namespace

void log_set_level(LogLevel level) { g_level = level; }

void log_write(LogLevel level, std::string_view msg) {
    if (level < g_level.load()) return;
    char ts[32];
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    std::lock_guard lock(g_mutex);
    std::fprintf(stderr, "%s xvsd[%d] %.*s: %.*s\n", ts, getpid(), int(to_string(level).size()),
                 to_string(level).data(), int(msg.size()), msg.data());
    std::fflush(stderr);
}

}  // namespace xvs::ctl
