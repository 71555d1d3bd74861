// Tests for src/ctl/config_check.cpp: `xvsd -t -f FILE` exit codes and output.
#include "ctl/config_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace xvs::ctl {
namespace {

class ConfigCheck : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("xvs-config-check-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    std::string write(const std::string& text) {
        std::string path = (dir_ / "xvs.conf").string();
        std::ofstream(path) << text;
        return path;
    }
    int run(const std::string& path) { return config_check_main(path, out_, err_); }

    std::filesystem::path dir_;
    std::ostringstream out_;
    std::ostringstream err_;
};

TEST_F(ConfigCheck, ValidConfigReturnsZeroAndSaysOk) {
    std::string path = write(R"(netif_defs { port p0 { dev net_ring0 } }
local_address_group lips { 10.0.2.10 p0 }
virtual_server 10.0.1.10 80 {
    protocol TCP
    laddr_group_name lips
    real_server 10.0.2.2 80 { TCP_CHECK { connect_timeout 3 } }
}
)");
    EXPECT_EQ(run(path), 0);
    EXPECT_EQ(out_.str(), "configuration file " + path + " is ok\n");
    EXPECT_EQ(err_.str(), "warning: " + path +
                              ":6: TCP_CHECK: health checking is not yet supported; real server "
                              "stays up\n");
}

TEST_F(ConfigCheck, CleanConfigPrintsNoWarnings) {
    std::string path = write("worker_defs { workers 2 }\n");
    EXPECT_EQ(run(path), 0);
    EXPECT_EQ(out_.str(), "configuration file " + path + " is ok\n");
    EXPECT_EQ(err_.str(), "");
}

TEST_F(ConfigCheck, ErrorsReturnOneWithEveryLine) {
    std::string path = write("worker_defs { workers 0 }\n\nglobal_defs { log_level loud }\n");
    EXPECT_EQ(run(path), 1);
    EXPECT_EQ(out_.str(), "");
    EXPECT_EQ(err_.str(), path + ":1: workers: 0 out of range 1..16\n" + path +
                              ":3: log_level: bad value 'loud' (debug|info|warning|error)\n"
                              "configuration file " +
                              path + " has 2 errors\n");
}

TEST_F(ConfigCheck, MissingFileReturnsOne) {
    std::string path = (dir_ / "absent.conf").string();
    EXPECT_EQ(run(path), 1);
    EXPECT_EQ(out_.str(), "");
    EXPECT_EQ(err_.str(), path +
                              ": cannot read configuration: No such file or directory\n"
                              "configuration file " +
                              path + " has 1 error\n");
}

}  // namespace
}  // namespace xvs::ctl
