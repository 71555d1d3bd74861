// The xvs-rs XDP decapsulator seen from user space: load the embedded BPF object, fill its
// maps, attach it to a device and pin it under <bpffs>/xvs-rs/<dev>/. Later runs (stats,
// detach, a reconfigure) find it through the device (program and map names), the pins serve
// when it is detached or for other tools. Invariant: xvs-rs never replaces or detaches an XDP
// program that is not its decapsulator.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/fd.h"
#include "decap_abi.h"

struct bpf_object;

namespace xvs::rs {

// Owns one file descriptor (a BPF map or program): common/fd.h.
using Fd = UniqueFd;

struct DecapConfig {
    uint16_t gue_port = XVS_RS_GUE_PORT_DEFAULT;
    std::vector<uint32_t> addrs_be;  // IPv4 addresses to decapsulate for, network byte order
};

using DecapCounters = std::array<uint64_t, XVS_RS_COUNTER_MAX>;

// Counter names, in the order of the per-CPU array (from decap_abi.h's X-macro).
const char* decap_counter_name(int idx);
const char* decap_counter_help(int idx);

// A loaded (verified) program and its maps; not attached. The object is closed on destruction,
// which frees the program unless it was attached or pinned.
class DecapProgram {
  public:
    static Result<DecapProgram> load();
    int prog_fd() const;
    int addrs_fd() const;
    int config_fd() const;
    int stats_fd() const;

  private:
    struct ObjClose {
        void operator()(bpf_object* obj) const;
    };
    std::unique_ptr<bpf_object, ObjClose> obj_;
};

// Replaces the address set and the GUE port in the maps behind the given descriptors.
Result<void> decap_configure(int addrs_fd, int config_fd, const DecapConfig& cfg);
// Sums the per-CPU counters.
Result<DecapCounters> decap_counters_read(int stats_fd);
// Reads back the addresses (network byte order) and the GUE port from the maps.
Result<DecapConfig> decap_config_read(int addrs_fd, int config_fd);

enum class XdpMode { auto_, skb, native };

// The device-level operations the tool offers.
struct AttachResult {
    bool updated = false;  // our program was attached already: maps updated in place
    uint32_t prog_id = 0;
    std::string pin_note;  // why the maps are not pinned (attached all the same), or empty
};
Result<AttachResult> decap_attach(const std::string& dev, const DecapConfig& cfg, XdpMode mode,
                                  const std::string& bpffs);
Result<void> decap_detach(const std::string& dev, const std::string& bpffs);

struct DecapStatus {
    bool attached = false;  // our pinned program is the one attached to the device
    uint32_t prog_id = 0;
    DecapConfig cfg;
    DecapCounters counters{};
};
Result<DecapStatus> decap_status(const std::string& dev, const std::string& bpffs);

// The IPv4 addresses of a device (network byte order), from getifaddrs.
Result<std::vector<uint32_t>> device_ipv4_addrs(const std::string& dev);

}  // namespace xvs::rs
