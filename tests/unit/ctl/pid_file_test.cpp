// Tests for src/ctl/pid_file.cpp: the pid written and locked, a second holder refused with
// the running pid, a stale (unlocked) file taken over, the file removed when released (and
// not when it is no longer ours). flock locks belong to the open file description, so a
// second acquire in this same process contends exactly as a second xvsd would.
#include "ctl/pid_file.h"

#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>

namespace xvs::ctl {
namespace {

class PidFileTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("xvs-pidfile-test-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        path_ = (dir_ / "xvsd.pid").string();
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string content() const {
        std::ifstream in(path_);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    size_t files() const {
        return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir_),
                                                 std::filesystem::directory_iterator()));
    }
    std::filesystem::path dir_;
    std::string path_;
};

TEST_F(PidFileTest, WritesThePidLockedAndRemovesItOnRelease) {
    {
        std::optional<pid_t> stale;
        auto held = PidFile::acquire(path_, 4242, &stale);
        ASSERT_TRUE(held) << held.error();
        EXPECT_FALSE(stale);
        EXPECT_EQ(content(), "4242\n");
        EXPECT_EQ(files(), 1u);  // no temporary file left behind
        // Somebody else's flock on the file fails: it is held.
        const int fd = ::open(path_.c_str(), O_RDONLY);
        ASSERT_GE(fd, 0);
        EXPECT_NE(::flock(fd, LOCK_SH | LOCK_NB), 0);
        ::close(fd);
    }
    EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(PidFileTest, SecondHolderRefusedWithTheRunningPid) {
    auto first = PidFile::acquire(path_, 1111);
    ASSERT_TRUE(first) << first.error();
    auto second = PidFile::acquire(path_, 2222);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error(), "xvsd already running (pid 1111, " + path_ + ")");
    EXPECT_EQ(content(), "1111\n");  // untouched by the refused one
}

TEST_F(PidFileTest, StaleFileTakenOver) {
    {
        std::ofstream out(path_);
        out << "31337\n";  // a crashed xvsd's: nobody holds it
    }
    std::optional<pid_t> stale;
    auto held = PidFile::acquire(path_, 5555, &stale);
    ASSERT_TRUE(held) << held.error();
    EXPECT_EQ(stale, std::optional<pid_t>(31337));
    EXPECT_EQ(content(), "5555\n");
    EXPECT_FALSE(PidFile::acquire(path_, 6666));  // and now it is held again
}

TEST_F(PidFileTest, NotRemovedWhenNoLongerOurs) {
    {
        auto held = PidFile::acquire(path_, 7777);
        ASSERT_TRUE(held) << held.error();
        std::filesystem::remove(path_);
        std::ofstream out(path_);
        out << "8888\n";  // an operator (or another xvsd with --pid-file) wrote a new one
    }
    EXPECT_EQ(content(), "8888\n");
}

TEST_F(PidFileTest, MissingDirectoryIsAnError) {
    const std::string bad = (dir_ / "no" / "such" / "xvsd.pid").string();
    auto held = PidFile::acquire(bad, 1);
    ASSERT_FALSE(held);
    EXPECT_EQ(held.error(), "pid file " + bad +
                                ": No such file or directory (is its directory there and "
                                "writable?)");
}

}  // namespace
}  // namespace xvs::ctl
