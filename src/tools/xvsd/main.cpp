// xvsd — the xvs director daemon.
//   xvsd [-f FILE]      run in the foreground (default /etc/xvs/xvs.conf)
//   xvsd -t [-f FILE]   check the configuration and exit (0 ok, 1 errors as file:line: message)
#include <cstring>
#include <iostream>
#include <string>

#include "ctl/config_check.h"
#include "ctl/daemon.h"
#include "ctl/log.h"

namespace {
void usage(std::ostream& os) {
    os << "Usage: xvsd [-t] [-f CONFIG]\n"
          "  -f, --config FILE   configuration file (default /etc/xvs/xvs.conf)\n"
          "  -t, --test          check the configuration and exit\n"
          "  -h, --help          this help\n"
          "  -v, --version       print the version\n";
}
}  // namespace

int main(int argc, char** argv) {
    std::string config = "/etc/xvs/xvs.conf";
    bool test = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if ((a == "-f" || a == "--config") && i + 1 < argc) {
            config = argv[++i];
        } else if (a == "-t" || a == "--test") {
            test = true;
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
    xvs::ctl::Daemon daemon(config);
    if (auto r = daemon.start(); !r) {
        xvs::ctl::log_error("cannot start:\n" + r.error());
        return 1;
    }
    return daemon.run();
}
