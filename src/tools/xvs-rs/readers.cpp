// Loading, attaching (cgroup v2 with BPF_F_ALLOW_MULTI; tc clsact ingress for uoa), finding and
// detaching the xvs-rs client-address readers, and mounting a cgroup2 hierarchy when none is.
// Every failure comes back as a Result error naming the cgroup, device or step.
#include "readers.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "xdp_decap.h"  // Fd

extern "C" {
extern const unsigned char xvs_rs_toa_bpf_object[];
extern const size_t xvs_rs_toa_bpf_object_size;
extern const unsigned char xvs_rs_uoa_bpf_object[];
extern const size_t xvs_rs_uoa_bpf_object_size;
}

namespace xvs::rs {

namespace {

constexpr const char* kToaCounters[] = {
#define XVS_TOA_COUNTER_NAME(name, help) #name,
    XVS_TOA_COUNTERS(XVS_TOA_COUNTER_NAME)
#undef XVS_TOA_COUNTER_NAME
};
static_assert(std::size(kToaCounters) == XVS_TOA_COUNTER_MAX);
constexpr const char* kUoaCounters[] = {
#define XVS_UOA_COUNTER_NAME(name, help) #name,
    XVS_UOA_COUNTERS(XVS_UOA_COUNTER_NAME)
#undef XVS_UOA_COUNTER_NAME
};
static_assert(std::size(kUoaCounters) == XVS_UOA_COUNTER_MAX);

struct CgroupHook {
    const char* prog;
    bpf_attach_type type;
    const char* hook;
};
constexpr CgroupHook kToaHooks[] = {
    {"xvs_toa_sockops", BPF_CGROUP_SOCK_OPS, "cgroup/sockops"},
    {"xvs_toa_peer4", BPF_CGROUP_INET4_GETPEERNAME, "cgroup/getpeername4"},
    {"xvs_toa_peer6", BPF_CGROUP_INET6_GETPEERNAME, "cgroup/getpeername6"},
};
constexpr CgroupHook kUoaHooks[] = {
    {"xvs_uoa_recv4", BPF_CGROUP_UDP4_RECVMSG, "cgroup/recvmsg4"},
    {"xvs_uoa_recv6", BPF_CGROUP_UDP6_RECVMSG, "cgroup/recvmsg6"},
    {"xvs_uoa_send4", BPF_CGROUP_UDP4_SENDMSG, "cgroup/sendmsg4"},
    {"xvs_uoa_send6", BPF_CGROUP_UDP6_SENDMSG, "cgroup/sendmsg6"},
};
constexpr const char* kUoaIngress = "xvs_uoa_ingress";
// The uoa tc filter's handle and priority: its own, beside `xvs-rs tunnel`'s 0x7873.
constexpr uint32_t kUoaTcHandle = 0x7875;
constexpr uint32_t kUoaTcPriority = 0x7875;

template <size_t N>
std::vector<CgroupHook> hooks_of(const CgroupHook (&list)[N]) {
    return {list, list + N};
}
std::vector<CgroupHook> hooks_of(ReaderKind kind) {
    return kind == ReaderKind::toa ? hooks_of(kToaHooks) : hooks_of(kUoaHooks);
}

int libbpf_quiet(enum libbpf_print_level, const char*, va_list) {
    return 0;
}
// libbpf prints the kernel's messages for expected misses (no clsact qdisc, no filter); the
// caller reports failures through Result.
struct QuietLibbpf {
    libbpf_print_fn_t old = libbpf_set_print(libbpf_quiet);
    ~QuietLibbpf() { libbpf_set_print(old); }
    QuietLibbpf() = default;
    QuietLibbpf(const QuietLibbpf&) = delete;
    QuietLibbpf& operator=(const QuietLibbpf&) = delete;
};

std::string errno_text(int err) {
    return std::strerror(err < 0 ? -err : err);
}

std::string prog_name(uint32_t id) {
    Fd fd(bpf_prog_get_fd_by_id(id));
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (fd.get() < 0 || bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0) return {};
    return info.name;
}

// The map of that name used by program id (closed fd when none).
Fd prog_map(uint32_t prog_id, const std::string& name) {
    Fd prog(bpf_prog_get_fd_by_id(prog_id));
    if (prog.get() < 0) return Fd();
    uint32_t ids[8] = {};
    bpf_prog_info info{};
    info.nr_map_ids = 8;
    info.map_ids = reinterpret_cast<uintptr_t>(ids);  // the kernel's ABI: a u64 address
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(prog.get(), &info, &len) != 0) return Fd();
    for (uint32_t i = 0; i < info.nr_map_ids && i < 8; ++i) {
        Fd m(bpf_map_get_fd_by_id(ids[i]));
        bpf_map_info mi{};
        uint32_t mlen = sizeof(mi);
        if (m.get() >= 0 && bpf_obj_get_info_by_fd(m.get(), &mi, &mlen) == 0 && mi.name == name)
            return m;
    }
    return Fd();
}

Result<Fd> cgroup_open(const std::string& path) {
    struct statfs st {};
    if (statfs(path.c_str(), &st) != 0)
        return make_error("cannot open cgroup " + path + ": " + errno_text(errno));
    if (static_cast<unsigned long>(st.f_type) != CGROUP2_SUPER_MAGIC)
        return make_error(path +
                          " is not a cgroup v2 directory (eBPF cgroup hooks need cgroup2: "
                          "mount -t cgroup2 none DIR, or leave --cgroup out)");
    Fd fd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) return make_error("cannot open cgroup " + path + ": " + errno_text(errno));
    return fd;
}

