// Decoding of control requests (docs/control-protocol.md) into Director arguments, and the
// small printers the replies share; see controller_request.h. Addresses of either family.
#include "ctl/controller_request.h"

#include <cstdio>

#include "ctl/match_json.h"
#include "lb/conn.h"
#include "lb/service_check.h"

namespace xvs::ctl::request {

using nlohmann::json;

const json& field(const json& obj, const char* name) {
    if (!obj.is_object() || !obj.contains(name))
        throw BadRequest{std::string("missing '") + name + "'"};
    return obj.at(name);
}

std::string get_str(const json& obj, const char* name) {
    const json& v = field(obj, name);
    if (!v.is_string()) throw BadRequest{std::string("'") + name + "' must be a string"};
    return v.get<std::string>();
}

uint64_t get_uint(const json& obj, const char* name, uint64_t max) {
    const json& v = field(obj, name);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
        throw BadRequest{std::string("'") + name + "' must be a non-negative integer"};
    uint64_t x = v.get<uint64_t>();
    if (x > max) throw BadRequest{std::string("'") + name + "' out of range"};
    return x;
}

uint64_t opt_uint(const json& obj, const char* name, uint64_t max, uint64_t dflt) {
    return obj.is_object() && obj.contains(name) && !obj.at(name).is_null()
               ? get_uint(obj, name, max)
               : dflt;
}

net::InetAddr get_ip(const json& obj, const char* name) {
    auto a = net::parse_inet(get_str(obj, name));
    if (!a) throw BadRequest{std::string("'") + name + "' is not an IP address"};
    return *a;
}

net::InetPrefix get_prefix(const json& obj, const char* name) {
    const std::string text = get_str(obj, name);
    if (text == "default") return net::Ipv4Prefix{};
    if (text == "default6") return net::InetPrefix(net::InetAddr{}, 0);  // ::/0
    auto p = net::parse_inet_prefix(text);
    if (!p) throw BadRequest{std::string("'") + name + "' is not an IP prefix"};
    return *p;
}

uint8_t get_proto(const json& obj) {
    std::string p = get_str(obj, "proto");
    if (p == "tcp") return 6;
    if (p == "udp") return 17;
    throw BadRequest{"'proto' must be tcp or udp"};
}

bool is_match(const json& obj) {
    return obj.is_object() && obj.contains("match");
}

// The key of a SNAT match service ({"match": {...}}, see ctl/match_json.h).
lb::MatchKey get_match_key(const json& obj) {
    auto k = match_from_json(obj.at("match"));
    if (!k) throw BadRequest{k.error()};
    return *k;
}

// A firewall-mark service key's family: "af" "ipv4" (or absent, as before IPv6 marks) or "ipv6".
bool fwmark_v6(const json& obj) {
    if (!obj.contains("af")) return false;
    const std::string af = get_str(obj, "af");
    if (af != "ipv4" && af != "ipv6") throw BadRequest{"'af' must be ipv4 or ipv6"};
    return af == "ipv6";
}

lb::ServiceKey get_service_key(const json& obj) {
    if (obj.is_object() && obj.contains("fwmark")) {
        const uint64_t mark = get_uint(obj, "fwmark", UINT32_MAX);
        if (mark == 0) throw BadRequest{"'fwmark' must be 1 or more"};
        return lb::make_fwmark_key(static_cast<uint32_t>(mark), fwmark_v6(obj));
    }
    if (is_match(obj))
        throw BadRequest{"SNAT match services have no local addresses or client lists"};
    return lb::make_service_key(get_proto(obj), get_ip(obj, "vip"),
                                static_cast<uint16_t>(get_uint(obj, "port", 65535)));
}

std::string ip_port(const net::InetAddr& addr, uint16_t port_be) {
    return net::to_string(net::InetEndpoint{addr, net::ntoh16(port_be)});
}

std::string mac_string(const net::MacAddr& m) {
    char buf[18];
    std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", m.b[0], m.b[1], m.b[2], m.b[3],
                  m.b[4], m.b[5]);
    return buf;
}

std::string fwd_string(lb::FwdMode m) {
    return std::string(lb::fwd_names(m).api);
}

lb::FwdMode parse_fwd(const std::string& s) {
    if (auto m = lb::fwd_from_api(s)) return *m;
    throw BadRequest{"unknown 'fwd' " + s + " (fullnat, masq, dr, tunnel, snat or nattun)"};
}

