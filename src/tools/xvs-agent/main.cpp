// xvs-agent: runs on a real server and reports its load to the director every interval over
// UDP (seed 002's load feedback; report format and authentication in net/feedback_wire.h).
// The director's `virtual_server ... { feedback { port N key ... } }` turns the reports into
// weights. Runs in the foreground until SIGTERM/SIGINT (or --count reports).
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "net/addr.h"
#include "net/feedback_wire.h"
#include "sample.h"

namespace {

using namespace xvs;

volatile sig_atomic_t g_stop = 0;
void on_signal(int) {
    g_stop = 1;
}

constexpr const char* kUsage =
    "Usage: xvs-agent --director ADDR:PORT (--key-file PATH | --key TEXT) [OPTIONS]\n"
    "\n"
    "Reports this real server's load to an xvs director (its `feedback { port PORT ... }`).\n"
    "\n"
    "  -d, --director ADDR:PORT  the director's kernel address and feedback port\n"
    "  -k, --key-file PATH       the shared secret (same as the director's key/keyfile)\n"
    "      --key TEXT            the shared secret on the command line (visible in ps)\n"
    "  -i, --interval SECONDS    how often to report (default 1; 0.1 .. 3600)\n"
    "  -s, --source ADDR         source address of the reports (default: the route's)\n"
    "      --cgroup DIR          CPU and run queue of this cgroup instead of the whole machine\n"
    "                            (a real server that is a container): DIR/cpu.stat (v2) or\n"
    "                            DIR/cpuacct.usage (v1), tasks in state R of DIR\n"
    "      --load-cmd CMD        run CMD (sh -c) every interval: its first line, a percentage\n"
    "                            0..100, is reported as the `custom` metric\n"
    "      --load-file PATH      read the `custom` percentage from PATH every interval\n"
    "      --proc DIR            where proc(5) is mounted (default /proc)\n"
    "  -n, --count N             stop after N reports\n"
    "      --write-report PATH   also write each datagram sent to PATH (for tests)\n"
    "  -v, --verbose             print each report on stderr\n"
    "  -h, --help\n";

struct Options {
    std::optional<net::InetEndpoint> director;
    std::string secret;
    bool have_secret = false;
    uint32_t interval_ms = 1000;
    std::optional<net::InetAddr> source;
    std::string cgroup;
    std::string load_cmd;
    std::string load_file;
    std::string proc = "/proc";
    uint64_t count = 0;  // 0 = until stopped
    std::string write_report;
    bool verbose = false;
};

[[noreturn]] void usage_error(const std::string& msg) {
    std::cerr << "xvs-agent: " << msg << "\nTry 'xvs-agent --help'.\n";
    std::exit(2);
}

std::optional<uint32_t> seconds_ms(const std::string& s) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (errno || end == s.c_str() || *end || v < 0.1 || v > 3600) return std::nullopt;
    return static_cast<uint32_t>(v * 1000 + 0.5);
}

