// Local test servers for the checker tests, each on 127.0.0.1 with a kernel-chosen port and
// its own thread: a TCP server running a handler per connection (HTTP, TLS, SMTP), and a UDP
// server answering each datagram with what a function makes of it (echo, DNS). Stopped and
// joined by their destructors.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace xvs::ctl::health::test {

inline int bound_socket(int type, uint16_t& port) {
    int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
    socklen_t len = sizeof sin;
    getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
    port = ntohs(sin.sin_port);
    return fd;
}

// Reads until `until` appears or the peer closes (bounded by 2 s).
inline std::string read_until(int fd, std::string_view until) {
    std::string got;
    char buf[4096];
    for (int i = 0; i < 200 && got.find(until) == std::string::npos; ++i) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 10) <= 0) continue;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
    }
    return got;
}

inline void send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n <= 0) return;
        data.remove_prefix(static_cast<size_t>(n));
    }
}

class TcpServer {
  public:
    // handler(fd) serves one connection; the fd is closed after it returns. No handler: the
    // kernel completes handshakes from the backlog and nothing is read.
    explicit TcpServer(std::function<void(int)> handler = {}) : handler_(std::move(handler)) {
        fd_ = bound_socket(SOCK_STREAM, port_);
        listen(fd_, 64);
        if (handler_) thread_ = std::thread([this] { run(); });
    }
    ~TcpServer() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
        close(fd_);
    }
    uint16_t port() const { return port_; }
    int accepted() const { return accepted_; }

  private:
    void run() {
        while (!stop_) {
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, 20) <= 0) continue;
            int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0) continue;
            ++accepted_;
            handler_(c);
            close(c);
        }
    }
    std::function<void(int)> handler_;
    int fd_ = -1;
    uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> accepted_{0};
    std::thread thread_;
};

// A port where nothing listens (a bound, unlistened socket keeps it ours): connect is refused.
class ClosedPort {
  public:
    ClosedPort() { fd_ = bound_socket(SOCK_STREAM, port_); }
    ~ClosedPort() { close(fd_); }
    uint16_t port() const { return port_; }

  private:
    int fd_;
    uint16_t port_ = 0;
};

class UdpServer {
  public:
    // answer(request) -> reply, or nullopt to stay silent.
    explicit UdpServer(std::function<std::optional<std::string>(std::string)> answer)
        : answer_(std::move(answer)) {
        fd_ = bound_socket(SOCK_DGRAM, port_);
        thread_ = std::thread([this] { run(); });
    }
    ~UdpServer() {
        stop_ = true;
        thread_.join();
        close(fd_);
    }
    uint16_t port() const { return port_; }
    int received() const { return received_; }

  private:
    void run() {
        char buf[65536];
        while (!stop_) {
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, 20) <= 0) continue;
            sockaddr_storage from{};
            socklen_t flen = sizeof from;
            ssize_t n =
                recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
            if (n < 0) continue;
            ++received_;
            if (auto reply = answer_(std::string(buf, static_cast<size_t>(n))))
                sendto(fd_, reply->data(), reply->size(), 0, reinterpret_cast<sockaddr*>(&from),
                       flen);
        }
    }
    std::function<std::optional<std::string>(std::string)> answer_;
    int fd_ = -1;
    uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> received_{0};
    std::thread thread_;
};

}  // namespace xvs::ctl::health::test
