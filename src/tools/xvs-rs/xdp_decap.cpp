// Loading, configuring, attaching, pinning and reading the xvs-rs XDP decapsulator (libbpf).
// Every failure comes back as a Result error naming the device, the path or the step.
#include "xdp_decap.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

extern "C" {
extern const unsigned char xvs_rs_decap_bpf_object[];
extern const size_t xvs_rs_decap_bpf_object_size;
}

namespace xvs::rs {

namespace {

constexpr const char* kNames[] = {
#define XVS_RS_COUNTER_NAME(name, help) #name,
    XVS_RS_COUNTERS(XVS_RS_COUNTER_NAME)
#undef XVS_RS_COUNTER_NAME
};
constexpr const char* kHelp[] = {
#define XVS_RS_COUNTER_HELP(name, help) help,
    XVS_RS_COUNTERS(XVS_RS_COUNTER_HELP)
#undef XVS_RS_COUNTER_HELP
};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == XVS_RS_COUNTER_MAX);

// libbpf's messages for the last load, so a verifier refusal reaches the user's error.
std::string g_libbpf_log;
int libbpf_capture(enum libbpf_print_level level, const char* fmt, va_list args) {
    if (level == LIBBPF_DEBUG) return 0;
    char line[1024];
    int n = std::vsnprintf(line, sizeof(line), fmt, args);
    if (n > 0 && g_libbpf_log.size() < 16384) g_libbpf_log += line;
    return n;
}

std::string errno_text(int err) {
    return std::strerror(err < 0 ? -err : err);
}

std::string pin_dir(const std::string& bpffs, const std::string& dev) {
    return bpffs + "/xvs-rs/" + dev;
}

constexpr const char* kPinNames[] = {"prog", "xvs_rs_addrs", "xvs_rs_config", "xvs_rs_stats"};

Result<void> bpffs_check(const std::string& bpffs) {
    struct statfs st {};
    if (statfs(bpffs.c_str(), &st) != 0)
        return make_error(bpffs + ": " + errno_text(errno) +
                          " (xvs-rs pins its maps on a BPF filesystem: mount -t bpf bpf " + bpffs +
                          ")");
    if (static_cast<unsigned long>(st.f_type) != BPF_FS_MAGIC)
        return make_error(bpffs + " is not a BPF filesystem (mount -t bpf bpf " + bpffs +
                          " to pin there)");
    return {};
}

Result<unsigned> ifindex_of(const std::string& dev) {
    unsigned idx = if_nametoindex(dev.c_str());
    if (idx == 0) return make_error("no network device '" + dev + "' in this network namespace");
    return idx;
}

// The id of the program behind fd.
uint32_t prog_id_of(int fd) {
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return 0;
    return info.id;
}

// What is attached to a device, and whether it is xvs-rs's decapsulator: found through the
// device itself (program name and its three maps by name and shape), so stats, --detach and a
// reconfigure work with or without the pins (`ip netns exec` hides /sys/fs/bpf).
struct DeviceXdp {
    uint32_t id = 0;     // whatever is attached, in any mode; 0: nothing
    uint32_t flags = 0;  // the mode flag it is attached with
    bool ours = false;
    Fd prog, addrs, config, stats;
};

void map_match(uint32_t map_id, DeviceXdp& d) {
    Fd fd(bpf_map_get_fd_by_id(map_id));
    if (fd.get() < 0) return;
    bpf_map_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0) return;
    const std::string name = info.name;
    if (name == "xvs_rs_addrs" && info.key_size == 4 && info.value_size == 1) {
        d.addrs = std::move(fd);
    } else if (name == "xvs_rs_config" && info.key_size == 4 &&
               info.value_size == sizeof(xvs_rs_config)) {
        d.config = std::move(fd);
    } else if (name == "xvs_rs_stats" && info.key_size == 4 && info.value_size == 8 &&
               info.max_entries == XVS_RS_COUNTER_MAX) {
        d.stats = std::move(fd);
    }
}

