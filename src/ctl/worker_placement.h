// Where xvsd's threads run (`worker_defs { workers N cpus LIST }`): worker i on one CPU, the
// control thread on the CPUs no worker uses. Pure functions over the set of CPUs the process
// may run on (its affinity at start), so `xvsd -t`, start and the tests give one verdict.
// Invariant: every worker gets a CPU the process may use, and N never exceeds those CPUs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "ctl/config.h"

namespace xvs::ctl {

// Linux cpu-list syntax ("0", "1-3,5", as in /sys/devices/system/cpu/online and taskset -c):
// the CPUs in the order written, ranges expanded. A CPU may repeat (two workers sharing it).
// Errors name the bad element ("'3-1' is a reversed range").
inline constexpr unsigned kMaxCpu = 1023;  // CPU_SETSIZE - 1
Result<std::vector<unsigned>> parse_cpu_list(std::string_view text);
// The short form of a set of CPUs: sorted, duplicates dropped, runs as ranges ("0-2,5").
std::string cpu_list_text(std::vector<unsigned> cpus);

// The CPUs this process may run on (sched_getaffinity), read on the first call and kept:
// xvsd narrows its own threads' affinity later, and a reload must judge by the original set.
const std::vector<unsigned>& cpus_available();

struct WorkerPlacement {
    std::vector<unsigned> worker_cpu;    // [i]: the CPU worker i is pinned to
    std::vector<unsigned> control_cpus;  // the control thread (and the threads it starts)
    std::vector<std::string> warnings;   // workers sharing a CPU, control sharing with workers
};

// The placement of cfg.workers workers: with `cpus LIST`, worker i on the i-th listed CPU;
// without, CPU 0 (the first available) is left to the control thread when there are two CPUs
// or more and the workers go round-robin over the others. Errors as "file:line: message"
// lines: a listed CPU not in `available`, fewer listed CPUs than workers, more workers than
// available CPUs.
Result<WorkerPlacement> worker_placement(const WorkerDefs& w, const std::vector<unsigned>& available);

// Everything `workers N` needs from the rest of the config, as "file:line: message" lines:
// the placement above, and ports with one RX/TX queue pair per worker (net_af_packet's
// `qpairs=N`, net_af_xdp's `queue_count=N` in the port's dev). Empty: fine.
std::string workers_errors(const Config& cfg, const std::vector<unsigned>& available);

}  // namespace xvs::ctl
