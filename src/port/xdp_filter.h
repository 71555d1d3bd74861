// xvsd's XDP program on net_af_xdp ports (port/bpf/xvs_xdp.bpf.c, the exception path): the
// object file handed to the PMD (`xdp_prog=`), and the program's address map, which the
// control thread keeps equal to "xvs's addresses + the kernel's" (xdp_addrs_sync). Control
// plane only; the data plane never sees this.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/fd.h"
#include "common/result.h"
#include "net/addr.h"

namespace xvs::port {

// The map `name` of xvs's program attached to iface (this network namespace).
Result<UniqueFd> xdp_map_open(const std::string& iface, const char* name);

// Writes the embedded program to `path` (for the PMD's xdp_prog= devarg).
Result<void> xdp_program_write(const std::string& path);

enum class XdpOwner : uint8_t { Xvs = 1, Kernel = 2 };  // port/xdp_abi.h values

// The address map of the program attached to one interface (this network namespace).
class XdpAddrMap {
  public:
    // Finds the map of xvs's program attached to iface (after the PMD attached it).
    static Result<XdpAddrMap> open(const std::string& iface);
    // Over a map fd the caller got otherwise (tests); takes ownership of fd.
    static XdpAddrMap adopt(std::string name, int fd) { return XdpAddrMap(std::move(name), fd); }
    XdpAddrMap(XdpAddrMap&& o) noexcept;
    XdpAddrMap& operator=(XdpAddrMap&&) = delete;
    XdpAddrMap(const XdpAddrMap&) = delete;
    ~XdpAddrMap();

    // Makes the map hold exactly `want` (only the differences are written). Returns the
    // number of entries changed.
    Result<unsigned> sync(const std::vector<std::pair<net::InetAddr, XdpOwner>>& want);
    const std::string& iface() const { return iface_; }

  private:
    XdpAddrMap(std::string iface, int fd) : iface_(std::move(iface)), fd_(fd) {}
    std::string iface_;
    int fd_ = -1;
    // A fixed-size key: GCC 12's -O3 warns (stringop-overread) on comparing vectors here.
    using AddrKey = std::array<uint8_t, 16>;
    std::set<std::pair<AddrKey, uint8_t>> have_;
};

// This xvsd's claim on iface's XDP hook, before the PMD attaches xvs's program: an exclusive
// flock on /run/xvs/xdp.<netns inode>.<iface>.lock, held until the returned fd closes (with
// the process, however it ends). Refused when another live xvsd holds it. With the claim, an
// xvs program still attached to iface (its address map is there) was left by a killed xvsd:
// it is detached, and `*note` says so for the log (else it is left empty). A program that is
// not xvs's is left alone (the PMD then refuses the port, naming it).
Result<UniqueFd> xdp_claim(const std::string& iface, std::string* note);

// The kernel's own addresses in this namespace (every interface), for XdpOwner::Kernel.
std::vector<net::InetAddr> kernel_addresses();

}  // namespace xvs::port
