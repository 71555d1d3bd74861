// IPv6 pieces of net/ (issue 11): the IPv6 pseudo-header checksum against a slow reference,
// the Af6 trait's incremental updates against recomputation, ICMPv6 errors built and parsed
// (what RFC 4443 forbids, the 1280-byte bound, quoted extension headers and fragments), and the
// FNAT64 translation in both directions checked by full checksums.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "net/af.h"
#include "net/checksum.h"
#include "net/icmp6.h"
#include "net/nat64.h"
#include "net/nat_rewrite.h"

namespace xvs::net {
namespace {

InetAddr a6(const char* t) {
    return *parse_inet(t);
}

uint16_t ref_sum(const uint8_t* p, size_t n, uint64_t sum = 0) {
    for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(p[i]) << 8 | p[i + 1];
    if (n & 1) sum += uint32_t(p[n - 1]) << 8;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(sum);
}

// RFC 8200 8.1, written out: 16 + 16 address bytes, 32-bit length, 3 zero bytes, next header.
uint16_t ref_l6_checksum(const InetAddr& s, const InetAddr& d, uint8_t proto, const uint8_t* l4,
                         size_t len) {
    uint8_t pseudo[40] = {};
    std::memcpy(pseudo, s.b, 16);
    std::memcpy(pseudo + 16, d.b, 16);
    pseudo[32] = uint8_t(len >> 24);
    pseudo[33] = uint8_t(len >> 16);
    pseudo[34] = uint8_t(len >> 8);
    pseudo[35] = uint8_t(len);
    pseudo[39] = proto;
    return static_cast<uint16_t>(~ref_sum(l4, len, ref_sum(pseudo, 40)));
}

// An IPv6 TCP or UDP packet with a correct checksum; l4 payload random.
std::vector<uint8_t> packet6(std::mt19937& rng, const InetAddr& s, const InetAddr& d, uint8_t proto,
                             size_t payload) {
    const size_t l4h = proto == kIpProtoTcp ? 20 : 8;
    std::vector<uint8_t> p(40 + l4h + payload);
    for (size_t i = 40; i < p.size(); ++i) p[i] = uint8_t(rng());
    store_be32(p.data(), 6u << 28 | 0x2a << 20 | 0x12345);
    store_be16(p.data() + 4, static_cast<uint16_t>(l4h + payload));
    p[6] = proto;
    p[7] = 64;
    std::memcpy(p.data() + 8, s.b, 16);
    std::memcpy(p.data() + 24, d.b, 16);
    uint8_t* l4 = p.data() + 40;
    const size_t coff = proto == kIpProtoTcp ? 16 : 6;
    if (proto == kIpProtoTcp) l4[12] = 5 << 4;
    if (proto == kIpProtoUdp) store_be16(l4 + 4, static_cast<uint16_t>(8 + payload));
    store_wire16(l4 + coff, 0);
    store_be16(l4 + coff, ref_l6_checksum(s, d, proto, l4, l4h + payload));
    return p;
}

bool l6_ok(const std::vector<uint8_t>& p, size_t off = 0) {
    const uint8_t* ip = p.data() + off;
    const size_t len = load_be16(ip + 4);
    return ref_sum(ip + 40, len, ref_sum(ip + 8, 32) + (len >> 16) + (len & 0xffff) + ip[6]) ==
           0xffff;
}

TEST(Ipv6Checksum, PseudoHeaderMatchesTheReference) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(6);
    for (int i = 0; i < 500; ++i) {
        std::vector<uint8_t> l4(1 + rng() % 1500);
        for (auto& b : l4) b = uint8_t(rng());
        InetAddr s, d;
        for (auto& b : s.b) b = uint8_t(rng());
        for (auto& b : d.b) b = uint8_t(rng());
        const uint8_t proto = i % 2 ? kIpProtoTcp : kIpProtoUdp;
        const uint16_t ours = ipv6_l4_checksum(s.b, d.b, proto, l4.data(), l4.size());
        EXPECT_EQ(ntoh16(ours), ref_l6_checksum(s, d, proto, l4.data(), l4.size()));
    }
}

TEST(Ipv6Checksum, Af6RewritesKeepTheL4ChecksumRight) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(66);
    for (int i = 0; i < 300; ++i) {
        const uint8_t proto = i % 2 ? kIpProtoTcp : kIpProtoUdp;
        auto p = packet6(rng, a6("2001:db8:1::2"), a6("2001:db8:1::100"), proto, rng() % 600);
        ASSERT_TRUE(l6_ok(p));
        auto* ip = reinterpret_cast<Ipv6Hdr*>(p.data());
        InetAddr s, d;
        for (auto& b : s.b) b = uint8_t(rng());
        for (auto& b : d.b) b = uint8_t(rng());
        s.b[0] = d.b[0] = 0x20;  // not v4-mapped
        switch (i % 3) {
            case 0:
                rewrite_both<Af6>(ip, p.data() + 40, proto, s, d, 1111, 2222);
                break;
            case 1:
                rewrite_daddr_dport<Af6>(ip, p.data() + 40, proto, d, 3333);
                break;
            default:
                rewrite_saddr_sport<Af6>(ip, p.data() + 40, proto, s, 4444);
                break;
        }
        EXPECT_TRUE(l6_ok(p)) << i;
    }
}

