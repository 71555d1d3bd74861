// Tests for the checkers of src/ctl/health/ (stream_probe, dgram_probe, misc_probe, mux):
// each against local servers the test runs on 127.0.0.1 with chosen answers.
#include "ctl/health/probe.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "ctl/health/dns.h"
#include "ctl/health/http.h"
#include "ctl/health/mux.h"
#include "servers.h"

namespace xvs::ctl::health {
namespace {

using test::ClosedPort;
using test::TcpServer;
using test::UdpServer;

net::InetAddr loopback() {
    return *net::parse_inet("127.0.0.1");
}

CheckerConf conf_of(CheckType type) {
    CheckerConf c;
    c.type = type;
    c.connect_timeout_ms = 1000;
    c.delay_loop_ms = 1000;
    c.misc_timeout_ms = 1000;
    return c;
}

class ProbeTest : public ::testing::Test {
  protected:
    void SetUp() override {
        loop_ = std::move(*Loop::create());
        udp_ = std::make_unique<UdpMux>(*loop_);
        icmp_ = std::make_unique<IcmpMux>(*loop_);
        ssl_ = SSL_CTX_new(TLS_client_method());
        env_ = std::make_unique<ProbeEnv>(ProbeEnv{*loop_, *udp_, *icmp_, ssl_});
    }
    void TearDown() override {
        env_.reset();
        icmp_.reset();
        udp_.reset();
        loop_.reset();
        SSL_CTX_free(ssl_);
    }

    // Runs one attempt to 127.0.0.1:port; fails the test if it does not end within 4 s.
    ProbeResult run(const CheckerConf& c, uint16_t port) {
        ProbeTarget t{net::InetEndpoint{loopback(), port}, std::nullopt};
        auto probe = probe_create(c, t, *env_);
        std::optional<ProbeResult> got;
        probe->start([&](ProbeResult r) { got = std::move(r); });
        EXPECT_FALSE(got) << "done called from start()";
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(4);
        while (!got && std::chrono::steady_clock::now() < until) loop_->run_once(20);
        if (!got) {
            ADD_FAILURE() << "attempt did not end";
            return {};
        }
        return *got;
    }

