// How the metrics and the status page name a service and a real server: as ipvsadm -L -n
// does ("TCP 10.0.0.1:80", "FWM 5", "FWM 5 IPv6", "SNAT name") and "addr:port". One place,
// so that a Prometheus label and a status page title of the same service are the same text.
#pragma once

#include <string>

#include "lb/dest.h"
#include "lb/service.h"
#include "net/addr.h"

namespace xvs::ctl {

inline std::string service_label(const lb::Service& s) {
    if (s.match) return "SNAT " + (s.match_name.empty() ? std::string("match") : s.match_name);
    if (s.key.fwmark)
        return "FWM " + std::to_string(s.key.fwmark) + (s.key.vip.is_v4() ? "" : " IPv6");
    return std::string(s.key.proto == 6 ? "TCP " : "UDP ") +
           net::to_string(net::InetEndpoint{s.key.vip, net::ntoh16(s.key.port)});
}

inline std::string dest_label(const lb::Dest& d) {
    return net::to_string(net::InetEndpoint{d.addr, d.port});
}

}  // namespace xvs::ctl