TEST(Ipv6Checksum, HopLimitDecrement) {
    Ipv6Hdr h{};
    h.hop_limit = 2;
    EXPECT_TRUE(Af6::ttl_decrement(h));
    EXPECT_EQ(h.hop_limit, 1);
    EXPECT_FALSE(Af6::ttl_decrement(h));
    EXPECT_EQ(h.hop_limit, 1);
}

TEST(Icmp6Error, BuiltWithinTheMinimumMtuAndParsedBack) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(7);
    auto orig = packet6(rng, a6("2001:db8:1::2"), a6("2001:db8:1::100"), kIpProtoTcp, 1400);
    std::vector<uint8_t> out(2000);
    const InetAddr from = a6("2001:db8:1::100");
    const size_t n =
        build_packet_too_big(out.data(), out.size(), orig.data(), orig.size(), from, 1420);
    ASSERT_EQ(n, 1280u);  // RFC 4443 2.4(c): as much of the packet as fits in 1280
    out.resize(n);
    EXPECT_EQ(out[6], kIpProtoIcmp6);
    EXPECT_EQ(InetAddr::v6(out.data() + 8), from);
    EXPECT_EQ(InetAddr::v6(out.data() + 24), a6("2001:db8:1::2"));
    EXPECT_TRUE(l6_ok(out));
    IcmpQuote q;
    ASSERT_TRUE(parse_icmp6_error(*reinterpret_cast<const Ipv6Hdr*>(out.data()), out.data() + 40,
                                  n - 40, q));
    EXPECT_EQ(q.type, kIcmp6PacketTooBig);
    EXPECT_EQ(q.next_hop_mtu, 1420);
    EXPECT_EQ(q.inner_proto, kIpProtoTcp);
    EXPECT_EQ(q.inner_saddr, a6("2001:db8:1::2"));
    EXPECT_EQ(q.inner_l4_off, 48u);
    // A corrupted byte fails the checksum.
    out[100] ^= 1;
    EXPECT_FALSE(parse_icmp6_error(*reinterpret_cast<const Ipv6Hdr*>(out.data()), out.data() + 40,
                                   n - 40, q));
}

TEST(Icmp6Error, NoErrorWhereRfc4443ForbidsIt) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(8);
    std::vector<uint8_t> out(1500);
    const InetAddr from = a6("2001:db8:1::100");
    // Multicast destination: only a packet too big may answer it.
    auto mc = packet6(rng, a6("2001:db8:1::2"), a6("ff02::1"), kIpProtoUdp, 10);
    EXPECT_EQ(build_time_exceeded6(out.data(), out.size(), mc.data(), mc.size(), from), 0u);
    EXPECT_GT(build_packet_too_big(out.data(), out.size(), mc.data(), mc.size(), from, 1280), 0u);
    // Unspecified or multicast source.
    auto unspec = packet6(rng, a6("::"), from, kIpProtoUdp, 10);
    EXPECT_EQ(build_time_exceeded6(out.data(), out.size(), unspec.data(), unspec.size(), from), 0u);
    // An ICMPv6 error is never answered with one.
    auto err = packet6(rng, a6("2001:db8:1::2"), from, kIpProtoUdp, 10);
    err[6] = kIpProtoIcmp6;
    err[40] = kIcmp6DestUnreach;
    EXPECT_EQ(build_time_exceeded6(out.data(), out.size(), err.data(), err.size(), from), 0u);
    err[40] = kIcmp6EchoRequest;  // an echo is
    EXPECT_GT(build_time_exceeded6(out.data(), out.size(), err.data(), err.size(), from), 0u);
    EXPECT_EQ(build_time_exceeded6(out.data(), 100, err.data(), err.size(), from), 0u);  // cap
}

