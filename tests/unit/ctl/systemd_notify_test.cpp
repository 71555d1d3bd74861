// SystemdNotify against a datagram socket of the test's own standing in for systemd's
// NOTIFY_SOCKET: the messages and their order, the watchdog's half period, and nothing at all
// without NOTIFY_SOCKET.
#include "ctl/systemd_notify.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace xvs::ctl {
namespace {

class SystemdNotifyTest : public ::testing::Test {
protected:
    void SetUp() override {
        char dir[] = "/tmp/xvs-notify.XXXXXX";
        ASSERT_NE(mkdtemp(dir), nullptr);
        dir_ = dir;
        path_ = dir_ + "/notify.sock";
        fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        ASSERT_GE(fd_, 0);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        path_.copy(sa.sun_path, sizeof(sa.sun_path) - 1);
        ASSERT_EQ(bind(fd_, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)), 0);
        setenv("NOTIFY_SOCKET", path_.c_str(), 1);
        unsetenv("WATCHDOG_PID");
        unsetenv("WATCHDOG_USEC");
    }
    void TearDown() override {
        unsetenv("NOTIFY_SOCKET");
        unsetenv("WATCHDOG_USEC");
        if (fd_ >= 0) close(fd_);
        unlink(path_.c_str());
        rmdir(dir_.c_str());
    }
    // The next message, or "" when none is waiting.
    std::string next() {
        char buf[512];
        const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
        return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
    }

    std::string dir_, path_;
    int fd_ = -1;
};

TEST_F(SystemdNotifyTest, ReadyReloadingStoppingInOrder) {
    SystemdNotify n;
    ASSERT_TRUE(n.active());
    EXPECT_EQ(n.watchdog().count(), 0);
    n.ready("running: 2 virtual services, 1 workers");
    n.reloading();
    n.ready("running: 3 virtual services, 1 workers");
    n.stopping();
    EXPECT_EQ(next(), "READY=1\nSTATUS=running: 2 virtual services, 1 workers");
    const std::string reloading = next();
    EXPECT_EQ(reloading.rfind("RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=", 0), 0u) << reloading;
    EXPECT_EQ(next(), "READY=1\nSTATUS=running: 3 virtual services, 1 workers");
    EXPECT_EQ(next(), "STOPPING=1\nSTATUS=stopping");
    EXPECT_EQ(next(), "");
    EXPECT_EQ(n.sent(), 4u);
}

TEST_F(SystemdNotifyTest, WatchdogPingsEveryHalfPeriod) {
    setenv("WATCHDOG_USEC", "2000000", 1);
    SystemdNotify n;
    EXPECT_EQ(n.watchdog(), std::chrono::seconds(2));
    const auto t0 = std::chrono::steady_clock::now();
    n.watchdog_tick(t0);  // the first at once
    n.watchdog_tick(t0 + std::chrono::milliseconds(999));
    n.watchdog_tick(t0 + std::chrono::milliseconds(1000));
    n.watchdog_tick(t0 + std::chrono::milliseconds(1500));
    n.watchdog_tick(t0 + std::chrono::milliseconds(2100));
    EXPECT_EQ(next(), "WATCHDOG=1");
    EXPECT_EQ(next(), "WATCHDOG=1");
    EXPECT_EQ(next(), "WATCHDOG=1");
    EXPECT_EQ(next(), "");
}

TEST_F(SystemdNotifyTest, WatchdogOfAnotherPidIsNotOurs) {
    setenv("WATCHDOG_USEC", "2000000", 1);
    setenv("WATCHDOG_PID", std::to_string(getpid() + 1).c_str(), 1);
    SystemdNotify n;
    EXPECT_EQ(n.watchdog().count(), 0);
    n.watchdog_tick(std::chrono::steady_clock::now());
    EXPECT_EQ(next(), "");
    unsetenv("WATCHDOG_PID");
}

TEST_F(SystemdNotifyTest, WithoutNotifySocketNothingIsSent) {
    unsetenv("NOTIFY_SOCKET");
    setenv("WATCHDOG_USEC", "2000000", 1);
    SystemdNotify n;
    EXPECT_FALSE(n.active());
    EXPECT_EQ(n.watchdog().count(), 0);
    n.ready("x");
    n.watchdog_tick(std::chrono::steady_clock::now());
    n.stopping();
    EXPECT_EQ(next(), "");
    EXPECT_EQ(n.sent(), 0u);
}

}  // namespace
}  // namespace xvs::ctl