    std::unique_ptr<Loop> loop_;
    std::unique_ptr<UdpMux> udp_;
    std::unique_ptr<IcmpMux> icmp_;
    SSL_CTX* ssl_ = nullptr;
    std::unique_ptr<ProbeEnv> env_;
};

TEST_F(ProbeTest, TcpCheckConnectsOrIsRefused) {
    TcpServer listener;
    ProbeResult up = run(conf_of(CheckType::Tcp), listener.port());
    EXPECT_TRUE(up.ok) << up.text;
    EXPECT_EQ(up.text, "connected");
    ClosedPort closed;
    ProbeResult down = run(conf_of(CheckType::Tcp), closed.port());
    EXPECT_FALSE(down.ok);
    EXPECT_EQ(down.text, "connect: Connection refused");
}

// An HTTP server answering `response` to every request, keeping the last request it read.
struct HttpServer {
    explicit HttpServer(std::string response)
        : response(std::move(response)), server([this](int fd) {
              request = test::read_until(fd, "\r\n\r\n");
              test::send_all(fd, this->response);
          }) {}
    std::string response;
    std::string request;
    TcpServer server;
};

CheckerConf http_conf(std::string path = "/") {
    CheckerConf c = conf_of(CheckType::Http);
    HttpUrl u;
    u.path = std::move(path);
    c.urls.push_back(u);
    return c;
}

TEST_F(ProbeTest, HttpGetStatusCodes) {
    HttpServer ok("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
    ProbeResult r = run(http_conf("/healthz"), ok.server.port());
    EXPECT_TRUE(r.ok) << r.text;
    EXPECT_EQ(r.text, "/healthz: ok");
    EXPECT_EQ(ok.request.rfind("GET /healthz HTTP/1.0\r\n", 0), 0u) << ok.request;
    EXPECT_NE(ok.request.find("Host: 127.0.0.1:" + std::to_string(ok.server.port()) + "\r\n"),
              std::string::npos)
        << ok.request;

    HttpServer unavailable("HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
    r = run(http_conf("/"), unavailable.server.port());
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "/: HTTP status 503");
    // status_code 500-503 makes it a pass; 200 alone no longer passes.
    CheckerConf c = http_conf("/");
    c.urls[0].status = {{500, 503}};
    EXPECT_TRUE(run(c, unavailable.server.port()).ok);
    EXPECT_FALSE(run(c, ok.server.port()).ok);
}

TEST_F(ProbeTest, HttpGetDigestOfTheBodyAndVirtualhost) {
    const std::string body = "The quick brown fox jumps over the lazy dog";
    HttpServer srv("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + body);  // read to EOF
    CheckerConf c = http_conf("/index.html");
    c.urls[0].digest = md5(body);
    c.urls[0].virtualhost = "www.example.org";
    EXPECT_EQ(hex(c.urls[0].digest->data(), 16), "9e107d9d372bb6826bd81d3542a419d6");
    ProbeResult r = run(c, srv.server.port());
    EXPECT_TRUE(r.ok) << r.text;
    EXPECT_NE(srv.request.find("Host: www.example.org\r\n"), std::string::npos) << srv.request;

    c.urls[0].digest = md5("another body");
    r = run(c, srv.server.port());
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "/index.html: digest 9e107d9d372bb6826bd81d3542a419d6 differs from " +
                          hex(md5("another body").data(), 16));
}

TEST_F(ProbeTest, HttpGetChunkedBodyAndEveryUrl) {
    HttpServer srv(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n "
        "world\r\n0\r\n\r\n");
    CheckerConf c = http_conf("/a");
    c.http11 = true;
    c.urls[0].digest = md5("hello world");
    HttpUrl second = c.urls[0];
    second.path = "/b";
    c.urls.push_back(second);
    ProbeResult r = run(c, srv.server.port());
    EXPECT_TRUE(r.ok) << r.text;
    EXPECT_EQ(r.text, "all 2 urls ok");
    EXPECT_EQ(srv.server.accepted(), 2);  // one connection per url
    EXPECT_EQ(srv.request.rfind("GET /b HTTP/1.1\r\n", 0), 0u);
}

TEST_F(ProbeTest, HttpGetTimesOutOnASilentServer) {
    TcpServer silent([](int fd) { test::read_until(fd, "never"); });
    CheckerConf c = http_conf("/");
    c.connect_timeout_ms = 200;
    const auto t0 = std::chrono::steady_clock::now();
    ProbeResult r = run(c, silent.port());
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "timed out");
    EXPECT_GE(took, std::chrono::milliseconds(190));
    EXPECT_LT(took, std::chrono::milliseconds(1500));
}

// A TLS server with a throwaway self-signed certificate (openssl(1) makes it).
class TlsServer {
  public:
    explicit TlsServer(std::string response) : response_(std::move(response)) {
        dir_ = std::filesystem::temp_directory_path() / ("xvs-tls-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        const std::string cmd =
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
            "-nodes -days 1 -subj /CN=test -keyout " +
            (dir_ / "k").string() + " -out " + (dir_ / "c").string() + " >/dev/null 2>&1";
        ok_ = std::system(cmd.c_str()) == 0;
        ctx_ = SSL_CTX_new(TLS_server_method());
        ok_ = ok_ &&
              SSL_CTX_use_certificate_file(ctx_, (dir_ / "c").c_str(), SSL_FILETYPE_PEM) == 1 &&
              SSL_CTX_use_PrivateKey_file(ctx_, (dir_ / "k").c_str(), SSL_FILETYPE_PEM) == 1;
        server_ = std::make_unique<TcpServer>([this](int fd) {
            SSL* s = SSL_new(ctx_);
            SSL_set_fd(s, fd);
            if (SSL_accept(s) == 1) {
                char buf[4096];
                std::string req;
                while (req.find("\r\n\r\n") == std::string::npos) {
                    int n = SSL_read(s, buf, sizeof buf);
                    if (n <= 0) break;
                    req.append(buf, static_cast<size_t>(n));
                }
                sni_ = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name) ?: "";
                SSL_write(s, response_.data(), static_cast<int>(response_.size()));
                SSL_shutdown(s);
            }
            SSL_free(s);
        });
    }
    ~TlsServer() {
        server_.reset();
        SSL_CTX_free(ctx_);
        std::filesystem::remove_all(dir_);
    }
    bool ok() const { return ok_; }
    uint16_t port() const { return server_->port(); }
    std::string sni() const { return sni_; }

