// `netif_defs { flow_steering on|off|auto }` on a running xvsd: with several workers, the
// rte_flow rules of port/flow_steer.h on every port, kept in step with the local and SNAT WAN
// addresses of each new snapshot. auto uses them when every port validates them and
// otherwise leaves return traffic to the redirect between workers (lb/redirect.h); on refuses
// to start without them; off never tries.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "ctl/config.h"
#include "ctl/controller.h"
#include "lb/director.h"
#include "port/flow_steer.h"

namespace xvs::ctl {

class FlowSteering {
public:
    // Decides per the configuration; an error only for `flow_steering on` that cannot be.
    Result<void> start(const Config& cfg, const std::vector<PortInfoForCtl>& ports);
    // Installs the rules for the current snapshot's addresses when they changed.
    void sync(const lb::Director& director);
    void stop() { ports_.clear(); }
    bool active() const { return !ports_.empty(); }

private:
    std::vector<std::unique_ptr<port::FlowSteer>> ports_;  // in the director's port order
    std::vector<std::vector<net::InetAddr>> installed_;
    uint64_t generation_ = 0;
    std::string last_error_;
};

}  // namespace xvs::ctl
