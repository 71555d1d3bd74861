// The xvs-rs client-address readers seen from user space: `toa` (bpf/toa.bpf.c: cgroup sockops
// + getpeername4/6) and `uoa` (bpf/uoa.bpf.c: tc ingress + cgroup recvmsg4/6, sendmsg4/6).
// Programs are attached to a cgroup v2 with BPF_F_ALLOW_MULTI (they stay after xvs-rs exits,
// no BPF filesystem needed) and found again there by name for status and `off`. Invariant:
// xvs-rs only detaches programs that carry its own names, and a reader's programs always come
// from one object (one set of maps): a partial set is replaced whole.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "readers_abi.h"

struct bpf_object;

namespace xvs::rs {

// The mount point of the first cgroup2 filesystem in a /proc/self/mountinfo text, if any.
std::optional<std::string> cgroup2_mount_point(std::string_view mountinfo);

// Where xvs-rs mounts a cgroup2 hierarchy when none is mounted.
inline constexpr const char* kCgroup2Fallback = "/run/xvs-rs/cgroup2";

// The cgroup to attach to: `given` when not empty (it must be a directory of a cgroup2
// filesystem), else the root of the mounted cgroup2 hierarchy, mounting one at
// kCgroup2Fallback if there is none (every process is then covered).
Result<std::string> cgroup2_resolve(const std::string& given);

using ReaderCounters = std::vector<std::pair<std::string, uint64_t>>;

// One reader's BPF object, loaded (verified) and not attached; closed on destruction, which
// frees whatever is not attached. The BPF tests run its programs with BPF_PROG_TEST_RUN.
enum class ReaderKind { toa, uoa };
class ReaderObject {
  public:
    // reuse: (map name, fd) pairs to share with programs already attached.
    static Result<ReaderObject> load(ReaderKind kind, uint32_t max_flows = XVS_UOA_FLOWS_DEFAULT,
                                     const std::vector<std::pair<std::string, int>>& reuse = {});
    int prog_fd(const char* name) const;
    int map_fd(const char* name) const;

  private:
    struct ObjClose {
        void operator()(bpf_object* obj) const;
    };
    std::unique_ptr<bpf_object, ObjClose> obj_;
};

// Sums the per-CPU counters of a reader's stats map (names from readers_abi.h).
Result<ReaderCounters> reader_counters_read(ReaderKind kind, int stats_fd);

struct ReaderHook {
    std::string prog;  // program name
    std::string hook;  // the attach point as a person reads it (cgroup/sendmsg4, tc ingress)
    uint32_t id = 0;   // 0: not attached
};

struct ReaderStatus {
    std::string cgroup;
    std::vector<ReaderHook> hooks;     // cgroup hooks, then (uoa) one per device
    std::vector<std::string> devices;  // uoa: devices with xvs-rs's tc ingress program
    uint64_t flows = 0;                // uoa: entries in xvs_uoa_fwd
    uint32_t max_flows = 0;            // uoa: its size
    ReaderCounters counters;
};

struct ReaderAttach {
    bool already = false;  // the cgroup hooks were attached already (kept as they were)
    std::vector<ReaderHook> hooks;
};

// toa: sockops + getpeername4/6 on the cgroup.
Result<ReaderAttach> toa_attach(const std::string& cgroup);
Result<void> toa_detach(const std::string& cgroup);
Result<ReaderStatus> toa_status(const std::string& cgroup);

// uoa: recvmsg4/6 + sendmsg4/6 on the cgroup and the tc ingress program on each device (of
// this network namespace). With the cgroup hooks attached already, devices are added using
// their maps. max_flows sizes each LRU map (at first attach).
Result<ReaderAttach> uoa_attach(const std::string& cgroup, const std::vector<std::string>& devs,
                                uint32_t max_flows);
// Detaches the cgroup hooks and the tc program from every device of this network namespace
// that has it.
Result<void> uoa_detach(const std::string& cgroup);
Result<ReaderStatus> uoa_status(const std::string& cgroup);

}  // namespace xvs::rs