Result<DeviceXdp> device_xdp(unsigned ifindex, const std::string& dev) {
    bpf_xdp_query_opts q{};
    q.sz = sizeof(q);
    int err = bpf_xdp_query(static_cast<int>(ifindex), 0, &q);
    if (err) return make_error("cannot query the XDP program of " + dev + ": " + errno_text(err));
    DeviceXdp d;
    if (q.drv_prog_id) {
        d.id = q.drv_prog_id;
        d.flags = XDP_FLAGS_DRV_MODE;
    } else if (q.skb_prog_id) {
        d.id = q.skb_prog_id;
        d.flags = XDP_FLAGS_SKB_MODE;
    } else if (q.hw_prog_id) {
        d.id = q.hw_prog_id;
        d.flags = XDP_FLAGS_HW_MODE;
    } else {
        d.id = q.prog_id;
    }
    if (d.id == 0) return d;
    d.prog = Fd(bpf_prog_get_fd_by_id(d.id));
    if (d.prog.get() < 0)
        return make_error("cannot open XDP program id " + std::to_string(d.id) + " on " + dev +
                          ": " + errno_text(errno));
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(d.prog.get(), &info, &len) != 0)
        return make_error("cannot read XDP program id " + std::to_string(d.id) + ": " +
                          errno_text(errno));
    if (std::string(info.name) != "xvs_rs_decap" || info.nr_map_ids == 0) return d;
    std::vector<uint32_t> map_ids(info.nr_map_ids);
    bpf_prog_info with_maps{};
    with_maps.nr_map_ids = static_cast<uint32_t>(map_ids.size());
    with_maps.map_ids = reinterpret_cast<uintptr_t>(map_ids.data());  // the kernel's ABI: a u64
    len = sizeof(with_maps);
    if (bpf_obj_get_info_by_fd(d.prog.get(), &with_maps, &len) != 0) return d;
    map_ids.resize(std::min<size_t>(map_ids.size(), with_maps.nr_map_ids));
    for (uint32_t id : map_ids) map_match(id, d);
    d.ours = d.addrs.get() >= 0 && d.config.get() >= 0 && d.stats.get() >= 0;
    return d;
}

// Our pins for a device, opened; missing ones stay -1.
struct Pins {
    Fd prog, addrs, config, stats;
    bool any() const { return prog.get() >= 0 || stats.get() >= 0; }
};

Pins pins_open(const std::string& dir) {
    Pins p;
    p.prog = Fd(bpf_obj_get((dir + "/prog").c_str()));
    p.addrs = Fd(bpf_obj_get((dir + "/xvs_rs_addrs").c_str()));
    p.config = Fd(bpf_obj_get((dir + "/xvs_rs_config").c_str()));
    p.stats = Fd(bpf_obj_get((dir + "/xvs_rs_stats").c_str()));
    return p;
}

void pins_remove(const std::string& bpffs, const std::string& dev) {
    const std::string dir = pin_dir(bpffs, dev);
    for (const char* name : kPinNames) unlink((dir + "/" + name).c_str());
    rmdir(dir.c_str());
    rmdir((bpffs + "/xvs-rs").c_str());  // only succeeds once no device is left
}

Result<void> pin(int fd, const std::string& path) {
    if (bpf_obj_pin(fd, path.c_str()) != 0)
        return make_error("cannot pin " + path + ": " + errno_text(errno));
    return {};
}

// Pins the program and its maps under <bpffs>/xvs-rs/<dev>/, replacing what was there.
Result<void> pins_create(const std::string& bpffs, const std::string& dev, int prog, int addrs,
                         int config, int stats) {
    if (auto ok = bpffs_check(bpffs); !ok) return ok;
    pins_remove(bpffs, dev);
    const std::string dir = pin_dir(bpffs, dev);
    mkdir((bpffs + "/xvs-rs").c_str(), 0700);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return make_error("cannot create " + dir + ": " + errno_text(errno));
    Result<void> pinned = pin(prog, dir + "/prog");
    if (pinned) pinned = pin(addrs, dir + "/xvs_rs_addrs");
    if (pinned) pinned = pin(config, dir + "/xvs_rs_config");
    if (pinned) pinned = pin(stats, dir + "/xvs_rs_stats");
    if (!pinned) pins_remove(bpffs, dev);
    return pinned;
}

}  // namespace

const char* decap_counter_name(int idx) {
    return kNames[idx];
}
const char* decap_counter_help(int idx) {
    return kHelp[idx];
}

void DecapProgram::ObjClose::operator()(bpf_object* obj) const {
    bpf_object__close(obj);
}

Result<DecapProgram> DecapProgram::load() {
    g_libbpf_log.clear();
    libbpf_set_print(libbpf_capture);
    bpf_object_open_opts opts{};
    opts.sz = sizeof(opts);
    opts.object_name = "xvs_rs_decap";
    bpf_object* obj =
        bpf_object__open_mem(xvs_rs_decap_bpf_object, xvs_rs_decap_bpf_object_size, &opts);
    if (!obj)
        return make_error("cannot open the embedded BPF object: " + errno_text(errno) + "\n" +
                          g_libbpf_log);
    DecapProgram p;
    p.obj_.reset(obj);
    int err = bpf_object__load(obj);
    if (err)
        return make_error("the kernel refused the decap program (" + errno_text(err) +
                          "; needs root or CAP_BPF+CAP_NET_ADMIN):\n" + g_libbpf_log);
    return p;
}