// The id of our program (by name) attached directly to the cgroup at that hook, 0 when none.
Result<uint32_t> cgroup_prog(int cg_fd, const CgroupHook& h) {
    uint32_t ids[64] = {};
    uint32_t cnt = 64, flags = 0;
    if (bpf_prog_query(cg_fd, h.type, 0, &flags, ids, &cnt) != 0)
        return make_error(std::string("cannot list the programs at ") + h.hook + ": " +
                          errno_text(errno));
    for (uint32_t i = 0; i < cnt && i < 64; ++i)
        if (prog_name(ids[i]) == h.prog) return ids[i];
    return 0u;
}

Result<std::vector<uint32_t>> cgroup_progs(int cg_fd, const std::vector<CgroupHook>& hooks) {
    std::vector<uint32_t> ids;
    for (const auto& h : hooks) {
        auto id = cgroup_prog(cg_fd, h);
        if (!id) return make_error(id.error());
        ids.push_back(*id);
    }
    return ids;
}

Result<void> cgroup_detach(int cg_fd, const std::vector<CgroupHook>& hooks,
                           const std::string& cgroup, bool* any) {
    for (const auto& h : hooks) {
        auto id = cgroup_prog(cg_fd, h);
        if (!id) return make_error(id.error());
        if (!*id) continue;
        Fd prog(bpf_prog_get_fd_by_id(*id));
        if (prog.get() < 0 || bpf_prog_detach2(prog.get(), cg_fd, h.type) != 0)
            return make_error(std::string("cannot detach ") + h.prog + " from " + cgroup + " (" +
                              h.hook + "): " + errno_text(errno));
        *any = true;
    }
    return {};
}

std::vector<ReaderHook> hooks_report(const std::vector<CgroupHook>& hooks,
                                     const std::vector<uint32_t>& ids) {
    std::vector<ReaderHook> out;
    for (size_t i = 0; i < hooks.size(); ++i)
        out.push_back({hooks[i].prog, hooks[i].hook, i < ids.size() ? ids[i] : 0});
    return out;
}

bool all_attached(const std::vector<uint32_t>& ids) {
    for (uint32_t id : ids)
        if (!id) return false;
    return !ids.empty();
}
bool none_attached(const std::vector<uint32_t>& ids) {
    for (uint32_t id : ids)
        if (id) return false;
    return true;
}

