// The liveness TAP (liveness.h).
#include "ctl/bgp/liveness.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace xvs::ctl::bgp {

Result<LivenessInterface> LivenessInterface::open(const std::string& name) {
    if (name.empty() || name.size() >= IFNAMSIZ)
        return make_error("liveness_interface '" + name + "': 1..15 characters");
    LivenessInterface li;
    li.fd_.reset(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
    if (li.fd_.get() < 0)
        return make_error(std::string("liveness interface: cannot open /dev/net/tun: ") +
                          std::strerror(errno) + " (needs the tun module and CAP_NET_ADMIN)");
    ifreq req{};
    std::memcpy(req.ifr_name, name.data(), name.size());
    // IFF_TUN_EXCL: fail rather than attach to an interface someone else made (a persistent
    // TAP of that name would survive xvsd and keep the routes up).
    // ifr_flags is a short and IFF_TUN_EXCL its top bit (0x8000): C++20 converts modulo 2^16.
    req.ifr_flags = static_cast<short>(IFF_TAP | IFF_NO_PI | IFF_TUN_EXCL);
    if (::ioctl(li.fd_.get(), TUNSETIFF, &req) != 0)
        return make_error("liveness interface " + name + ": cannot create the TAP: " +
                          std::strerror(errno) +
                          (errno == EBUSY ? " (the name is taken: another xvsd here, or a stale "
                                            "interface: ip link del " + name + ")"
                                          : ""));
    UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ifreq up{};
    std::memcpy(up.ifr_name, name.data(), name.size());
    if (sock.get() < 0 || ::ioctl(sock.get(), SIOCGIFFLAGS, &up) != 0)
        return make_error("liveness interface " + name + ": cannot read its flags: " +
                          std::strerror(errno));
    up.ifr_flags = static_cast<short>(up.ifr_flags | IFF_UP);
    if (::ioctl(sock.get(), SIOCSIFFLAGS, &up) != 0)
        return make_error("liveness interface " + name + ": cannot set it up: " +
                          std::strerror(errno));
    li.name_ = name;
    return li;
}

}  // namespace xvs::ctl::bgp
