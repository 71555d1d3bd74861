// TCP_CHECK, HTTP_GET, SSL_GET and SMTP_CHECK: one non-blocking TCP connection per attempt
// (HTTP: one per url, in order), each bounded by connect_timeout as a whole, driven by the
// loop. TLS through OpenSSL without certificate verification (keepalived's SSL_GET checks
// the answer, not who signed it).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ctl/health/http.h"
#include "ctl/health/probe.h"

namespace xvs::ctl::health {

namespace {

constexpr size_t kMaxResponse = size_t{1} << 20;  // bytes kept of an HTTP answer

class StreamProbe final : public Probe {
  public:
    StreamProbe(const CheckerConf& conf, const ProbeTarget& target, ProbeEnv& env)
        : conf_(conf), target_(target), env_(env) {}
    ~StreamProbe() override { reset(); }

    void start(ProbeDone done) override {
        done_ = std::move(done);
        url_ = 0;
        open_connection();
    }

  private:
    enum class Phase : uint8_t { Connecting, Handshake, Sending, Reading };

    void reset() {
        env_.loop.timer_cancel(deadline_);
        if (ssl_) {
            SSL_free(ssl_);
            ssl_ = nullptr;
        }
        if (fd_ >= 0) {
            env_.loop.unwatch(fd_);
            close(fd_);
            fd_ = -1;
        }
        in_.clear();
        out_.clear();
        sent_ = 0;
    }

    // Ends the attempt from the loop, never from start(): done_ may destroy this probe.
    void finish(bool ok, std::string text) {
        reset();
        auto done = std::move(done_);
        done_ = nullptr;
        if (done) done(ProbeResult{ok, std::move(text), std::nullopt});
    }
    void finish_later(bool ok, std::string text) {
        deadline_ = env_.loop.timer_in(0, [this, ok, text] { finish(ok, text); });
    }

    void open_connection() {
        reset();
        const bool v4 = target_.dst.addr.is_v4();
        auto fd = socket_open(v4, SOCK_STREAM, 0, target_.bindto);
        if (!fd) return finish_later(false, fd.error());
        fd_ = *fd;
        sockaddr_storage ss{};
        const socklen_t len = sockaddr_of(target_.dst, ss);
        int rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&ss), len);
        if (rc != 0 && errno != EINPROGRESS)
            return finish_later(false, std::string("connect: ") + strerror(errno));
        phase_ = Phase::Connecting;
        if (auto r = env_.loop.watch(fd_, EPOLLOUT, [this](uint32_t ev) { on_event(ev); }); !r)
            return finish_later(false, r.error());
        deadline_ = env_.loop.timer_in(conf_.connect_timeout_ms, [this] {
            deadline_ = {};
            finish(false, phase_ == Phase::Connecting ? "connect timed out" : "timed out");
        });
    }