// Attaches the object's programs to the cgroup; on a failure the ones attached are taken off.
Result<std::vector<uint32_t>> cgroup_attach(const ReaderObject& obj, int cg_fd,
                                            const std::vector<CgroupHook>& hooks,
                                            const std::string& cgroup) {
    std::vector<uint32_t> ids;
    for (const auto& h : hooks) {
        const int fd = obj.prog_fd(h.prog);
        if (fd < 0 || bpf_prog_attach(fd, cg_fd, h.type, BPF_F_ALLOW_MULTI) != 0) {
            const int err = errno;
            bool any = false;
            (void)cgroup_detach(cg_fd, hooks, cgroup, &any);
            return make_error(std::string("cannot attach ") + h.prog + " to " + cgroup + " (" +
                              h.hook + "): " + errno_text(err) +
                              (err == EPERM ? "; another program may be attached there without "
                                              "BPF_F_ALLOW_MULTI"
                                            : ""));
        }
        bpf_prog_info info{};
        uint32_t len = sizeof(info);
        ids.push_back(bpf_obj_get_info_by_fd(fd, &info, &len) == 0 ? info.id : 0);
    }
    return ids;
}

// ---- tc ingress (uoa) ----

bpf_tc_hook ingress_hook(int ifindex) {
    bpf_tc_hook h{};
    h.sz = sizeof(h);
    h.ifindex = ifindex;
    h.attach_point = BPF_TC_INGRESS;
    return h;
}
bpf_tc_opts uoa_tc_opts() {
    bpf_tc_opts o{};
    o.sz = sizeof(o);
    o.handle = kUoaTcHandle;
    o.priority = kUoaTcPriority;
    return o;
}

// Our ingress program's id on the device, 0 when none; an error when another sits there.
Result<uint32_t> tc_prog(int ifindex, const std::string& dev) {
    bpf_tc_hook h = ingress_hook(ifindex);
    bpf_tc_opts o = uoa_tc_opts();
    if (bpf_tc_query(&h, &o) != 0) return 0u;  // no clsact qdisc or no such filter
    const std::string name = prog_name(o.prog_id);
    if (name != kUoaIngress)
        return make_error("a tc filter on " + dev + " at xvs-rs uoa's handle/priority runs '" +
                          name + "', not xvs-rs's; remove it first");
    return o.prog_id;
}

// (name, ifindex) of every device of this network namespace.
std::vector<std::pair<std::string, int>> all_devices() {
    std::vector<std::pair<std::string, int>> out;
    if (struct if_nameindex* list = if_nameindex()) {
        for (struct if_nameindex* p = list; p->if_index != 0; ++p)
            out.emplace_back(p->if_name, static_cast<int>(p->if_index));
        if_freenameindex(list);
    }
    return out;
}

Result<void> tc_detach(int ifindex, const std::string& dev) {
    bpf_tc_hook h = ingress_hook(ifindex);
    bpf_tc_opts o = uoa_tc_opts();
    if (int err = bpf_tc_detach(&h, &o))
        return make_error("cannot detach " + std::string(kUoaIngress) + " from " + dev + ": " +
                          errno_text(err));
    return {};
}

}  // namespace

std::optional<std::string> cgroup2_mount_point(std::string_view mountinfo) {
    // Each line: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
    std::istringstream in{std::string(mountinfo)};
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::vector<std::string> w;
        for (std::string s; f >> s;) w.push_back(s);
        size_t dash = 0;
        while (dash < w.size() && w[dash] != "-") ++dash;
        if (dash < 5 || dash + 1 >= w.size() || w[dash + 1] != "cgroup2") continue;
        // The mount point escapes space, tab, newline and backslash as \ooo.
        std::string point;
        const std::string& m = w[4];
        for (size_t i = 0; i < m.size(); ++i) {
            if (m[i] == '\\' && i + 3 < m.size() && m[i + 1] >= '0' && m[i + 1] <= '3') {
                point += static_cast<char>((m[i + 1] - '0') * 64 + (m[i + 2] - '0') * 8 +
                                           (m[i + 3] - '0'));
                i += 3;
            } else {
                point += m[i];
            }
        }
        return point;
    }
    return std::nullopt;
}

