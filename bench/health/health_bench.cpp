// bench/health: how many TCP_CHECKs per second the health loop sustains and what share of one
// core the control thread spends on them. N real servers, each with a TCP_CHECK against its
// own listener on 127.0.0.1 (a helper thread accepts and closes), checked every delay_loop;
// the manager applies verdicts to a real Director as xvsd does.
//   bench_health [N=1000] [delay_loop_s=1] [seconds=5]
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "ctl/config_apply.h"
#include "ctl/config_parser.h"
#include "ctl/health/manager.h"

using namespace xvs;

namespace {

double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}
double wall_s() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
    const double delay_loop = argc > 2 ? std::atof(argv[2]) : 1.0;
    const double seconds = argc > 3 ? std::atof(argv[3]) : 5.0;

    // Listeners, and a thread that accepts and closes whatever connects.
    std::vector<int> listeners;
    std::vector<uint16_t> ports;
    const int ep = epoll_create1(0);
    for (int i = 0; i < n; ++i) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 || listen(fd, 512) != 0) {
            std::perror("listener");
            return 1;
        }
        socklen_t len = sizeof sin;
        getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
        ports.push_back(ntohs(sin.sin_port));
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
        listeners.push_back(fd);
    }
    std::atomic<bool> stop{false};
    std::thread acceptor([&] {
        epoll_event evs[64];
        while (!stop) {
            int k = epoll_wait(ep, evs, 64, 50);
            for (int i = 0; i < k; ++i)
                for (int c; (c = accept(evs[i].data.fd, nullptr, nullptr)) >= 0;) close(c);
        }
    });

    std::string text = R"(netif_defs { port wan0 { dev net_ring0 } port lan0 { dev net_ring1 } }
ip_defs { address 10.10.1.1/24 dev wan0
          address 10.0.0.1/8 dev lan0 }
virtual_server 10.10.1.100 80 {
    lb_kind NAT
    lb_algo wrr
    delay_loop )" + std::to_string(delay_loop) +
                       R"(
    warmup )" + std::to_string(delay_loop) +
                       "\n";
    for (int i = 0; i < n; ++i) {
        text += "    real_server 10." + std::to_string(1 + i / 62500) + "." +
                std::to_string(i / 250 % 250) + "." + std::to_string(i % 250 + 1) +
                " 80 { TCP_CHECK { connect_ip 127.0.0.1 connect_port " + std::to_string(ports[i]) +
                " connect_timeout 2 } }\n";
    }
    text += "}\n";
    auto parsed = ctl::parse_config(text, "bench.conf");
    if (!parsed.config) {
        std::fprintf(stderr, "%s\n", parsed.errors.empty() ? "?" : parsed.errors[0].c_str());
        return 1;
    }
    lb::Director director(1);
    (void)director.port_add({"wan0", 0, net::MacAddr{}, 1500});
    (void)director.port_add({"lan0", 1, net::MacAddr{}, 1500});
    auto mgr = std::move(*ctl::health::Manager::create(director));
    uint64_t changes = 0;
    mgr->on_change = [&] { ++changes; };
    mgr->configure(*parsed.config);
    if (auto r = ctl::config_apply(director, mgr->effective(*parsed.config)); !r) {
        std::fprintf(stderr, "%s\n", r.error().c_str());
        return 1;
    }

    // Warm up one delay_loop plus a second, then measure.
    const double warm_end = wall_s() + delay_loop + 1;
    while (wall_s() < warm_end) mgr->run_once(100);
    const uint64_t a0 = mgr->attempts();
    const double c0 = thread_cpu_s(), w0 = wall_s();
    while (wall_s() < w0 + seconds) mgr->run_once(100);
    const double cpu = thread_cpu_s() - c0, wall = wall_s() - w0;
    const uint64_t done = mgr->attempts() - a0;
    size_t up = 0;
    for (const auto& c : mgr->show()) up += c["state"] == "up";
    std::printf("checkers %d  delay_loop %.3fs  measured %.1fs\n", n, delay_loop, wall);
    std::printf(
        "checks/s %.0f  (offered %.0f)  control-thread CPU %.1f%% of one core  "
        "(%.1f us per check)  up %zu/%d  state changes %llu\n",
        double(done) / wall, n / delay_loop, 100.0 * cpu / wall,
        done ? 1e6 * cpu / double(done) : 0.0, up, n, (unsigned long long)changes);
    mgr.reset();
    stop = true;
    acceptor.join();
    for (int fd : listeners) close(fd);
    return up == size_t(n) ? 0 : 1;
}
