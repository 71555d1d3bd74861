// Loading, configuring, attaching (tc clsact, libbpf bpf_tc_*) and reading the xvs-rs NatTun
// programs. Every failure comes back as a Result error naming the device or the step.
#include "tc_tunnel.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <utility>

extern "C" {
extern const unsigned char xvs_rs_tunnel_bpf_object[];
extern const size_t xvs_rs_tunnel_bpf_object_size;
}

namespace xvs::rs {

namespace {

constexpr const char* kNames[] = {
#define XVS_RT_COUNTER_NAME(name, help) #name,
    XVS_RT_COUNTERS(XVS_RT_COUNTER_NAME)
#undef XVS_RT_COUNTER_NAME
};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == XVS_RT_COUNTER_MAX);

// xvs-rs's filters on the clsact hooks: one handle and priority, so they are found again and
// never confused with another tool's.
constexpr uint32_t kHandle = 0x7873;  // "xs"
constexpr uint32_t kPriority = 0x7873;

// libbpf prints the kernel's extack text for an expected miss (no clsact qdisc yet, no filter):
// the caller reports failures through Result, so its own printing is off.
int libbpf_quiet(enum libbpf_print_level, const char*, va_list) {
    return 0;
}
struct QuietLibbpf {
    libbpf_print_fn_t old = libbpf_set_print(libbpf_quiet);
    ~QuietLibbpf() { libbpf_set_print(old); }
};

std::string errno_text(int err) {
    return std::strerror(err < 0 ? -err : err);
}

class OwnedFd {
  public:
    explicit OwnedFd(int fd = -1) : fd_(fd) {}
    OwnedFd(OwnedFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    OwnedFd& operator=(OwnedFd&& o) noexcept {
        std::swap(fd_, o.fd_);
        return *this;
    }
    OwnedFd(const OwnedFd&) = delete;
    OwnedFd& operator=(const OwnedFd&) = delete;
    ~OwnedFd() {
        if (fd_ >= 0) close(fd_);
    }
    int get() const { return fd_; }

  private:
    int fd_;
};

bpf_tc_hook hook_of(int ifindex, bpf_tc_attach_point where) {
    bpf_tc_hook h{};
    h.sz = sizeof(h);
    h.ifindex = ifindex;
    h.attach_point = where;
    return h;
}

// The id of xvs-rs's program at our handle/priority on that hook, 0 when none; an error when
// another program sits there.
Result<uint32_t> hook_prog(int ifindex, bpf_tc_attach_point where, const char* want) {
    bpf_tc_hook h = hook_of(ifindex, where);
    bpf_tc_opts o{};
    o.sz = sizeof(o);
    o.handle = kHandle;
    o.priority = kPriority;
    if (bpf_tc_query(&h, &o) != 0) return 0u;  // no clsact qdisc or no such filter
    OwnedFd fd(bpf_prog_get_fd_by_id(o.prog_id));
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (fd.get() < 0 || bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0)
        return make_error("cannot read tc program id " + std::to_string(o.prog_id));
    if (std::string(info.name) != want)
        return make_error("a tc filter at xvs-rs's handle/priority runs program '" +
                          std::string(info.name) + "', not xvs-rs's; remove it first");
    return o.prog_id;
}

// The map of that name used by program id.
OwnedFd prog_map(uint32_t prog_id, const std::string& name) {
    OwnedFd prog(bpf_prog_get_fd_by_id(prog_id));
    if (prog.get() < 0) return OwnedFd();
    uint32_t ids[8] = {};
    bpf_prog_info info{};
    info.nr_map_ids = 8;
    info.map_ids = reinterpret_cast<uintptr_t>(ids);  // the kernel's ABI: a u64
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(prog.get(), &info, &len) != 0) return OwnedFd();
    for (uint32_t i = 0; i < info.nr_map_ids && i < 8; ++i) {
        OwnedFd m(bpf_map_get_fd_by_id(ids[i]));
        bpf_map_info mi{};
        uint32_t mlen = sizeof(mi);
        if (m.get() >= 0 && bpf_obj_get_info_by_fd(m.get(), &mi, &mlen) == 0 && mi.name == name)
            return m;
    }
    return OwnedFd();
}

Result<int> ifindex_of(const std::string& dev) {
    unsigned idx = if_nametoindex(dev.c_str());
    if (idx == 0) return make_error("no network device '" + dev + "' in this network namespace");
    return static_cast<int>(idx);
}

}  // namespace

const char* tunnel_counter_name(int idx) {
    return kNames[idx];
}

void TunnelProgram::ObjClose::operator()(bpf_object* obj) const {
    bpf_object__close(obj);
}

