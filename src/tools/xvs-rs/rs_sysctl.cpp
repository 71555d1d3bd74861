// DR/TUN real-server setup: sysctls through /proc/sys, the VIP on lo through rtnetlink (libmnl).
#include "rs_sysctl.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>

#include "xdp_decap.h"

namespace xvs::rs {

namespace {

std::string proc_path(const std::string& name) {
    std::string path = "/proc/sys/" + name;
    for (size_t i = sizeof("/proc/sys/") - 1; i < path.size(); ++i)
        if (path[i] == '.') path[i] = '/';
    return path;
}

// A device name may itself hold dots (vlan "eth0.10"), so conf paths are built, not converted.
std::string conf_path(const std::string& dev, const char* key) {
    return "/proc/sys/net/ipv4/conf/" + dev + "/" + key;
}

Result<std::string> read_value(const std::string& path) {
    std::ifstream in(path);
    std::string v;
    if (!in || !(in >> v)) return make_error("cannot read " + path + ": " + std::strerror(errno));
    return v;
}

Result<void> write_value(const std::string& path, const std::string& v) {
    std::ofstream o(path);
    if (!o) return make_error("cannot open " + path + " for writing: " + std::strerror(errno));
    o << v << "\n";
    o.flush();
    if (!o) return make_error("cannot write " + v + " to " + path + ": " + std::strerror(errno));
    return {};
}

std::string ip_text(uint32_t be) {
    char buf[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &be, buf, sizeof(buf));
    return buf;
}

struct MnlClose {
    void operator()(mnl_socket* s) const { mnl_socket_close(s); }
};

// Adds addr/32 to lo; false (no error) when it is there already.
Result<bool> lo_addr_add(uint32_t addr_be) {
    unsigned lo = if_nametoindex("lo");
    if (lo == 0) return make_error("no loopback device 'lo' in this network namespace");
    std::unique_ptr<mnl_socket, MnlClose> nl(mnl_socket_open(NETLINK_ROUTE));
    if (!nl) return make_error(std::string("cannot open rtnetlink: ") + std::strerror(errno));
    if (mnl_socket_bind(nl.get(), 0, MNL_SOCKET_AUTOPID) < 0)
        return make_error(std::string("cannot bind rtnetlink: ") + std::strerror(errno));
    alignas(nlmsghdr) char buf[MNL_SOCKET_BUFFER_SIZE];
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_NEWADDR;
    nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
    const uint32_t seq = static_cast<uint32_t>(time(nullptr));
    nlh->nlmsg_seq = seq;
    auto* ifa = static_cast<ifaddrmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifaddrmsg)));
    ifa->ifa_family = AF_INET;
    ifa->ifa_prefixlen = 32;
    ifa->ifa_scope = RT_SCOPE_UNIVERSE;  // as `ip addr add VIP/32 dev lo`: the VIP is global
    ifa->ifa_index = lo;
    mnl_attr_put_u32(nlh, IFA_LOCAL, addr_be);
    mnl_attr_put_u32(nlh, IFA_ADDRESS, addr_be);
    if (mnl_socket_sendto(nl.get(), nlh, nlh->nlmsg_len) < 0)
        return make_error(std::string("rtnetlink send: ") + std::strerror(errno));
    ssize_t n = mnl_socket_recvfrom(nl.get(), buf, sizeof(buf));
    if (n < 0) return make_error(std::string("rtnetlink receive: ") + std::strerror(errno));
    int rc = mnl_cb_run(buf, static_cast<size_t>(n), seq, mnl_socket_get_portid(nl.get()), nullptr,
                        nullptr);
    if (rc < 0 && errno == EEXIST) return false;
    if (rc < 0)
        return make_error("cannot add " + ip_text(addr_be) + "/32 to lo: " + std::strerror(errno));
    return true;
}

bool lo_has(uint32_t addr_be) {
    auto addrs = device_ipv4_addrs("lo");
    if (!addrs) return false;
    for (uint32_t a : *addrs)
        if (a == addr_be) return true;
    return false;
}

}  // namespace

std::vector<SysctlSetting> rs_sysctl_settings(const std::string& dev) {
    std::vector<SysctlSetting> out;
    std::vector<std::string> arp_devs = {"all", "lo"};
    if (!dev.empty() && dev != "lo") arp_devs.push_back(dev);
    for (const auto& d : arp_devs) {
        out.push_back({"net.ipv4.conf." + d + ".arp_ignore", "1"});
        out.push_back({"net.ipv4.conf." + d + ".arp_announce", "2"});
    }
    out.push_back({"net.ipv4.conf.all.rp_filter", "0"});
    if (!dev.empty() && dev != "lo") out.push_back({"net.ipv4.conf." + dev + ".rp_filter", "0"});
    return out;
}

Result<void> rs_sysctl_apply(const RsSysctlRequest& req, std::ostream& out) {
    if (!req.dev.empty() && access(conf_path(req.dev, "arp_ignore").c_str(), F_OK) != 0)
        return make_error("no network device '" + req.dev + "' (no " +
                          conf_path(req.dev, "arp_ignore") + ")");
    const std::string prefix = req.dry_run ? "would set " : "";
    for (const auto& s : rs_sysctl_settings(req.dev)) {
        // net.ipv4.conf.<dev>.<key>: split off the key so a dotted device name stays whole.
        const std::string conf = "net.ipv4.conf.";
        std::string path = proc_path(s.name);
        if (s.name.rfind(conf, 0) == 0) {
            std::string rest = s.name.substr(conf.size());
            size_t dot = rest.rfind('.');
            path = conf_path(rest.substr(0, dot), rest.substr(dot + 1).c_str());
        }
        auto now = read_value(path);
        if (!now) return make_error(now.error());
        if (*now == s.value) {
            out << s.name << " = " << s.value << " (already)\n";
            continue;
        }
        if (!req.dry_run) {
            if (auto ok = write_value(path, s.value); !ok) return make_error(ok.error());
        }
        out << prefix << s.name << " = " << s.value << " (was " << *now << ")\n";
    }
    for (uint32_t vip : req.vips_be) {
        const std::string a = ip_text(vip) + "/32";
        if (req.dry_run) {
            out << (lo_has(vip) ? "lo: " + a + " (already)\n" : "would add " + a + " to lo\n");
            continue;
        }
        auto added = lo_addr_add(vip);
        if (!added) return make_error(added.error());
        out << (*added ? "added " + a + " to lo\n" : "lo: " + a + " (already)\n");
    }
    return {};
}

}  // namespace xvs::rs
