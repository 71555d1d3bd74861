// The flow fast path of xvsd's XDP program on one net_af_xdp port (port/xdp_abi.h): the
// directions of conns handed to the program (xvs_xdp_flows), what it has seen of each
// (xvs_xdp_seen, mapped into this process: read without a system call) and the switch that
// makes the program look flows up at all (xvs_xdp_conf). Installing and removing a flow is a
// bpf() system call each; reading a slot is two memory loads.
#pragma once

#include <net/if.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "common/fd.h"
#include "common/result.h"
#include "net/addr.h"
#include "port/xdp_abi.h"

namespace xvs::port {

// A flow's key as its packets arrive: ports in network byte order, as in the packet.
xvs_xdp_flow_key xdp_flow_key(const net::InetAddr& src, const net::InetAddr& dst, uint16_t sport_be,
                              uint16_t dport_be, uint8_t proto);

class XdpFlows {
  public:
    // The maps of xvs's program attached to iface (after the PMD attached it).
    static Result<XdpFlows> open(const std::string& iface);
    // Over map fds the caller got otherwise (tests); takes ownership of them.
    static Result<XdpFlows> adopt(std::string iface, UniqueFd flows, UniqueFd seen, UniqueFd conf);
    XdpFlows(XdpFlows&& o) noexcept;
    XdpFlows& operator=(XdpFlows&&) = delete;
    XdpFlows(const XdpFlows&) = delete;
    ~XdpFlows();

    // Whether the program looks flows up (off: no lookup a packet, every flow goes to xvs).
    Result<void> enable(bool on);
    // Hands one direction to the program (or replaces it); its slot counts from zero.
    Result<void> install(const xvs_xdp_flow_key& key, const xvs_xdp_flow& flow);
    // Takes it back; false when it was not there.
    bool remove(const xvs_xdp_flow_key& key);

    struct Seen {
        uint64_t last_ns = 0;  // CLOCK_MONOTONIC of the last packet, 0: none yet
        uint64_t packets = 0;
        uint64_t bytes = 0;
    };
    Seen seen(uint32_t slot) const;
    const std::string& iface() const { return iface_; }
    uint32_t ifindex() const { return ifindex_; }  // 0: an adopted map without an interface

  private:
    XdpFlows(std::string iface, UniqueFd flows, UniqueFd conf, UniqueFd seen_fd, void* seen,
             size_t seen_len)
        : iface_(std::move(iface)),
          ifindex_(if_nametoindex(iface_.c_str())),
          flows_(std::move(flows)),
          conf_(std::move(conf)),
          seen_fd_(std::move(seen_fd)),
          seen_(seen),
          seen_len_(seen_len) {}
    xvs_xdp_seen* slot(uint32_t i) const;

    std::string iface_;
    uint32_t ifindex_ = 0;
    UniqueFd flows_;
    UniqueFd conf_;
    UniqueFd seen_fd_;
    void* seen_ = nullptr;  // XVS_XDP_MAX_FLOWS slots, mmap of seen_fd_
    size_t seen_len_ = 0;
};

}  // namespace xvs::port
