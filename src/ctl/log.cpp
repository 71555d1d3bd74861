// The logger: "2026-11-30T05:10:00Z xvsd[123] info: message" on stderr; the message alone on
// syslog(3), its severity in the priority, one record per line of a multi-line message.
// syslog(3) rather than sd_journal_send: it reaches journald through /dev/log as well as
// rsyslog or any other syslog daemon, and needs nothing beyond libc.
#include "ctl/log.h"

#include <syslog.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <utility>

namespace xvs::ctl {

namespace {

constexpr std::array<std::pair<std::string_view, int>, 9> kFacilities = {{
    {"daemon", LOG_DAEMON},
    {"local0", LOG_LOCAL0},
    {"local1", LOG_LOCAL1},
    {"local2", LOG_LOCAL2},
    {"local3", LOG_LOCAL3},
    {"local4", LOG_LOCAL4},
    {"local5", LOG_LOCAL5},
    {"local6", LOG_LOCAL6},
    {"local7", LOG_LOCAL7},
}};

std::atomic<LogLevel> g_level{LogLevel::Info};

struct Sinks {
    std::mutex mutex;
    LogSinks cli;
    std::optional<int> config_facility;
    bool console = true;
    std::optional<int> syslog;  // the facility openlog() was given
    LogRateLimit limit;
};

Sinks& sinks() {
    static Sinks s;
    return s;
}

int severity(LogLevel level) {
    switch (level) {
        case LogLevel::Debug:
            return LOG_DEBUG;
        case LogLevel::Info:
            return LOG_INFO;
        case LogLevel::Warning:
            return LOG_WARNING;
        case LogLevel::Error:
            return LOG_ERR;
    }
    return LOG_INFO;
}

// Decides the sinks from the command line and the config; with s.mutex held.
void sinks_apply(Sinks& s) {
    std::optional<int> facility = s.cli.facility ? s.cli.facility : s.config_facility;
    if (!facility && s.cli.daemon) facility = LOG_DAEMON;
    s.console = !facility || s.cli.console;
    if (facility == s.syslog) return;
    if (s.syslog) closelog();
    s.syslog = facility;
    // LOG_NDELAY: connect now, before a chroot or a full descriptor table could stop it.
    if (facility) openlog("xvsd", LOG_PID | LOG_NDELAY, *facility);
}

// With s.mutex held.
void emit(Sinks& s, LogLevel level, std::string_view msg) {
    if (s.console) {
        char ts[32];
        std::time_t now = std::time(nullptr);
        std::tm tm{};
        gmtime_r(&now, &tm);
        std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
        std::fprintf(stderr, "%s xvsd[%d] %.*s: %.*s\n", ts, getpid(), int(to_string(level).size()),
                     to_string(level).data(), int(msg.size()), msg.data());
        std::fflush(stderr);
    }
    if (s.syslog) {
        for (size_t pos = 0; pos <= msg.size();) {
            size_t nl = msg.find('\n', pos);
            if (nl == std::string_view::npos) nl = msg.size();
            const std::string_view line = msg.substr(pos, nl - pos);
            if (!line.empty()) syslog(severity(level), "%.*s", int(line.size()), line.data());
            pos = nl + 1;
        }
    }
}

}  // namespace

void log_init(const LogSinks& cli) {
    Sinks& s = sinks();
    std::lock_guard lock(s.mutex);
    s.cli = cli;
    sinks_apply(s);
}

void log_config_facility(std::optional<int> facility) {
    Sinks& s = sinks();
    std::lock_guard lock(s.mutex);
    s.config_facility = facility;
    sinks_apply(s);
}

void log_syslog_reopen() {
    Sinks& s = sinks();
    std::lock_guard lock(s.mutex);
    if (s.syslog) openlog("xvsd", LOG_PID | LOG_NDELAY, *s.syslog);
}

std::string log_sinks_text() {
    Sinks& s = sinks();
    std::lock_guard lock(s.mutex);
    if (!s.syslog) return "stderr";
    std::string text = "syslog facility " + std::string(log_facility_name(*s.syslog));
    if (s.console) text += " and stderr";
    return text;
}

Result<int> log_facility_parse(std::string_view text) {
    for (const auto& [name, value] : kFacilities)
        if (text == name) return value;
    if (text.size() == 1 && text[0] >= '0' && text[0] <= '7')
        return kFacilities[size_t(text[0] - '0') + 1].second;
    return make_error("'" + std::string(text) +
                      "' is not a syslog facility: use daemon, local0..local7 (or 0..7 for "
                      "local0..local7)");
}

std::string_view log_facility_name(int facility) {
    for (const auto& [name, value] : kFacilities)
        if (facility == value) return name;
    return "?";
}

void log_set_level(LogLevel level) { g_level = level; }

void log_write(LogLevel level, std::string_view msg) {
    if (level < g_level.load()) return;
    Sinks& s = sinks();
    std::lock_guard lock(s.mutex);
    emit(s, level, msg);
}

bool log_limited(std::string_view kind, LogLevel level, std::string_view msg) {
    if (level < g_level.load()) return false;
    Sinks& s = sinks();
    std::lock_guard lock(s.mutex);
    const auto verdict = s.limit.admit(kind, LogRateLimit::Clock::now());
    if (!verdict.write) return false;
    if (verdict.suppressed)
        emit(s, LogLevel::Warning,
             std::string(kind) + ": " + log_suppressed_text(verdict.suppressed, s.limit.params()));
    emit(s, level, msg);
    return true;
}

void log_tick() {
    Sinks& s = sinks();
    std::lock_guard lock(s.mutex);
    for (const auto& r : s.limit.take_resumed(LogRateLimit::Clock::now()))
        emit(s, LogLevel::Warning, r.kind + ": " + log_suppressed_text(r.suppressed, s.limit.params()));
}

}  // namespace xvs::ctl
