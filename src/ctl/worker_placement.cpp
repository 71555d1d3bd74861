// Worker placement and the port queues N workers need; see worker_placement.h.
#include "ctl/worker_placement.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <map>

namespace xvs::ctl {

namespace {

std::string where(const SourceLoc& loc, const std::string& fallback) {
    if (!loc.line) return fallback;
    return loc.file + ":" + std::to_string(loc.line) + ": ";
}

std::optional<unsigned> cpu_number(std::string_view text) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || v > kMaxCpu)
        return std::nullopt;
    return v;
}

// The value of `key` in a DPDK devargs string "driver,k1=v1,k2=v2"; nullopt when absent.
std::optional<std::string> devarg(const std::string& dev, std::string_view key) {
    size_t pos = dev.find(',');
    while (pos != std::string::npos) {
        const size_t start = pos + 1;
        pos = dev.find(',', start);
        std::string_view item(dev.data() + start,
                              (pos == std::string::npos ? dev.size() : pos) - start);
        if (item.size() > key.size() && item.substr(0, key.size()) == key &&
            item[key.size()] == '=')
            return std::string(item.substr(key.size() + 1));
    }
    return std::nullopt;
}

}  // namespace

Result<std::vector<unsigned>> parse_cpu_list(std::string_view text) {
    std::vector<unsigned> out;
    if (text.empty()) return make_error("empty CPU list (expected e.g. 1-3,5)");
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        std::string_view item = text.substr(start, comma - start);
        const std::string quoted = "'" + std::string(item) + "'";
        if (item.empty()) return make_error("empty element in CPU list '" + std::string(text) + "'");
        const size_t dash = item.find('-');
        if (dash == std::string_view::npos) {
            auto cpu = cpu_number(item);
            if (!cpu)
                return make_error(quoted + " is not a CPU number (0.." + std::to_string(kMaxCpu) + ")");
            out.push_back(*cpu);
        } else {
            auto first = cpu_number(item.substr(0, dash));
            auto last = cpu_number(item.substr(dash + 1));
            if (!first || !last)
                return make_error(quoted + " is not a CPU range (N-M, CPUs 0.." +
                                  std::to_string(kMaxCpu) + ")");
            if (*last < *first) return make_error(quoted + " is a reversed range");
            for (unsigned c = *first; c <= *last; ++c) out.push_back(c);
        }
        start = comma + 1;
    }
    return out;
}

std::string cpu_list_text(std::vector<unsigned> cpus) {
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    std::string out;
    for (size_t i = 0; i < cpus.size();) {
        size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ",";
        out += std::to_string(cpus[i]);
        if (j > i) out += "-" + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

const std::vector<unsigned>& cpus_available() {
    static const std::vector<unsigned> cpus = [] {
        std::vector<unsigned> out;
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof set, &set) == 0) {
            for (unsigned c = 0; c < CPU_SETSIZE; ++c)
                if (CPU_ISSET(c, &set)) out.push_back(c);
        }
        if (out.empty()) out.push_back(0);  // cannot tell: assume the one CPU we run on
        return out;
    }();
    return cpus;
}

