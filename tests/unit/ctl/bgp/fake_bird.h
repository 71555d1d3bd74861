// A fake BIRD control socket for the tests of ctl/bgp/: a thread that accepts connections on a
// unix socket, greets each as BIRD does, records the command line it gets and answers it with
// the reply the test set (raw bytes, so replies can come in pieces or malformed).
#pragma once

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

namespace xvs::ctl::bgp::test {

class FakeBird {
  public:
    FakeBird() {
        char dir[] = "/tmp/xvs_fake_bird_XXXXXX";
        dir_ = mkdtemp(dir);
        path_ = dir_ + "/bird.ctl";
        listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path, path_.data(), path_.size());
        ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
        ::listen(listen_fd_, 8);
        thread_ = std::thread([this] { serve(); });
    }
    ~FakeBird() {
        stop_ = true;
        ::shutdown(listen_fd_, SHUT_RDWR);
        thread_.join();
        ::close(listen_fd_);
        ::unlink(path_.c_str());
        ::rmdir(dir_.c_str());
    }
    const std::string& path() const { return path_; }
    const std::string& dir() const { return dir_; }
    void set_greeting(std::string g) {
        std::lock_guard lock(mu_);
        greeting_ = std::move(g);
    }
    void set_reply(std::string r) {
        std::lock_guard lock(mu_);
        reply_ = std::move(r);
    }
    std::vector<std::string> commands() {
        std::lock_guard lock(mu_);
        return commands_;
    }

  private:
    void serve() {
        while (!stop_) {
            int fd = ::accept(listen_fd_, nullptr, nullptr);
            if (fd < 0) return;
            std::string greeting, reply;
            {
                std::lock_guard lock(mu_);
                greeting = greeting_;
                reply = reply_;
            }
            send_all(fd, greeting);
            std::string line;
            char c = 0;
            while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
            {
                std::lock_guard lock(mu_);
                commands_.push_back(line);
            }
            // The reply in two pieces, split mid-line, as a stream socket may deliver it.
            const size_t half = reply.size() / 2;
            send_all(fd, reply.substr(0, half));
            usleep(2000);
            send_all(fd, reply.substr(half));
            ::close(fd);
        }
    }
    static void send_all(int fd, const std::string& s) {
        size_t done = 0;
        while (done < s.size()) {
            ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
            if (n <= 0) return;
            done += static_cast<size_t>(n);
        }
    }

    std::string dir_, path_;
    int listen_fd_ = -1;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    std::mutex mu_;
    std::string greeting_ = "0001 BIRD 2.0.12 ready.\n";
    std::string reply_ = "0002-Reading configuration from /etc/bird/bird.conf\n0003 Reconfigured\n";
    std::vector<std::string> commands_;
};

}  // namespace xvs::ctl::bgp::test
