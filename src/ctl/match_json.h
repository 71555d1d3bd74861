// The control protocol's form of a SNAT match service key (docs/control-protocol.md):
// {"proto": "tcp"|"udp"|"icmp", "af": "ipv4"|"ipv6", "src_range": "A-B[:P-Q]", "dst_range":
//  "...", "iif": "PORT", "oif": "PORT"}, empty strings (or absent fields) meaning "any" (af:
//  the ranges' family, else IPv4). Used by xvsadm, the reply
// decoder and the controller, so both ends read the same fields the same way.
#pragma once

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "lb/match.h"

namespace xvs::ctl {

inline nlohmann::json match_json(const lb::MatchKey& k) {
    return nlohmann::json{{"proto", std::string(lb::match_proto_name(k.proto))},
                          {"af", k.family == 6 ? "ipv6" : "ipv4"},
                          {"src_range", lb::to_string(k.src)},
                          {"dst_range", lb::to_string(k.dst)},
                          {"iif", k.iif},
                          {"oif", k.oif}};
}

inline Result<lb::MatchKey> match_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return make_error("'match' must be an object");
    auto str = [&](const char* name) -> std::optional<std::string> {
        if (!j.contains(name) || j.at(name).is_null()) return std::string();
        if (!j.at(name).is_string()) return std::nullopt;
        return j.at(name).get<std::string>();
    };
    lb::MatchKey k;
    auto proto = str("proto");
    if (!proto) return make_error("'match.proto' must be a string");
    auto p = lb::match_proto_from_name(*proto);
    if (!p) return make_error("'match.proto' must be tcp, udp or icmp");
    k.proto = *p;
    for (const char* name : {"src_range", "dst_range"}) {
        auto text = str(name);
        if (!text) return make_error(std::string("'match.") + name + "' must be a string");
        auto r = lb::parse_addr_range(*text);
        if (!r) return make_error(std::string("'match.") + name + "': " + r.error());
        (name[0] == 's' ? k.src : k.dst) = *r;
    }
    auto iif = str("iif");
    auto oif = str("oif");
    if (!iif || !oif) return make_error("'match.iif' and 'match.oif' must be strings");
    k.iif = *iif;
    k.oif = *oif;
    auto af = str("af");
    if (!af || (!af->empty() && *af != "ipv4" && *af != "ipv6"))
        return make_error("'match.af' must be \"ipv4\" or \"ipv6\"");
    auto family = lb::match_family(k, af->empty() ? 0 : *af == "ipv4" ? 4 : 6);
    if (!family) return make_error("'match': " + family.error());
    k.family = *family;
    return k;
}

}  // namespace xvs::ctl
