// xvs-rs: the real-server side of xvs's DR and TUN modes. `decap` attaches an XDP program that
// strips IPIP/GUE for servers whose kernel has no ipip/fou module; `sysctl` puts the VIPs on lo
// and sets the ARP and rp_filter sysctls; `tunnel` attaches the NatTun tc programs (issue 20);
// `toa` and `uoa` show FULLNAT clients' addresses to unmodified servers (issue 16).
// Exit status: 0 done, 1 failed, 2 bad usage.
#include <arpa/inet.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "readers.h"
#include "rs_sysctl.h"
#include "tc_tunnel.h"
#include "xdp_decap.h"

namespace {

using namespace xvs;
using namespace xvs::rs;

constexpr const char* kUsage = R"(usage:
  xvs-rs decap --dev IF [--gue-port N] [--addr A ...] [--mode skb|native] [--bpffs DIR]
      Attach the IPIP/GUE decapsulator to IF (it stays attached after xvs-rs exits). Only
      packets whose outer destination is one of the --addr addresses (default: every IPv4
      address of IF) are decapsulated; GUE is recognised on UDP port N (default 6080).
      Run again to change the addresses or port in place. Refuses if another XDP program
      is on IF.
  xvs-rs decap --dev IF --detach [--bpffs DIR]
      Detach it and remove its pinned maps.
  xvs-rs tunnel --dev IF --director A [--director B ...] [--gue-port N]
                [--max-sessions N] [--idle S]
      NatTun real server (xvs `nat_tunnel`): tc ingress strips the outer IPIP (or GUE on UDP
      port N) header of packets from the directors' local addresses A, B, ... and records
      (client, client port, protocol, local port) -> director in an LRU map of N entries
      (default 65536); tc egress wraps replies to a recorded client toward its director.
      A session idle S seconds (default 900) is forgotten. No VIP, no ipip/fou module.
      Run again to change directors, port or idle time in place (sessions are kept).
  xvs-rs tunnel --dev IF --detach
      Detach the tunnel programs.
  xvs-rs stats --dev IF [--bpffs DIR]
      Print the decapsulator's and/or the tunnel programs' counters and settings.
  xvs-rs sysctl --vip A [--vip B ...] [--dev IF] [--dry-run]
      Put each VIP on lo (/32) and set arp_ignore=1, arp_announce=2 (all, lo, IF) and
      rp_filter=0 (all, IF), as a DR or TUN real server needs; prints what changed.
  xvs-rs toa [--cgroup DIR]
      FULLNAT with `toa on`: accept() and getpeername() of TCP sockets created in cgroup DIR
      (default: the root of the cgroup2 hierarchy, mounted at /run/xvs-rs/cgroup2 if none is,
      so every process) return the client's address and port from xvs's TOA option, with no
      kernel module (cgroup sockops + getpeername4/6 programs; they stay after xvs-rs exits).
  xvs-rs uoa --dev IF [--dev IF2 ...] [--cgroup DIR] [--max-flows N]
      FULLNAT UDP with `uoa ipo|opp`: tc ingress on IF reads UOA and removes opp headers;
      recvfrom()/recvmsg() of UDP sockets in DIR show the client's address and port, and
      sendto() to that client goes to the director instead (cgroup recvmsg4/6, sendmsg4/6).
      N (default 65536) bounds the LRU flow map. Run again to add devices.
  xvs-rs toa|uoa off [--cgroup DIR]     (also: --detach)
      Detach them (uoa: also from every device of this network namespace).
  xvs-rs toa|uoa status [--cgroup DIR]
      Print the attached programs and their counters.

The program and its maps are pinned under DIR/xvs-rs/IF/ when DIR (default /sys/fs/bpf) is a
BPF filesystem; stats and --detach find the program through IF either way.
)";

struct Args {
    std::string cmd;
    std::string dev;
    std::string bpffs = "/sys/fs/bpf";
    std::vector<uint32_t> addrs;
    std::vector<uint32_t> vips;
    uint16_t gue_port = XVS_RS_GUE_PORT_DEFAULT;
    XdpMode mode = XdpMode::auto_;
    bool detach = false;
    std::vector<uint32_t> directors;
    uint32_t max_sessions = XVS_RT_SESSIONS_DEFAULT;
    uint32_t idle_s = XVS_RT_IDLE_DEFAULT_S;
    bool gue_port_given = false;
    bool dry_run = false;
    bool help = false;
    std::string action;             // toa/uoa: "" (attach), "off", "status"
    std::string cgroup;             // toa/uoa: --cgroup DIR ("" = the cgroup2 root)
    std::vector<std::string> devs;  // uoa: --dev (repeatable)
    uint32_t max_flows = XVS_UOA_FLOWS_DEFAULT;
};