TEST(Icmp6Error, QuotedFragmentAndExtensionHeaders) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(9);
    auto orig = packet6(rng, a6("2001:db8:1::2"), a6("2001:db8:1::100"), kIpProtoUdp, 40);
    // Insert a fragment header (first fragment, M set) before UDP.
    std::vector<uint8_t> frag(orig.begin(), orig.begin() + 40);
    const uint8_t fh[8] = {kIpProtoUdp, 0, 0, 1, 0, 0, 0, 9};
    frag.insert(frag.end(), fh, fh + 8);
    frag.insert(frag.end(), orig.begin() + 40, orig.end());
    frag[6] = kIp6ExtFragment;
    store_be16(frag.data() + 4, static_cast<uint16_t>(frag.size() - 40));
    std::vector<uint8_t> out(1500);
    const InetAddr from = a6("2001:db8:1::100");
    size_t n = build_icmp6_error(out.data(), out.size(), frag.data(), frag.size(), from,
                                 kIcmp6DestUnreach, 4, 0);
    ASSERT_GT(n, 0u);
    IcmpQuote q;
    const auto* outer = reinterpret_cast<const Ipv6Hdr*>(out.data());
    ASSERT_TRUE(parse_icmp6_error(*outer, out.data() + 40, n - 40, q));
    EXPECT_EQ(q.inner_ip_len, 48u);  // fixed header + fragment header
    EXPECT_EQ(q.inner_proto, kIpProtoUdp);
    // A non-first fragment quotes no ports: not related.
    store_be16(frag.data() + 40 + 2, 8 << 3);
    n = build_icmp6_error(out.data(), out.size(), frag.data(), frag.size(), from, kIcmp6DestUnreach,
                          4, 0);
    ASSERT_GT(n, 0u);
    EXPECT_FALSE(parse_icmp6_error(*outer, out.data() + 40, n - 40, q));
}

// FNAT64: the translated packet's checksums hold, fields carried as RFC 7915 says.
TEST(Nat64, TranslationBothWaysKeepsChecksums) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(64);
    const InetAddr c = a6("2001:db8:1::2"), vip = a6("2001:db8:1::100");
    const InetAddr lip = InetAddr::v4(hton32(0x0a0a0264)), rs = InetAddr::v4(hton32(0x0a0a0202));
    for (int i = 0; i < 200; ++i) {
        const uint8_t proto = i % 2 ? kIpProtoTcp : kIpProtoUdp;
        auto p = packet6(rng, c, vip, proto, rng() % 1000);
        const uint16_t l4_len = static_cast<uint16_t>(p.size() - 40);
        const IpCarried in{0x2a, 61, proto, c, vip};
        // The IPv4 header goes in the last 20 bytes of the old IPv6 header.
        std::vector<uint8_t> v4(p.begin() + 20, p.end());
        nat64_to_v4(v4.data(), in, l4_len, lip, rs, hton16(2000), hton16(8080), hton16(7));
        EXPECT_EQ(v4[0], 0x45);
        EXPECT_EQ(v4[1], 0x2a);
        EXPECT_EQ(v4[8], 61);
        EXPECT_EQ(load_be16(v4.data() + 6), kIpv4DontFragment);
        EXPECT_EQ(ref_sum(v4.data(), 20), 0xffff);
        uint8_t pseudo[12];
        std::memcpy(pseudo, v4.data() + 12, 8);
        pseudo[8] = 0;
        pseudo[9] = proto;
        store_be16(pseudo + 10, l4_len);
        EXPECT_EQ(ref_sum(v4.data() + 20, l4_len, ref_sum(pseudo, 12)), 0xffff) << i;
        EXPECT_EQ(load_be16(v4.data() + 20), 2000);
        EXPECT_EQ(load_be16(v4.data() + 22), 8080);
        // And back: the RS's answer as IPv6 from the VIP.
        const IpCarried back{0x10, 64, proto, rs, lip};
        std::vector<uint8_t> v6(40 + l4_len);
        std::copy(v4.begin() + 20, v4.end(), v6.begin() + 40);
        nat46_to_v6(v6.data(), back, l4_len, vip, c, hton16(80), hton16(40000));
        EXPECT_TRUE(l6_ok(v6)) << i;
        EXPECT_EQ((load_be32(v6.data()) >> 20) & 0xff, 0x10u);
        EXPECT_EQ(v6[7], 64);
    }
}

TEST(Nat64, UdpWithoutChecksumGetsOneInIpv6) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(46);
    auto p = packet6(rng, a6("2001:db8:1::2"), a6("2001:db8:1::100"), kIpProtoUdp, 30);
    std::vector<uint8_t> v6(p.size());
    std::copy(p.begin() + 40, p.end(), v6.begin() + 40);
    store_wire16(v6.data() + 46, 0);  // IPv4 UDP: "no checksum"
    const IpCarried back{0, 64, kIpProtoUdp, InetAddr::v4(1), InetAddr::v4(2)};
    nat46_to_v6(v6.data(), back, static_cast<uint16_t>(p.size() - 40), a6("2001:db8:1::100"),
                a6("2001:db8:1::2"), hton16(53), hton16(40000));
    EXPECT_NE(load_wire16(v6.data() + 46), 0);
    EXPECT_TRUE(l6_ok(v6));
}

}  // namespace
}  // namespace xvs::net