lb::TunType parse_tun_type(const std::string& s) {
    if (s == "ipip" || s.empty()) return lb::TunType::Ipip;
    if (s == "gue") return lb::TunType::Gue;
    throw BadRequest{"unknown 'tun_type' " + s + " (ipip or gue; GRE is not supported)"};
}

std::optional<uint8_t> persist_prefix_of(const json& s) {
    if (!s.contains("netmask") || s.at("netmask").is_null()) return lb::ServiceSpec::kPersistFull;
    const json& m = s.at("netmask");
    if (m.is_number_unsigned() && m.get<uint64_t>() <= 128) return uint8_t(m.get<uint64_t>());
    if (!m.is_string()) return std::nullopt;
    const std::string text = m.get<std::string>();
    if (!text.empty() && text.find('.') == std::string::npos) {  // an IPv6 prefix length
        unsigned len = 0;
        for (char c : text) {
            if (c < '0' || c > '9' || (len = len * 10 + unsigned(c - '0')) > 128)
                return std::nullopt;
        }
        return uint8_t(len);
    }
    auto a = net::parse_inet(text);
    if (!a || !a->is_v4()) return std::nullopt;
    const uint32_t mask = net::ntoh32(a->v4_be());
    const auto len = static_cast<uint8_t>(__builtin_popcount(mask));
    if (len != 0 && mask != ~uint32_t{0} << (32 - len)) return std::nullopt;  // not contiguous
    return len == 32 ? lb::ServiceSpec::kPersistFull : len;
}

// Features the protocol carries but the data plane does not do yet: refused, never ignored.
std::optional<std::string> unsupported_service_attrs(const json& s) {
    // Which options combine is lb::service_check's call (Director::service_add/edit); here
    // only the shape of the values.
    if (s.contains("proxy_protocol")) {
        const json& pp = s.at("proxy_protocol");
        if (!pp.is_string() || (pp != "off" && pp != "v1" && pp != "v2"))
            return "'proxy_protocol' must be \"v1\", \"v2\" or \"off\"";
    }
    if (s.contains("uoa")) {
        const json& uoa = s.at("uoa");
        if (!uoa.is_string() || (uoa != "off" && uoa != "opp" && uoa != "ipo"))
            return "'uoa' must be \"opp\", \"ipo\" or \"off\"";
    }
    if (s.contains("netmask") && !persist_prefix_of(s))
        return "'netmask' must be a contiguous IPv4 netmask (255.255.255.0) or, for IPv6, a "
               "prefix length (64)";
    // A granularity without persistence would be stored and never used.
    if (persist_prefix_of(s).value_or(0) != lb::ServiceSpec::kPersistFull &&
        opt_uint(s, "persistent", lb::kMaxTimeoutS, 0) == 0)
        return "the persistence netmask (-M) needs a persistent service: add -p [timeout] or "
               "remove -M";
    if (s.contains("hash_target") &&
        (!s.at("hash_target").is_string() || (s.at("hash_target") != "sip" && s.at("hash_target") != "qid")))
        return "'hash_target' must be \"sip\" or \"qid\"";
    if (s.contains("quic_cid_len") && (!s.at("quic_cid_len").is_number_unsigned() ||
                                       s.at("quic_cid_len").get<uint64_t>() > net::kQuicMaxCidLen))
        return "'quic_cid_len' must be 0..20 (bytes of a QUIC connection ID)";
    if (s.contains("sched_flags") &&
        !lb::sched_flags_parse(s.value("sched_flags", std::vector<std::string>{})))
        return "invalid scheduler flag (sh-fallback, sh-port, mh-fallback, mh-port, flag-1..3)";
    if (s.contains("pe") && !s.at("pe").is_null() &&
        (!s.at("pe").is_string() ||
         (!s.at("pe").get<std::string>().empty() && s.at("pe").get<std::string>() != "sip")))
        return "unknown persistence engine (--pe): the one there is is sip";
    return std::nullopt;
}