    void on_event(uint32_t) {
        switch (phase_) {
            case Phase::Connecting: {
                int err = 0;
                socklen_t len = sizeof err;
                getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err == EINPROGRESS) return;
                if (err != 0) return finish(false, std::string("connect: ") + strerror(err));
                return connected();
            }
            case Phase::Handshake:
                return handshake();
            case Phase::Sending:
                return send_some();
            case Phase::Reading:
                return read_some();
        }
    }

    void connected() {
        switch (conf_.type) {
            case CheckType::Tcp:
                return finish(true, "connected");
            case CheckType::Ssl: {
                ssl_ = SSL_new(env_.ssl);
                if (!ssl_) return finish(false, "TLS: cannot create a session");
                SSL_set_fd(ssl_, fd_);
                const std::string& vhost = conf_.urls[url_].virtualhost;
                if (conf_.enable_sni && !vhost.empty())
                    SSL_set_tlsext_host_name(ssl_, vhost.c_str());
                phase_ = Phase::Handshake;
                return handshake();
            }
            case CheckType::Http:
                return request();
            case CheckType::Smtp:
                smtp_step_ = 0;
                return expect_reply();
            default:
                return finish(false, "internal error: not a stream check");
        }
    }

    // Wants: EPOLLIN or EPOLLOUT per what the last TLS call asked for.
    bool tls_retry(int rc) {
        const int e = SSL_get_error(ssl_, rc);
        if (e == SSL_ERROR_WANT_READ) {
            env_.loop.modify(fd_, EPOLLIN);
            return true;
        }
        if (e == SSL_ERROR_WANT_WRITE) {
            env_.loop.modify(fd_, EPOLLOUT);
            return true;
        }
        return false;
    }

    static std::string tls_error() {
        const unsigned long e = ERR_get_error();
        if (!e) return "TLS: connection failed";
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        ERR_clear_error();
        return std::string("TLS: ") + buf;
    }

    void handshake() {
        const int rc = SSL_connect(ssl_);
        if (rc == 1) return request();
        if (!tls_retry(rc)) return finish(false, tls_error());
    }

    std::string host_header() const {
        std::string host = net::endpoint_host(target_.dst.addr);
        const uint16_t dflt = conf_.type == CheckType::Ssl ? 443 : 80;
        if (target_.dst.port != dflt) host += ":" + std::to_string(target_.dst.port);
        return host;
    }

    void request() {
        out_ = http_request(conf_.urls[url_], conf_.http11, host_header());
        sent_ = 0;
        phase_ = Phase::Sending;
        env_.loop.modify(fd_, EPOLLOUT);
        send_some();
    }

    // >0 bytes, 0 EOF, -1 would block (interest set), -2 failed (finished).
    ssize_t io_write(const char* p, size_t n) {
        if (ssl_) {
            const int rc = SSL_write(ssl_, p, static_cast<int>(n));
            if (rc > 0) return rc;
            if (tls_retry(rc)) return -1;
            finish(false, tls_error());
            return -2;
        }
        ssize_t rc = ::send(fd_, p, n, MSG_NOSIGNAL);
        if (rc >= 0) return rc;
        if (errno == EAGAIN || errno == EINTR) return -1;
        finish(false, std::string("send: ") + strerror(errno));
        return -2;
    }
    ssize_t io_read(char* p, size_t n) {
        if (ssl_) {
            const int rc = SSL_read(ssl_, p, static_cast<int>(n));
            if (rc > 0) return rc;
            const int e = SSL_get_error(ssl_, rc);
            if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0))
                return 0;  // closed (with or without close_notify)
            if (tls_retry(rc)) return -1;
            finish(false, tls_error());
            return -2;
        }
        ssize_t rc = ::recv(fd_, p, n, 0);
        if (rc >= 0) return rc;
        if (errno == EAGAIN || errno == EINTR) return -1;
        finish(false, std::string("recv: ") + strerror(errno));
        return -2;
    }

    void send_some() {
        while (sent_ < out_.size()) {
            ssize_t n = io_write(out_.data() + sent_, out_.size() - sent_);
            if (n == -2) return;
            if (n == -1) {
                if (!ssl_) env_.loop.modify(fd_, EPOLLOUT);
                return;
            }
            sent_ += static_cast<size_t>(n);
        }
        out_.clear();
        sent_ = 0;
        phase_ = Phase::Reading;
        env_.loop.modify(fd_, EPOLLIN);
        if (conf_.type != CheckType::Smtp) read_some();
    }

    void read_some() {
        char buf[16384];
        for (;;) {
            ssize_t n = io_read(buf, sizeof buf);
            if (n == -2) return;
            if (n == -1) {
                if (!ssl_) env_.loop.modify(fd_, EPOLLIN);
                return;
            }
            if (n == 0)
                return conf_.type == CheckType::Smtp ? finish(false, "SMTP: connection closed")
                                                     : http_done();
            if (in_.size() < kMaxResponse) in_.append(buf, static_cast<size_t>(n));
            if (conf_.type == CheckType::Smtp) {
                if (smtp_line()) return;
            } else if (http_complete(in_) || in_.size() >= kMaxResponse) {
                return http_done();
            }
        }
    }

    void http_done() {
        std::string why = http_verdict(conf_.urls[url_], in_);
        const std::string& path = conf_.urls[url_].path;
        if (!why.empty()) return finish(false, path + ": " + why);
        if (++url_ < conf_.urls.size()) return open_connection();
        finish(true,
               conf_.urls.size() == 1 ? path + ": ok" : "all " + std::to_string(url_) + " urls ok");
    }

    // SMTP: 0 banner 220, 1 HELO -> 250, 2 QUIT -> any (221), done.
    void expect_reply() {
        phase_ = Phase::Reading;
        env_.loop.modify(fd_, EPOLLIN);
    }
    // Handles complete reply lines in in_; true when the attempt moved on (or finished).
    bool smtp_line() {
        for (;;) {
            const size_t eol = in_.find('\n');
            if (eol == std::string::npos) return false;
            std::string line = in_.substr(0, eol);
            in_.erase(0, eol + 1);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.size() < 3) {
                finish(false, "SMTP: bad reply line");
                return true;
            }
            if (line.size() > 3 && line[3] == '-') continue;  // multi-line reply goes on
            const std::string code = line.substr(0, 3);
            if (smtp_step_ == 0 && code != "220") {
                finish(false, "SMTP banner: " + line.substr(0, 80));
                return true;
            }
            if (smtp_step_ == 1 && code != "250") {
                finish(false, "SMTP HELO: " + line.substr(0, 80));
                return true;
            }
            if (smtp_step_ == 2) {
                finish(true, "SMTP 220, HELO 250");
                return true;
            }
            out_ = smtp_step_ == 0 ? "HELO " + conf_.helo_name + "\r\n" : "QUIT\r\n";
            ++smtp_step_;
            sent_ = 0;
            phase_ = Phase::Sending;
            env_.loop.modify(fd_, EPOLLOUT);
            return true;
        }
    }

    const CheckerConf& conf_;
    ProbeTarget target_;
    ProbeEnv& env_;
    ProbeDone done_;
    int fd_ = -1;
    SSL* ssl_ = nullptr;
    Phase phase_ = Phase::Connecting;
    Loop::TimerId deadline_;
    size_t url_ = 0;
    int smtp_step_ = 0;
    std::string in_;
    std::string out_;
    size_t sent_ = 0;
};

}  // namespace

std::unique_ptr<Probe> stream_probe_create(const CheckerConf& conf, const ProbeTarget& target,
                                           ProbeEnv& env) {
    return std::make_unique<StreamProbe>(conf, target, env);
}

}  // namespace xvs::ctl::health
