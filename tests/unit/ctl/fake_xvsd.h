// A fake xvsd for ctl tests: a thread serving a unix socket in a unique temp dir answers each
// connection with the next canned reply ({"ok":true} once they run out) and records every
// request, so tests check both the JSON on the wire and what the client makes of the reply.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace xvs::ctl::fake {

// Serves one canned reply per connection, in order; records every request line.
class FakeXvsd {
public:
    explicit FakeXvsd(std::vector<std::string> replies) : replies_(std::move(replies)) {
        char tmpl[] = "/tmp/xvs_ctl_test.XXXXXX";
        dir_ = mkdtemp(tmpl);
        path_ = dir_ + "/xvs.sock";
        fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        EXPECT_EQ(::listen(fd_, 8), 0);
        thread_ = std::thread([this] { serve(); });
    }
    ~FakeXvsd() {
        stop_ = true;
        thread_.join();
        ::close(fd_);
        ::unlink(path_.c_str());
        ::rmdir(dir_.c_str());
    }
    const std::string& path() const { return path_; }
    std::vector<nlohmann::json> requests() {
        std::lock_guard lock(mu_);
        return requests_;
    }

private:
    void serve() {
        size_t next = 0;
        while (!stop_) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            int conn = ::accept(fd_, nullptr, nullptr);
            if (conn < 0) continue;
            std::string line;
            char buf[4096];
            while (line.find('\n') == std::string::npos) {
                ssize_t n = ::read(conn, buf, sizeof buf);
                if (n <= 0) break;
                line.append(buf, static_cast<size_t>(n));
            }
            {
                std::lock_guard lock(mu_);
                requests_.push_back(nlohmann::json::parse(line.substr(0, line.find('\n')), nullptr, false));
            }
            std::string reply = next < replies_.size() ? replies_[next++] : R"({"ok":true})";
            // The protocol puts a reply on one line: compact pretty-printed fixtures.
            auto parsed = nlohmann::json::parse(reply, nullptr, false);
            if (!parsed.is_discarded()) reply = parsed.dump();
            reply += "\n";
            (void)!::write(conn, reply.data(), reply.size());
            ::close(conn);
        }
    }

    std::vector<std::string> replies_;
    std::string dir_, path_;
    int fd_ = -1;
    std::atomic<bool> stop_{false};
    std::mutex mu_;
    std::vector<nlohmann::json> requests_;
    std::thread thread_;
};

}  // namespace xvs::ctl::fake
