// Control socket server: poll() over the listener and every client, per-client buffers and
// deadlines. The handler runs on this (the control) thread, one complete request at a time;
// nothing here waits for a client.
#include "ctl/control_server.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>

#include "ctl/health/probe.h"
#include "ctl/log.h"

namespace xvs::ctl {

namespace {

using std::chrono::milliseconds;

constexpr std::string_view kTooLarge = R"({"ok":false,"error":"Request too large"})";
constexpr std::string_view kTimedOut = R"({"ok":false,"error":"Request timed out"})";
constexpr std::string_view kHandlerFailed = R"({"ok":false,"error":"Internal error"})";
constexpr int kAcceptsPerPoll = 256;  // a connect flood cannot keep the loop in accept()
constexpr milliseconds kAcceptPause{100};

std::string errno_text() {
    return std::strerror(errno);
}

// One non-blocking write of a short reply to a client about to be closed; if the client's
// buffer is full it loses the reply, which is all a client that does not read deserves.
void send_best_effort(int fd, std::string_view reply) {
    (void)!::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// A TCP peer as "addr:port" ("[v6]:port"), for log lines.
std::string peer_text(const sockaddr_storage& ss) {
    if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) return "?";
    return net::to_string(health::endpoint_of(ss));
}

// Text from a client for a log line: printable ASCII as is, every other byte as \xNN, so a
// request can neither forge log lines nor put invalid UTF-8 in the log; cut at `max` bytes.
std::string printable(std::string_view text, size_t max) {
    std::string out;
    for (size_t i = 0; i < text.size() && i < max; ++i) {
        auto b = static_cast<unsigned char>(text[i]);
        if (b >= 0x20 && b < 0x7f && b != '\\') {
            out += static_cast<char>(b);
        } else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", b);
            out += hex;
        }
    }
    if (text.size() > max) out += "...";
    return out;
}

// The start of a request, quoted, with its size when cut.
std::string excerpt(std::string_view request) {
    constexpr size_t kMax = 64;
    std::string out = "'" + printable(request, kMax) + "'";
    if (request.size() > kMax) out += " (" + std::to_string(request.size()) + " bytes)";
    return out;
}

long ms_count(milliseconds d) {
    return static_cast<long>(d.count());
}

}  // namespace

Result<std::unique_ptr<ControlServer>> ControlServer::open(const std::string& path,
                                                           std::optional<gid_t> group,
                                                           Handler handler, Limits limits) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr.sun_path)
        return make_error("control_socket path must be 1.." +
                          std::to_string(sizeof addr.sun_path - 1) + " bytes long: " + path);
    std::memcpy(addr.sun_path, path.data(), path.size());
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(parent, ec);
        if (ec) return make_error("cannot create " + parent.string() + ": " + ec.message());
    }

    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return make_error("control socket: socket(): " + errno_text());
    auto fail = [&](const std::string& what) {
        std::string text = what + ": " + errno_text();
        ::close(fd);
        return make_error(text);
    };

    // Replace a stale socket, but never another file, and never a running xvsd's socket.
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            ::close(fd);
            return make_error("control socket " + path +
                              " exists and is not a socket: remove it "
                              "or choose another control_socket");
        }
        int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        bool in_use = probe >= 0 &&
                      ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
        if (probe >= 0) ::close(probe);
        if (in_use) {
            ::close(fd);
            return make_error("control socket " + path +
                              " is served by a running xvsd: stop it "
                              "first or choose another control_socket");
        }
        ::unlink(path.c_str());
    }

    // Created 0600 (no window with wider access), then widened to the group if configured.
    mode_t old_mask = ::umask(0177);
    int rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    ::umask(old_mask);
    if (rc != 0) return fail("cannot bind control socket " + path);
    if (group) {
        if (::chown(path.c_str(), static_cast<uid_t>(-1), *group) != 0 ||
            ::chmod(path.c_str(), 0660) != 0) {
            auto err =
                fail("cannot give control socket " + path + " to group " + std::to_string(*group));
            ::unlink(path.c_str());
            return err;
        }
    } else if (::chmod(path.c_str(), 0600) != 0) {
        auto err = fail("cannot chmod control socket " + path);
        ::unlink(path.c_str());
        return err;
    }
    if (::listen(fd, SOMAXCONN) != 0) {
        auto err = fail("cannot listen on control socket " + path);
        ::unlink(path.c_str());
        return err;
    }
    auto any_peer = [h = std::move(handler)](std::string_view request, const net::InetEndpoint&) {
        return h(request);
    };
    return std::unique_ptr<ControlServer>(
        new ControlServer(fd, path, std::move(any_peer), limits, Protocol::JsonLines));
}

