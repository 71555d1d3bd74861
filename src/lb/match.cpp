// Text forms of SNAT match services (lb/match.h).
#include "lb/match.h"

#include <algorithm>
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
    // Split addresses from ports: "[A-B]:P-Q" (IPv6 with ports), "A-B" with two or more
    // colons (IPv6 without ports), else "A-B[:P-Q]" (IPv4).
    std::string_view addrs = text;
    std::optional<std::string_view> ports;
    bool v6 = false;
    if (text.front() == '[') {
        const size_t close = text.find(']');
        if (close == std::string_view::npos)
            return make_error("bad address range " + shown + ": '[' without ']'");
        addrs = text.substr(1, close - 1);
        std::string_view rest = text.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':')
                return make_error("bad address range " + shown + ": ':PORT' expected after ']'");
            ports = rest.substr(1);
        }
        v6 = true;
    } else if (std::count(text.begin(), text.end(), ':') >= 2) {
        v6 = true;
    } else if (size_t colon = text.find(':'); colon != std::string_view::npos) {
        addrs = text.substr(0, colon);
        ports = text.substr(colon + 1);
    }
    if (ports) {
        size_t dash = ports->find('-');
        auto lo = port_number(ports->substr(0, dash));
        auto hi = dash == std::string_view::npos ? lo : port_number(ports->substr(dash + 1));
        if (!lo || !hi || *hi < *lo)
            return make_error("bad port range in " + shown + " (P or P-Q, 0..65535, P <= Q)");
        r.port_first = *lo;
        r.port_last = *hi;
    }
    const size_t dash = addrs.find('-');
    auto parse = [&](std::string_view a) -> std::optional<net::InetAddr> {
        auto addr = net::parse_inet(a);
        if (!addr || addr->is_v4() == v6) return std::nullopt;
        return addr;
    };
    auto first = parse(addrs.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : parse(addrs.substr(dash + 1));
    if (!first || !last)
        return make_error("bad address range " + shown +
                          (v6 ? " (IPv6: A or A-B, in brackets when ports follow: [A-B]:P-Q)"
                              : " (A.B.C.D or A.B.C.D-A.B.C.D)"));
    if (std::memcmp(last->b, first->b, 16) < 0)
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
        if (!r.first.is_v4()) s = "[" + s + "]";
        s += ":" + std::to_string(r.port_first);
        if (r.port_last != r.port_first) s += "-" + std::to_string(r.port_last);
    }
    return s;
}

Result<uint8_t> match_family(const MatchKey& k, uint8_t stated) {
    const uint8_t s = range_family(k.src);
    const uint8_t d = range_family(k.dst);
    if (s && d && s != d)
        return make_error("src-range is IPv" + std::to_string(s) + " but dst-range is IPv" +
                          std::to_string(d) + ": one family per match service");
    const uint8_t ranges = s ? s : d;
    if (stated && ranges && stated != ranges)
        return make_error("af=ipv" + std::to_string(stated) + " but the ranges are IPv" +
                          std::to_string(ranges));
    return stated ? stated : ranges ? ranges : uint8_t{4};
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
    if (k.family == 6) s += ",af=ipv6";
    if (!k.src.any()) s += ",src-range=" + to_string(k.src);
    if (!k.dst.any()) s += ",dst-range=" + to_string(k.dst);
    if (!k.iif.empty()) s += ",iif=" + k.iif;
    if (!k.oif.empty()) s += ",oif=" + k.oif;
    return s;
}

Result<MatchKey> parse_match(std::string_view text) {
    MatchKey k;
    bool proto = false;
    uint8_t af = 0;  // af='s family, 0 if not given
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
            if (val != "ipv4" && val != "ipv6")
                return make_error("af must be ipv4 or ipv6, not '" + std::string(val) + "'");
            af = val == "ipv4" ? 4 : 6;
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
    auto family = match_family(k, af);
    if (!family) return make_error(family.error());
    k.family = *family;
    return k;
}

}  // namespace xvs::lb