// The flags and conn_rate of a service object (the rest of ServiceSpec left default).
lb::ServiceSpec service_spec_flags(const json& s) {
    lb::ServiceSpec spec;
    if (s.contains("toa") && s.at("toa").is_boolean() && s.at("toa").get<bool>())
        spec.flags |= lb::kSvcFlagToa;
    if (s.contains("synproxy") && s.at("synproxy").is_boolean() && s.at("synproxy").get<bool>())
        spec.flags |= lb::kSvcFlagSynProxy;
    if (s.contains("ops") && s.at("ops").is_boolean() && s.at("ops").get<bool>())
        spec.flags |= lb::kSvcFlagOps;
    if (s.contains("pe") && s.at("pe").is_string() && s.at("pe").get<std::string>() == "sip")
        spec.flags |= lb::kSvcFlagPeSip;
    if (s.contains("proxy_protocol") && s.at("proxy_protocol").is_string()) {
        const std::string pp = s.at("proxy_protocol").get<std::string>();
        if (pp == "v1")
            spec.flags |= lb::kSvcFlagPpV1;
        else if (pp == "v2")
            spec.flags |= lb::kSvcFlagPpV2;
    }
    if (s.contains("uoa") && s.at("uoa").is_string()) {
        const std::string uoa = s.at("uoa").get<std::string>();
        if (uoa == "opp")
            spec.flags |= lb::kSvcFlagUoaOpp;
        else if (uoa == "ipo")
            spec.flags |= lb::kSvcFlagUoaIpo;
    }
    spec.conn_rate = static_cast<uint32_t>(opt_uint(s, "conn_rate", UINT32_MAX, 0));
    spec.sched_flags =
        lb::sched_flags_parse(s.value("sched_flags", std::vector<std::string>{})).value_or(0);
    spec.mh_table_size = static_cast<uint32_t>(opt_uint(s, "mh_table_size", UINT32_MAX, 0));
    if (s.contains("hash_target") && s.at("hash_target") == "qid") spec.flags |= lb::kSvcFlagHashQid;
    spec.quic_cid_len = static_cast<uint8_t>(opt_uint(s, "quic_cid_len", net::kQuicMaxCidLen, 0));
    spec.persistence_s = static_cast<uint32_t>(opt_uint(s, "persistent", lb::kMaxTimeoutS, 0));
    spec.persist_prefix = persist_prefix_of(s).value_or(lb::ServiceSpec::kPersistFull);
    return spec;
}

lb::ServiceSpec service_spec(const json& s) {
    lb::ServiceSpec spec = service_spec_flags(s);
    spec.sched = s.contains("sched") ? get_str(s, "sched") : "wlc";
    if (s.contains("fwmark")) {
        const lb::ServiceKey k = get_service_key(s);
        spec.fwmark = k.fwmark;
        spec.fwmark_v6 = !k.vip.is_v4();
        return spec;
    }
    spec.proto = get_proto(s);
    spec.vip = get_ip(s, "vip");
    spec.port = static_cast<uint16_t>(get_uint(s, "port", 65535));
    spec.sched = s.contains("sched") ? get_str(s, "sched") : "wlc";
    spec.fwd = lb::FwdMode::FullNat;
    return spec;
}

lb::DestSpec dest_spec(const json& d) {
    lb::DestSpec spec;
    spec.addr = get_ip(d, "addr");
    spec.port = static_cast<uint16_t>(get_uint(d, "port", 65535));
    spec.weight = static_cast<int32_t>(opt_uint(d, "weight", 65535, 1));
    spec.fwd = d.contains("fwd") ? parse_fwd(get_str(d, "fwd")) : lb::FwdMode::FullNat;
    spec.upper_threshold = static_cast<uint32_t>(opt_uint(d, "u_threshold", UINT32_MAX, 0));
    spec.lower_threshold = static_cast<uint32_t>(opt_uint(d, "l_threshold", UINT32_MAX, 0));
    if (spec.fwd == lb::FwdMode::Tun || spec.fwd == lb::FwdMode::NatTun) {
        spec.tun_type = parse_tun_type(d.contains("tun_type") ? get_str(d, "tun_type") : "");
        spec.tun_port = static_cast<uint16_t>(opt_uint(d, "tun_port", 65535, 0));
        if (spec.tun_type == lb::TunType::Gue && spec.tun_port == 0)
            throw BadRequest{"GUE tunnels need a destination port ('tun_port')"};
    }
    return spec;
}

std::string_view neigh_state_name(stack::NeighState s) {
    switch (s) {
        case stack::NeighState::Incomplete:
            return "INCOMPLETE";
        case stack::NeighState::Reachable:
            return "REACHABLE";
        case stack::NeighState::Stale:
            return "STALE";
        case stack::NeighState::Failed:
            return "FAILED";
        case stack::NeighState::Static:
            return "PERMANENT";
        default:
            return "NONE";
    }
}

}  // namespace xvs::ctl::request