Result<std::unique_ptr<ControlServer>> ControlServer::open_http(const net::InetEndpoint& listen,
                                                                HttpHandler handler,
                                                                Limits limits) {
    const std::string name = net::to_string(listen);
    sockaddr_storage ss{};
    const socklen_t len = health::sockaddr_of(listen, ss);
    int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return make_error("metrics_listen " + name + ": socket(): " + errno_text());
    const int one = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6) (void)::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&ss), len) != 0 || ::listen(fd, SOMAXCONN) != 0) {
        const int err = errno;
        ::close(fd);
        std::string text = "metrics_listen " + name + ": cannot listen: " + std::strerror(err);
        if (err == EADDRINUSE)
            text += " (another xvsd or exporter holds it: set metrics_listen to a free port, or off)";
        else if (err == EADDRNOTAVAIL)
            text += " (no such address on this host: use 127.0.0.1 or an address of the director)";
        return make_error(text);
    }
    sockaddr_storage bound{};
    socklen_t blen = sizeof bound;
    uint16_t port = listen.port;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &blen) == 0)
        port = health::endpoint_of(bound).port;
    auto server = std::unique_ptr<ControlServer>(
        new ControlServer(fd, name, std::move(handler), limits, Protocol::Http));
    server->tcp_port_ = port;
    return server;
}

ControlServer::ControlServer(int listen_fd, std::string path, HttpHandler handler, Limits limits,
                             Protocol protocol)
    : listen_fd_(listen_fd),
      path_(std::move(path)),
      handler_(std::move(handler)),
      limits_(limits),
      protocol_(protocol),
      log_limit_(LogRateLimit::Params{.burst = limits.log_burst, .refill = limits.log_refill}) {
    struct stat st {};
    if (protocol_ == Protocol::JsonLines && ::stat(path_.c_str(), &st) == 0)
        socket_inode_ = st.st_ino;
}

ControlServer::~ControlServer() {
    for (Client& c : clients_) close_client(c);
    ::close(listen_fd_);
    if (protocol_ != Protocol::JsonLines) return;
    // Unlink only our own socket: a newer xvsd may have replaced the file meanwhile.
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == socket_inode_)
        ::unlink(path_.c_str());
}