int DecapProgram::prog_fd() const {
    bpf_program* prog = bpf_object__find_program_by_name(obj_.get(), "xvs_rs_decap");
    return prog ? bpf_program__fd(prog) : -1;
}
int DecapProgram::addrs_fd() const {
    return bpf_object__find_map_fd_by_name(obj_.get(), "xvs_rs_addrs");
}
int DecapProgram::config_fd() const {
    return bpf_object__find_map_fd_by_name(obj_.get(), "xvs_rs_config");
}
int DecapProgram::stats_fd() const {
    return bpf_object__find_map_fd_by_name(obj_.get(), "xvs_rs_stats");
}

Result<void> decap_configure(int addrs_fd, int config_fd, const DecapConfig& cfg) {
    if (cfg.addrs_be.empty()) return make_error("no address to decapsulate for");
    if (cfg.addrs_be.size() > XVS_RS_MAX_ADDRS)
        return make_error("at most " + std::to_string(XVS_RS_MAX_ADDRS) + " addresses");
    if (cfg.gue_port == 0) return make_error("GUE port 0 is not a port");
    // Remove the addresses no longer wanted, then add the new set (a reconfigure in place).
    uint32_t key = 0, next = 0;
    std::vector<uint32_t> old;
    for (int rc = bpf_map_get_next_key(addrs_fd, nullptr, &next); rc == 0;
         rc = bpf_map_get_next_key(addrs_fd, &key, &next)) {
        old.push_back(next);
        key = next;
    }
    for (uint32_t a : old) {
        bool keep = false;
        for (uint32_t b : cfg.addrs_be) keep = keep || a == b;
        if (!keep) bpf_map_delete_elem(addrs_fd, &a);
    }
    for (uint32_t a : cfg.addrs_be) {
        uint8_t one = 1;
        if (bpf_map_update_elem(addrs_fd, &a, &one, BPF_ANY) != 0)
            return make_error("cannot store an address in the BPF map: " + errno_text(errno));
    }
    xvs_rs_config c{};
    c.gue_port_be = htons(cfg.gue_port);
    uint32_t zero = 0;
    if (bpf_map_update_elem(config_fd, &zero, &c, BPF_ANY) != 0)
        return make_error("cannot store the GUE port in the BPF map: " + errno_text(errno));
    return {};
}

Result<DecapCounters> decap_counters_read(int stats_fd) {
    int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) return make_error("cannot count the possible CPUs: " + errno_text(ncpu));
    std::vector<uint64_t> per_cpu(static_cast<size_t>(ncpu));
    DecapCounters out{};
    for (uint32_t i = 0; i < XVS_RS_COUNTER_MAX; ++i) {
        if (bpf_map_lookup_elem(stats_fd, &i, per_cpu.data()) != 0)
            return make_error("cannot read counter " + std::string(kNames[i]) + ": " +
                              errno_text(errno));
        for (uint64_t v : per_cpu) out[i] += v;
    }
    return out;
}

Result<DecapConfig> decap_config_read(int addrs_fd, int config_fd) {
    DecapConfig cfg;
    uint32_t key = 0, next = 0;
    for (int rc = bpf_map_get_next_key(addrs_fd, nullptr, &next); rc == 0;
         rc = bpf_map_get_next_key(addrs_fd, &key, &next)) {
        cfg.addrs_be.push_back(next);
        key = next;
    }
    xvs_rs_config c{};
    uint32_t zero = 0;
    if (bpf_map_lookup_elem(config_fd, &zero, &c) != 0)
        return make_error("cannot read the GUE port from the BPF map: " + errno_text(errno));
    cfg.gue_port = ntohs(c.gue_port_be);
    return cfg;
}

Result<AttachResult> decap_attach(const std::string& dev, const DecapConfig& cfg, XdpMode mode,
                                  const std::string& bpffs) {
    auto ifindex = ifindex_of(dev);
    if (!ifindex) return make_error(ifindex.error());
    auto cur = device_xdp(*ifindex, dev);
    if (!cur) return make_error(cur.error());
    AttachResult res;
    if (cur->id != 0) {
        if (!cur->ours)
            return make_error("an XDP program (id " + std::to_string(cur->id) +
                              ") that xvs-rs did not attach is on " + dev +
                              "; xvs-rs does not replace it (remove it first, e.g. `ip link "
                              "set dev " +
                              dev + " xdp off`, if it is not needed)");
        if (auto ok = decap_configure(cur->addrs.get(), cur->config.get(), cfg); !ok)
            return make_error(ok.error());
        res.updated = true;
        res.prog_id = cur->id;
        if (pins_open(pin_dir(bpffs, dev)).prog.get() < 0) {
            auto pinned = pins_create(bpffs, dev, cur->prog.get(), cur->addrs.get(),
                                      cur->config.get(), cur->stats.get());
            if (!pinned) res.pin_note = pinned.error();
        }
        return res;
    }

    auto prog = DecapProgram::load();
    if (!prog) return make_error(prog.error());
    if (auto ok = decap_configure(prog->addrs_fd(), prog->config_fd(), cfg); !ok)
        return make_error(ok.error());
    uint32_t flags = XDP_FLAGS_UPDATE_IF_NOEXIST;
    if (mode == XdpMode::skb) flags |= XDP_FLAGS_SKB_MODE;
    if (mode == XdpMode::native) flags |= XDP_FLAGS_DRV_MODE;
    int err = bpf_xdp_attach(static_cast<int>(*ifindex), prog->prog_fd(), flags, nullptr);
    if (err) {
        std::string hint = mode == XdpMode::native
                               ? " (the driver may not support native XDP: try --mode skb)"
                               : "";
        return make_error("cannot attach XDP to " + dev + ": " + errno_text(err) + hint);
    }
    res.prog_id = prog_id_of(prog->prog_fd());
    // The pins are a convenience (bpftool, scripts); xvs-rs itself finds the program through
    // the device, so a missing BPF filesystem is a note, not a failure.
    auto pinned = pins_create(bpffs, dev, prog->prog_fd(), prog->addrs_fd(), prog->config_fd(),
                              prog->stats_fd());
    if (!pinned) res.pin_note = pinned.error();
    return res;
}

