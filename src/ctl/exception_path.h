// The control plane's side of the exception path (stack/exception.h): per port, either a TAP
// (net_tap, `exception tap NAME`) whose id the director's PortEntry carries, or on net_af_xdp
// xvsd's XDP program (`exception xdp`, the default there) whose address map this keeps equal
// to xvs's addresses plus the kernel's, polled from the control loop.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "ctl/config.h"
#include "lb/director.h"
#include "port/ethdev.h"
#include "port/xdp_filter.h"
#include "port/xdp_flows.h"

struct rte_mempool;

namespace xvs::ctl {

class ExceptionPorts {
  public:
    ExceptionPorts() = default;
    ExceptionPorts(const ExceptionPorts&) = delete;
    ~ExceptionPorts();

    // The devargs to open pd with: with the XDP exception path, xdp_prog= is added (the
    // program is written once, to a file in /run/xvs, removed when xvsd stops).
    Result<std::string> devargs(const PortDef& pd);
    // After pd is open: its TAP (returned, for PortEntry::exception_port_id) or its XDP map.
    Result<std::optional<uint16_t>> open(const PortDef& pd, const port::PortInfo& info,
                                         const port::PortParams& params, rte_mempool* pool);
    // Writes what changed in the address maps (xvs's addresses of the current snapshot, the
    // kernel's from getifaddrs); cheap when nothing did. Control thread, every few 100 ms.
    void sync(const lb::Director& director);

    const std::vector<uint16_t>& tap_ids() const { return tap_ids_; }
    // `xdp_offload N` (before the ports open): their flow fast paths are switched on.
    void set_offload(uint32_t after) { offload_after_ = after; }
    // The XDP ports' flow fast paths by DPDK port id (nullptr: none), switched on when
    // `xdp_offload` is set (lb/offload.h); the workers hold these pointers.
    std::vector<port::XdpFlows*> flows_by_port_id() const;

  private:
    std::string prog_path_;
    uint32_t offload_after_ = 0;
    std::vector<port::XdpAddrMap> maps_;
    std::vector<std::pair<uint16_t, std::unique_ptr<port::XdpFlows>>> flows_;  // by DPDK port id
    std::vector<UniqueFd> xdp_claims_;  // port::xdp_claim's locks, one per XDP interface
    std::vector<uint16_t> tap_ids_;
    std::string last_error_;
};

}  // namespace xvs::ctl
