// What xvs-agent measures on a real server, parsed from the kernel's text files so the parsing
// is testable on fixed strings: CPU busy share (/proc/stat, or a cgroup's CPU usage when the
// real server is a container), the run queue (/proc/loadavg), memory in use (/proc/meminfo),
// established TCP connections (/proc/net/tcp and tcp6, which are per network namespace), and a
// load value of the operator's (a command's output or a file: a percentage).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xvs::agent {

// Jiffies of the aggregate "cpu" line: busy = everything but idle and iowait.
struct CpuTimes {
    uint64_t busy = 0;
    uint64_t total = 0;
};
std::optional<CpuTimes> parse_proc_stat(std::string_view text);
// Busy share between two samples, 0..1000; 0 when no time passed.
uint16_t cpu_permille(const CpuTimes& before, const CpuTimes& after);

struct LoadAvg {
    uint32_t x100 = 0;     // 1-minute load average x 100
    uint16_t running = 0;  // runnable tasks now
};
std::optional<LoadAvg> parse_loadavg(std::string_view text);

// (MemTotal - MemAvailable) / MemTotal, 0..1000.
std::optional<uint16_t> parse_meminfo_permille(std::string_view text);

// Rows of /proc/net/tcp{,6} in state 01 (TCP_ESTABLISHED).
uint32_t count_established(std::string_view proc_net_tcp);

// "37.5", "37.5%", "37" + newline: a load percentage, clamped to 0..100, as permille.
std::optional<uint32_t> parse_load_percent(std::string_view text);

// The state letter of /proc/PID/stat ("R" running or runnable, "S" sleeping, ...).
std::optional<char> parse_stat_state(std::string_view proc_pid_stat);

// A cgroup's CPU time in ns: cgroup v2 cpu.stat ("usage_usec N") or v1 cpuacct.usage ("N").
std::optional<uint64_t> parse_cgroup_v2_usage_ns(std::string_view cpu_stat);
std::optional<uint64_t> parse_cgroup_v1_usage_ns(std::string_view cpuacct_usage);
// CPU time used in wall_ns by a group, as a share of ncpu CPUs, 0..1000.
uint16_t cgroup_cpu_permille(uint64_t used_ns, uint64_t wall_ns, unsigned ncpu);

// The whole file, or nullopt (with errno set) when it cannot be read.
std::optional<std::string> read_text(const std::string& path);

}  // namespace xvs::agent