Options parse(int argc, char** argv) {
    enum { kKey = 1000, kCgroup, kLoadCmd, kLoadFile, kProc, kWriteReport };
    static const option longs[] = {
        {"director", required_argument, nullptr, 'd'},
        {"key-file", required_argument, nullptr, 'k'},
        {"key", required_argument, nullptr, kKey},
        {"interval", required_argument, nullptr, 'i'},
        {"source", required_argument, nullptr, 's'},
        {"cgroup", required_argument, nullptr, kCgroup},
        {"load-cmd", required_argument, nullptr, kLoadCmd},
        {"load-file", required_argument, nullptr, kLoadFile},
        {"proc", required_argument, nullptr, kProc},
        {"count", required_argument, nullptr, 'n'},
        {"write-report", required_argument, nullptr, kWriteReport},
        {"verbose", no_argument, nullptr, 'v'},
        {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0},
    };
    Options o;
    int c;
    while ((c = getopt_long(argc, argv, "d:k:i:s:n:vh", longs, nullptr)) != -1) {
        const std::string arg = optarg ? optarg : "";
        switch (c) {
            case 'd':
                o.director = net::parse_inet_endpoint(arg);
                if (!o.director || o.director->port == 0)
                    usage_error("--director " + arg + ": expected ADDR:PORT ([V6]:PORT)");
                break;
            case 'k': {
                auto text = agent::read_text(arg);
                if (!text) usage_error("--key-file " + arg + ": " + std::strerror(errno));
                o.secret = *text;
                o.have_secret = true;
                break;
            }
            case kKey:
                o.secret = arg;
                o.have_secret = true;
                break;
            case 'i': {
                auto ms = seconds_ms(arg);
                if (!ms) usage_error("--interval " + arg + ": seconds from 0.1 to 3600");
                o.interval_ms = *ms;
                break;
            }
            case 's':
                o.source = net::parse_inet(net::strip_brackets(arg));
                if (!o.source) usage_error("--source " + arg + ": not an IP address");
                break;
            case kCgroup:
                o.cgroup = arg;
                break;
            case kLoadCmd:
                o.load_cmd = arg;
                break;
            case kLoadFile:
                o.load_file = arg;
                break;
            case kProc:
                o.proc = arg;
                break;
            case 'n': {
                char* end = nullptr;
                o.count = std::strtoull(arg.c_str(), &end, 10);
                if (arg.empty() || *end || o.count == 0) usage_error("--count " + arg + ": N >= 1");
                break;
            }
            case kWriteReport:
                o.write_report = arg;
                break;
            case 'v':
                o.verbose = true;
                break;
            case 'h':
                std::cout << kUsage;
                std::exit(0);
            default:
                usage_error("bad option");
        }
    }
    if (optind < argc) usage_error(std::string("unexpected argument ") + argv[optind]);
    if (!o.director) usage_error("--director ADDR:PORT is required");
    if (!o.have_secret) usage_error("--key-file PATH (or --key TEXT) is required");
    if (!o.load_cmd.empty() && !o.load_file.empty())
        usage_error("--load-cmd and --load-file both give the custom metric: choose one");
    return o;
}