  private:
    std::string response_;
    std::filesystem::path dir_;
    bool ok_ = false;
    SSL_CTX* ctx_ = nullptr;
    std::string sni_;
    std::unique_ptr<TcpServer> server_;
};

TEST_F(ProbeTest, SslGetOverTls) {
    TlsServer tls("HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nsecure");
    ASSERT_TRUE(tls.ok()) << "openssl could not make a test certificate";
    CheckerConf c = http_conf("/");
    c.type = CheckType::Ssl;
    c.urls[0].digest = md5("secure");
    c.urls[0].virtualhost = "secure.example.org";
    c.enable_sni = true;
    ProbeResult r = run(c, tls.port());
    EXPECT_TRUE(r.ok) << r.text;
    EXPECT_EQ(tls.sni(), "secure.example.org");
    // Plain HTTP to a TLS port: not an HTTP answer.
    TcpServer plain([](int fd) { test::send_all(fd, "HTTP/1.0 200 OK\r\n\r\n"); });
    c.urls[0].digest.reset();
    r = run(c, plain.port());
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text.rfind("TLS: ", 0), 0u) << r.text;
}

TEST_F(ProbeTest, SmtpCheckBannerAndHelo) {
    std::string helo;
    TcpServer good([&](int fd) {
        test::send_all(fd, "220-mail.example.org ESMTP\r\n220 ready\r\n");
        helo = test::read_until(fd, "\r\n");
        test::send_all(fd, "250 hello\r\n");
        test::read_until(fd, "\r\n");
        test::send_all(fd, "221 bye\r\n");
    });
    CheckerConf c = conf_of(CheckType::Smtp);
    c.helo_name = "lb1.example.org";
    ProbeResult r = run(c, good.port());
    EXPECT_TRUE(r.ok) << r.text;
    EXPECT_EQ(helo, "HELO lb1.example.org\r\n");
    TcpServer busy([](int fd) { test::send_all(fd, "554 no service\r\n"); });
    r = run(c, busy.port());
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "SMTP banner: 554 no service");
}

TEST_F(ProbeTest, UdpCheckPayloadAndReplies) {
    UdpServer echo([](std::string d) { return std::optional<std::string>(d); });
    CheckerConf c = conf_of(CheckType::Udp);
    c.payload = "ping";
    c.require_reply = true;
    c.reply = "pi";
    ProbeResult r = run(c, echo.port());
    EXPECT_TRUE(r.ok) << r.text;
    c.reply = "pong";
    r = run(c, echo.port());
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "reply differs from require_reply");
    c.reply = "";
    c.max_reply_length = 2;
    EXPECT_EQ(run(c, echo.port()).text, "reply of 4 bytes");

    UdpServer silent([](std::string) { return std::optional<std::string>(); });
    c = conf_of(CheckType::Udp);
    c.connect_timeout_ms = 150;
    r = run(c, silent.port());  // no reply required, no ICMP error: up
    EXPECT_TRUE(r.ok) << r.text;
    c.require_reply = true;
    r = run(c, silent.port());
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "no reply");
    EXPECT_EQ(udp_->socket_count(), 1u);  // every UDP check shared one socket
}

TEST_F(ProbeTest, UdpCheckFailsOnPortUnreachable) {
    uint16_t port = 0;
    {
        UdpServer gone([](std::string) { return std::optional<std::string>(); });
        port = gone.port();
    }  // closed: the kernel answers ICMP port unreachable
    CheckerConf c = conf_of(CheckType::Udp);
    c.payload = "x";
    ProbeResult r = run(c, port);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "ICMP error: Connection refused");
}

// A DNS server built by the test: answers with the query's ID, QR set, `rcode` and `answers`
// answer records (a bare A record each), or with a wrong ID.
std::optional<std::string> dns_answer(const std::string& q, unsigned rcode, unsigned answers,
                                      bool wrong_id = false) {
    if (q.size() < 12) return std::nullopt;
    std::string r = q;
    if (wrong_id) r[0] = static_cast<char>(r[0] ^ 0x5a);
    r[2] = static_cast<char>(0x81);  // QR, RD
    r[3] = static_cast<char>(0x80 | rcode);
    r[7] = static_cast<char>(answers);
    for (unsigned i = 0; i < answers; ++i)
        r += std::string("\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x0a\x00\x00\x01", 16);
    return r;
}

