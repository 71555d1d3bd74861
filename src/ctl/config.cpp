// Small helpers of the configuration model (lookups and names used in messages).
#include "ctl/config.h"

namespace xvs::ctl {

const PortDef* Config::find_port(std::string_view name) const {
    for (const PortDef& port : netif.ports)
        if (port.name == name) return &port;
    return nullptr;
}

const LocalAddressGroup* Config::find_laddr_group(std::string_view name) const {
    for (const LocalAddressGroup& group : laddr_groups)
        if (group.name == name) return &group;
    return nullptr;
}

std::string_view to_string(Proto proto) {
    return proto == Proto::Tcp ? "TCP" : "UDP";
}

std::string_view to_string(LogLevel level) {
    switch (level) {
        case LogLevel::Debug:
            return "debug";
        case LogLevel::Info:
            return "info";
        case LogLevel::Warning:
            return "warning";
        case LogLevel::Error:
            return "error";
    }
    return "?";
}

std::string_view to_string(ProxyProtocol pp) {
    switch (pp) {
        case ProxyProtocol::Off:
            return "off";
        case ProxyProtocol::V1:
            return "v1";
        case ProxyProtocol::V2:
            return "v2";
    }
    return "?";
}

std::string_view to_string(Uoa uoa) {
    switch (uoa) {
        case Uoa::Off:
            return "off";
        case Uoa::Opp:
            return "opp";
        case Uoa::Ipo:
            return "ipo";
    }
    return "?";
}

}  // namespace xvs::ctl
