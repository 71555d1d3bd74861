// Control-plane logging with a level, to stderr and/or syslog (journald reads syslog's
// /dev/log too). Never used on the packet path. Sinks (README "Logs"): syslog when xvsd runs
// as a daemon or a facility is given (-S/--log-facility, or global_defs log_facility); stderr
// otherwise, and always with -l/--log-console. Lines that a flood could repeat go through
// log_limited(), a token bucket per message kind (ctl/log_limit.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "ctl/config.h"
#include "ctl/log_limit.h"

namespace xvs::ctl {

// What the command line asks for (xvsd's main, before anything is logged).
struct LogSinks {
    bool daemon = false;           // -d: no terminal, syslog by default
    bool console = false;          // -l/--log-console: stderr as well as syslog
    std::optional<int> facility;   // -S/--log-facility: wins over the config's log_facility
};

void log_init(const LogSinks& sinks);
// global_defs log_facility, at start and at every reload (none: the command line's choice).
void log_config_facility(std::optional<int> facility);
// openlog() again: the EAL's init opens syslog with its own ident and facility (glibc keeps
// one syslog connection per process), so xvsd takes it back once the EAL has started.
void log_syslog_reopen();
// "stderr", "syslog facility local0", "syslog facility daemon and stderr": for the startup line.
std::string log_sinks_text();

// "daemon", "local0".."local7", or a digit 0..7 for local0..local7 (keepalived's -S): the
// syslog facility value (LOG_DAEMON, LOG_LOCAL0, ...).
Result<int> log_facility_parse(std::string_view text);
std::string_view log_facility_name(int facility);

void log_set_level(LogLevel level);
void log_write(LogLevel level, std::string_view msg);
inline void log_debug(std::string_view m) { log_write(LogLevel::Debug, m); }
inline void log_info(std::string_view m) { log_write(LogLevel::Info, m); }
inline void log_warning(std::string_view m) { log_write(LogLevel::Warning, m); }
inline void log_error(std::string_view m) { log_write(LogLevel::Error, m); }

// A line a flood could repeat, limited per `kind` (burst 10, then 1 a second). Returns
// whether it was written; before the first line written after a suppression, a line
// "KIND: N similar messages suppressed" says how many were not.
bool log_limited(std::string_view kind, LogLevel level, std::string_view msg);
// The control loop's tick: reports suppressed counts of kinds that went quiet.
void log_tick();

}  // namespace xvs::ctl