Result<TunnelProgram> TunnelProgram::load(uint32_t max_sessions) {
    if (max_sessions == 0) return make_error("--max-sessions must be at least 1");
    bpf_object_open_opts opts{};
    opts.sz = sizeof(opts);
    opts.object_name = "xvs_rs_tunnel";
    bpf_object* obj =
        bpf_object__open_mem(xvs_rs_tunnel_bpf_object, xvs_rs_tunnel_bpf_object_size, &opts);
    if (!obj) return make_error("cannot open the embedded tunnel BPF object: " + errno_text(errno));
    TunnelProgram p;
    p.obj_.reset(obj);
    if (bpf_map* m = bpf_object__find_map_by_name(obj, "xvs_rt_sessions"))
        bpf_map__set_max_entries(m, max_sessions);
    if (int err = bpf_object__load(obj))
        return make_error("the kernel refused the tunnel programs (" + errno_text(err) +
                          "; needs root or CAP_BPF+CAP_NET_ADMIN)");
    return p;
}

int TunnelProgram::ingress_fd() const {
    bpf_program* p = bpf_object__find_program_by_name(obj_.get(), "xvs_rt_ingress");
    return p ? bpf_program__fd(p) : -1;
}
int TunnelProgram::egress_fd() const {
    bpf_program* p = bpf_object__find_program_by_name(obj_.get(), "xvs_rt_egress");
    return p ? bpf_program__fd(p) : -1;
}
int TunnelProgram::map_fd(const char* name) const {
    return bpf_object__find_map_fd_by_name(obj_.get(), name);
}

Result<void> tunnel_configure(int directors_fd, int config_fd, const TunnelConfig& cfg) {
    if (cfg.directors_be.empty()) return make_error("no director address given (--director A)");
    if (cfg.directors_be.size() > XVS_RT_MAX_DIRECTORS)
        return make_error("at most " + std::to_string(XVS_RT_MAX_DIRECTORS) + " directors");
    std::vector<uint32_t> old;
    uint32_t key = 0, next = 0;
    for (int rc = bpf_map_get_next_key(directors_fd, nullptr, &next); rc == 0;
         rc = bpf_map_get_next_key(directors_fd, &key, &next)) {
        old.push_back(next);
        key = next;
    }
    for (uint32_t a : old) bpf_map_delete_elem(directors_fd, &a);
    for (uint32_t a : cfg.directors_be) {
        uint8_t one = 1;
        if (bpf_map_update_elem(directors_fd, &a, &one, BPF_ANY) != 0)
            return make_error("cannot store a director address: " + errno_text(errno));
    }
    xvs_rt_config c{};
    c.idle_ns = uint64_t(cfg.idle_s) * 1'000'000'000ull;
    c.gue_port_be = htons(cfg.gue_port);
    c.mtu = cfg.mtu;
    uint32_t zero = 0;
    if (bpf_map_update_elem(config_fd, &zero, &c, BPF_ANY) != 0)
        return make_error("cannot store the tunnel config: " + errno_text(errno));
    return {};
}

Result<TunnelCounters> tunnel_counters_read(int stats_fd) {
    const int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) return make_error("cannot count the possible CPUs: " + errno_text(ncpu));
    std::vector<uint64_t> per_cpu(static_cast<size_t>(ncpu));
    TunnelCounters out{};
    for (uint32_t i = 0; i < XVS_RT_COUNTER_MAX; ++i) {
        if (bpf_map_lookup_elem(stats_fd, &i, per_cpu.data()) != 0)
            return make_error("cannot read counter " + std::string(kNames[i]) + ": " +
                              errno_text(errno));
        for (uint64_t v : per_cpu) out[i] += v;
    }
    return out;
}

Result<TunnelAttach> tunnel_attach(const std::string& dev, const TunnelConfig& cfg) {
    QuietLibbpf quiet;
    auto ifindex = ifindex_of(dev);
    if (!ifindex) return make_error(ifindex.error());
    auto in_id = hook_prog(*ifindex, BPF_TC_INGRESS, "xvs_rt_ingress");
    if (!in_id) return make_error(in_id.error());
    auto out_id = hook_prog(*ifindex, BPF_TC_EGRESS, "xvs_rt_egress");
    if (!out_id) return make_error(out_id.error());
    TunnelAttach res;
    if (*in_id && *out_id) {  // ours already: reconfigure in place (sessions kept)
        OwnedFd dirs = prog_map(*in_id, "xvs_rt_dirs");
        OwnedFd conf = prog_map(*in_id, "xvs_rt_config");
        if (dirs.get() < 0 || conf.get() < 0)
            return make_error("cannot open the maps of the tunnel programs on " + dev);
        if (auto ok = tunnel_configure(dirs.get(), conf.get(), cfg); !ok)
            return make_error(ok.error());
        res.updated = true;
        res.ingress_id = *in_id;
        res.egress_id = *out_id;
        return res;
    }
    auto prog = TunnelProgram::load(cfg.max_sessions);
    if (!prog) return make_error(prog.error());
    if (auto ok =
            tunnel_configure(prog->map_fd("xvs_rt_dirs"), prog->map_fd("xvs_rt_config"), cfg);
        !ok)
        return make_error(ok.error());
    bpf_tc_hook h =
        hook_of(*ifindex, static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS));
    int err = bpf_tc_hook_create(&h);
    if (err && err != -EEXIST)
        return make_error("cannot add a clsact qdisc to " + dev + ": " + errno_text(err));
    for (auto [where, fd] : {std::pair{BPF_TC_INGRESS, prog->ingress_fd()},
                             std::pair{BPF_TC_EGRESS, prog->egress_fd()}}) {
        bpf_tc_hook one = hook_of(*ifindex, where);
        bpf_tc_opts o{};
        o.sz = sizeof(o);
        o.handle = kHandle;
        o.priority = kPriority;
        o.prog_fd = fd;
        o.flags = BPF_TC_F_REPLACE;
        if ((err = bpf_tc_attach(&one, &o)) != 0) {
            (void)tunnel_detach(dev);
            return make_error("cannot attach the tunnel program to " + dev +
                              (where == BPF_TC_INGRESS ? " ingress: " : " egress: ") +
                              errno_text(err));
        }
        (where == BPF_TC_INGRESS ? res.ingress_id : res.egress_id) = o.prog_id;
    }
    return res;
}

