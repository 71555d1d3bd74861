// Tests for net/nat_rewrite: NAT inbound/outbound and SNAT rewrites of TCP, UDP and ICMP echo
// compared byte for byte with the packet built from scratch with the new addresses (reference
// checksums of packet_ref.h), the UDP zero-checksum rules, and a randomized validity sweep.
#include "net/nat_rewrite.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "net/byteorder.h"
#include "packet_ref.h"

namespace xvs::net {
namespace {

using namespace testref;

constexpr uint32_t kClient = 0xcb007107;  // 203.0.113.7
constexpr uint32_t kVip = 0x0a000064;     // 10.0.0.100
constexpr uint32_t kRs = 0xc0a8000a;      // 192.168.0.10
constexpr uint32_t kInside = 0xc0a8010a;  // 192.168.1.10
constexpr uint32_t kWan = 0xc6336401;     // 198.51.100.1
constexpr uint32_t kOutside = 0x08080808;

Ipv4Hdr* ip_of(Bytes& b) {
    return reinterpret_cast<Ipv4Hdr*>(b.data());
}

const Bytes kPayload = {'G', 'E', 'T', ' ', '/', '\r', '\n'};  // odd length: padded byte

TEST(PacketRef, KnownIpv4HeaderChecksum) {
    // The classic worked example: 192.168.0.1 -> 192.168.0.199, UDP, checksum 0xb861.
    const Bytes hdr = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                       0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    EXPECT_EQ(ref_csum(hdr.data(), hdr.size()), 0xb861);
    IpFields f;
    f.id = 0;
    Bytes built = ipv4(17, 0xc0a80001, 0xc0a800c7, Bytes(0x73 - 20), f);
    EXPECT_EQ(get16(built, 10), 0xb861);
}

TEST(NatRewrite, TcpInboundDaddrDport) {
    Bytes pkt = ipv4(6, kClient, kVip, tcp(kClient, kVip, 51000, 80, kPayload));
    const Bytes want = ipv4(6, kClient, kRs, tcp(kClient, kRs, 51000, 8080, kPayload));
    rewrite_daddr_dport<Af4>(ip_of(pkt), pkt.data() + 20, kIpProtoTcp, InetAddr::v4(hton32(kRs)),
                             hton16(8080));
    EXPECT_EQ(pkt, want);
}

TEST(NatRewrite, TcpOutboundSaddrSport) {
    Bytes pkt = ipv4(6, kRs, kClient, tcp(kRs, kClient, 8080, 51000, kPayload));
    const Bytes want = ipv4(6, kVip, kClient, tcp(kVip, kClient, 80, 51000, kPayload));
    rewrite_saddr_sport<Af4>(ip_of(pkt), pkt.data() + 20, kIpProtoTcp, InetAddr::v4(hton32(kVip)),
                             hton16(80));
    EXPECT_EQ(pkt, want);
}

TEST(NatRewrite, UdpSnatInbound) {
    // SNAT: inside 192.168.1.10:5353 -> 8.8.8.8:53 leaves as WAN 198.51.100.1:40001.
    Bytes pkt = ipv4(17, kInside, kOutside, udp(kInside, kOutside, 5353, 53, kPayload));
    const Bytes want = ipv4(17, kWan, kOutside, udp(kWan, kOutside, 40001, 53, kPayload));
    rewrite_saddr_sport<Af4>(ip_of(pkt), pkt.data() + 20, kIpProtoUdp, InetAddr::v4(hton32(kWan)),
                             hton16(40001));
    EXPECT_EQ(pkt, want);
}

TEST(NatRewrite, UdpZeroChecksumStaysZero) {
    Bytes pkt = ipv4(17, kClient, kVip, udp(kClient, kVip, 51000, 53, kPayload, false));
    const Bytes want = ipv4(17, kClient, kRs, udp(kClient, kRs, 51000, 5353, kPayload, false));
    rewrite_daddr_dport<Af4>(ip_of(pkt), pkt.data() + 20, kIpProtoUdp, InetAddr::v4(hton32(kRs)),
                             hton16(5353));
    EXPECT_EQ(pkt, want);
    EXPECT_EQ(get16(pkt, 26), 0);
}

TEST(NatRewrite, UdpComputedZeroBecomesFfff) {
    // Choose the last payload word so that the rewritten datagram's checksum computes to 0:
    // with that word 0 the checksum is C, and adding C to the sum makes it 0xffff.
    Bytes payload = {1, 2, 3, 4, 0, 0};
    Bytes after = udp(kClient, kRs, 51000, 5353, payload);
    const uint16_t c = get16(after, 6) == 0xffff ? 0 : get16(after, 6);
    payload[4] = uint8_t(c >> 8);
    payload[5] = uint8_t(c);
    after = udp(kClient, kRs, 51000, 5353, payload);
    ASSERT_EQ(get16(after, 6), 0xffff);  // the reference computed 0 and sent 0xffff
    Bytes probe = after;
    probe[6] = probe[7] = 0;
    ASSERT_EQ(ref_csum(probe.data(), probe.size(), ref_pseudo(kClient, kRs, 17, probe.size())), 0);

    Bytes pkt = ipv4(17, kClient, kVip, udp(kClient, kVip, 51000, 53, payload));
    ASSERT_NE(get16(pkt, 26), 0xffff);
    rewrite_daddr_dport<Af4>(ip_of(pkt), pkt.data() + 20, kIpProtoUdp, InetAddr::v4(hton32(kRs)),
                             hton16(5353));
    EXPECT_EQ(pkt, ipv4(17, kClient, kRs, after));
}

TEST(NatRewrite, IcmpEchoRequestOutSourceAndId) {
    const Bytes data = {0xde, 0xad, 0xbe, 0xef, 0x01};
    Bytes pkt = ipv4(1, kInside, kOutside, icmp_echo(8, 0x1234, 7, data));
    const Bytes want = ipv4(1, kWan, kOutside, icmp_echo(8, 0x0400, 7, data));
    rewrite_icmp_echo<Af4>(ip_of(pkt), pkt.data() + 20, IcmpEchoSide::Source,
                           InetAddr::v4(hton32(kWan)), hton16(0x0400));
    EXPECT_EQ(pkt, want);
}

TEST(NatRewrite, IcmpEchoReplyInDestinationAndId) {
    const Bytes data = {0xde, 0xad, 0xbe, 0xef, 0x01};
    Bytes pkt = ipv4(1, kOutside, kWan, icmp_echo(0, 0x0400, 7, data));
    const Bytes want = ipv4(1, kOutside, kInside, icmp_echo(0, 0x1234, 7, data));
    rewrite_icmp_echo<Af4>(ip_of(pkt), pkt.data() + 20, IcmpEchoSide::Destination,
                           InetAddr::v4(hton32(kInside)), hton16(0x1234));
    EXPECT_EQ(pkt, want);
}

TEST(NatRewrite, UnalignedPacket) {
    // The IPv4 header 2 bytes off a 4-byte boundary, as behind a 14-byte Ethernet header
    // (Ipv4Hdr is aligned(2)); the 32-bit address fields are then unaligned.
    Bytes pkt = ipv4(6, kClient, kVip, tcp(kClient, kVip, 51000, 80, kPayload));
    alignas(4) uint8_t buf[128] = {};
    std::copy(pkt.begin(), pkt.end(), buf + 2);
    rewrite_daddr_dport<Af4>(reinterpret_cast<Ipv4Hdr*>(buf + 2), buf + 22, kIpProtoTcp,
                             InetAddr::v4(hton32(kRs)), hton16(8080));
    EXPECT_EQ(Bytes(buf + 2, buf + 2 + pkt.size()),
              ipv4(6, kClient, kRs, tcp(kClient, kRs, 51000, 8080, kPayload)));
}

// Random packets and rewrites: the result must equal the from-scratch rebuild, except that
// one's complement has two zeros (0x0000 and 0xffff), so checksums are compared by validity.
TEST(NatRewrite, RandomizedMatchesRebuild) {
    std::mt19937 rng(9);
    for (int i = 0; i < 20000; ++i) {
        const uint32_t s = rng(), d = rng(), s2 = rng(), d2 = rng();
        const uint16_t sp = uint16_t(rng()), dp = uint16_t(rng());
        const uint16_t sp2 = uint16_t(rng()), dp2 = uint16_t(rng());
        Bytes payload(rng() % 40);
        for (auto& x : payload) x = uint8_t(rng());
        const bool is_tcp = rng() & 1, inbound = rng() & 1;
        const uint8_t proto = is_tcp ? 6 : 17;
        auto l4 = [&](uint32_t a, uint32_t b, uint16_t pa, uint16_t pb) {
            return is_tcp ? tcp(a, b, pa, pb, payload) : udp(a, b, pa, pb, payload);
        };
        Bytes pkt = ipv4(proto, s, d, l4(s, d, sp, dp));
        Bytes want;
        if (inbound) {
            rewrite_daddr_dport<Af4>(ip_of(pkt), pkt.data() + 20, proto, InetAddr::v4(hton32(d2)),
                                     hton16(dp2));
            want = ipv4(proto, s, d2, l4(s, d2, sp, dp2));
        } else {
            rewrite_saddr_sport<Af4>(ip_of(pkt), pkt.data() + 20, proto, InetAddr::v4(hton32(s2)),
                                     hton16(sp2));
            want = ipv4(proto, s2, d, l4(s2, d, sp2, dp));
        }
        ASSERT_TRUE(ref_valid(pkt.data(), 20)) << i;
        const uint32_t ps = uint32_t(get16(pkt, 12)) << 16 | get16(pkt, 14);
        const uint32_t pd = uint32_t(get16(pkt, 16)) << 16 | get16(pkt, 18);
        ASSERT_TRUE(
            ref_valid(pkt.data() + 20, pkt.size() - 20, ref_pseudo(ps, pd, proto, pkt.size() - 20)))
            << i;
        if (!is_tcp) {
            ASSERT_NE(get16(pkt, 26), 0) << i;
        }
        const size_t csum_at = is_tcp ? 36 : 26;
        for (size_t k : {size_t(10), csum_at}) pkt[k] = want[k] = pkt[k + 1] = want[k + 1] = 0;
        ASSERT_EQ(pkt, want) << i;
    }
}

}  // namespace
}  // namespace xvs::net
