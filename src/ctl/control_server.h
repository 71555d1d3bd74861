// xvsd's control socket (docs/control-protocol.md): a non-blocking unix listener and its
// clients, all polled from the control loop. The metrics endpoint is the same server on a TCP
// listener speaking HTTP/1.1 (one request per connection: the head up to its blank line is
// the request, the handler's text the whole response). Invariant: no client can hold up
// another one or the loop (reload, rate estimation, key rotation): every client has a
// deadline, a request size limit, and there are at most max_clients of them; the loop never
// blocks on a socket.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "ctl/log_limit.h"
#include "net/addr.h"

namespace xvs::ctl {

class ControlServer {
  public:
    using Clock = std::chrono::steady_clock;

    struct Limits {
        size_t max_request_bytes = size_t{1} << 20;  // the protocol's 1 MiB
        // A client silent this long (no byte read, or none of its reply taken) is closed.
        std::chrono::milliseconds idle_timeout{2000};
        // The whole request must arrive within this, however it trickles in.
        std::chrono::milliseconds request_timeout{10000};
        size_t max_clients = 64;
        // Client-problem lines per kind (bad requests, timeouts, ...): log_burst at once,
        // then one per log_refill (ctl/log_limit.h); the rest are counted and summed up.
        unsigned log_burst = 10;
        std::chrono::milliseconds log_refill{1000};
    };

    // What the handler made of one request line.
    struct Reply {
        std::string text;     // one JSON object, without the '\n'
        std::string problem;  // non-empty: why the request failed, worth a log line
        std::string change;   // non-empty: the configuration change it made, logged once
    };
    using Handler = std::function<Reply(std::string_view request)>;
    // An HTTP handler also gets the client's address (the status page's allow list).
    using HttpHandler =
        std::function<Reply(std::string_view request, const net::InetEndpoint& peer)>;

    struct Stats {
        uint64_t accepted = 0;
        uint64_t answered = 0;      // replies written in full
        uint64_t refused_busy = 0;  // closed at once: max_clients reached
        uint64_t timed_out = 0;     // idle or request timeout
        uint64_t too_large = 0;     // request over max_request_bytes
        uint64_t problems = 0;      // handler reported a problem (malformed request, ...)
        uint64_t log_suppressed = 0;
    };

    // How requests are framed: JSON lines on the control socket, HTTP on the metrics listener.
    enum class Protocol : uint8_t { JsonLines, Http };

    // Binds `path` (a stale socket there is replaced) and listens. The socket file is 0600,
    // or 0660 with group `group` when given.
    static Result<std::unique_ptr<ControlServer>> open(const std::string& path,
                                                       std::optional<gid_t> group, Handler handler,
                                                       Limits limits);
    static Result<std::unique_ptr<ControlServer>> open(const std::string& path,
                                                       std::optional<gid_t> group,
                                                       Handler handler) {
        return open(path, group, std::move(handler), Limits{});
    }
    // Binds the TCP endpoint (SO_REUSEADDR) and listens; HTTP framing (Protocol::Http). The
    // handler gets the request head without its final blank line.
    static Result<std::unique_ptr<ControlServer>> open_http(const net::InetEndpoint& listen,
                                                            HttpHandler handler, Limits limits);
    static Result<std::unique_ptr<ControlServer>> open_http(const net::InetEndpoint& listen,
                                                            Handler handler, Limits limits) {
        return open_http(
            listen,
            [h = std::move(handler)](std::string_view request, const net::InetEndpoint&) {
                return h(request);
            },
            limits);
    }
    ~ControlServer();
    ControlServer(const ControlServer&) = delete;
    ControlServer& operator=(const ControlServer&) = delete;

    // Waits at most `timeout` (less when a client deadline comes first; a signal ends the
    // wait early), then accepts new clients, reads, answers and closes what is ready.
    // `wake_fd` (>= 0): also returns as soon as it is readable (the health checks' loop).
    void poll_once(std::chrono::milliseconds timeout, int wake_fd = -1) {
        ControlServer* self = this;
        poll_servers({&self, 1}, timeout, wake_fd);
    }
    // The same over several servers in one poll() (the control socket and the metrics
    // listener); null entries are skipped.
    static void poll_servers(std::span<ControlServer* const> servers,
                             std::chrono::milliseconds timeout, int wake_fd = -1);

    size_t client_count() const { return clients_.size(); }
    const Stats& stats() const { return stats_; }
    const std::string& path() const { return path_; }
    Protocol protocol() const { return protocol_; }
    // The bound TCP port (open_http with port 0 binds an ephemeral one); 0 for unix sockets.
    uint16_t tcp_port() const { return tcp_port_; }

  private:
    enum class Phase : uint8_t { Reading, Writing };
    struct Client {
        int fd = -1;
        pid_t pid = 0;  // SO_PEERCRED, for the log
        uid_t uid = 0;
        std::string peer;  // TCP: "addr:port", for the log
        net::InetEndpoint peer_ep{};  // TCP: the client's address, for the handler
        Phase phase = Phase::Reading;
        std::string in;
        size_t scanned = 0;  // bytes of `in` already searched for '\n'
        std::string out;
        size_t sent = 0;
        Clock::time_point idle_deadline;
        Clock::time_point request_deadline;
    };

    ControlServer(int listen_fd, std::string path, HttpHandler handler, Limits limits,
                  Protocol protocol);

    // poll_servers' halves: the server's fds (listener first) appended to `fds`, and the
    // shortest client deadline folded into `wait`; then the results read back from `fds`
    // starting at `first`.
    void add_pollfds(std::vector<pollfd>& fds, Clock::time_point now,
                     std::chrono::milliseconds& wait) const;
    void on_polled(std::span<const pollfd> fds, Clock::time_point now);
    // After a poll: the log lines the rate limit held back and the end of a busy burst.
    void after_poll(Clock::time_point now);
    // "control client pid P uid U" / "metrics client ADDR:PORT"; "control socket" /
    // "metrics ADDR:PORT" for the server itself.
    std::string client_name(const Client& c) const;
    std::string server_name() const;
    // A short reply for a client about to be closed, in the server's framing.
    std::string short_reply(int http_status, std::string_view json_error) const;

    void accept_all(Clock::time_point now);
    // Each returns false when the client is done and must be closed.
    bool on_readable(Client& c, Clock::time_point now);
    bool on_writable(Client& c, Clock::time_point now);
    // Hands the request (c.in) to the handler and starts writing its reply.
    bool answer(Client& c, Clock::time_point now);
    void expire(Clock::time_point now);
    void close_client(Client& c);
    // `what` must be log-safe already (printable()): client text never reaches it raw.
    // `kind` names the bucket of the rate limit ("request", "timeout", "busy", "accept").
    void log_problem(std::string_view kind, const Client& c, std::string_view what,
                     Clock::time_point now);
    // Kinds whose flood ended: their "N similar messages suppressed" lines.
    void flush_held_back(Clock::time_point now);

    int listen_fd_;
    std::string path_;
    HttpHandler handler_;  // a unix socket's handler ignores the (empty) peer
    Limits limits_;
    std::vector<Client> clients_;
    Protocol protocol_ = Protocol::JsonLines;
    uint16_t tcp_port_ = 0;
    ino_t socket_inode_ = 0;       // of the socket file we bound, to unlink only our own
    Clock::time_point accept_paused_until_{};
    Stats stats_;
    LogRateLimit log_limit_;  // client-problem lines, per kind
    // A burst of clients refused while full is logged once when it starts and once when the
    // server has room again.
    uint64_t busy_burst_refused_ = 0;
};

}  // namespace xvs::ctl