Result<WorkerPlacement> worker_placement(const WorkerDefs& w, const std::vector<unsigned>& available) {
    const unsigned n = w.workers;
    const std::string avail_text = cpu_list_text(available);
    std::string errors;
    WorkerPlacement p;
    if (n > available.size()) {
        errors += where(w.workers_loc, "worker_defs: ") + "workers " + std::to_string(n) +
                  ": xvsd may run on " + std::to_string(available.size()) + " CPU" +
                  (available.size() == 1 ? "" : "s") + " (" + avail_text + "): use at most " +
                  std::to_string(available.size()) +
                  ", or give xvsd more CPUs (taskset, the cgroup's cpuset)\n";
    }
    if (!w.cpus.empty()) {
        const std::string at = where(w.cpus_loc, "worker_defs: ");
        for (unsigned cpu : w.cpus) {
            if (!std::binary_search(available.begin(), available.end(), cpu)) {
                errors += at + "cpus: CPU " + std::to_string(cpu) +
                          " is not one xvsd may run on (" + avail_text + ")\n";
                break;
            }
        }
        if (w.cpus.size() < n) {
            errors += at + "cpus lists " + std::to_string(w.cpus.size()) + " CPU" +
                      (w.cpus.size() == 1 ? "" : "s") + " for " + std::to_string(n) +
                      " workers: list one per worker (a CPU may repeat), or lower workers\n";
        }
    }
    if (!errors.empty()) {
        errors.pop_back();
        return make_error(errors);
    }
    if (!w.cpus.empty()) {
        p.worker_cpu.assign(w.cpus.begin(), w.cpus.begin() + n);
        if (w.cpus.size() > n)
            p.warnings.push_back(where(w.cpus_loc, "worker_defs: ") + "cpus lists " +
                                 std::to_string(w.cpus.size()) + " CPUs for " +
                                 std::to_string(n) + (n == 1 ? " worker" : " workers") + ": the last " +
                                 std::to_string(w.cpus.size() - n) + " are not used");
    } else {
        // CPU 0 (the first one we may use) for the control thread and the kernel's own work;
        // a one-CPU machine has nothing else.
        const size_t first = available.size() > 1 ? 1 : 0;
        for (unsigned i = 0; i < n; ++i)
            p.worker_cpu.push_back(available[first + i % (available.size() - first)]);
    }
    std::map<unsigned, std::vector<unsigned>> on_cpu;
    for (unsigned i = 0; i < n; ++i) on_cpu[p.worker_cpu[i]].push_back(i);
    for (const auto& [cpu, ws] : on_cpu) {
        if (ws.size() < 2) continue;
        std::string names;
        for (unsigned i : ws) names += (names.empty() ? "" : ", ") + std::to_string(i);
        p.warnings.push_back("workers " + names + " share CPU " + std::to_string(cpu) +
                             ": each gets a part of it (list more CPUs in worker_defs cpus)");
    }
    for (unsigned cpu : available)
        if (!on_cpu.count(cpu)) p.control_cpus.push_back(cpu);
    if (p.control_cpus.empty()) {
        p.control_cpus = available;
        p.warnings.push_back("no CPU is left for the control thread: it shares CPUs " +
                             avail_text + " with the workers");
    }
    return p;
}

std::string workers_errors(const Config& cfg, const std::vector<unsigned>& available) {
    std::string errors;
    if (auto p = worker_placement(cfg.worker, available); !p) errors += p.error() + "\n";
    const std::string n = std::to_string(cfg.worker.workers);
    for (const PortDef& pd : cfg.netif.ports) {
        // Each worker polls queue = its id on every port: the PMD must have exactly that many
        // (a queue no worker polls would swallow its share of the traffic).
        const std::string driver = pd.dev.substr(0, pd.dev.find(','));
        std::string key, hint;
        if (driver.starts_with("net_af_packet")) {
            key = "qpairs";
        } else if (driver.starts_with("net_af_xdp")) {
            key = "queue_count";
            hint = " (and the interface that many combined channels: ethtool -L IF combined " + n + ")";
        } else {
            continue;
        }
        const auto value = devarg(pd.dev, key);
        const std::string have = value ? *value : "1";
        if (have == n) continue;
        errors += where(pd.loc, "") + "port " + pd.name + ": " + driver +
                  (value ? " has " + key + "=" + *value : " has one queue pair (no " + key + "=)") +
                  " but xvsd runs " + n + " worker" + (cfg.worker.workers == 1 ? "" : "s") +
                  ", each on its own queue pair: " + (value ? "set " : "add ") + key + "=" + n +
                  " in its dev" + hint + "\n";
    }
    if (!errors.empty()) errors.pop_back();
    return errors;
}

}  // namespace xvs::ctl