std::string ControlServer::short_reply(int http_status, std::string_view json_error) const {
    if (protocol_ == Protocol::JsonLines) return std::string(json_error) + '\n';
    const char* reason = http_status == 408   ? "Request Timeout"
                         : http_status == 431 ? "Request Header Fields Too Large"
                         : http_status == 503 ? "Service Unavailable"
                                              : "Internal Server Error";
    std::string body = std::string(reason) + "\n";
    return "HTTP/1.1 " + std::to_string(http_status) + " " + reason +
           "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

void ControlServer::poll_servers(std::span<ControlServer* const> servers, milliseconds timeout,
                                 int wake_fd) {
    auto now = Clock::now();
    milliseconds wait = timeout;
    std::vector<pollfd> fds;
    std::vector<size_t> first;
    for (ControlServer* s : servers) {
        first.push_back(fds.size());
        if (s) s->add_pollfds(fds, now, wait);
    }
    fds.push_back({wake_fd, POLLIN, 0});  // last: ignored when negative
    int rc = ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    now = Clock::now();
    for (size_t i = 0; i < servers.size(); ++i) {
        if (!servers[i]) continue;
        if (rc > 0) {
            const size_t end = i + 1 < servers.size() ? first[i + 1] : fds.size() - 1;
            servers[i]->on_polled(std::span<const pollfd>(fds).subspan(first[i], end - first[i]), now);
        }
        servers[i]->expire(now);
        servers[i]->after_poll(now);
    }
}

void ControlServer::add_pollfds(std::vector<pollfd>& fds, Clock::time_point now,
                                milliseconds& wait) const {
    for (const Client& c : clients_) {
        auto deadline = c.idle_deadline;
        if (c.phase == Phase::Reading) deadline = std::min(deadline, c.request_deadline);
        auto left = std::chrono::ceil<milliseconds>(deadline - now);
        wait = std::clamp(left, milliseconds{0}, wait);
    }
    // poll() skips a negative fd: the listener rests while accept() is out of descriptors.
    fds.push_back({now >= accept_paused_until_ ? listen_fd_ : -1, POLLIN, 0});
    for (const Client& c : clients_)
        fds.push_back({c.fd, static_cast<short>(c.phase == Phase::Reading ? POLLIN : POLLOUT), 0});
}

// fds: [0] the listener, [1 + i] clients_[i], as add_pollfds wrote them.
void ControlServer::on_polled(std::span<const pollfd> fds, Clock::time_point now) {
    for (size_t i = 0; i < clients_.size() && i + 1 < fds.size(); ++i) {
        Client& c = clients_[i];
        if (fds[i + 1].revents == 0) continue;
        bool keep = c.phase == Phase::Reading ? on_readable(c, now) : on_writable(c, now);
        if (!keep) close_client(c);
    }
    std::erase_if(clients_, [](const Client& c) { return c.fd < 0; });
    if (fds[0].revents & POLLIN) accept_all(now);
}

std::string ControlServer::client_name(const Client& c) const {
    if (protocol_ == Protocol::Http) return "metrics client " + c.peer;
    return "control client pid " + std::to_string(c.pid) + " uid " + std::to_string(c.uid);
}

std::string ControlServer::server_name() const {
    return protocol_ == Protocol::Http ? "metrics " + path_ : "control socket";
}

void ControlServer::after_poll(Clock::time_point now) {
    if (busy_burst_refused_ > 0 && clients_.size() < limits_.max_clients) {
        Client none;
        log_problem("busy", none,
                    "room for clients again; " + std::to_string(busy_burst_refused_) +
                        " refused while " + std::to_string(limits_.max_clients) + " were connected",
                    now);
        busy_burst_refused_ = 0;
    }
    flush_held_back(now);
}

void ControlServer::accept_all(Clock::time_point now) {
    for (int i = 0; i < kAcceptsPerPoll; ++i) {
        sockaddr_storage peer{};
        socklen_t peer_len = sizeof peer;
        int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_len,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                Client none;
                log_problem("accept", none, "accept failed: " + errno_text(), now);
                // Out of descriptors (EMFILE/ENFILE) the listener stays readable: rest
                // instead of spinning on it.
                accept_paused_until_ = now + kAcceptPause;
            }
            return;
        }
        ++stats_.accepted;
        Client c;
        c.fd = fd;
        if (protocol_ == Protocol::JsonLines) {
            ucred cred{};
            socklen_t len = sizeof cred;
            if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
                c.pid = cred.pid;
                c.uid = cred.uid;
            }
        } else {
            c.peer = peer_text(peer);
            if (peer.ss_family == AF_INET || peer.ss_family == AF_INET6)
                c.peer_ep = health::endpoint_of(peer);
        }
        if (clients_.size() >= limits_.max_clients) {
            ++stats_.refused_busy;
            // Once per burst, and through the rate limit: clients that keep the server full
            // would otherwise log a start and an end every time a slot frees.
            if (busy_burst_refused_++ == 0) {
                Client none;
                log_problem("busy", none,
                            std::to_string(limits_.max_clients) +
                                " clients connected, refusing new ones until one is done "
                                "(first refused: " + client_name(c) + ")",
                            now);
            }
            send_best_effort(fd, short_reply(503, R"({"ok":false,"error":"Too many control clients ()" +
                                                      std::to_string(limits_.max_clients) +
                                                      R"( connected): try again"})"));
            ::close(fd);
            continue;
        }
        c.idle_deadline = now + limits_.idle_timeout;
        c.request_deadline = now + limits_.request_timeout;
        clients_.push_back(std::move(c));
    }
}