Result<uint32_t> parse_ipv4(const std::string& opt, const std::string& text) {
    in_addr a{};
    if (inet_pton(AF_INET, text.c_str(), &a) != 1)
        return make_error(opt + " '" + text + "' is not an IPv4 address");
    return a.s_addr;
}

Result<Args> parse(int argc, char** argv) {
    Args a;
    std::vector<std::string> v(argv + 1, argv + argc);
    if (v.empty()) return make_error("no command given");
    size_t i = 0;
    if (v[0] == "--help" || v[0] == "-h") {
        a.help = true;
        return a;
    }
    a.cmd = v[i++];
    if (a.cmd != "decap" && a.cmd != "stats" && a.cmd != "sysctl" && a.cmd != "tunnel" &&
        a.cmd != "toa" && a.cmd != "uoa")
        return make_error("unknown command '" + a.cmd + "'");
    const bool reader = a.cmd == "toa" || a.cmd == "uoa";
    if (reader && i < v.size() && (v[i] == "off" || v[i] == "status")) a.action = v[i++];
    auto value = [&](const std::string& opt) -> Result<std::string> {
        if (i >= v.size()) return make_error(opt + " needs a value");
        return v[i++];
    };
    while (i < v.size()) {
        const std::string opt = v[i++];
        if (opt == "--help" || opt == "-h") {
            a.help = true;
        } else if (opt == "--dev" && a.cmd != "toa") {
            auto s = value(opt);
            if (!s) return make_error(s.error());
            a.dev = *s;
            a.devs.push_back(*s);
        } else if (opt == "--cgroup" && reader) {
            auto s = value(opt);
            if (!s) return make_error(s.error());
            a.cgroup = *s;
        } else if (opt == "--max-flows" && a.cmd == "uoa") {
            auto s = value(opt);
            if (!s) return make_error(s.error());
            char* end = nullptr;
            unsigned long n = std::strtoul(s->c_str(), &end, 10);
            if (s->empty() || *end != '\0' || n == 0 || n > 100'000'000)
                return make_error(opt + " '" + *s + "' is not a number from 1 to 100000000");
            a.max_flows = static_cast<uint32_t>(n);
        } else if (opt == "--detach" && reader) {
            a.action = "off";
        } else if (opt == "--bpffs") {
            auto s = value(opt);
            if (!s) return make_error(s.error());
            a.bpffs = *s;
        } else if (opt == "--addr" && a.cmd == "decap") {
            auto s = value(opt);
            if (!s) return make_error(s.error());
            auto ip = parse_ipv4(opt, *s);
            if (!ip) return make_error(ip.error());
            a.addrs.push_back(*ip);
        } else if (opt == "--vip" && a.cmd == "sysctl") {
            auto s = value(opt);
            if (!s) return make_error(s.error());
            auto ip = parse_ipv4(opt, *s);
            if (!ip) return make_error(ip.error());
            a.vips.push_back(*ip);
        } else if (opt == "--director" && a.cmd == "tunnel") {
            auto s = value(opt);
            if (!s) return make_error(s.error());
            auto ip = parse_ipv4(opt, *s);
            if (!ip) return make_error(ip.error());
            a.directors.push_back(*ip);
        } else if ((opt == "--max-sessions" || opt == "--idle") && a.cmd == "tunnel") {
            auto s = value(opt);
            if (!s) return make_error(s.error());
            char* end = nullptr;
            unsigned long n = std::strtoul(s->c_str(), &end, 10);
            if (s->empty() || *end != '\0' || n == 0 || n > 100'000'000)
                return make_error(opt + " '" + *s + "' is not a number from 1 to 100000000");
            (opt == "--idle" ? a.idle_s : a.max_sessions) = static_cast<uint32_t>(n);
        } else if (opt == "--gue-port" && (a.cmd == "decap" || a.cmd == "tunnel")) {
            a.gue_port_given = true;
            auto s = value(opt);
            if (!s) return make_error(s.error());
            char* end = nullptr;
            unsigned long port = std::strtoul(s->c_str(), &end, 10);
            if (s->empty() || *end != '\0' || port == 0 || port > 65535)
                return make_error("--gue-port '" + *s + "' is not a port (1-65535)");
            a.gue_port = static_cast<uint16_t>(port);
        } else if (opt == "--mode" && a.cmd == "decap") {
            auto s = value(opt);
            if (!s) return make_error(s.error());
            if (*s == "skb") {
                a.mode = XdpMode::skb;
            } else if (*s == "native") {
                a.mode = XdpMode::native;
            } else {
                return make_error("--mode '" + *s + "': use skb or native");
            }
        } else if (opt == "--detach" && (a.cmd == "decap" || a.cmd == "tunnel")) {
            a.detach = true;
        } else if (opt == "--dry-run" && a.cmd == "sysctl") {
            a.dry_run = true;
        } else {
            return make_error("unknown option '" + opt + "' for " + a.cmd);
        }
    }
    if (a.help) return a;
    if (reader) {
        if (a.cmd == "uoa" && a.action.empty() && a.devs.empty())
            return make_error("uoa needs --dev IF (the device the directors' datagrams arrive on)");
        if (!a.action.empty() && (!a.devs.empty() || a.max_flows != XVS_UOA_FLOWS_DEFAULT))
            return make_error(a.cmd + " " + a.action + " takes only --cgroup");
        return a;
    }
    if (a.cmd != "sysctl" && a.dev.empty()) return make_error(a.cmd + " needs --dev IF");
    if (a.cmd == "sysctl" && a.vips.empty()) return make_error("sysctl needs at least one --vip");
    if (a.detach && !a.addrs.empty()) return make_error("--detach takes no --addr");
    if (a.cmd == "tunnel" && !a.detach && a.directors.empty())
        return make_error("tunnel needs at least one --director (a director's local address)");
    return a;
}