Result<std::string> cgroup2_resolve(const std::string& given) {
    if (!given.empty()) {
        auto fd = cgroup_open(given);
        if (!fd) return make_error(fd.error());
        return given;
    }
    std::ifstream f("/proc/self/mountinfo");
    std::stringstream text;
    text << f.rdbuf();
    if (auto point = cgroup2_mount_point(text.str())) return *point;
    std::error_code ec;
    std::filesystem::create_directories(kCgroup2Fallback, ec);
    if (ec)
        return make_error(std::string("no cgroup2 hierarchy is mounted and ") + kCgroup2Fallback +
                          " cannot be made: " + ec.message());
    if (mount("none", kCgroup2Fallback, "cgroup2", 0, nullptr) != 0)
        return make_error(std::string("no cgroup2 hierarchy is mounted and mounting one at ") +
                          kCgroup2Fallback + " failed: " + errno_text(errno) +
                          " (needs root; or give --cgroup DIR of a cgroup2 mount)");
    return std::string(kCgroup2Fallback);
}

void ReaderObject::ObjClose::operator()(bpf_object* obj) const {
    bpf_object__close(obj);
}

Result<ReaderObject> ReaderObject::load(ReaderKind kind, uint32_t max_flows,
                                        const std::vector<std::pair<std::string, int>>& reuse) {
    const bool toa = kind == ReaderKind::toa;
    bpf_object_open_opts opts{};
    opts.sz = sizeof(opts);
    opts.object_name = toa ? "xvs_rs_toa" : "xvs_rs_uoa";
    bpf_object* obj =
        toa ? bpf_object__open_mem(xvs_rs_toa_bpf_object, xvs_rs_toa_bpf_object_size, &opts)
            : bpf_object__open_mem(xvs_rs_uoa_bpf_object, xvs_rs_uoa_bpf_object_size, &opts);
    if (!obj)
        return make_error(std::string("cannot open the embedded ") + (toa ? "toa" : "uoa") +
                          " BPF object: " + errno_text(errno));
    ReaderObject r;
    r.obj_.reset(obj);
    if (!toa) {
        if (max_flows == 0) return make_error("--max-flows must be at least 1");
        for (const char* name : {"xvs_uoa_fwd", "xvs_uoa_rev"})
            if (bpf_map* m = bpf_object__find_map_by_name(obj, name))
                bpf_map__set_max_entries(m, max_flows);
    }
    for (const auto& [name, fd] : reuse) {
        bpf_map* m = bpf_object__find_map_by_name(obj, name.c_str());
        if (!m || bpf_map__reuse_fd(m, fd) != 0)
            return make_error("cannot share map " + name + " with the attached programs");
    }
    if (int err = bpf_object__load(obj))
        return make_error(std::string("the kernel refused the ") + (toa ? "toa" : "uoa") +
                          " programs (" + errno_text(err) +
                          "; needs root or CAP_BPF+CAP_NET_ADMIN, and a kernel with cgroup "
                          "sockops, getpeername and socket storage: 5.10 or later)");
    return r;
}

int ReaderObject::prog_fd(const char* name) const {
    bpf_program* p = bpf_object__find_program_by_name(obj_.get(), name);
    return p ? bpf_program__fd(p) : -1;
}

int ReaderObject::map_fd(const char* name) const {
    return bpf_object__find_map_fd_by_name(obj_.get(), name);
}

Result<ReaderCounters> reader_counters_read(ReaderKind kind, int stats_fd) {
    const bool toa = kind == ReaderKind::toa;
    const uint32_t n = toa ? uint32_t{XVS_TOA_COUNTER_MAX} : uint32_t{XVS_UOA_COUNTER_MAX};
    const int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) return make_error("cannot count the possible CPUs: " + errno_text(ncpu));
    std::vector<uint64_t> per_cpu(static_cast<size_t>(ncpu));
    ReaderCounters out;
    for (uint32_t i = 0; i < n; ++i) {
        const char* name = toa ? kToaCounters[i] : kUoaCounters[i];
        if (bpf_map_lookup_elem(stats_fd, &i, per_cpu.data()) != 0)
            return make_error(std::string("cannot read counter ") + name + ": " +
                              errno_text(errno));
        uint64_t sum = 0;
        for (uint64_t v : per_cpu) sum += v;
        out.emplace_back(name, sum);
    }
    return out;
}