bool ControlServer::on_readable(Client& c, Clock::time_point now) {
    char buf[65536];
    for (;;) {
        ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
        if (n > 0) {
            c.in.append(buf, static_cast<size_t>(n));
            c.idle_deadline = now + limits_.idle_timeout;
            // JSON lines end at '\n'; an HTTP request head at its blank line ("\r\n\r\n",
            // searched from 3 bytes back: the terminator may straddle two reads).
            const std::string_view end_mark = protocol_ == Protocol::Http ? "\r\n\r\n" : "\n";
            size_t nl = c.in.find(end_mark, c.scanned >= 3 ? c.scanned - 3 : 0);
            c.scanned = c.in.size();
            if (nl == std::string::npos && c.in.size() <= limits_.max_request_bytes) continue;
            if (nl == std::string::npos || nl > limits_.max_request_bytes) {
                ++stats_.too_large;
                log_problem("request", c,
                            "request over " + std::to_string(limits_.max_request_bytes) +
                                " bytes refused: " + excerpt(c.in),
                            now);
                c.in.clear();
                c.in.shrink_to_fit();
                c.out = short_reply(431, kTooLarge);
                c.phase = Phase::Writing;
                return on_writable(c, now);
            }
            c.in.resize(nl);
            return answer(c, now);
        }
        if (n == 0) {
            // Half-closed without a newline: what came is the request (an empty one is a
            // client that connected and left, e.g. a liveness probe).
            if (c.in.empty()) return false;
            return answer(c, now);
        }
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

bool ControlServer::answer(Client& c, Clock::time_point now) {
    Reply reply;
    try {
        reply = handler_(c.in, c.peer_ep);
    } catch (const std::exception& e) {
        reply = Reply{std::string(kHandlerFailed), std::string("handler failed: ") + e.what()};
    } catch (...) {
        reply = Reply{std::string(kHandlerFailed), "handler failed"};
    }
    if (!reply.problem.empty()) {
        ++stats_.problems;
        log_problem("request", c, printable(reply.problem, 256) + "; request " + excerpt(c.in), now);
    }
    // Every change once, never rate limited: only a permitted client can make one.
    if (!reply.change.empty()) log_info(client_name(c) + ": " + printable(reply.change, 1024));
    c.in.clear();
    c.in.shrink_to_fit();
    c.out = std::move(reply.text);
    if (protocol_ == Protocol::JsonLines) c.out += '\n';
    c.phase = Phase::Writing;
    c.idle_deadline = now + limits_.idle_timeout;
    return on_writable(c, now);
}

bool ControlServer::on_writable(Client& c, Clock::time_point now) {
    while (c.sent < c.out.size()) {
        ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (n > 0) {
            c.sent += static_cast<size_t>(n);
            c.idle_deadline = now + limits_.idle_timeout;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        return false;  // the client went away before taking its reply
    }
    ++stats_.answered;
    return false;
}

void ControlServer::expire(Clock::time_point now) {
    for (Client& c : clients_) {
        const bool reading = c.phase == Phase::Reading;
        const bool idle = now >= c.idle_deadline;
        if (!idle && !(reading && now >= c.request_deadline)) continue;
        ++stats_.timed_out;
        if (reading) {
            log_problem("timeout", c,
                        idle
                            ? "no request byte for " +
                                  std::to_string(ms_count(limits_.idle_timeout)) + " ms: closed"
                            : "request not complete after " +
                                  std::to_string(ms_count(limits_.request_timeout)) + " ms: closed",
                        now);
            send_best_effort(c.fd, short_reply(408, kTimedOut));
        } else {
            log_problem("timeout", c,
                        "reply not read for " + std::to_string(ms_count(limits_.idle_timeout)) +
                            " ms (" + std::to_string(c.sent) + " of " +
                            std::to_string(c.out.size()) + " bytes taken): closed",
                        now);
        }
        close_client(c);
    }
    std::erase_if(clients_, [](const Client& c) { return c.fd < 0; });
}

void ControlServer::close_client(Client& c) {
    if (c.fd >= 0) ::close(c.fd);
    c.fd = -1;
}

void ControlServer::log_problem(std::string_view kind, const Client& c, std::string_view what,
                                Clock::time_point now) {
    const auto verdict = log_limit_.admit(kind, now);
    if (!verdict.write) {
        ++stats_.log_suppressed;
        return;
    }
    if (verdict.suppressed)
        log_warning(server_name() + " " + std::string(kind) + " problems: " +
                    log_suppressed_text(verdict.suppressed, log_limit_.params()));
    std::string who = c.fd >= 0 ? client_name(c) + ": " : server_name() + ": ";
    log_warning(who + std::string(what));
}

void ControlServer::flush_held_back(Clock::time_point now) {
    for (const auto& r : log_limit_.take_resumed(now))
        log_warning(server_name() + " " + r.kind + " problems: " +
                    log_suppressed_text(r.suppressed, log_limit_.params()));
}

}  // namespace xvs::ctl
