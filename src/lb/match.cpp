// Text forms of SNAT match services (lb/match.h).
#include "lb/match.h"

#include <charconv>

namespace xvs::lb {

namespace {

std::optional<uint16_t> port_number(std::string_view s) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v > 65535)
        return std::nullopt;
    return static_cast<uint16_t>(v);
}

}  // namespace

Result<AddrRange> parse_addr_range(std::string_view text) {
    AddrRange r;
    if (text.empty()) return r;
    const std::string shown = "'" + std::string(text) + "'";
    std::string_view addrs = text.substr(0, text.find(':'));
    if (size_t colon = text.find(':'); colon != std::string_view::npos) {
        std::string_view ports = text.substr(colon + 1);
        size_t dash = ports.find('-');
        auto lo = port_number(ports.substr(0, dash));
        auto hi = dash == std::string_view::npos ? lo : port_number(ports.substr(dash + 1));
        if (!lo || !hi || *hi < *lo)
            return make_error("bad port range in " + shown + " (P or P-Q, 0..65535, P <= Q)");
        r.port_first = *lo;
        r.port_last = *hi;
    }
    size_t dash = addrs.find('-');
    auto first = net::parse_ipv4(addrs.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : net::parse_ipv4(addrs.substr(dash + 1));
    if (!first || !last)
        return make_error("bad address range " + shown + " (A.B.C.D or A.B.C.D-A.B.C.D)");
    if (last->host() < first->host())
        return make_error("bad address range " + shown + ": the last address is below the first");
    r.first = *first;
    r.last = *last;
    return r;
}

std::string to_string(const AddrRange& r) {
    if (r.any()) return "";
    std::string s = net::to_string(r.first);
    if (r.last != r.first) s += "-" + net::to_string(r.last);
    if (!r.any_port()) {
        s += ":" + std::to_string(r.port_first);
        if (r.port_last != r.port_first) s += "-" + std::to_string(r.port_last);
    }
    return s;
}

std::string_view match_proto_name(uint8_t proto) {
    switch (proto) {
        case 6:
            return "tcp";
        case 17:
            return "udp";
        case 1:
            return "icmp";
        default:
            return "";
    }
}

std::optional<uint8_t> match_proto_from_name(std::string_view name) {
    if (name == "tcp") return 6;
    if (name == "udp") return 17;
    if (name == "icmp") return 1;
    return std::nullopt;
}

std::string to_string(const MatchKey& k) {
    std::string s = "proto=" + std::string(match_proto_name(k.proto));
    if (!k.src.any()) s += ",src-range=" + to_string(k.src);
    if (!k.dst.any()) s += ",dst-range=" + to_string(k.dst);
    if (!k.iif.empty()) s += ",iif=" + k.iif;
    if (!k.oif.empty()) s += ",oif=" + k.oif;
    return s;
}

Result<MatchKey> parse_match(std::string_view text) {
    MatchKey k;
    bool proto = false;
    while (!text.empty()) {
        size_t comma = text.find(',');
        std::string_view item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
        size_t eq = item.find('=');
        if (eq == std::string_view::npos)
            return make_error("'" + std::string(item) + "' is not key=value");
        std::string_view key = item.substr(0, eq);
        std::string_view val = item.substr(eq + 1);
        if (key == "proto") {
            auto p = match_proto_from_name(val);
            if (!p)
                return make_error("proto must be tcp, udp or icmp, not '" + std::string(val) + "'");
            k.proto = *p;
            proto = true;
        } else if (key == "src-range" || key == "dst-range") {
            auto r = parse_addr_range(val);
            if (!r) return make_error(std::string(key) + ": " + r.error());
            (key == "src-range" ? k.src : k.dst) = *r;
        } else if (key == "af") {
            // DPVS's address family key: IPv4 is the only family wired.
            if (val != "ipv4")
                return make_error("af=" + std::string(val) + " is not supported (only af=ipv4)");
        } else if (key == "iif") {
            k.iif = std::string(val);
        } else if (key == "oif") {
            k.oif = std::string(val);
        } else {
            return make_error("unknown match key '" + std::string(key) +
                              "' (proto, af, src-range, dst-range, iif, oif)");
        }
    }
    if (!proto) return make_error("proto=tcp|udp|icmp missing");
    return k;
}

}  // namespace xvs::lb