Result<void> decap_detach(const std::string& dev, const std::string& bpffs) {
    auto ifindex = ifindex_of(dev);
    if (!ifindex) return make_error(ifindex.error());
    auto cur = device_xdp(*ifindex, dev);
    if (!cur) return make_error(cur.error());
    const bool bpffs_ok = bpffs_check(bpffs).ok();
    if (cur->id == 0) {
        if (bpffs_ok) pins_remove(bpffs, dev);  // left over, if any
        return make_error("no XDP program is attached to " + dev);
    }
    if (!cur->ours)
        return make_error("the XDP program on " + dev + " (id " + std::to_string(cur->id) +
                          ") was not attached by xvs-rs; not detaching it");
    bpf_xdp_attach_opts opts{};
    opts.sz = sizeof(opts);
    opts.old_prog_fd = cur->prog.get();  // detach only if it is still ours (XDP_FLAGS_REPLACE)
    int err = bpf_xdp_detach(static_cast<int>(*ifindex), cur->flags, &opts);
    if (err) return make_error("cannot detach XDP from " + dev + ": " + errno_text(err));
    if (bpffs_ok) pins_remove(bpffs, dev);
    return {};
}

Result<DecapStatus> decap_status(const std::string& dev, const std::string& bpffs) {
    DecapStatus st;
    int addrs = -1, config = -1, stats = -1;
    Result<DeviceXdp> cur = make_error("");
    Pins pins;
    if (auto ifindex = ifindex_of(dev)) cur = device_xdp(*ifindex, dev);
    if (cur && cur->ours) {
        st.attached = true;
        st.prog_id = cur->id;
        addrs = cur->addrs.get();
        config = cur->config.get();
        stats = cur->stats.get();
    } else {
        // Not on the device (any more): the pins keep the counters of a detached program.
        auto bpffs_ok = bpffs_check(bpffs);
        if (bpffs_ok) pins = pins_open(pin_dir(bpffs, dev));
        if (pins.stats.get() < 0 || pins.addrs.get() < 0 || pins.config.get() < 0) {
            std::string why = !cur      ? cur.error()
                              : cur->id ? "the XDP program on " + dev + " is not xvs-rs's"
                                        : "no XDP program is attached to " + dev;
            return make_error(why + ", and no xvs-rs maps are pinned under " + pin_dir(bpffs, dev) +
                              ": run `xvs-rs decap --dev " + dev + "` first");
        }
        st.prog_id = pins.prog.get() >= 0 ? prog_id_of(pins.prog.get()) : 0;
        addrs = pins.addrs.get();
        config = pins.config.get();
        stats = pins.stats.get();
    }
    auto cfg = decap_config_read(addrs, config);
    if (!cfg) return make_error(cfg.error());
    st.cfg = std::move(*cfg);
    auto counters = decap_counters_read(stats);
    if (!counters) return make_error(counters.error());
    st.counters = *counters;
    return st;
}

Result<std::vector<uint32_t>> device_ipv4_addrs(const std::string& dev) {
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return make_error("getifaddrs: " + errno_text(errno));
    std::vector<uint32_t> out;
    for (ifaddrs* it = list; it; it = it->ifa_next) {
        if (!it->ifa_addr || it->ifa_addr->sa_family != AF_INET || !it->ifa_name) continue;
        std::string name = it->ifa_name;  // an address label reads "dev:label"
        if (name != dev && name.rfind(dev + ":", 0) != 0) continue;
        sockaddr_in sin{};
        std::memcpy(&sin, it->ifa_addr, sizeof(sin));
        out.push_back(sin.sin_addr.s_addr);
    }
    freeifaddrs(list);
    return out;
}

}  // namespace xvs::rs