TEST_F(ProbeTest, DnsCheckQueryAndAnswer) {
    std::string query;
    UdpServer good([&](std::string q) {
        query = q;
        return dns_answer(q, 0, 1);
    });
    CheckerConf c = conf_of(CheckType::Dns);
    c.dns_name = "example.org";
    c.dns_type = 28;
    ProbeResult r = run(c, good.port());
    EXPECT_TRUE(r.ok) << r.text;
    ASSERT_GE(query.size(), 12u);
    EXPECT_EQ(query.substr(12), std::string("\x07"
                                            "example\x03org\x00\x00\x1c\x00\x01",
                                            17));
    EXPECT_EQ(query.substr(2, 4), std::string("\x01\x00\x00\x01", 4));  // RD, one question

    UdpServer nx([](std::string q) { return dns_answer(q, 3, 0); });
    EXPECT_EQ(run(c, nx.port()).text, "DNS RCODE NXDOMAIN");
    UdpServer empty([](std::string q) { return dns_answer(q, 0, 0); });
    EXPECT_EQ(run(c, empty.port()).text, "DNS reply has no answer");
    UdpServer other([](std::string q) { return dns_answer(q, 0, 1, /*wrong_id=*/true); });
    c.connect_timeout_ms = 200;
    EXPECT_EQ(run(c, other.port()).text, "no reply");  // another query's answer is not ours
}

TEST(DnsWire, RootAndLongLabels) {
    EXPECT_EQ(dns_query(0x1234, ".", 2).substr(12), std::string("\x00\x00\x02\x00\x01", 5));
    EXPECT_EQ(dns_query(1, std::string(64, 'a'), 1), "");
    EXPECT_EQ(dns_verdict(7, "short"), "DNS reply too short (5 bytes)");
}

TEST_F(ProbeTest, PingCheckLoopback) {
    CheckerConf c = conf_of(CheckType::Ping);
    ProbeResult r = run(c, 0);
    if (!r.ok && r.text.find("no ICMP socket") != std::string::npos)
        GTEST_SKIP() << r.text << " (needs ping_group_range or CAP_NET_RAW)";
    EXPECT_TRUE(r.ok) << r.text;
    EXPECT_EQ(r.text, "echo reply");
    EXPECT_TRUE(run(c, 0).ok);
    EXPECT_EQ(icmp_->socket_count(), 1u);
}

CheckerConf misc_conf(const std::string& script, bool dynamic = false) {
    CheckerConf c = conf_of(CheckType::Misc);
    c.misc_argv = {"/bin/sh", "-c", script};
    c.misc_dynamic = dynamic;
    return c;
}

TEST_F(ProbeTest, MiscCheckExitCodes) {
    ProbeResult r = run(misc_conf("exit 0"), 0);
    EXPECT_TRUE(r.ok);
    EXPECT_FALSE(r.weight);
    r = run(misc_conf("exit 1"), 0);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "exit 1");
    r = run(misc_conf("exit 9"), 0);  // 2..255 without misc_dynamic: up, weight kept
    EXPECT_TRUE(r.ok);
    EXPECT_FALSE(r.weight);
    r = run(misc_conf("exit 9", true), 0);
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.weight, 7u);
    EXPECT_EQ(r.text, "exit 9: weight 7");
    r = run(misc_conf("exit 2", true), 0);
    EXPECT_EQ(r.weight, 0u);
    r = run(misc_conf("kill -9 $$"), 0);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "killed by signal 9");
}

TEST_F(ProbeTest, MiscCheckIsKilledAtItsTimeout) {
    CheckerConf c = misc_conf("sleep 10");
    c.misc_timeout_ms = 200;
    const auto t0 = std::chrono::steady_clock::now();
    ProbeResult r = run(c, 0);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "timed out (killed)");
    c.misc_argv = {"/nonexistent/probe"};
    r = run(c, 0);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.text, "/nonexistent/probe: No such file or directory");
}

}  // namespace
}  // namespace xvs::ctl::health
