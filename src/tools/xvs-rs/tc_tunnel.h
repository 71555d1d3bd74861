// The xvs-rs NatTun programs seen from user space (issue 20): load the embedded tc ingress and
// egress programs (bpf/tunnel.bpf.c), fill their maps, attach both to a device's clsact hooks
// and find them again there for stats, a reconfigure or --detach. Invariant: xvs-rs only
// replaces or detaches tc programs that are its own (by name, at its handle and priority).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "tunnel_abi.h"

struct bpf_object;

namespace xvs::rs {

struct TunnelConfig {
    std::vector<uint32_t> directors_be;  // director local addresses (network byte order)
    uint16_t gue_port = 0;               // GUE both ways on this UDP port; 0: IPIP only
    uint32_t max_sessions = XVS_RT_SESSIONS_DEFAULT;  // LRU map size (fixed at load)
    uint32_t idle_s = XVS_RT_IDLE_DEFAULT_S;          // a session idle this long is gone
    uint16_t mtu = 0;  // the device MTU; a reply that no longer fits once wrapped goes as is
};

using TunnelCounters = std::array<uint64_t, XVS_RT_COUNTER_MAX>;
const char* tunnel_counter_name(int idx);

// Loaded (verified) programs and their maps; not attached.
class TunnelProgram {
  public:
    static Result<TunnelProgram> load(uint32_t max_sessions);
    int ingress_fd() const;
    int egress_fd() const;
    int map_fd(const char* name) const;  // xvs_rt_dirs, _sessions, _config, _stats

  private:
    struct ObjClose {
        void operator()(bpf_object* obj) const;
    };
    std::unique_ptr<bpf_object, ObjClose> obj_;
};

Result<void> tunnel_configure(int directors_fd, int config_fd, const TunnelConfig& cfg);
Result<TunnelCounters> tunnel_counters_read(int stats_fd);

struct TunnelAttach {
    bool updated = false;  // ours were attached already: maps updated in place
    uint32_t ingress_id = 0, egress_id = 0;
};
Result<TunnelAttach> tunnel_attach(const std::string& dev, const TunnelConfig& cfg);
Result<void> tunnel_detach(const std::string& dev);

struct TunnelStatus {
    uint32_t ingress_id = 0, egress_id = 0;
    TunnelConfig cfg;       // directors, GUE port, idle, max_sessions as in the maps
    uint64_t sessions = 0;  // entries in the session map now
    TunnelCounters counters{};
};
// Not attached to dev: an error saying so.
Result<TunnelStatus> tunnel_status(const std::string& dev);

}  // namespace xvs::rs
