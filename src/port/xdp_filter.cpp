// xvsd's XDP program and its address map, see port/xdp_filter.h.
#include "port/xdp_filter.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "port/xdp_abi.h"

extern "C" {
extern const unsigned char xvs_port_xdp_bpf_object[];
extern const size_t xvs_port_xdp_bpf_object_size;
}

namespace xvs::port {

namespace {

constexpr const char* kMapName = "xvs_xdp_addrs";

// The fd of the map named `name` used by program `id`, or -1.
int map_of_prog(uint32_t id, const char* name = kMapName) {
    int prog_fd = bpf_prog_get_fd_by_id(id);
    if (prog_fd < 0) return -1;
    uint32_t map_ids[16] = {};
    bpf_prog_info info{};
    info.nr_map_ids = 16;
    info.map_ids = reinterpret_cast<uint64_t>(map_ids);
    uint32_t len = sizeof info;
    int found = -1;
    if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) == 0) {
        for (uint32_t i = 0; i < info.nr_map_ids && i < 16 && found < 0; ++i) {
            int map_fd = bpf_map_get_fd_by_id(map_ids[i]);
            if (map_fd < 0) continue;
            bpf_map_info minfo{};
            uint32_t mlen = sizeof minfo;
            if (bpf_obj_get_info_by_fd(map_fd, &minfo, &mlen) == 0 &&
                std::strcmp(minfo.name, name) == 0)
                found = map_fd;
            else
                close(map_fd);
        }
    }
    close(prog_fd);
    return found;
}

// The fd of xvs's map `name` in the program(s) attached as mp, or -1 (not xvs's).
int xvs_map_of(xdp_multiprog* mp, const char* name = kMapName) {
    if (xdp_multiprog__is_legacy(mp)) {
        xdp_program* p = xdp_multiprog__main_prog(mp);
        return p ? map_of_prog(xdp_program__id(p), name) : -1;
    }
    int fd = -1;
    for (xdp_program* p = xdp_multiprog__next_prog(nullptr, mp); p && fd < 0;
         p = xdp_multiprog__next_prog(p, mp))
        fd = map_of_prog(xdp_program__id(p), name);
    return fd;
}

}  // namespace

Result<void> xdp_program_write(const std::string& path) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(xvs_port_xdp_bpf_object),
              static_cast<std::streamsize>(xvs_port_xdp_bpf_object_size));
    out.close();
    if (!out)
        return make_error("cannot write the XDP program to " + path + ": " + std::strerror(errno));
    return {};
}

Result<UniqueFd> xdp_map_open(const std::string& iface, const char* name) {
    const unsigned ifindex = if_nametoindex(iface.c_str());
    if (ifindex == 0) return make_error("XDP: no interface " + iface);
    xdp_multiprog* mp = xdp_multiprog__get_from_ifindex(static_cast<int>(ifindex));
    if (libxdp_get_error(mp) || !mp) return make_error("XDP: no program attached to " + iface);
    const int fd = xvs_map_of(mp, name);
    xdp_multiprog__close(mp);
    if (fd < 0)
        return make_error("XDP: the program on " + iface + " has no map " + name +
                          " (another XDP program attached?)");
    return UniqueFd(fd);
}

Result<XdpAddrMap> XdpAddrMap::open(const std::string& iface) {
    auto fd = xdp_map_open(iface, kMapName);
    if (!fd) return make_error(fd.error());
    return XdpAddrMap(iface, fd->release());
}

XdpAddrMap::XdpAddrMap(XdpAddrMap&& o) noexcept
    : iface_(std::move(o.iface_)), fd_(o.fd_), have_(std::move(o.have_)) {
    o.fd_ = -1;
}

XdpAddrMap::~XdpAddrMap() {
    if (fd_ >= 0) close(fd_);
}

Result<unsigned> XdpAddrMap::sync(const std::vector<std::pair<net::InetAddr, XdpOwner>>& want) {
    std::set<std::pair<AddrKey, uint8_t>> next;
    for (const auto& [addr, owner] : want) {
        AddrKey key;
        std::copy(std::begin(addr.b), std::end(addr.b), key.begin());
        next.emplace(key, static_cast<uint8_t>(owner));
    }
    if (next.size() > XVS_XDP_MAX_ADDRS)
        return make_error("XDP " + iface_ + ": " + std::to_string(next.size()) +
                          " addresses, the map holds " + std::to_string(XVS_XDP_MAX_ADDRS));
    unsigned changed = 0;
    // Removed first (an address whose owner changed is re-added below).
    for (const auto& [key, owner] : have_) {
        if (next.count({key, owner})) continue;
        bool still = false;
        for (const auto& n : next) still = still || n.first == key;
        if (!still) {
            bpf_map_delete_elem(fd_, key.data());
            ++changed;
        }
    }
    for (const auto& [key, owner] : next) {
        if (have_.count({key, owner})) continue;
        if (bpf_map_update_elem(fd_, key.data(), &owner, BPF_ANY) != 0)
            return make_error("XDP " + iface_ + ": map update failed: " + std::strerror(errno));
        ++changed;
    }
    have_ = std::move(next);
    return changed;
}

Result<UniqueFd> xdp_claim(const std::string& iface, std::string* note) {
    note->clear();
    const unsigned ifindex = if_nametoindex(iface.c_str());
    if (ifindex == 0) return make_error("XDP: no interface " + iface);
    struct stat ns {};
    if (stat("/proc/self/ns/net", &ns) != 0)
        return make_error(std::string("XDP: cannot stat /proc/self/ns/net: ") +
                          std::strerror(errno));
    mkdir("/run/xvs", 0755);
    const std::string path = "/run/xvs/xdp." + std::to_string(ns.st_ino) + "." + iface + ".lock";
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (fd.get() < 0) return make_error("XDP: cannot open " + path + ": " + std::strerror(errno));
    if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0)
        return make_error("XDP: another xvsd runs on " + iface + " in this network namespace (" +
                          path + " is locked): stop it first");
    xdp_multiprog* mp = xdp_multiprog__get_from_ifindex(static_cast<int>(ifindex));
    if (libxdp_get_error(mp) || !mp) return fd;  // nothing attached
    const int map_fd = xvs_map_of(mp);
    if (map_fd >= 0) {
        close(map_fd);
        const int rc = xdp_multiprog__detach(mp);
        if (rc != 0) {
            xdp_multiprog__close(mp);
            return make_error("XDP: cannot detach the program a previous xvsd left on " + iface +
                              ": " + std::strerror(-rc) + " (try `ip link set dev " + iface +
                              " xdp off`)");
        }
        *note = "XDP: detached the program a previous xvsd left on " + iface;
    }
    xdp_multiprog__close(mp);
    return fd;
}

std::vector<net::InetAddr> kernel_addresses() {
    std::vector<net::InetAddr> out;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return out;
    for (ifaddrs* a = list; a; a = a->ifa_next) {
        if (!a->ifa_addr) continue;
        if (a->ifa_addr->sa_family == AF_INET) {
            sockaddr_in sin;
            std::memcpy(&sin, a->ifa_addr, sizeof sin);
            out.push_back(net::InetAddr::v4(sin.sin_addr.s_addr));
        } else if (a->ifa_addr->sa_family == AF_INET6) {
            sockaddr_in6 sin6;
            std::memcpy(&sin6, a->ifa_addr, sizeof sin6);
            out.push_back(net::InetAddr::v6(sin6.sin6_addr.s6_addr));
        }
    }
    freeifaddrs(list);
    return out;
}

}  // namespace xvs::port