Result<ReaderAttach> toa_attach(const std::string& cgroup) {
    auto cg = cgroup_open(cgroup);
    if (!cg) return make_error(cg.error());
    const auto hooks = hooks_of(ReaderKind::toa);
    auto ids = cgroup_progs(cg->get(), hooks);
    if (!ids) return make_error(ids.error());
    ReaderAttach res;
    if (all_attached(*ids)) {
        res.already = true;
        res.hooks = hooks_report(hooks, *ids);
        return res;
    }
    bool any = false;
    if (!none_attached(*ids))  // a partial set (two objects' maps never mix): replace it whole
        if (auto ok = cgroup_detach(cg->get(), hooks, cgroup, &any); !ok)
            return make_error(ok.error());
    auto obj = ReaderObject::load(ReaderKind::toa);
    if (!obj) return make_error(obj.error());
    auto attached = cgroup_attach(*obj, cg->get(), hooks, cgroup);
    if (!attached) return make_error(attached.error());
    res.hooks = hooks_report(hooks, *attached);
    return res;
}

Result<void> toa_detach(const std::string& cgroup) {
    auto cg = cgroup_open(cgroup);
    if (!cg) return make_error(cg.error());
    bool any = false;
    if (auto ok = cgroup_detach(cg->get(), hooks_of(ReaderKind::toa), cgroup, &any); !ok)
        return make_error(ok.error());
    if (!any) return make_error("xvs-rs toa is not attached to " + cgroup);
    return {};
}

Result<ReaderStatus> toa_status(const std::string& cgroup) {
    auto cg = cgroup_open(cgroup);
    if (!cg) return make_error(cg.error());
    const auto hooks = hooks_of(ReaderKind::toa);
    auto ids = cgroup_progs(cg->get(), hooks);
    if (!ids) return make_error(ids.error());
    if (none_attached(*ids)) return make_error("xvs-rs toa is not attached to " + cgroup);
    ReaderStatus st;
    st.cgroup = cgroup;
    st.hooks = hooks_report(hooks, *ids);
    for (uint32_t id : *ids) {
        if (!id) continue;
        Fd stats = prog_map(id, "xvs_toa_stats");
        if (stats.get() < 0) continue;
        auto c = reader_counters_read(ReaderKind::toa, stats.get());
        if (!c) return make_error(c.error());
        st.counters = *c;
        break;
    }
    return st;
}

Result<ReaderAttach> uoa_attach(const std::string& cgroup, const std::vector<std::string>& devs,
                                uint32_t max_flows) {
    QuietLibbpf quiet;
    if (devs.empty()) return make_error("uoa needs --dev IF (the device the directors reach)");
    std::vector<std::pair<std::string, int>> ifs;
    for (const auto& dev : devs) {
        const unsigned idx = if_nametoindex(dev.c_str());
        if (idx == 0)
            return make_error("no network device '" + dev + "' in this network namespace");
        auto id = tc_prog(static_cast<int>(idx), dev);
        if (!id) return make_error(id.error());
        ifs.emplace_back(dev, static_cast<int>(idx));
    }
    auto cg = cgroup_open(cgroup);
    if (!cg) return make_error(cg.error());
    const auto hooks = hooks_of(ReaderKind::uoa);
    auto ids = cgroup_progs(cg->get(), hooks);
    if (!ids) return make_error(ids.error());
    ReaderAttach res;
    std::vector<std::pair<std::string, int>> reuse;
    std::vector<Fd> held;
    if (all_attached(*ids)) {  // add devices with the attached programs' maps
        res.already = true;
        for (const char* name : {"xvs_uoa_fwd", "xvs_uoa_rev", "xvs_uoa_stats"}) {
            Fd m = prog_map((*ids)[0], name);
            if (m.get() < 0)
                return make_error(std::string("cannot open map ") + name +
                                  " of the attached uoa programs");
            reuse.emplace_back(name, m.get());
            held.push_back(std::move(m));
        }
    } else if (!none_attached(*ids)) {
        bool any = false;
        if (auto ok = cgroup_detach(cg->get(), hooks, cgroup, &any); !ok)
            return make_error(ok.error());
    }
    auto obj = ReaderObject::load(ReaderKind::uoa, max_flows, reuse);
    if (!obj) return make_error(obj.error());
    if (!res.already) {
        auto attached = cgroup_attach(*obj, cg->get(), hooks, cgroup);
        if (!attached) return make_error(attached.error());
        *ids = *attached;
    }
    res.hooks = hooks_report(hooks, *ids);
    for (const auto& [dev, ifindex] : ifs) {
        bpf_tc_hook h = ingress_hook(ifindex);
        int err = bpf_tc_hook_create(&h);
        if (err && err != -EEXIST)
            return make_error("cannot add a clsact qdisc to " + dev + ": " + errno_text(err));
        bpf_tc_opts o = uoa_tc_opts();
        o.prog_fd = obj->prog_fd(kUoaIngress);
        o.flags = BPF_TC_F_REPLACE;
        if ((err = bpf_tc_attach(&h, &o)) != 0)
            return make_error("cannot attach " + std::string(kUoaIngress) + " to " + dev +
                              " ingress: " + errno_text(err));
        res.hooks.push_back({kUoaIngress, "tc ingress " + dev, o.prog_id});
    }
    return res;
}

