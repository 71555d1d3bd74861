// Addresses and prefixes. net::Ipv4 is what the IPv4-only parsers (config, ipvsadm syntax)
// produce; net::InetAddr (v4 or v6, 16 bytes) is what every table and packet struct holds:
// tuples, conns, services, dests, local addresses, routes, neighbours and prefix sets.
// Addresses are kept in network byte order (as on the wire) so the data plane compares them
// without conversion.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
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

// Any IP address, in wire order. IPv4 is held IPv4-mapped (::ffff:a.b.c.d, RFC 4291 2.5.5.2),
// so a v4 and a v6 address never compare equal (DESIGN.md sketched "rest zero", which makes
// 0.0.0.1 and ::1 the same key). Compared and hashed as two 64-bit words.
struct InetAddr {
    alignas(8) uint8_t b[16] = {};

    InetAddr() = default;
    InetAddr(const InetAddr&) = default;
    // Assignable as an lvalue only: an assignment to a temporary (`f() = x` where f returns
    // an InetAddr by value) does not compile instead of doing nothing.
    InetAddr& operator=(const InetAddr&) & = default;
    // A typed IPv4 address is an InetAddr (the control plane's parsers yield net::Ipv4).
    InetAddr(Ipv4 a) { *this = v4(a.be); }  // NOLINT(google-explicit-constructor)

    // Built from two whole words, never from byte stores: a key built byte by byte and then
    // read back as 8- or 16-byte words stalls store forwarding on every packet.
    static InetAddr v4(uint32_t be) {
        static_assert(std::endian::native == std::endian::little);
        const uint64_t lo = uint64_t{be} << 32 | kMappedTag;  // bytes 8..15: 00 00 ff ff a b c d
        return from_words(0, lo);
    }
    static InetAddr from_words(uint64_t w0, uint64_t w1) {
        InetAddr a;
        std::memcpy(a.b, &w0, 8);
        std::memcpy(a.b + 8, &w1, 8);
        return a;
    }
    static InetAddr v6(const uint8_t* bytes16) {
        InetAddr a;
        std::memcpy(a.b, bytes16, 16);
        return a;
    }

    bool is_v4() const { return word(0) == 0 && load32(8) == kMappedTag; }
    // The IPv4 address in network order (meaningful when is_v4()).
    uint32_t v4_be() const { return load32(12); }
    Ipv4 ipv4() const { return Ipv4{v4_be()}; }
    // One test, no short-circuit branches (the next-hop path asks it of every new flow).
    bool is_unspecified() const {
        const uint64_t lo = word(1);
        return (word(0) | (lo == kMappedZero ? 0 : lo)) == 0;
    }

    uint64_t word(unsigned i) const {
        uint64_t w;
        std::memcpy(&w, b + 8 * i, 8);
        return w;
    }
    // Branch-free: one test of both words, not a branch per word (a per-packet compare whose
    // outcome the predictor cannot learn, in table probes and tuple matches).
    bool operator==(const InetAddr& o) const {
        return ((word(0) ^ o.word(0)) | (word(1) ^ o.word(1))) == 0;
    }
    // Both words folded into one for a hash finalizer (mix64): word(0) is 0 for IPv4, so an
    // IPv4 lookup costs one multiply more than hashing a uint32_t did.
    uint64_t fold() const { return word(1) + word(0) * 0x9e3779b97f4a7c15ULL; }

  private:
    uint32_t load32(unsigned off) const {
        uint32_t v;
        std::memcpy(&v, b + off, 4);
        return v;
    }
    static constexpr uint32_t kMappedTag = 0xffff0000u;  // bytes 00 00 ff ff, little-endian load
    static constexpr uint64_t kMappedZero = 0x00000000ffff0000ull;
};
static_assert(sizeof(InetAddr) == 16 && alignof(InetAddr) == 8);

// "a.b.c.d" or an IPv6 address in RFC 4291 text form.
std::optional<InetAddr> parse_inet(std::string_view text);
// Dotted quad for IPv4, RFC 5952 form for IPv6.
std::string to_string(const InetAddr& addr);

// A prefix of either family; len counts bits of the family's own address (0..32 or 0..128).
struct InetPrefix {
    InetAddr addr;  // masked
    uint8_t len = 0;

    InetPrefix() = default;
    InetPrefix(const InetAddr& a, uint8_t l) : addr(a), len(l) {}
    InetPrefix(const Ipv4Prefix& p)
        : addr(p.addr), len(p.len) {}  // NOLINT(google-explicit-constructor)

    // a with the host bits beyond len cleared.
    static InetPrefix masked(const InetAddr& a, uint8_t len);

    bool is_v4() const { return addr.is_v4(); }
    bool contains(const InetAddr& a) const;
    bool operator==(const InetPrefix&) const = default;
};
std::string to_string(const InetPrefix& p);

// "ADDR/LEN" or "ADDR" (= /32 or /128) of either family; the address is masked. "default" is
// not accepted here: which family it means is the caller's call.
std::optional<InetPrefix> parse_inet_prefix(std::string_view text);
// The width of a's family in bits: 32 or 128.
inline unsigned family_bits(const InetAddr& a) {
    return a.is_v4() ? 32u : 128u;
}

// An address and a port of either family. Text form as ipvsadm and keepalived write it:
// "a.b.c.d:port" for IPv4, "[v6]:port" for IPv6 (RFC 3986 brackets).
struct InetEndpoint {
    InetAddr addr;
    uint16_t port = 0;  // host order
    bool operator==(const InetEndpoint&) const = default;
};
// "a.b.c.d:port" or "[v6]:port"; port 0..65535.
std::optional<InetEndpoint> parse_inet_endpoint(std::string_view text);
std::string to_string(const InetEndpoint& ep);
// An address as it stands before ":port": a.b.c.d, or [v6] in brackets.
std::string endpoint_host(const InetAddr& addr);
// "[v6]" -> "v6"; anything else unchanged. Bracketed IPv4 is not unwrapped.
std::string_view strip_brackets(std::string_view text);

// Total order (family first, then address bytes) for sorted lists and map keys; no packet
// path use.
inline bool addr_less(const InetAddr& a, const InetAddr& b) {
    if (a.is_v4() != b.is_v4()) return a.is_v4();
    return std::memcmp(a.b, b.b, 16) < 0;
}
struct InetAddrLess {
    bool operator()(const InetAddr& a, const InetAddr& b) const { return addr_less(a, b); }
};

}  // namespace xvs::net
