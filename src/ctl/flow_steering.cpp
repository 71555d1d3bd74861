// Flow steering on the running daemon, see ctl/flow_steering.h.
#include "ctl/flow_steering.h"

#include <algorithm>

#include "ctl/log.h"

namespace xvs::ctl {

Result<void> FlowSteering::start(const Config& cfg, const std::vector<PortInfoForCtl>& ports) {
    const unsigned n = cfg.worker.workers;
    const port::FlowSteering mode = cfg.netif.flow_steering;
    if (n < 2 || mode == port::FlowSteering::Off) return {};
    std::vector<std::unique_ptr<port::FlowSteer>> rules;
    std::string why;
    for (const auto& p : ports) {
        auto fs = std::make_unique<port::FlowSteer>(p.port_id, n);
        if (auto r = fs->validate(); !r) {
            why = "port " + p.name + " (" + p.dev + "): " + r.error();
            break;
        }
        rules.push_back(std::move(fs));
    }
    if (!why.empty()) {
        if (mode == port::FlowSteering::On) {
            const SourceLoc& l = cfg.netif.flow_steering_loc;
            return make_error(l.file + ":" + std::to_string(l.line) +
                              ": flow_steering on: " + why +
                              ": set flow_steering auto or off, and return traffic that reaches "
                              "another worker is redirected to its owner");
        }
        log_info("flow steering: not used, " + why +
                 "; return traffic reaching another worker is redirected to its owner");
        return {};
    }
    ports_ = std::move(rules);
    installed_.assign(ports_.size(), {});
    log_info("flow steering: rte_flow rules send local-address traffic to the queue of port % " +
             std::to_string(n) + " on every port");
    return {};
}

void FlowSteering::sync(const lb::Director& director) {
    if (ports_.empty()) return;
    const lb::Snapshot* snap = director.snapshot();
    if (snap->generation == generation_) return;
    generation_ = snap->generation;
    std::vector<std::vector<net::InetAddr>> want(ports_.size());
    snap->stack.own_addrs().for_each([&](const stack::AddrKey& k, const stack::OwnAddr& a) {
        if (a.kind != stack::AddrKind::Vip && a.port < want.size()) want[a.port].push_back(k.addr);
    });
    for (size_t p = 0; p < ports_.size(); ++p) {
        std::sort(want[p].begin(), want[p].end(),
                  [](const net::InetAddr& x, const net::InetAddr& y) {
                      return std::lexicographical_compare(x.b, x.b + 16, y.b, y.b + 16);
                  });
        if (want[p] == installed_[p]) continue;
        if (auto r = ports_[p]->install(want[p]); !r) {
            if (r.error() != last_error_) log_error("flow steering: " + r.error());
            last_error_ = r.error();
            continue;
        }
        installed_[p] = want[p];
        log_info("flow steering: " + std::to_string(ports_[p]->rules()) + " rules on port " +
                 std::to_string(p));
    }
}

}  // namespace xvs::ctl
