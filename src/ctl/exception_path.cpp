// The exception path's control side, see ctl/exception_path.h.
#include "ctl/exception_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include "ctl/log.h"
#include "lb/snapshot.h"
#include "port/xdp_features.h"

namespace xvs::ctl {

namespace {

// Whether the fast path can send out of the port, for the operator: the workers ask again
// every second (lb/offload.h) and hand over no conn that would leave by a port that cannot.
void log_xmit(const std::string& port, const port::XdpFlows& flows) {
    auto features = port::XdpFeatures::open();
    if (!features) {
        log_warning("port " + port + ": cannot ask whether " + flows.iface() +
                    " takes XDP frames (" + features.error() +
                    "); conns are handed over anyway: on a veth, its peer needs an XDP program or "
                    "GRO on, or their packets are lost");
        return;
    }
    auto f = features->of(flows.ifindex());
    if (f && (*f & port::kXdpActNdoXmit)) return;
    log_warning("port " + port + ": " + flows.iface() + " takes no XDP frames now" +
                (f ? "" : " (" + f.error() + ")") +
                ": no conn leaving by it is handed to the fast path (counted xdp_offload_no_xmit) "
                "until it does; on a veth, give its peer an XDP program or turn GRO on there "
                "(ethtool -K PEER gro on)");
}

}  // namespace

using port::devarg_value;

ExceptionPorts::~ExceptionPorts() {
    if (!prog_path_.empty()) unlink(prog_path_.c_str());
}

Result<std::string> ExceptionPorts::devargs(const PortDef& pd) {
    if (pd.exception_kind() != ExceptionKind::Xdp) return pd.dev;
    if (!devarg_value(pd.dev, "xdp_prog").empty()) return pd.dev;  // the operator's own
    // A killed xvsd leaves its program attached (the PMD attaches it through netlink, not a
    // link the process owns), and the PMD would then refuse the interface.
    std::string note;
    auto claim = port::xdp_claim(devarg_value(pd.dev, "iface"), &note);
    if (!claim) return make_error("port " + pd.name + ": " + claim.error());
    if (!note.empty()) log_info("port " + pd.name + ": " + note);
    xdp_claims_.push_back(std::move(*claim));
    if (prog_path_.empty()) {
        mkdir("/run/xvs", 0755);
        const std::string path = "/run/xvs/xvs_xdp." + std::to_string(getpid()) + ".o";
        if (auto r = port::xdp_program_write(path); !r) return make_error(r.error());
        prog_path_ = path;
    }
    return pd.dev + ",xdp_prog=" + prog_path_;
}

Result<std::optional<uint16_t>> ExceptionPorts::open(const PortDef& pd, const port::PortInfo& info,
                                                     const port::PortParams& params,
                                                     rte_mempool* pool) {
    switch (pd.exception_kind()) {
        case ExceptionKind::Tap: {
            // Management traffic: short rings (net_tap keeps an mbuf per RX descriptor, taken
            // from the port's pool).
            port::PortParams tap_params = params;
            tap_params.rx_desc = 256;
            tap_params.tx_desc = 256;
            auto tap = port::port_open_tap("net_tap_xvs" + std::to_string(tap_ids_.size()),
                                           pd.exception_tap, info.mac, tap_params, pool);
            if (!tap) return make_error(tap.error());
            tap_ids_.push_back(tap->id);
            log_info("port " + pd.name + ": exception path through TAP " + pd.exception_tap +
                     " (DPDK port " + std::to_string(tap->id) +
                     "): give the kernel its addresses there");
            return std::optional<uint16_t>(tap->id);
        }
        case ExceptionKind::Xdp: {
            const std::string iface = devarg_value(pd.dev, "iface");
            auto map = port::XdpAddrMap::open(iface);
            if (!map) return make_error("port " + pd.name + ": " + map.error());
            maps_.push_back(std::move(*map));
            if (offload_after_) {
                auto flows = port::XdpFlows::open(iface);
                if (!flows) return make_error("port " + pd.name + ": " + flows.error());
                if (auto on = flows->enable(true); !on)
                    return make_error("port " + pd.name + ": " + on.error());
                flows_.emplace_back(info.id, std::make_unique<port::XdpFlows>(std::move(*flows)));
                log_info("port " + pd.name + ": XDP flow fast path on (xdp_offload " +
                         std::to_string(offload_after_) + ")");
                log_xmit(pd.name, *flows_.back().second);
            }
            log_info("port " + pd.name + ": exception path through xvs's XDP program on " + iface +
                     ": frames not for xvs go to the kernel");
            return std::optional<uint16_t>{};
        }
        default:
            return std::optional<uint16_t>{};
    }
}

std::vector<port::XdpFlows*> ExceptionPorts::flows_by_port_id() const {
    std::vector<port::XdpFlows*> out;
    for (const auto& [id, flows] : flows_) {
        if (out.size() <= id) out.resize(id + 1u, nullptr);
        out[id] = flows.get();
    }
    return out;
}

void ExceptionPorts::sync(const lb::Director& director) {
    if (maps_.empty()) return;
    std::vector<std::pair<net::InetAddr, port::XdpOwner>> want;
    const lb::Snapshot* snap = director.snapshot();
    snap->stack.own_addrs().for_each([&](const stack::AddrKey& k, const stack::OwnAddr&) {
        want.emplace_back(k.addr, port::XdpOwner::Xvs);
    });
    for (const net::InetAddr& a : port::kernel_addresses()) {
        if (!snap->stack.own(a)) want.emplace_back(a, port::XdpOwner::Kernel);
    }
    for (auto& m : maps_) {
        auto r = m.sync(want);
        if (!r) {
            if (r.error() != last_error_) log_error(r.error());
            last_error_ = r.error();
        } else if (*r) {
            log_debug("XDP " + m.iface() + ": address map updated, " + std::to_string(*r) +
                      " entries changed, " + std::to_string(want.size()) + " held");
        }
    }
}

}  // namespace xvs::ctl