Result<void> uoa_detach(const std::string& cgroup) {
    QuietLibbpf quiet;
    auto cg = cgroup_open(cgroup);
    if (!cg) return make_error(cg.error());
    bool any = false;
    if (auto ok = cgroup_detach(cg->get(), hooks_of(ReaderKind::uoa), cgroup, &any); !ok)
        return make_error(ok.error());
    for (const auto& [dev, ifindex] : all_devices()) {
        auto id = tc_prog(ifindex, dev);
        if (!id || !*id) continue;  // nothing of ours there
        if (auto ok = tc_detach(ifindex, dev); !ok) return make_error(ok.error());
        any = true;
    }
    if (!any)
        return make_error("xvs-rs uoa is not attached to " + cgroup + " nor to any device here");
    return {};
}

Result<ReaderStatus> uoa_status(const std::string& cgroup) {
    QuietLibbpf quiet;
    auto cg = cgroup_open(cgroup);
    if (!cg) return make_error(cg.error());
    const auto hooks = hooks_of(ReaderKind::uoa);
    auto ids = cgroup_progs(cg->get(), hooks);
    if (!ids) return make_error(ids.error());
    ReaderStatus st;
    st.cgroup = cgroup;
    st.hooks = hooks_report(hooks, *ids);
    uint32_t any_id = 0;
    for (uint32_t id : *ids) any_id = any_id ? any_id : id;
    for (const auto& [dev, ifindex] : all_devices()) {
        auto id = tc_prog(ifindex, dev);
        if (!id || !*id) continue;
        st.devices.push_back(dev);
        st.hooks.push_back({kUoaIngress, "tc ingress " + dev, *id});
        any_id = any_id ? any_id : *id;
    }
    if (!any_id)
        return make_error("xvs-rs uoa is not attached to " + cgroup + " nor to any device here");
    Fd stats = prog_map(any_id, "xvs_uoa_stats");
    Fd fwd = prog_map(any_id, "xvs_uoa_fwd");
    if (stats.get() < 0 || fwd.get() < 0) return make_error("cannot open the uoa programs' maps");
    auto c = reader_counters_read(ReaderKind::uoa, stats.get());
    if (!c) return make_error(c.error());
    st.counters = *c;
    bpf_map_info mi{};
    uint32_t mlen = sizeof(mi);
    if (bpf_obj_get_info_by_fd(fwd.get(), &mi, &mlen) == 0) st.max_flows = mi.max_entries;
    xvs_uoa_key k{}, nk{};
    for (int rc = bpf_map_get_next_key(fwd.get(), nullptr, &nk); rc == 0;
         rc = bpf_map_get_next_key(fwd.get(), &k, &nk)) {
        ++st.flows;
        k = nk;
    }
    return st;
}

}  // namespace xvs::rs
