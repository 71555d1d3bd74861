// The XDP program's flow fast path, see port/xdp_flows.h.
#include "port/xdp_flows.h"

#include <bpf/bpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "port/xdp_filter.h"

namespace xvs::port {

xvs_xdp_flow_key xdp_flow_key(const net::InetAddr& src, const net::InetAddr& dst, uint16_t sport_be,
                              uint16_t dport_be, uint8_t proto) {
    xvs_xdp_flow_key k{};
    std::memcpy(k.saddr, src.b, sizeof k.saddr);
    std::memcpy(k.daddr, dst.b, sizeof k.daddr);
    k.sport = sport_be;
    k.dport = dport_be;
    k.proto = proto;
    return k;
}

Result<XdpFlows> XdpFlows::open(const std::string& iface) {
    auto flows = xdp_map_open(iface, "xvs_xdp_flows");
    if (!flows) return make_error(flows.error());
    auto seen = xdp_map_open(iface, "xvs_xdp_seen");
    if (!seen) return make_error(seen.error());
    auto conf = xdp_map_open(iface, "xvs_xdp_conf");
    if (!conf) return make_error(conf.error());
    return adopt(iface, std::move(*flows), std::move(*seen), std::move(*conf));
}

Result<XdpFlows> XdpFlows::adopt(std::string iface, UniqueFd flows, UniqueFd seen, UniqueFd conf) {
    const long page = sysconf(_SC_PAGESIZE);
    const size_t bytes = sizeof(xvs_xdp_seen) * XVS_XDP_MAX_FLOWS;
    const size_t len = (bytes + size_t(page) - 1) / size_t(page) * size_t(page);
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, seen.get(), 0);
    if (p == MAP_FAILED)
        return make_error("XDP " + iface + ": cannot map xvs_xdp_seen: " + std::strerror(errno) +
                          " (a program built without BPF_F_MMAPABLE?)");
    return XdpFlows(std::move(iface), std::move(flows), std::move(conf), std::move(seen), p, len);
}

XdpFlows::XdpFlows(XdpFlows&& o) noexcept
    : iface_(std::move(o.iface_)),
      ifindex_(o.ifindex_),
      flows_(std::move(o.flows_)),
      conf_(std::move(o.conf_)),
      seen_fd_(std::move(o.seen_fd_)),
      seen_(std::exchange(o.seen_, nullptr)),
      seen_len_(o.seen_len_) {}

XdpFlows::~XdpFlows() {
    if (seen_) munmap(seen_, seen_len_);
}

Result<void> XdpFlows::enable(bool on) {
    const uint32_t zero = 0;
    xvs_xdp_conf conf{};
    conf.flows = on ? 1 : 0;
    if (bpf_map_update_elem(conf_.get(), &zero, &conf, BPF_ANY) != 0)
        return make_error("XDP " + iface_ +
                          ": cannot switch the flow fast path: " + std::strerror(errno));
    return {};
}

xvs_xdp_seen* XdpFlows::slot(uint32_t i) const {
    return static_cast<xvs_xdp_seen*>(seen_) + i;
}

Result<void> XdpFlows::install(const xvs_xdp_flow_key& key, const xvs_xdp_flow& flow) {
    if (flow.slot >= XVS_XDP_MAX_FLOWS)
        return make_error("XDP " + iface_ + ": flow slot " + std::to_string(flow.slot) +
                          " out of range (" + std::to_string(XVS_XDP_MAX_FLOWS) + " slots)");
    // The program adds to the slot with atomic instructions; start it at zero the same way.
    xvs_xdp_seen* s = slot(flow.slot);
    std::atomic_ref<__u64>(s->packets).store(0, std::memory_order_relaxed);
    std::atomic_ref<__u64>(s->bytes).store(0, std::memory_order_relaxed);
    std::atomic_ref<__u64>(s->last_ns).store(0, std::memory_order_release);
    if (bpf_map_update_elem(flows_.get(), &key, &flow, BPF_ANY) != 0)
        return make_error("XDP " + iface_ + ": cannot install a flow: " + std::strerror(errno) +
                          (errno == E2BIG ? " (the map is full)" : ""));
    return {};
}

bool XdpFlows::remove(const xvs_xdp_flow_key& key) {
    return bpf_map_delete_elem(flows_.get(), &key) == 0;
}

XdpFlows::Seen XdpFlows::seen(uint32_t i) const {
    if (i >= XVS_XDP_MAX_FLOWS) return {};
    xvs_xdp_seen* s = slot(i);
    Seen out;
    out.last_ns = std::atomic_ref<__u64>(s->last_ns).load(std::memory_order_acquire);
    out.packets = std::atomic_ref<__u64>(s->packets).load(std::memory_order_relaxed);
    out.bytes = std::atomic_ref<__u64>(s->bytes).load(std::memory_order_relaxed);
    return out;
}

}  // namespace xvs::port