std::string ip_text(uint32_t be) {
    char buf[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &be, buf, sizeof(buf));
    return buf;
}

int run_decap(const Args& a) {
    if (a.detach) {
        if (auto ok = decap_detach(a.dev, a.bpffs); !ok) {
            std::cerr << "xvs-rs: " << ok.error() << "\n";
            return 1;
        }
        std::cout << "detached the decapsulator from " << a.dev << "\n";
        return 0;
    }
    DecapConfig cfg;
    cfg.gue_port = a.gue_port;
    cfg.addrs_be = a.addrs;
    if (cfg.addrs_be.empty()) {
        auto own = device_ipv4_addrs(a.dev);
        if (!own) {
            std::cerr << "xvs-rs: " << own.error() << "\n";
            return 1;
        }
        if (own->empty()) {
            std::cerr << "xvs-rs: " << a.dev
                      << " has no IPv4 address; give the addresses to decapsulate for with "
                         "--addr A\n";
            return 1;
        }
        cfg.addrs_be = *own;
    }
    auto res = decap_attach(a.dev, cfg, a.mode, a.bpffs);
    if (!res) {
        std::cerr << "xvs-rs: " << res.error() << "\n";
        return 1;
    }
    std::cout << (res->updated ? "updated the decapsulator on " : "attached the decapsulator to ")
              << a.dev << " (prog id " << res->prog_id << "), GUE port " << cfg.gue_port << ", for";
    for (uint32_t addr : cfg.addrs_be) std::cout << " " << ip_text(addr);
    std::cout << "\n";
    if (!res->pin_note.empty()) std::cerr << "xvs-rs: note: not pinned: " << res->pin_note << "\n";
    return 0;
}

// The device MTU (a wrapped reply must fit it), 0 when unknown.
uint16_t device_mtu(const std::string& dev) {
    std::ifstream f("/sys/class/net/" + dev + "/mtu");
    unsigned mtu = 0;
    return (f >> mtu) && mtu <= 65535 ? static_cast<uint16_t>(mtu) : 0;
}

int run_tunnel(const Args& a) {
    if (a.detach) {
        if (auto ok = tunnel_detach(a.dev); !ok) {
            std::cerr << "xvs-rs: " << ok.error() << "\n";
            return 1;
        }
        std::cout << "detached the tunnel programs from " << a.dev << "\n";
        return 0;
    }
    TunnelConfig cfg;
    cfg.directors_be = a.directors;
    cfg.gue_port = a.gue_port_given ? a.gue_port : 0;
    cfg.max_sessions = a.max_sessions;
    cfg.idle_s = a.idle_s;
    cfg.mtu = device_mtu(a.dev);
    auto res = tunnel_attach(a.dev, cfg);
    if (!res) {
        std::cerr << "xvs-rs: " << res.error() << "\n";
        return 1;
    }
    std::cout << (res->updated ? "updated the tunnel programs on " : "attached the tunnel programs to ")
              << a.dev << " (ingress prog id " << res->ingress_id << ", egress " << res->egress_id
              << "), directors";
    for (uint32_t addr : cfg.directors_be) std::cout << " " << ip_text(addr);
    std::cout << ", " << (cfg.gue_port ? "IPIP and GUE port " + std::to_string(cfg.gue_port) : "IPIP")
              << ", idle " << cfg.idle_s << " s\n";
    return 0;
}