uint64_t wall_ms() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
}
uint64_t mono_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The first line of `sh -c cmd`'s output, waited for at most timeout_ms (then killed).
std::optional<std::string> run_cmd(const std::string& cmd, uint32_t timeout_ms) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return std::nullopt;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    close(fds[1]);
    std::string out;
    const uint64_t deadline = mono_ns() + uint64_t{timeout_ms} * 1'000'000;
    bool timed_out = false;
    for (;;) {
        const uint64_t now = mono_ns();
        if (now >= deadline) {
            timed_out = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int r = poll(&p, 1, static_cast<int>((deadline - now) / 1'000'000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            timed_out = r == 0;
            break;
        }
        char buf[256];
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n <= 0) break;
        if (out.size() < 4096) out.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    return out;
}

class Sampler {
  public:
    explicit Sampler(const Options& o) : o_(o) {
        ncpu_ = static_cast<unsigned>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
        prime();
    }

    net::FeedbackReport sample() {
        net::FeedbackReport r;
        r.interval_ms = o_.interval_ms;
        r.ncpu = static_cast<uint16_t>(std::min(ncpu_, 65535u));
        const uint64_t now_ns = mono_ns();
        if (!o_.cgroup.empty()) {
            if (auto used = cgroup_usage()) {
                if (last_cg_ && *used >= *last_cg_)
                    r.cpu_permille =
                        agent::cgroup_cpu_permille(*used - *last_cg_, now_ns - last_ns_, ncpu_);
                last_cg_ = used;
            } else {
                warn_once(cg_warned_, "cannot read CPU usage of cgroup " + o_.cgroup);
            }
        } else if (auto text = agent::read_text(o_.proc + "/stat")) {
            if (auto t = agent::parse_proc_stat(*text)) {
                if (last_cpu_) r.cpu_permille = agent::cpu_permille(*last_cpu_, *t);
                last_cpu_ = t;
            }
        }
        last_ns_ = now_ns;
        if (auto text = agent::read_text(o_.proc + "/loadavg"))
            if (auto la = agent::parse_loadavg(*text)) {
                r.loadavg_x100 = la->x100;
                // The count includes the agent, running as it reads.
                r.running = la->running > 0 ? static_cast<uint16_t>(la->running - 1) : 0;
            }
        if (!o_.cgroup.empty()) r.running = cgroup_running();
        if (auto text = agent::read_text(o_.proc + "/meminfo"))
            if (auto m = agent::parse_meminfo_permille(*text)) r.mem_permille = *m;
        for (const char* f : {"/net/tcp", "/net/tcp6"})
            if (auto text = agent::read_text(o_.proc + f))
                r.established += agent::count_established(*text);
        std::optional<std::string> custom;
        if (!o_.load_cmd.empty()) {
            custom = run_cmd(o_.load_cmd, std::max<uint32_t>(o_.interval_ms / 2, 100));
            if (!custom)
                warn_once(custom_warned_, "--load-cmd failed or timed out: no custom metric");
        } else if (!o_.load_file.empty()) {
            custom = agent::read_text(o_.load_file);
            if (!custom) warn_once(custom_warned_, "--load-file " + o_.load_file + " unreadable");
        }
        if (custom) {
            if (auto v = agent::parse_load_percent(*custom)) {
                r.has_custom = true;
                r.custom_permille = *v;
                custom_warned_ = false;
            } else {
                warn_once(custom_warned_,
                          "custom load is not a percentage: " + custom->substr(0, 40));
            }
        }
        r.sent_ms = wall_ms();
        return r;
    }

  private:
    void prime() {
        last_ns_ = mono_ns();
        if (!o_.cgroup.empty()) {
            last_cg_ = cgroup_usage();
        } else if (auto text = agent::read_text(o_.proc + "/stat")) {
            last_cpu_ = agent::parse_proc_stat(*text);
        }
    }
    std::optional<uint64_t> cgroup_usage() const {
        if (auto t = agent::read_text(o_.cgroup + "/cpu.stat"))
            if (auto v = agent::parse_cgroup_v2_usage_ns(*t)) return v;
        if (auto t = agent::read_text(o_.cgroup + "/cpuacct.usage"))
            return agent::parse_cgroup_v1_usage_ns(*t);
        return std::nullopt;
    }
    // Tasks of the cgroup in state R (running or waiting for a CPU), the agent's own threads
    // left out: the container's run queue.
    uint16_t cgroup_running() const {
        std::optional<std::string> list;
        for (const char* f : {"/cgroup.threads", "/tasks", "/cgroup.procs"})
            if ((list = agent::read_text(o_.cgroup + f))) break;
        if (!list) return 0;
        const std::string self = std::to_string(getpid());
        uint32_t n = 0;
        size_t pos = 0;
        while (pos < list->size()) {
            size_t end = list->find('\n', pos);
            if (end == std::string::npos) end = list->size();
            const std::string tid = list->substr(pos, end - pos);
            pos = end + 1;
            if (tid.empty() || tid == self) continue;
            auto stat = agent::read_text(o_.proc + "/" + tid + "/stat");
            if (!stat) continue;  // gone meanwhile
            if (auto st = agent::parse_stat_state(*stat); st && *st == 'R') ++n;
        }
        return static_cast<uint16_t>(std::min<uint32_t>(n, 65535));
    }
    static void warn_once(bool& flag, const std::string& msg) {
        if (!flag) std::cerr << "xvs-agent: " << msg << "\n";
        flag = true;
    }

    const Options& o_;
    unsigned ncpu_ = 1;
    std::optional<agent::CpuTimes> last_cpu_;
    std::optional<uint64_t> last_cg_;
    uint64_t last_ns_ = 0;
    bool cg_warned_ = false;
    bool custom_warned_ = false;
};

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    const net::FeedbackKey key = net::feedback_key(o.secret);

    sockaddr_storage dst{};
    socklen_t dst_len = 0;
    const bool v4 = o.director->addr.is_v4();
    if (v4) {
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        sin.sin_port = htons(o.director->port);
        sin.sin_addr.s_addr = o.director->addr.v4_be();
        std::memcpy(&dst, &sin, sizeof sin);
        dst_len = sizeof sin;
    } else {
        sockaddr_in6 sin6{};
        sin6.sin6_family = AF_INET6;
        sin6.sin6_port = htons(o.director->port);
        std::memcpy(&sin6.sin6_addr, o.director->addr.b, 16);
        std::memcpy(&dst, &sin6, sizeof sin6);
        dst_len = sizeof sin6;
    }
    const int fd = socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        std::cerr << "xvs-agent: socket: " << std::strerror(errno) << "\n";
        return 1;
    }
    if (o.source) {
        if (o.source->is_v4() != v4) usage_error("--source and --director differ in family");
        sockaddr_storage src{};
        socklen_t src_len = 0;
        if (v4) {
            sockaddr_in sin{};
            sin.sin_family = AF_INET;
            sin.sin_addr.s_addr = o.source->v4_be();
            std::memcpy(&src, &sin, sizeof sin);
            src_len = sizeof sin;
        } else {
            sockaddr_in6 sin6{};
            sin6.sin6_family = AF_INET6;
            std::memcpy(&sin6.sin6_addr, o.source->b, 16);
            std::memcpy(&src, &sin6, sizeof sin6);
            src_len = sizeof sin6;
        }
        if (bind(fd, reinterpret_cast<sockaddr*>(&src), src_len) != 0) {
            std::cerr << "xvs-agent: bind " << net::to_string(*o.source) << ": "
                      << std::strerror(errno) << "\n";
            return 1;
        }
    }

    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);

    Sampler sampler(o);
    uint64_t sent = 0;
    std::cerr << "xvs-agent: reporting to " << net::to_string(*o.director) << " every "
              << o.interval_ms << " ms\n";
    // The first report follows one interval of measurement (CPU is a difference).
    auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.interval_ms);
    while (!g_stop) {
        std::this_thread::sleep_until(next);
        if (g_stop) break;
        next += std::chrono::milliseconds(o.interval_ms);
        const net::FeedbackReport r = sampler.sample();
        const net::FeedbackDatagram d = net::feedback_encode(r, key);
        if (sendto(fd, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&dst), dst_len) < 0) {
            std::cerr << "xvs-agent: send to " << net::to_string(*o.director) << ": "
                      << std::strerror(errno) << "\n";  // the director may be back later
        }
        if (!o.write_report.empty()) {
            std::ofstream out(o.write_report, std::ios::binary | std::ios::trunc);
            out.write(reinterpret_cast<const char*>(d.data()),
                      static_cast<std::streamsize>(d.size()));
        }
        if (o.verbose)
            std::fprintf(stderr,
                         "xvs-agent: cpu %.1f%% mem %.1f%% loadavg %.2f running %u established %u"
                         " custom %s\n",
                         r.cpu_permille / 10.0, r.mem_permille / 10.0, r.loadavg_x100 / 100.0,
                         unsigned{r.running}, r.established,
                         r.has_custom ? std::to_string(r.custom_permille / 10.0).c_str() : "-");
        if (o.count && ++sent >= o.count) break;
        // A late wake-up (suspended) does not send a burst of catch-up reports.
        if (next < std::chrono::steady_clock::now()) next = std::chrono::steady_clock::now();
    }
    close(fd);
    return 0;
}
