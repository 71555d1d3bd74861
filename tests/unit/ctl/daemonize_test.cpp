// Tests for src/ctl/daemonize.cpp: `xvsd -d`'s parent exits 0 once the daemon is ready, with
// the daemon's status and message when it failed, and says so when it died first. Each case
// runs in a forked process standing for xvsd (daemonize() exits in the parent).
#include "ctl/daemonize.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>

namespace xvs::ctl {
namespace {

struct Outcome {
    int status = -1;     // the parent's exit status
    std::string stderr_text;
};

// Forks "xvsd", which daemonizes and lets `daemon` act in the daemon.
Outcome run_xvsd(const std::function<void(Readiness&)>& daemon) {
    int err[2];
    EXPECT_EQ(::pipe(err), 0);
    const pid_t xvsd = ::fork();
    if (xvsd == 0) {
        ::dup2(err[1], 2);
        ::close(err[0]);
        ::close(err[1]);
        auto r = daemonize();
        if (!r) std::_Exit(99);
        daemon(*r);  // in the daemon: stdio is /dev/null now
        std::_Exit(0);
    }
    ::close(err[1]);
    Outcome out;
    char buf[512];
    for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) out.stderr_text.append(buf, size_t(n));
    ::close(err[0]);
    int ws = 0;
    ::waitpid(xvsd, &ws, 0);
    out.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    return out;
}

TEST(Daemonize, ParentExitsZeroOnceReady) {
    const Outcome out = run_xvsd([](Readiness& r) {
        if (::getsid(0) != ::getpid()) std::_Exit(3);  // a session of its own
        char cwd[8];
        if (!::getcwd(cwd, sizeof cwd) || std::string(cwd) != "/") std::_Exit(4);
        r.ready();
    });
    EXPECT_EQ(out.status, 0);
    EXPECT_EQ(out.stderr_text, "");
}

TEST(Daemonize, ParentReportsTheDaemonsFailure) {
    const Outcome out = run_xvsd(
        [](Readiness& r) { r.failed("xvsd already running (pid 12, /run/xvsd.pid)", 7); });
    EXPECT_EQ(out.status, 7);
    EXPECT_EQ(out.stderr_text, "xvsd: xvsd already running (pid 12, /run/xvsd.pid)\n");
}

TEST(Daemonize, ParentReportsADaemonThatDiedUnready) {
    const Outcome out = run_xvsd([](Readiness&) { std::_Exit(5); });
    EXPECT_EQ(out.status, 5);
    EXPECT_NE(out.stderr_text.find("exited with status 5 before it was ready"), std::string::npos)
        << out.stderr_text;
}

}  // namespace
}  // namespace xvs::ctl
