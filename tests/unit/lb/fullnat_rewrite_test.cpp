// FULLNAT's and NAT's rewrites from the conn's address sum (Conn::addr_sum, summed once by
// set_addrs) against net::rewrite_both / rewrite_daddr_dport / rewrite_saddr_sport, which sum
// the old addresses from each packet's header (themselves checked against packets built from
// scratch in net/nat_rewrite_test): the same bytes, checksums included, in both directions,
// IPv4 (and IPv6 for FULLNAT), TCP and UDP.
#include "lb/xmit/fullnat_rewrite.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "../net/packet_ref.h"
#include "net/byteorder.h"
#include "net/checksum.h"

namespace xvs::lb {
namespace {

using namespace net::testref;
using net::Af4;
using net::Af6;
using net::InetAddr;

// Host-order addresses and ports of one conn, as the reference builders take them.
struct Tuple4 {
    uint32_t c, v, l, d;
    uint16_t cport, vport, lport, dport;
};

void set_conn(Conn& conn, const Tuple4& t) {
    conn.set_addrs(InetAddr::v4(net::hton32(t.c)), InetAddr::v4(net::hton32(t.v)),
                   InetAddr::v4(net::hton32(t.l)), InetAddr::v4(net::hton32(t.d)));
    conn.cport = net::hton16(t.cport);
    conn.vport = net::hton16(t.vport);
    conn.lport = net::hton16(t.lport);
    conn.dport = net::hton16(t.dport);
}

template <class Af>
stack::PktMeta<Af> meta_of(Bytes& pkt, size_t l3_len, uint8_t proto) {
    stack::PktMeta<Af> m{};
    m.ip = reinterpret_cast<typename Af::Hdr*>(pkt.data());
    m.l4 = pkt.data() + l3_len;
    m.proto = proto;
    return m;
}

Bytes l4_of(uint8_t proto, uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, const Bytes& payload) {
    return proto == net::kIpProtoTcp ? tcp(s, d, sp, dp, payload) : udp(s, d, sp, dp, payload);
}

// Rewrites pkt both ways: `by_sum` through the conn (fullnat_rewrite_in/_out), `by_header`
// through rewrite_both with the same new addresses and ports, and expects the same bytes.
// Returns the rewritten packet.
Bytes expect_same_rewrite4(const Bytes& pkt, const Conn& conn, bool inbound) {
    Bytes by_sum = pkt, by_header = pkt;
    const uint8_t proto = pkt[9];
    const auto m = meta_of<Af4>(by_sum, 20, proto);
    auto* ip = reinterpret_cast<net::Ipv4Hdr*>(by_header.data());
    if (inbound) {
        fullnat_rewrite_in(m, conn);
        net::rewrite_both<Af4>(ip, by_header.data() + 20, proto, conn.laddr4, conn.daddr4,
                               conn.lport, conn.dport);
    } else {
        fullnat_rewrite_out(m, conn);
        net::rewrite_both<Af4>(ip, by_header.data() + 20, proto, conn.vaddr4, conn.caddr4,
                               conn.vport, conn.cport);
    }
    EXPECT_EQ(by_sum, by_header);
    EXPECT_TRUE(ref_valid(by_sum.data(), 20));
    return by_sum;
}

TEST(FullnatRewrite, Ipv4FromTheConnsSumMatchesTheHeadersBothWays) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(19);
    Conn conn;
    for (int i = 0; i < 20'000; ++i) {
        const Tuple4 t{static_cast<uint32_t>(rng()),     static_cast<uint32_t>(rng()),
                       static_cast<uint32_t>(rng()),     static_cast<uint32_t>(rng()),
                       static_cast<uint16_t>(rng() | 1), static_cast<uint16_t>(rng() | 1),
                       static_cast<uint16_t>(rng() | 1), static_cast<uint16_t>(rng() | 1)};
        set_conn(conn, t);
        const uint8_t proto = i % 2 ? net::kIpProtoTcp : net::kIpProtoUdp;
        const Bytes payload(rng() % 64, static_cast<uint8_t>(rng()));
        expect_same_rewrite4(
            ipv4(proto, t.c, t.v, l4_of(proto, t.c, t.v, t.cport, t.vport, payload)), conn, true);
        expect_same_rewrite4(
            ipv4(proto, t.d, t.l, l4_of(proto, t.d, t.l, t.dport, t.lport, payload)), conn, false);
        if (HasFailure()) FAIL() << "tuple " << i;
    }
}

TEST(FullnatRewrite, AnAddressChangeThatSumsToZeroGivesTheHeadersChecksum) {
    // Local and dest addresses with the same sum as client and VIP: the change is zero in one's
    // complement (addr_sum 0xffff). A header whose checksum field is 0xffff (a "negative zero":
    // valid when the rest sums to 0xffff) then comes out with 0x0000, as the sum from the
    // header gives, both ways; an outbound delta of ~addr_sum (0) would leave 0xffff.
    const Tuple4 t{0x0a000001, 0x0a000002, 0x0a000002, 0x0a000001, 1000, 80, 2000, 8080};
    Conn conn;
    set_conn(conn, t);
    ASSERT_EQ(conn.addr_sum, 0xffff);
    for (const bool inbound : {true, false}) {
        Bytes pkt = inbound ? ipv4(net::kIpProtoTcp, t.c, t.v, tcp(t.c, t.v, t.cport, t.vport, {}))
                            : ipv4(net::kIpProtoTcp, t.d, t.l, tcp(t.d, t.l, t.dport, t.lport, {}));
        put16(pkt, 10, 0);
        put16(pkt, 4, 0);
        put16(pkt, 4, static_cast<uint16_t>(~ref_sum(pkt.data(), 20)));  // the rest sums to 0xffff
        put16(pkt, 10, 0xffff);
        ASSERT_TRUE(ref_valid(pkt.data(), 20));
        EXPECT_EQ(get16(expect_same_rewrite4(pkt, conn, inbound), 10), 0x0000) << inbound;
    }
}

TEST(NatRewrite, Ipv4FromTheConnsSumMatchesTheHeadersBothWays) {
    // A NAT conn's local address is the client's: its sum is the destination's change alone.
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(44);
    Conn conn;
    for (int i = 0; i < 20'000; ++i) {
        const auto client = static_cast<uint32_t>(rng());
        const Tuple4 t{client,
                       static_cast<uint32_t>(rng()),
                       client,
                       static_cast<uint32_t>(rng()),
                       static_cast<uint16_t>(rng() | 1),
                       static_cast<uint16_t>(rng() | 1),
                       static_cast<uint16_t>(rng() | 1),
                       static_cast<uint16_t>(rng() | 1)};
        set_conn(conn, t);
        const uint8_t proto = i % 2 ? net::kIpProtoTcp : net::kIpProtoUdp;
        const Bytes payload(rng() % 64, static_cast<uint8_t>(rng()));
        for (const bool inbound : {true, false}) {
            const Bytes pkt =
                inbound ? ipv4(proto, t.c, t.v, l4_of(proto, t.c, t.v, t.cport, t.vport, payload))
                        : ipv4(proto, t.d, t.c, l4_of(proto, t.d, t.c, t.dport, t.cport, payload));
            Bytes by_sum = pkt, by_header = pkt;
            auto* ip_sum = reinterpret_cast<net::Ipv4Hdr*>(by_sum.data());
            auto* ip_header = reinterpret_cast<net::Ipv4Hdr*>(by_header.data());
            if (inbound) {
                net::rewrite_daddr_dport_by<Af4>(ip_sum, by_sum.data() + 20, proto, conn.daddr4,
                                                 conn.dport, conn.addr_sum_in());
                net::rewrite_daddr_dport<Af4>(ip_header, by_header.data() + 20, proto, conn.daddr4,
                                              conn.dport);
            } else {
                net::rewrite_saddr_sport_by<Af4>(ip_sum, by_sum.data() + 20, proto, conn.vaddr4,
                                                 conn.vport, conn.addr_sum_out());
                net::rewrite_saddr_sport<Af4>(ip_header, by_header.data() + 20, proto, conn.vaddr4,
                                              conn.vport);
            }
            ASSERT_EQ(by_sum, by_header) << "tuple " << i << (inbound ? " in" : " out");
            ASSERT_TRUE(ref_valid(by_sum.data(), 20));
        }
    }
}

// IPv6: a wide conn (a pair of slots, the second holding the addresses).
Bytes ipv6_packet(uint8_t proto, const InetAddr& s, const InetAddr& d, uint16_t sp, uint16_t dp,
                  const Bytes& payload) {
    Bytes l4 = proto == net::kIpProtoTcp ? tcp(0, 0, sp, dp, payload) : udp(0, 0, sp, dp, payload);
    const size_t csum_at = proto == net::kIpProtoTcp ? 16 : 6;
    put16(l4, csum_at, 0);
    const uint16_t c = net::ntoh16(net::ipv6_l4_checksum(s.b, d.b, proto, l4.data(), l4.size()));
    put16(l4, csum_at, c == 0 ? 0xffff : c);
    Bytes b(40);
    b[0] = 0x60;
    put16(b, 4, static_cast<uint16_t>(l4.size()));
    b[6] = proto;
    b[7] = 64;
    std::memcpy(b.data() + 8, s.b, 16);
    std::memcpy(b.data() + 24, d.b, 16);
    append(b, l4);
    return b;
}

TEST(FullnatRewrite, Ipv6FromTheConnsSumMatchesTheHeadersBothWays) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(66);
    ConnSlot slots[2];
    Conn& conn = slots[0].conn;
    conn.wide = true;
    for (int i = 0; i < 5'000; ++i) {
        InetAddr a[4];
        for (auto& x : a) {
            for (auto& b : x.b) b = static_cast<uint8_t>(rng());
            x.b[0] = 0x20;  // not v4-mapped
        }
        conn.set_addrs(a[0], a[1], a[2], a[3]);
        conn.cport = static_cast<uint16_t>(rng() | 1);
        conn.vport = static_cast<uint16_t>(rng() | 1);
        conn.lport = static_cast<uint16_t>(rng() | 1);
        conn.dport = static_cast<uint16_t>(rng() | 1);
        const uint8_t proto = i % 2 ? net::kIpProtoTcp : net::kIpProtoUdp;
        const Bytes payload(rng() % 64, static_cast<uint8_t>(rng()));
        for (const bool inbound : {true, false}) {
            Bytes pkt = inbound ? ipv6_packet(proto, a[0], a[1], net::ntoh16(conn.cport),
                                              net::ntoh16(conn.vport), payload)
                                : ipv6_packet(proto, a[3], a[2], net::ntoh16(conn.dport),
                                              net::ntoh16(conn.lport), payload);
            Bytes by_sum = pkt, by_header = pkt;
            const auto m = meta_of<Af6>(by_sum, 40, proto);
            auto* ip = reinterpret_cast<net::Ipv6Hdr*>(by_header.data());
            if (inbound) {
                fullnat_rewrite_in(m, conn);
                net::rewrite_both<Af6>(ip, by_header.data() + 40, proto, a[2], a[3], conn.lport,
                                       conn.dport);
            } else {
                fullnat_rewrite_out(m, conn);
                net::rewrite_both<Af6>(ip, by_header.data() + 40, proto, a[1], a[0], conn.vport,
                                       conn.cport);
            }
            ASSERT_EQ(by_sum, by_header) << "tuple " << i << (inbound ? " in" : " out");
        }
    }
}

}  // namespace
}  // namespace xvs::lb