Result<void> tunnel_detach(const std::string& dev) {
    QuietLibbpf quiet;
    auto ifindex = ifindex_of(dev);
    if (!ifindex) return make_error(ifindex.error());
    bool any = false;
    for (auto [where, name] :
         {std::pair{BPF_TC_INGRESS, "xvs_rt_ingress"}, std::pair{BPF_TC_EGRESS, "xvs_rt_egress"}}) {
        auto id = hook_prog(*ifindex, where, name);
        if (!id) return make_error(id.error());
        if (!*id) continue;
        bpf_tc_hook h = hook_of(*ifindex, where);
        bpf_tc_opts o{};
        o.sz = sizeof(o);
        o.handle = kHandle;
        o.priority = kPriority;
        if (int err = bpf_tc_detach(&h, &o))
            return make_error("cannot detach the tunnel program from " + dev + ": " +
                              errno_text(err));
        any = true;
    }
    if (!any) return make_error("no xvs-rs tunnel programs are attached to " + dev);
    return {};
}

Result<TunnelStatus> tunnel_status(const std::string& dev) {
    QuietLibbpf quiet;
    auto ifindex = ifindex_of(dev);
    if (!ifindex) return make_error(ifindex.error());
    auto in_id = hook_prog(*ifindex, BPF_TC_INGRESS, "xvs_rt_ingress");
    if (!in_id) return make_error(in_id.error());
    if (!*in_id) return make_error("no xvs-rs tunnel programs are attached to " + dev);
    auto out_id = hook_prog(*ifindex, BPF_TC_EGRESS, "xvs_rt_egress");
    TunnelStatus st;
    st.ingress_id = *in_id;
    st.egress_id = out_id ? *out_id : 0;
    OwnedFd dirs = prog_map(*in_id, "xvs_rt_dirs");
    OwnedFd conf = prog_map(*in_id, "xvs_rt_config");
    OwnedFd sess = prog_map(*in_id, "xvs_rt_sessions");
    OwnedFd stats = prog_map(*in_id, "xvs_rt_stats");
    if (dirs.get() < 0 || conf.get() < 0 || sess.get() < 0 || stats.get() < 0)
        return make_error("cannot open the maps of the tunnel programs on " + dev);
    uint32_t key = 0, next = 0;
    for (int rc = bpf_map_get_next_key(dirs.get(), nullptr, &next); rc == 0;
         rc = bpf_map_get_next_key(dirs.get(), &key, &next)) {
        st.cfg.directors_be.push_back(next);
        key = next;
    }
    xvs_rt_config c{};
    uint32_t zero = 0;
    if (bpf_map_lookup_elem(conf.get(), &zero, &c) == 0) {
        st.cfg.gue_port = ntohs(c.gue_port_be);
        st.cfg.idle_s = static_cast<uint32_t>(c.idle_ns / 1'000'000'000ull);
        st.cfg.mtu = c.mtu;
    }
    bpf_map_info mi{};
    uint32_t mlen = sizeof(mi);
    if (bpf_obj_get_info_by_fd(sess.get(), &mi, &mlen) == 0) st.cfg.max_sessions = mi.max_entries;
    xvs_rt_key k{}, nk{};
    for (int rc = bpf_map_get_next_key(sess.get(), nullptr, &nk); rc == 0;
         rc = bpf_map_get_next_key(sess.get(), &k, &nk)) {
        ++st.sessions;
        k = nk;
    }
    auto counters = tunnel_counters_read(stats.get());
    if (!counters) return make_error(counters.error());
    st.counters = *counters;
    return st;
}

}  // namespace xvs::rs
