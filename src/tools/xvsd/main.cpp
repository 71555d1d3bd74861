// xvsd — the xvs director daemon.
//   xvsd [-f FILE]      run in the foreground (default /etc/xvs/xvs.conf)
//   xvsd -d [--pid-file FILE]   run as a daemon; returns once it is ready (or failed)
//   xvsd -t [-f FILE]   check the configuration and exit (0 ok, 1 errors as file:line: message)
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "ctl/config_check.h"
#include "ctl/daemon.h"
#include "ctl/daemonize.h"
#include "ctl/log.h"
#include "ctl/pid_file.h"

namespace {
void usage(std::ostream& os) {
    os << "Usage: xvsd [-t] [-d] [-f CONFIG] [--pid-file FILE] [-S FACILITY] [-l]\n"
          "  -f, --config FILE        configuration file (default /etc/xvs/xvs.conf)\n"
          "  -t, --test               check the configuration and exit\n"
          "  -d, --daemon             detach (returns once ready); logs to syslog\n"
          "      --pid-file FILE      write and lock a pid file (default /run/xvsd.pid with -d)\n"
          "  -S, --log-facility F     log to syslog: daemon, local0..local7, or 0..7 for localN\n"
          "                           (wins over the config's log_facility)\n"
          "  -l, --log-console        log to stderr as well as syslog\n"
          "  -h, --help               this help\n"
          "  -v, --version            print the version\n";
}

// Daemon mode runs in /: paths from the command line are made absolute first.
std::string absolute(const std::string& path) {
    std::error_code ec;
    auto abs = std::filesystem::absolute(path, ec);
    return ec ? path : abs.string();
}
}  // namespace

int main(int argc, char** argv) {
    std::string config = "/etc/xvs/xvs.conf";
    bool test = false;
    std::optional<std::string> pid_path;
    xvs::ctl::LogSinks sinks;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if ((a == "-f" || a == "--config") && has_value) {
            config = argv[++i];
        } else if (a == "-t" || a == "--test") {
            test = true;
        } else if (a == "-d" || a == "--daemon") {
            sinks.daemon = true;
        } else if (a == "--pid-file" && has_value) {
            pid_path = argv[++i];
        } else if ((a == "-S" || a == "--log-facility") && has_value) {
            auto facility = xvs::ctl::log_facility_parse(argv[++i]);
            if (!facility) {
                std::cerr << "xvsd: " << a << ": " << facility.error() << "\n";
                return 2;
            }
            sinks.facility = *facility;
        } else if (a == "-l" || a == "--log-console") {
            sinks.console = true;
        } else if (a == "-h" || a == "--help") {
            usage(std::cout);
            return 0;
        } else if (a == "-v" || a == "--version") {
            std::cout << "xvsd 0.1.0\n";
            return 0;
        } else {
            std::cerr << "xvsd: unknown argument '" << a << "'\n";
            usage(std::cerr);
            return 2;
        }
    }
    if (test) return xvs::ctl::config_check_main(config, std::cout, std::cerr);

    xvs::ctl::log_init(sinks);
    xvs::ctl::Readiness readiness;  // foreground: nobody waits
    if (sinks.daemon) {
        config = absolute(config);
        pid_path = absolute(pid_path.value_or("/run/xvsd.pid"));
        auto child = xvs::ctl::daemonize();  // only the daemon returns
        if (!child) {
            std::cerr << "xvsd: " << child.error() << "\n";
            return 1;
        }
        readiness = std::move(*child);
    }
    std::optional<xvs::ctl::PidFile> pid_file;  // outlives the daemon: removed last
    if (pid_path) {
        std::optional<pid_t> stale;
        auto held = xvs::ctl::PidFile::acquire(*pid_path, getpid(), &stale);
        if (!held) {
            xvs::ctl::log_error(held.error());
            readiness.failed(held.error(), 1);
            return 1;
        }
        if (stale)
            xvs::ctl::log_info("pid file " + *pid_path + ": taken over from pid " +
                               std::to_string(*stale) + ", which no longer holds it");
        pid_file.emplace(std::move(*held));
    }
    xvs::ctl::Daemon daemon(config);
    if (auto r = daemon.start(); !r) {
        xvs::ctl::log_error("cannot start:\n" + r.error());
        readiness.failed("cannot start:\n" + r.error(), 1);
        return 1;
    }
    return daemon.run([&readiness] { readiness.ready(); });
}
