// The control plane's side of the exception path (stack/exception.h): per port, either a TAP
// (net_tap, `exception tap NAME`) whose id the director's PortEntry carries, or on net_af_xdp
// xvsd's XDP program (`exception xdp`, the default there) whose address map this keeps equal
// to xvs's addresses plus the kernel's, polled from the control loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "ctl/config.h"
#include "lb/director.h"
#include "port/ethdev.h"
#include "port/xdp_filter.h"

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

  private:
    std::string prog_path_;
    std::vector<port::XdpAddrMap> maps_;
    std::vector<UniqueFd> xdp_claims_;  // port::xdp_claim's locks, one per XDP interface
    std::vector<uint16_t> tap_ids_;
    std::string last_error_;
};

}  // namespace xvs::ctl
