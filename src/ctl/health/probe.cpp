// The probe factory and the socket helpers the probes share.
#include "ctl/health/probe.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace xvs::ctl::health {

std::unique_ptr<Probe> stream_probe_create(const CheckerConf&, const ProbeTarget&, ProbeEnv&);
std::unique_ptr<Probe> dgram_probe_create(const CheckerConf&, const ProbeTarget&, ProbeEnv&);
std::unique_ptr<Probe> misc_probe_create(const CheckerConf&, ProbeEnv&);

std::unique_ptr<Probe> probe_create(const CheckerConf& conf, const ProbeTarget& target,
                                    ProbeEnv& env) {
    switch (conf.type) {
        case CheckType::Tcp:
        case CheckType::Http:
        case CheckType::Ssl:
        case CheckType::Smtp:
            return stream_probe_create(conf, target, env);
        case CheckType::Udp:
        case CheckType::Dns:
        case CheckType::Ping:
            return dgram_probe_create(conf, target, env);
        case CheckType::Misc:
            return misc_probe_create(conf, env);
    }
    return nullptr;
}

socklen_t sockaddr_of(const net::InetEndpoint& ep, sockaddr_storage& ss) {
    std::memset(&ss, 0, sizeof ss);
    if (ep.addr.is_v4()) {
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        sin.sin_port = htons(ep.port);
        sin.sin_addr.s_addr = ep.addr.v4_be();
        std::memcpy(&ss, &sin, sizeof sin);
        return sizeof sin;
    }
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(ep.port);
    std::memcpy(&sin6.sin6_addr, ep.addr.b, 16);
    std::memcpy(&ss, &sin6, sizeof sin6);
    return sizeof sin6;
}

net::InetEndpoint endpoint_of(const sockaddr_storage& ss) {
    if (ss.ss_family == AF_INET) {
        sockaddr_in sin{};
        std::memcpy(&sin, &ss, sizeof sin);
        return {net::InetAddr::v4(sin.sin_addr.s_addr), ntohs(sin.sin_port)};
    }
    sockaddr_in6 sin6{};
    std::memcpy(&sin6, &ss, sizeof sin6);
    return {net::InetAddr::v6(sin6.sin6_addr.s6_addr), ntohs(sin6.sin6_port)};
}

Result<int> socket_open(bool v4, int type, int protocol,
                        const std::optional<net::InetAddr>& bindto) {
    int fd = ::socket(v4 ? AF_INET : AF_INET6, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
    if (fd < 0) return make_error(std::string("socket: ") + strerror(errno));
    if (bindto) {
        sockaddr_storage ss{};
        const socklen_t len = sockaddr_of(net::InetEndpoint{*bindto, 0}, ss);
        if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
            const int e = errno;
            close(fd);
            return make_error("bindto " + net::to_string(*bindto) + ": " + strerror(e));
        }
    }
    return fd;
}

}  // namespace xvs::ctl::health
