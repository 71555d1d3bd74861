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
        return make_error(bpffs +
                          " is not a BPF filesystem: mount it (mount -t bpf bpf /sys/fs/bpf) or "
                          "give --bpffs DIR on one. Note `ip netns exec` remounts /sys without "
                          "it; use nsenter --net=/run/netns/NAME there.");
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

struct Attached {
    uint32_t id = 0;     // whatever is attached, in any mode
    uint32_t flags = 0;  // the mode flag it was attached with
};

Result<Attached> xdp_query(unsigned ifindex, const std::string& dev) {
    bpf_xdp_query_opts q{};
    q.sz = sizeof(q);
    int err = bpf_xdp_query(static_cast<int>(ifindex), 0, &q);
    if (err) return make_error("cannot query the XDP program of " + dev + ": " + errno_text(err));
    Attached a;
    if (q.drv_prog_id) {
        a = {q.drv_prog_id, XDP_FLAGS_DRV_MODE};
    } else if (q.skb_prog_id) {
        a = {q.skb_prog_id, XDP_FLAGS_SKB_MODE};
    } else if (q.hw_prog_id) {
        a = {q.hw_prog_id, XDP_FLAGS_HW_MODE};
    } else if (q.prog_id) {
        a = {q.prog_id, 0};
    }
    return a;
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

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) close(fd_);
        fd_ = other.release();
    }
    return *this;
}
Fd::~Fd() {
    if (fd_ >= 0) close(fd_);
}
int Fd::release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
}

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
    if (auto ok = bpffs_check(bpffs); !ok) return make_error(ok.error());
    auto attached = xdp_query(*ifindex, dev);
    if (!attached) return make_error(attached.error());
    const std::string dir = pin_dir(bpffs, dev);
    Pins pins = pins_open(dir);
    const uint32_t ours = pins.prog.get() >= 0 ? prog_id_of(pins.prog.get()) : 0;

    if (attached->id != 0) {
        if (attached->id != ours)
            return make_error("an XDP program (id " + std::to_string(attached->id) +
                              ") that xvs-rs did not attach is on " + dev +
                              "; xvs-rs does not replace it (remove it first, e.g. `ip link "
                              "set dev " +
                              dev + " xdp off`, if it is not needed)");
        if (pins.addrs.get() < 0 || pins.config.get() < 0)
            return make_error("xvs-rs's program is on " + dev + " but its maps under " + dir +
                              " are gone; run `xvs-rs decap --dev " + dev + " --detach` first");
        if (auto ok = decap_configure(pins.addrs.get(), pins.config.get(), cfg); !ok)
            return make_error(ok.error());
        return AttachResult{true, ours};
    }
    if (pins.any()) pins_remove(bpffs, dev);  // left over from a device that went away

    auto prog = DecapProgram::load();
    if (!prog) return make_error(prog.error());
    if (auto ok = decap_configure(prog->addrs_fd(), prog->config_fd(), cfg); !ok)
        return make_error(ok.error());
    mkdir((bpffs + "/xvs-rs").c_str(), 0700);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return make_error("cannot create " + dir + ": " + errno_text(errno));
    Result<void> pinned = pin(prog->prog_fd(), dir + "/prog");
    if (pinned) pinned = pin(prog->addrs_fd(), dir + "/xvs_rs_addrs");
    if (pinned) pinned = pin(prog->config_fd(), dir + "/xvs_rs_config");
    if (pinned) pinned = pin(prog->stats_fd(), dir + "/xvs_rs_stats");
    if (!pinned) {
        pins_remove(bpffs, dev);
        return make_error(pinned.error());
    }
    uint32_t flags = XDP_FLAGS_UPDATE_IF_NOEXIST;
    if (mode == XdpMode::skb) flags |= XDP_FLAGS_SKB_MODE;
    if (mode == XdpMode::native) flags |= XDP_FLAGS_DRV_MODE;
    int err = bpf_xdp_attach(static_cast<int>(*ifindex), prog->prog_fd(), flags, nullptr);
    if (err) {
        pins_remove(bpffs, dev);
        std::string hint = mode == XdpMode::native
                               ? " (the driver may not support native XDP: try --mode skb)"
                               : "";
        return make_error("cannot attach XDP to " + dev + ": " + errno_text(err) + hint);
    }
    return AttachResult{false, prog_id_of(prog->prog_fd())};
}

Result<void> decap_detach(const std::string& dev, const std::string& bpffs) {
    auto ifindex = ifindex_of(dev);
    if (!ifindex) return make_error(ifindex.error());
    if (auto ok = bpffs_check(bpffs); !ok) return make_error(ok.error());
    auto attached = xdp_query(*ifindex, dev);
    if (!attached) return make_error(attached.error());
    const std::string dir = pin_dir(bpffs, dev);
    Pins pins = pins_open(dir);
    const uint32_t ours = pins.prog.get() >= 0 ? prog_id_of(pins.prog.get()) : 0;
    if (ours == 0 || attached->id != ours) {
        if (pins.any()) pins_remove(bpffs, dev);
        if (attached->id == 0) return make_error("no XDP program is attached to " + dev);
        return make_error("the XDP program on " + dev + " (id " + std::to_string(attached->id) +
                          ") was not attached by xvs-rs; not detaching it");
    }
    bpf_xdp_attach_opts opts{};
    opts.sz = sizeof(opts);
    opts.old_prog_fd = pins.prog.get();  // detach only if it is still ours (XDP_FLAGS_REPLACE)
    int err = bpf_xdp_detach(static_cast<int>(*ifindex), attached->flags, &opts);
    if (err) return make_error("cannot detach XDP from " + dev + ": " + errno_text(err));
    pins_remove(bpffs, dev);
    return {};
}

Result<DecapStatus> decap_status(const std::string& dev, const std::string& bpffs) {
    if (auto ok = bpffs_check(bpffs); !ok) return make_error(ok.error());
    const std::string dir = pin_dir(bpffs, dev);
    Pins pins = pins_open(dir);
    if (pins.stats.get() < 0 || pins.addrs.get() < 0 || pins.config.get() < 0)
        return make_error("no xvs-rs decap pinned for " + dev + " under " + dir +
                          ": run `xvs-rs decap --dev " + dev + "` first");
    DecapStatus st;
    st.prog_id = pins.prog.get() >= 0 ? prog_id_of(pins.prog.get()) : 0;
    if (auto ifindex = ifindex_of(dev)) {
        if (auto attached = xdp_query(*ifindex, dev))
            st.attached = st.prog_id != 0 && attached->id == st.prog_id;
    }
    auto cfg = decap_config_read(pins.addrs.get(), pins.config.get());
    if (!cfg) return make_error(cfg.error());
    st.cfg = std::move(*cfg);
    auto counters = decap_counters_read(pins.stats.get());
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
