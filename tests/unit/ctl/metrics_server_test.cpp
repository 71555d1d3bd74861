// The metrics endpoint over real sockets: a ControlServer in HTTP mode on 127.0.0.1 beside the
// unix control socket, both polled in one poll() by ControlServer::poll_servers as xvsd's
// control loop does, with the real Controller behind both. What the control socket changes
// shows in the next scrape; silent, oversized and trickling HTTP clients are cut at their
// limits and hold up neither the control socket nor other scrapes.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "ctl/control_client.h"
#include "ctl/control_server.h"
#include "ctl/controller.h"
#include "ctl/metrics.h"
#include "ctl/status_page.h"

namespace xvs::ctl {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

class TcpClient {
  public:
    // `source`: the client's own address (host order), 127.0.0.1 by default.
    explicit TcpClient(uint16_t port, uint32_t source = INADDR_LOOPBACK) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in src{};
        src.sin_family = AF_INET;
        src.sin_addr.s_addr = htonl(source);
        const bool bound = ::bind(fd_, reinterpret_cast<sockaddr*>(&src), sizeof src) == 0;
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        sin.sin_port = htons(port);
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connected_ = bound && ::connect(fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin) == 0;
    }
    ~TcpClient() {
        if (fd_ >= 0) ::close(fd_);
    }
    bool connected() const { return connected_; }
    void send_all(std::string_view bytes) {
        size_t sent = 0;
        while (sent < bytes.size()) {
            ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) break;
            sent += static_cast<size_t>(n);
        }
    }
    // Everything until the server closes (or `timeout`).
    std::string read_all(milliseconds timeout = milliseconds(3000)) {
        timeval tv{static_cast<time_t>(timeout.count() / 1000),
                   static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        std::string out;
        char buf[65536];
        for (;;) {
            ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) break;
            out.append(buf, static_cast<size_t>(n));
        }
        return out;
    }

  private:
    int fd_ = -1;
    bool connected_ = false;
};

class MetricsServerTest : public ::testing::Test {
  protected:
    MetricsServerTest() {
        char tmpl[] = "/tmp/xvs_metrics_test.XXXXXX";
        dir_ = mkdtemp(tmpl);
        lb::PortEntry p;
        p.name = "lan0";
        EXPECT_TRUE(director_.port_add(p));
        PortInfoForCtl info;
        info.name = "lan0";
        info.has_stats = false;
        controller_ = std::make_unique<Controller>(director_, std::vector<lb::Worker*>{},
                                                   std::vector<PortInfoForCtl>{info},
                                                   [] { return Result<void>{}; });
    }
    ~MetricsServerTest() override {
        running_ = false;
        if (thread_.joinable()) thread_.join();
        std::filesystem::remove_all(dir_);
    }

    void start(ControlServer::Limits http_limits, ControlServer::HttpHandler http_handler = {}) {
        auto control = ControlServer::open(dir_ + "/xvs.sock", std::nullopt, [this](std::string_view l) {
            auto r = controller_->serve_line(l);
            return ControlServer::Reply{std::move(r.text), std::move(r.problem)};
        });
        ASSERT_TRUE(control) << control.error();
        control_ = std::move(*control);
        if (!http_handler)
            http_handler = [this](std::string_view head, const net::InetEndpoint&) {
                return metrics_http_reply(head, [this] { return controller_->metrics(); });
            };
        auto http = ControlServer::open_http(net::InetEndpoint{*net::parse_inet("127.0.0.1"), 0},
                                             std::move(http_handler), http_limits);
        ASSERT_TRUE(http) << http.error();
        http_ = std::move(*http);
        ASSERT_NE(http_->tcp_port(), 0);
        running_ = true;
        thread_ = std::thread([this] {
            ControlServer* const servers[] = {control_.get(), http_.get()};
            while (running_) ControlServer::poll_servers(servers, milliseconds(200));
        });
    }
    std::string scrape(const char* request = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n",
                       uint32_t source = INADDR_LOOPBACK) {
        TcpClient c(http_->tcp_port(), source);
        EXPECT_TRUE(c.connected());
        c.send_all(request);
        return c.read_all();
    }
    json control(const json& req) {
        auto r = control_request(dir_ + "/xvs.sock", req, 3000);
        EXPECT_TRUE(r) << (r ? "" : r.error());
        return r ? *r : json{};
    }

    std::string dir_;
    lb::Director director_;
    std::unique_ptr<Controller> controller_;
    std::unique_ptr<ControlServer> control_, http_;
    std::atomic<bool> running_{false};
    std::thread thread_;
};

TEST_F(MetricsServerTest, ScrapeShowsWhatTheControlSocketChanged) {
    start({.max_request_bytes = 8192});
    std::string before = scrape();
    EXPECT_THAT(before, StartsWith("HTTP/1.1 200 OK\r\n"));
    EXPECT_THAT(before, HasSubstr("\r\n\r\n# HELP xvs_workers "));
    EXPECT_THAT(before, HasSubstr("\nxvs_workers 0\n"));
    EXPECT_THAT(before, ::testing::Not(HasSubstr("service=")));

    ASSERT_EQ(control({{"cmd", "add_service"},
                       {"service", {{"proto", "tcp"}, {"vip", "10.0.0.1"}, {"port", 80}}},
                       {"sched", "wrr"}})["ok"],
              true);
    json added = control({{"cmd", "add_dest"},
                          {"service", {{"proto", "tcp"}, {"vip", "10.0.0.1"}, {"port", 80}}},
                          {"dest", {{"addr", "192.168.1.2"}, {"port", 8080}, {"weight", 3},
                                    {"fwd", "masq"}}}});
    ASSERT_EQ(added["ok"], true) << added.dump();
    std::string after = scrape();
    EXPECT_THAT(after, HasSubstr("\nxvs_service_connections_total{service=\"TCP 10.0.0.1:80\"} 0\n"));
    EXPECT_THAT(after, HasSubstr("\nxvs_dest_weight{service=\"TCP 10.0.0.1:80\",dest=\"192.168.1.2:8080\"} 3\n"));
    // The Content-Length is the body's.
    const size_t at = after.find("Content-Length: ");
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(std::stoul(after.substr(at + 16)), after.size() - after.find("\r\n\r\n") - 4);
}

