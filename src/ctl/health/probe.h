// One check attempt of a checker (TCP_CHECK, HTTP_GET, ... MISC_CHECK): started by the
// manager, it ends by calling `done` exactly once, always from the loop (never from start()),
// unless destroyed first (that cancels it and closes what it opened). The manager turns the
// attempts' results into up/down with keepalived's retry rules (schedule.h).
#pragma once

#include <sys/socket.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ctl/health/check_config.h"
#include "ctl/health/loop.h"
#include "net/addr.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace xvs::ctl::health {

struct ProbeResult {
    bool ok = false;
    std::string text;                // "connected", "HTTP status 503", "timed out", ...
    std::optional<uint32_t> weight;  // MISC_CHECK misc_dynamic: the weight the script asked for
};
using ProbeDone = std::function<void(ProbeResult)>;

class Probe {
  public:
    virtual ~Probe() = default;
    virtual void start(ProbeDone done) = 0;
};

class UdpMux;
class IcmpMux;

// What probes share: the loop, the shared UDP and ICMP sockets, one TLS context.
struct ProbeEnv {
    Loop& loop;
    UdpMux& udp;
    IcmpMux& icmp;
    SSL_CTX* ssl = nullptr;
};

// Where one checker's attempts go: connect_ip:connect_port (defaulted), from bindto.
struct ProbeTarget {
    net::InetEndpoint dst;
    std::optional<net::InetAddr> bindto;
};

std::unique_ptr<Probe> probe_create(const CheckerConf& conf, const ProbeTarget& target,
                                    ProbeEnv& env);

// Socket helpers shared by the probes.
socklen_t sockaddr_of(const net::InetEndpoint& ep, sockaddr_storage& ss);
net::InetEndpoint endpoint_of(const sockaddr_storage& ss);
// A non-blocking socket of ep's family, bound to `bindto` when given: fd or an error text.
Result<int> socket_open(bool v4, int type, int protocol,
                        const std::optional<net::InetAddr>& bindto);

}  // namespace xvs::ctl::health
