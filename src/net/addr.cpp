// Parsing and printing of IPv4 addresses, prefixes and endpoints (strict: no octal, no
// shorthand forms, every octet 0..255).
#include "net/addr.h"

#include <arpa/inet.h>

#include <charconv>

namespace xvs::net {

namespace {
std::optional<unsigned> parse_uint(std::string_view s, unsigned max) {
    if (s.empty() || s.size() > 10) return std::nullopt;
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v > max) return std::nullopt;
    return v;
}
}  // namespace

std::optional<Ipv4> parse_ipv4(std::string_view text) {
    uint32_t h = 0;
    for (int i = 0; i < 4; ++i) {
        size_t dot = text.find('.');
        std::string_view part = i < 3 ? text.substr(0, dot) : text;
        if (i < 3 && dot == std::string_view::npos) return std::nullopt;
        if (part.size() > 3) return std::nullopt;
        auto v = parse_uint(part, 255);
        if (!v) return std::nullopt;
        h = h << 8 | *v;
        if (i < 3) text.remove_prefix(dot + 1);
    }
    return Ipv4::from_host(h);
}

std::string to_string(Ipv4 addr) {
    uint32_t h = addr.host();
    return std::to_string(h >> 24) + "." + std::to_string((h >> 16) & 0xff) + "." +
           std::to_string((h >> 8) & 0xff) + "." + std::to_string(h & 0xff);
}

std::optional<Ipv4Prefix> parse_ipv4_prefix(std::string_view text) {
    if (text == "default") return Ipv4Prefix{};
    size_t slash = text.find('/');
    auto addr = parse_ipv4(text.substr(0, slash));
    if (!addr) return std::nullopt;
    unsigned len = 32;
    if (slash != std::string_view::npos) {
        auto l = parse_uint(text.substr(slash + 1), 32);
        if (!l) return std::nullopt;
        len = *l;
    }
    uint32_t mask = len == 0 ? 0 : ~uint32_t(0) << (32 - len);
    return Ipv4Prefix{Ipv4::from_host(addr->host() & mask), static_cast<uint8_t>(len)};
}

std::string to_string(const Ipv4Prefix& p) {
    return to_string(p.addr) + "/" + std::to_string(p.len);
}

std::optional<Ipv4Endpoint> parse_ipv4_endpoint(std::string_view text) {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    auto addr = parse_ipv4(text.substr(0, colon));
    auto port = parse_uint(text.substr(colon + 1), 65535);
    if (!addr || !port) return std::nullopt;
    return Ipv4Endpoint{*addr, static_cast<uint16_t>(*port)};
}

std::string to_string(const Ipv4Endpoint& ep) {
    return to_string(ep.addr) + ":" + std::to_string(ep.port);
}

std::optional<InetAddr> parse_inet(std::string_view text) {
    if (text.find(':') == std::string_view::npos) {
        auto v4 = parse_ipv4(text);
        if (!v4) return std::nullopt;
        return InetAddr(*v4);
    }
    if (text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
    char buf[INET6_ADDRSTRLEN];
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = 0;
    uint8_t bytes[16];
    if (inet_pton(AF_INET6, buf, bytes) != 1) return std::nullopt;
    return InetAddr::v6(bytes);
}

std::string to_string(const InetAddr& addr) {
    if (addr.is_v4()) return to_string(addr.ipv4());
    char buf[INET6_ADDRSTRLEN];
    if (!inet_ntop(AF_INET6, addr.b, buf, sizeof buf)) return "?";
    return buf;
}

bool InetPrefix::contains(const InetAddr& a) const {
    if (a.is_v4() != addr.is_v4()) return false;
    const unsigned bits = addr.is_v4() ? 96u + len : len;  // mapped v4: the tag bits always match
    const unsigned full = bits / 8;
    if (std::memcmp(a.b, addr.b, full) != 0) return false;
    if (bits % 8 == 0) return true;
    const uint8_t mask = static_cast<uint8_t>(0xff00u >> (bits % 8));
    return (a.b[full] & mask) == (addr.b[full] & mask);
}

InetPrefix InetPrefix::masked(const InetAddr& a, uint8_t len) {
    InetPrefix p{a, len};
    const unsigned bits = a.is_v4() ? 96u + len : len;
    for (unsigned i = 0; i < 16; ++i) {
        const unsigned lo = i * 8;
        if (bits >= lo + 8) continue;
        p.addr.b[i] = bits <= lo ? 0 : static_cast<uint8_t>(a.b[i] & (0xff00u >> (bits - lo)));
    }
    return p;
}

std::string to_string(const InetPrefix& p) {
    return to_string(p.addr) + "/" + std::to_string(p.len);
}

std::optional<InetPrefix> parse_inet_prefix(std::string_view text) {
    const size_t slash = text.find('/');
    auto addr = parse_inet(text.substr(0, slash));
    if (!addr) return std::nullopt;
    unsigned len = family_bits(*addr);
    if (slash != std::string_view::npos) {
        auto l = parse_uint(text.substr(slash + 1), len);
        if (!l) return std::nullopt;
        len = *l;
    }
    return InetPrefix::masked(*addr, static_cast<uint8_t>(len));
}

std::string_view strip_brackets(std::string_view text) {
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']' &&
        text.find(':') != std::string_view::npos)
        return text.substr(1, text.size() - 2);
    return text;
}

std::optional<InetEndpoint> parse_inet_endpoint(std::string_view text) {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    std::string_view host = text.substr(0, colon);
    std::optional<InetAddr> addr;
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        addr = parse_inet(host.substr(1, host.size() - 2));
        if (addr && addr->is_v4()) return std::nullopt;  // "[1.2.3.4]:80" is not a form
    } else if (host.find(':') == std::string_view::npos) {
        addr = parse_inet(host);  // IPv6 needs its brackets: "::1:80" is ambiguous
    }
    auto port = parse_uint(text.substr(colon + 1), 65535);
    if (!addr || !port) return std::nullopt;
    return InetEndpoint{*addr, static_cast<uint16_t>(*port)};
}

std::string endpoint_host(const InetAddr& addr) {
    return addr.is_v4() ? to_string(addr) : "[" + to_string(addr) + "]";
}

std::string to_string(const InetEndpoint& ep) {
    return endpoint_host(ep.addr) + ":" + std::to_string(ep.port);
}

}  // namespace xvs::net
