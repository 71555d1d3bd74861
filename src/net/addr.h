// IPv4 addresses and prefixes for the control plane and tables. Addresses are kept in network
// byte order (as on the wire) so the data plane compares them without conversion.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xvs::net {

struct Ipv4 {
    uint32_t be = 0;  // network byte order
    bool operator==(const Ipv4&) const = default;
    uint32_t host() const { return __builtin_bswap32(be); }
    static Ipv4 from_host(uint32_t h) { return Ipv4{__builtin_bswap32(h)}; }
};

std::optional<Ipv4> parse_ipv4(std::string_view text);
std::string to_string(Ipv4 addr);

struct Ipv4Prefix {
    Ipv4 addr;  // masked
    uint8_t len = 0;
    bool contains(Ipv4 a) const {
        uint32_t mask = len == 0 ? 0 : ~uint32_t(0) << (32 - len);
        return (a.host() & mask) == (addr.host() & mask);
    }
    bool operator==(const Ipv4Prefix&) const = default;
};

// "a.b.c.d/len" or "a.b.c.d" (= /32); "default" = 0.0.0.0/0. The address is masked.
std::optional<Ipv4Prefix> parse_ipv4_prefix(std::string_view text);
std::string to_string(const Ipv4Prefix& p);

// "a.b.c.d:port" (port 0..65535)
struct Ipv4Endpoint {
    Ipv4 addr;
    uint16_t port = 0;  // host order
    bool operator==(const Ipv4Endpoint&) const = default;
};
std::optional<Ipv4Endpoint> parse_ipv4_endpoint(std::string_view text);
std::string to_string(const Ipv4Endpoint& ep);

}  // namespace xvs::net