int run_tunnel_stats(const Args& a, bool quiet_if_absent) {
    auto st = tunnel_status(a.dev);
    if (!st) {
        if (quiet_if_absent) return -1;
        std::cerr << "xvs-rs: " << st.error() << "\n";
        return 1;
    }
    std::cout << "tunnel dev " << a.dev << " ingress prog id " << st->ingress_id << " egress prog id "
              << st->egress_id << " gue_port " << st->cfg.gue_port << " idle_s " << st->cfg.idle_s
              << " sessions " << st->sessions << "/" << st->cfg.max_sessions << " directors";
    for (uint32_t addr : st->cfg.directors_be) std::cout << " " << ip_text(addr);
    std::cout << "\n";
    for (int i = 0; i < XVS_RT_COUNTER_MAX; ++i)
        std::cout << "tunnel_" << tunnel_counter_name(i) << " " << st->counters[static_cast<size_t>(i)]
                  << "\n";
    return 0;
}

int run_stats(const Args& a) {
    auto st = decap_status(a.dev, a.bpffs);
    if (!st) {
        // A NatTun server has the tunnel programs only.
        if (run_tunnel_stats(a, true) == 0) return 0;
        std::cerr << "xvs-rs: " << st.error() << "\n";
        return 1;
    }
    std::cout << "dev " << a.dev << " prog id " << st->prog_id
              << (st->attached ? " attached" : " NOT attached") << " gue_port " << st->cfg.gue_port
              << " addrs";
    for (uint32_t addr : st->cfg.addrs_be) std::cout << " " << ip_text(addr);
    std::cout << "\n";
    for (int i = 0; i < XVS_RS_COUNTER_MAX; ++i)
        std::cout << decap_counter_name(i) << " " << st->counters[static_cast<size_t>(i)] << "\n";
    (void)run_tunnel_stats(a, true);
    return 0;
}

int run_sysctl(const Args& a) {
    RsSysctlRequest req;
    req.vips_be = a.vips;
    req.dev = a.dev;
    req.dry_run = a.dry_run;
    if (auto ok = rs_sysctl_apply(req, std::cout); !ok) {
        std::cerr << "xvs-rs: " << ok.error() << "\n";
        return 1;
    }
    return 0;
}

std::string hooks_text(const std::vector<ReaderHook>& hooks) {
    std::string out;
    for (const auto& h : hooks)
        out += "  " + h.hook + " " + h.prog +
               (h.id ? " id " + std::to_string(h.id) : " NOT attached") + "\n";
    return out;
}

int run_reader(const Args& a) {
    const bool toa = a.cmd == "toa";
    auto cgroup = cgroup2_resolve(a.cgroup);
    if (!cgroup) {
        std::cerr << "xvs-rs: " << cgroup.error() << "\n";
        return 1;
    }
    if (a.action == "off") {
        auto ok = toa ? toa_detach(*cgroup) : uoa_detach(*cgroup);
        if (!ok) {
            std::cerr << "xvs-rs: " << ok.error() << "\n";
            return 1;
        }
        std::cout << "detached xvs-rs " << a.cmd << " from " << *cgroup
                  << (toa ? "" : " and this namespace's devices") << "\n";
        return 0;
    }
    if (a.action == "status") {
        auto st = toa ? toa_status(*cgroup) : uoa_status(*cgroup);
        if (!st) {
            std::cerr << "xvs-rs: " << st.error() << "\n";
            return 1;
        }
        std::cout << a.cmd << " cgroup " << st->cgroup << "\n" << hooks_text(st->hooks);
        if (!toa) std::cout << "flows " << st->flows << "/" << st->max_flows << "\n";
        for (const auto& [name, value] : st->counters)
            std::cout << a.cmd << "_" << name << " " << value << "\n";
        return 0;
    }
    auto res = toa ? toa_attach(*cgroup) : uoa_attach(*cgroup, a.devs, a.max_flows);
    if (!res) {
        std::cerr << "xvs-rs: " << res.error() << "\n";
        return 1;
    }
    std::cout << (res->already ? "xvs-rs " + a.cmd + " was attached already to "
                               : "attached xvs-rs " + a.cmd + " to ")
              << *cgroup << "\n"
              << hooks_text(res->hooks);
    return 0;
}

int xvs_rs_main(int argc, char** argv) {
    auto args = parse(argc, argv);
    if (!args) {
        std::cerr << "xvs-rs: " << args.error() << " (xvs-rs --help for usage)\n";
        return 2;
    }
    if (args->help) {
        std::cout << kUsage;
        return 0;
    }
    if (args->cmd == "decap") return run_decap(*args);
    if (args->cmd == "stats") return run_stats(*args);
    if (args->cmd == "tunnel") return run_tunnel(*args);
    if (args->cmd == "toa" || args->cmd == "uoa") return run_reader(*args);
    return run_sysctl(*args);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return xvs_rs_main(argc, argv);
    } catch (const std::exception& e) {  // out of memory in the control path: say so, exit 1
        std::fputs("xvs-rs: ", stderr);
        std::fputs(e.what(), stderr);
        std::fputs("\n", stderr);
        return 1;
    } catch (...) {
        return 1;
    }
}