TEST_F(MetricsServerTest, SilentHttpClientsDelayNeitherScrapesNorTheControlSocket) {
    start({.max_request_bytes = 8192, .idle_timeout = milliseconds(1500)});
    std::vector<std::unique_ptr<TcpClient>> silent;
    silent.reserve(10);
    for (int i = 0; i < 10; ++i) silent.push_back(std::make_unique<TcpClient>(http_->tcp_port()));
    auto t0 = Clock::now();
    EXPECT_THAT(scrape(), StartsWith("HTTP/1.1 200 OK\r\n"));
    EXPECT_EQ(control({{"cmd", "version"}})["ok"], true);
    EXPECT_LT(Clock::now() - t0, milliseconds(1000));
    // Each silent one is cut at its idle timeout with a 408.
    EXPECT_THAT(silent[0]->read_all(milliseconds(4000)), StartsWith("HTTP/1.1 408 "));
}

TEST_F(MetricsServerTest, OversizedHeadIs431AndTheServerGoesOn) {
    start({.max_request_bytes = 1024});
    TcpClient big(http_->tcp_port());
    big.send_all("GET /metrics HTTP/1.1\r\nX-Filler: " + std::string(4000, 'a'));
    EXPECT_THAT(big.read_all(), StartsWith("HTTP/1.1 431 "));
    EXPECT_THAT(scrape(), StartsWith("HTTP/1.1 200 OK\r\n"));
    EXPECT_THAT(scrape("DELETE /metrics HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 405 "));
    EXPECT_THAT(scrape("GET /other HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 404 "));
}

TEST_F(MetricsServerTest, TooManyClientsGet503ThenServedAgain) {
    start({.max_request_bytes = 8192, .max_clients = 4});
    std::vector<std::unique_ptr<TcpClient>> hold;
    hold.reserve(4);
    for (int i = 0; i < 4; ++i) hold.push_back(std::make_unique<TcpClient>(http_->tcp_port()));
    std::this_thread::sleep_for(milliseconds(300));  // accepted by the poll loop
    EXPECT_THAT(scrape(), StartsWith("HTTP/1.1 503 "));
    hold.clear();
    std::this_thread::sleep_for(milliseconds(300));
    EXPECT_THAT(scrape(), StartsWith("HTTP/1.1 200 OK\r\n"));
}

// The status page on the same listener: the server hands the handler the client's address,
// so status_allow (here only 127.0.0.2) refuses 127.0.0.1 and serves 127.0.0.2; /metrics
// serves both.
TEST_F(MetricsServerTest, StatusPageAllowListSeesTheClientAddress) {
    const auto only = std::vector<net::InetPrefix>{*net::parse_inet_prefix("127.0.0.2/32")};
    StatusAccess access(only);
    start({.max_request_bytes = 8192}, [&](std::string_view head, const net::InetEndpoint& peer) {
        return status_http_reply(
            head, peer, access, [this] { return controller_->metrics(); },
            [this] { return controller_->status_json(); });
    });
    constexpr uint32_t kSecond = INADDR_LOOPBACK + 1;  // 127.0.0.2
    EXPECT_THAT(scrape("GET / HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 403 Forbidden\r\n"));
    EXPECT_THAT(scrape("GET /status.json HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 403 "));
    const std::string page = scrape("GET / HTTP/1.1\r\n\r\n", kSecond);
    EXPECT_THAT(page, StartsWith("HTTP/1.1 200 OK\r\nContent-Type: text/html"));
    EXPECT_THAT(page, HasSubstr("No virtual service is configured."));
    const std::string js = scrape("GET /status.json HTTP/1.1\r\n\r\n", kSecond);
    EXPECT_EQ(json::parse(js.substr(js.find("\r\n\r\n") + 4))["status_refused"], 2);
    EXPECT_THAT(scrape(), HasSubstr("\nxvs_status_refused_total 2\n"));
    running_ = false;  // the poll thread writes the stats: read them once it is gone
    thread_.join();
    EXPECT_EQ(http_->stats().problems, 2u);  // each refusal went to the rate-limited log
}

TEST(MetricsListen, PortInUseIsRefusedWithWhatToDo) {
    auto handler = [](std::string_view) { return ControlServer::Reply{}; };
    auto first = ControlServer::open_http(net::InetEndpoint{*net::parse_inet("127.0.0.1"), 0},
                                          handler, {});
    ASSERT_TRUE(first) << first.error();
    const uint16_t port = (*first)->tcp_port();
    auto second = ControlServer::open_http(net::InetEndpoint{*net::parse_inet("127.0.0.1"), port},
                                           handler, {});
    ASSERT_FALSE(second);
    EXPECT_THAT(second.error(), HasSubstr("metrics_listen 127.0.0.1:" + std::to_string(port) +
                                          ": cannot listen: Address already in use"));
    EXPECT_THAT(second.error(), HasSubstr("set metrics_listen to a free port, or off"));
}

}  // namespace
}  // namespace xvs::ctl
