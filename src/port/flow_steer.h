// Flow steering of return traffic (DESIGN.md "Threads" (a), `netif_defs { flow_steering }`):
// rte_flow rules that send TCP and UDP addressed to a local address (FULLNAT LIPs, SNAT WAN
// addresses) straight to the RX queue of the worker owning the destination port, `port %
// queues`, as DPDK's fdir/rte_flow-capable NICs allow. The rule matches the port's low bits
// under a mask, so the queue count must be a power of two. Where a port takes no such rule
// (virtio, vmxnet3, af_packet, tap...) xvs redirects between workers instead (lb/redirect.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "net/addr.h"

struct rte_flow;

namespace xvs::port {

enum class FlowSteering : uint8_t { Auto, On, Off };

class FlowSteer {
public:
    explicit FlowSteer(uint16_t port_id, unsigned queues) : port_id_(port_id), queues_(queues) {}
    ~FlowSteer();
    FlowSteer(const FlowSteer&) = delete;
    FlowSteer& operator=(const FlowSteer&) = delete;

    // Whether the port takes the rules: validates one for a sample address of each family.
    // The error says why not (the PMD's message).
    Result<void> validate() const;
    // Replaces the installed rules by those for `addrs` (2 protocols x queues rules each).
    // On a failure the rules installed so far stay, and the error names the address.
    Result<void> install(const std::vector<net::InetAddr>& addrs);
    void remove_all();
    size_t rules() const { return flows_.size(); }

private:
    Result<rte_flow*> rule(const net::InetAddr& addr, uint8_t proto, uint16_t queue,
                           bool validate_only) const;
    uint16_t port_id_;
    unsigned queues_;
    std::vector<rte_flow*> flows_;
};

}  // namespace xvs::port
