// What a network device can do with XDP frames, from the kernel's "netdev" generic netlink
// family (Linux 6.3 and later): whether xvsd's XDP program may send a frame out of it with
// bpf_redirect or XDP_TX. A veth takes such frames only when its peer runs NAPI (an XDP
// program or GRO on the peer); otherwise the kernel drops each frame after the program
// returned, where no counter of the program's sees it. lb/offload.cpp asks before it hands a
// conn to the program and takes conns back from a port that lost the feature.
#pragma once

#include <cstdint>
#include <memory>

#include "common/result.h"

// libmnl's socket, opaque here: its header stays out of the many files that include this one
// through lb/offload.h and lb/worker_ctx.h.
struct mnl_socket;

namespace xvs::port {

// NETDEV_XDP_ACT_* of the kernel's uapi linux/netdev.h, absent from Debian 12's 6.1 headers.
inline constexpr uint64_t kXdpActBasic = 1;
inline constexpr uint64_t kXdpActRedirect = 2;
inline constexpr uint64_t kXdpActNdoXmit = 4;  // takes frames from bpf_redirect and XDP_TX

class XdpFeatures {
  public:
    // A generic netlink socket with the "netdev" family resolved; an error when the kernel
    // has no such family (before Linux 6.3: nothing to ask).
    static Result<XdpFeatures> open();

    // The device's NETDEV_XDP_ACT_* bits.
    Result<uint64_t> of(uint32_t ifindex);

  private:
    struct Close {
        void operator()(mnl_socket* s) const;  // mnl_socket_close
    };
    XdpFeatures(std::unique_ptr<mnl_socket, Close> nl, uint16_t family)
        : nl_(std::move(nl)), family_(family) {}

    std::unique_ptr<mnl_socket, Close> nl_;
    uint16_t family_ = 0;
    uint32_t seq_ = 0;
};

}  // namespace xvs::port
