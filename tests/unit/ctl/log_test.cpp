// Tests for src/ctl/log.cpp: syslog facility names (log_facility, -S), and the sink choice
// (stderr in the foreground, syslog with -d or a facility, both with -l).
#include "ctl/log.h"

#include <gtest/gtest.h>
#include <syslog.h>

namespace xvs::ctl {
namespace {

TEST(LogFacility, NamesAndKeepalivedDigits) {
    EXPECT_EQ(*log_facility_parse("daemon"), LOG_DAEMON);
    EXPECT_EQ(*log_facility_parse("local0"), LOG_LOCAL0);
    EXPECT_EQ(*log_facility_parse("local7"), LOG_LOCAL7);
    EXPECT_EQ(*log_facility_parse("0"), LOG_LOCAL0);  // keepalived's -S 0..7
    EXPECT_EQ(*log_facility_parse("5"), LOG_LOCAL5);
    for (const char* bad : {"", "8", "local8", "kern", "LOCAL0", "07", "user"}) {
        auto r = log_facility_parse(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error(), "'" + std::string(bad) +
                                 "' is not a syslog facility: use daemon, local0..local7 (or 0..7 "
                                 "for local0..local7)");
    }
    EXPECT_EQ(log_facility_name(LOG_LOCAL3), "local3");
    EXPECT_EQ(log_facility_name(LOG_DAEMON), "daemon");
}

TEST(LogSinks, ForegroundStderrDaemonSyslogFlagWinsOverConfig) {
    log_init({});
    EXPECT_EQ(log_sinks_text(), "stderr");
    log_config_facility(LOG_LOCAL2);  // log_facility in the config: syslog instead
    EXPECT_EQ(log_sinks_text(), "syslog facility local2");
    log_init({.daemon = false, .console = true, .facility = LOG_LOCAL5});  // -S 5 -l
    EXPECT_EQ(log_sinks_text(), "syslog facility local5 and stderr");
    log_config_facility(std::nullopt);
    log_init({.daemon = true, .console = false, .facility = std::nullopt});  // -d
    EXPECT_EQ(log_sinks_text(), "syslog facility daemon");
    log_config_facility(LOG_LOCAL1);
    EXPECT_EQ(log_sinks_text(), "syslog facility local1");
    log_config_facility(std::nullopt);
    log_init({});
    EXPECT_EQ(log_sinks_text(), "stderr");
}

}  // namespace
}  // namespace xvs::ctl
