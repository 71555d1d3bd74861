// Tests for net/uoa: ipo and opp inserts on a sample FULLNAT UDP datagram compared byte for
// byte (expected bytes computed independently), checksums verified with a full recompute, the
// refusals (IHL overflow, capacity, not a whole UDP datagram) and the empty-datagram fallback.
#include "net/uoa.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/headers.h"

namespace xvs::net {
namespace {

using Bytes = std::vector<uint8_t>;

// FULLNAT laddr 10.0.0.2:40000 -> RS 192.168.0.10:53, DF, id 0x1234, payload "hello" (odd
// length, so the UDP checksum covers a padded byte).
const Bytes kDatagram = {0x45, 0x00, 0x00, 0x21, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11,
                         0x5d, 0xe4, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0xa8, 0x00, 0x0a,  // IPv4
                         0x9c, 0x40, 0x00, 0x35, 0x00, 0x0d, 0x54, 0xd8,              // UDP
                         'h',  'e',  'l',  'l',  'o'};
// Client 203.0.113.7:51000.
const uint32_t kClient = hton32(0xcb007107);
const uint16_t kClientPort = hton16(51000);

const Bytes kWithIpo = {0x47, 0x00, 0x00, 0x29, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11,
                        0x39, 0x93, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0xa8, 0x00, 0x0a,  // IHL 7
                        0x1f, 0x08, 0xc7, 0x38, 0xcb, 0x00, 0x71, 0x07,              // option 31
                        0x9c, 0x40, 0x00, 0x35, 0x00, 0x0d, 0x54, 0xd8,  // UDP as it was
                        'h',  'e',  'l',  'l',  'o'};
const Bytes kWithOpp = {0x45, 0x00, 0x00, 0x2d, 0x12, 0x34, 0x40, 0x00, 0x40, 0xf8,
                        0x5c, 0xf1, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0xa8, 0x00, 0x0a,  // proto 248
                        0x10, 0x11, 0x00, 0x0c,                                      // v1, UDP, 12
                        0x1f, 0x08, 0xc7, 0x38, 0xcb, 0x00, 0x71, 0x07,              // option
                        0x9c, 0x40, 0x00, 0x35, 0x00, 0x0d, 0x54, 0xd8,  // UDP as it was
                        'h',  'e',  'l',  'l',  'o'};

// A 2-byte aligned packet buffer with room to grow; bytes past the packet are 0xee.
struct Buffer {
    alignas(8) uint8_t bytes[128];
    explicit Buffer(const Bytes& pkt) {
        std::memset(bytes, 0xee, sizeof(bytes));
        if (!pkt.empty()) std::memcpy(bytes, pkt.data(), pkt.size());
    }
    Bytes first(size_t n) const { return Bytes(bytes, bytes + n); }
    Ipv4Hdr* ip() { return reinterpret_cast<Ipv4Hdr*>(bytes); }
};

// The IP header checksum and, after stripping any opp header, the UDP checksum must be what a
// full recompute gives; the UDP pseudo-header uses protocol 17 in both modes.
void expect_checksums_valid(const uint8_t* pkt) {
    const auto* ip = reinterpret_cast<const Ipv4Hdr*>(pkt);
    EXPECT_EQ(ip->checksum, ipv4_header_checksum(ip));
    size_t l4 = ip->header_len();
    if (ip->protocol == kIpProtoUoaOpp) l4 += load_be16(pkt + l4 + 2);
    const size_t udp_len = ntoh16(ip->total_length) - l4;
    ASSERT_EQ(load_be16(pkt + l4 + 4), udp_len);
    Bytes udp(pkt + l4, pkt + l4 + udp_len);
    const uint16_t stored = load_be16(&udp[6]);
    udp[6] = udp[7] = 0;
    uint16_t computed = ipv4_l4_checksum(ip->saddr, ip->daddr, kIpProtoUdp, udp.data(), udp_len);
    if (computed == 0) computed = 0xffff;
    EXPECT_EQ(hton16(stored), computed);
}

TEST(UoaSampleTest, SampleDatagramChecksumsAreValid) {
    Buffer buf(kDatagram);
    expect_checksums_valid(buf.bytes);
}

TEST(UoaIpoTest, InsertsOptionAfterFixedHeader) {
    Buffer buf(kDatagram);
    size_t len =
        uoa_ipo_insert(buf.bytes, kDatagram.size(), sizeof(buf.bytes), kClient, kClientPort);
    ASSERT_EQ(len, kDatagram.size() + 8);
    EXPECT_EQ(buf.first(len), kWithIpo);
    EXPECT_EQ(buf.bytes[len], 0xee);  // nothing written past the new end
    expect_checksums_valid(buf.bytes);
}

TEST(UoaIpoTest, GoesAheadOfExistingOptions) {
    // IHL 6 with a NOP NOP NOP EOL word: ours goes first, the old word follows, IHL becomes 8.
    Bytes pkt = kDatagram;
    pkt.insert(pkt.begin() + 20, {0x01, 0x01, 0x01, 0x00});
    pkt[0] = 0x46;
    store_be16(&pkt[2], static_cast<uint16_t>(pkt.size()));
    Buffer buf(pkt);
    buf.ip()->checksum = 0;
    buf.ip()->checksum = ipv4_header_checksum(buf.ip());

    size_t len = uoa_ipo_insert(buf.bytes, pkt.size(), sizeof(buf.bytes), kClient, kClientPort);
    ASSERT_EQ(len, pkt.size() + 8);
    EXPECT_EQ(buf.bytes[0], 0x48);
    EXPECT_EQ(load_be16(&buf.bytes[2]), len);
    EXPECT_EQ(Bytes(buf.bytes + 20, buf.bytes + 28),
              Bytes({0x1f, 0x08, 0xc7, 0x38, 0xcb, 0x00, 0x71, 0x07}));
    EXPECT_EQ(Bytes(buf.bytes + 28, buf.bytes + 32), Bytes({0x01, 0x01, 0x01, 0x00}));
    EXPECT_EQ(Bytes(buf.bytes + 32, buf.bytes + len),
              Bytes(kDatagram.begin() + 20, kDatagram.end()));
    expect_checksums_valid(buf.bytes);
}

// A datagram whose IP header is `ihl` words (options all NOP).
Bytes datagram_with_ihl(unsigned ihl) {
    Bytes pkt = kDatagram;
    pkt.insert(pkt.begin() + 20, (ihl - 5) * 4, uint8_t{0x01});
    pkt[0] = static_cast<uint8_t>(0x40 | ihl);
    store_be16(&pkt[2], static_cast<uint16_t>(pkt.size()));
    return pkt;
}

TEST(UoaIpoTest, RefusesWhenIhlWouldExceedFifteenWords) {
    Bytes fits = datagram_with_ihl(13);
    Buffer ok(fits);
    size_t len = uoa_ipo_insert(ok.bytes, fits.size(), sizeof(ok.bytes), kClient, kClientPort);
    EXPECT_EQ(len, fits.size() + 8);
    EXPECT_EQ(ok.bytes[0], 0x4f);
    expect_checksums_valid(ok.bytes);

    for (unsigned ihl : {14u, 15u}) {
        Bytes pkt = datagram_with_ihl(ihl);
        Buffer buf(pkt);
        EXPECT_EQ(uoa_ipo_insert(buf.bytes, pkt.size(), sizeof(buf.bytes), kClient, kClientPort),
                  0u)
            << "ihl " << ihl;
        EXPECT_EQ(buf.first(pkt.size()), pkt);
    }
}

TEST(UoaInsertTest, CapacityIsRespected) {
    for (UoaMode mode : {UoaMode::Ipo, UoaMode::Opp}) {
        const size_t need = kDatagram.size() + uoa_insert_len(mode);
        Buffer short_buf(kDatagram);
        EXPECT_EQ(
            uoa_insert(mode, short_buf.bytes, kDatagram.size(), need - 1, kClient, kClientPort),
            0u);
        EXPECT_EQ(short_buf.first(kDatagram.size()), kDatagram);
        EXPECT_EQ(short_buf.bytes[kDatagram.size()], 0xee);

        Buffer exact(kDatagram);
        EXPECT_EQ(uoa_insert(mode, exact.bytes, kDatagram.size(), need, kClient, kClientPort),
                  need);
        EXPECT_EQ(exact.bytes[need], 0xee);
    }
}

TEST(UoaOppTest, InsertsHeaderBetweenIpAndUdp) {
    Buffer buf(kDatagram);
    size_t len =
        uoa_opp_insert(buf.bytes, kDatagram.size(), sizeof(buf.bytes), kClient, kClientPort);
    ASSERT_EQ(len, kDatagram.size() + 12);
    EXPECT_EQ(buf.first(len), kWithOpp);
    EXPECT_EQ(buf.bytes[len], 0xee);
    expect_checksums_valid(buf.bytes);
}

TEST(UoaOppTest, KeepsIpOptionsAndInsertsAfterThem) {
    Bytes pkt = datagram_with_ihl(7);
    Buffer buf(pkt);
    buf.ip()->checksum = 0;
    buf.ip()->checksum = ipv4_header_checksum(buf.ip());
    size_t len = uoa_opp_insert(buf.bytes, pkt.size(), sizeof(buf.bytes), kClient, kClientPort);
    ASSERT_EQ(len, pkt.size() + 12);
    EXPECT_EQ(buf.bytes[0], 0x47);
    EXPECT_EQ(buf.ip()->protocol, kIpProtoUoaOpp);
    EXPECT_EQ(Bytes(buf.bytes + 20, buf.bytes + 28), Bytes(8, 0x01));
    EXPECT_EQ(Bytes(buf.bytes + 28, buf.bytes + 40),
              Bytes({0x10, 0x11, 0x00, 0x0c, 0x1f, 0x08, 0xc7, 0x38, 0xcb, 0x00, 0x71, 0x07}));
    EXPECT_EQ(Bytes(buf.bytes + 40, buf.bytes + len),
              Bytes(kDatagram.begin() + 20, kDatagram.end()));
    expect_checksums_valid(buf.bytes);
}

TEST(UoaInsertTest, UdpChecksumNoneStaysNone) {
    Bytes pkt = kDatagram;
    pkt[26] = pkt[27] = 0;
    for (UoaMode mode : {UoaMode::Ipo, UoaMode::Opp}) {
        Buffer buf(pkt);
        size_t len =
            uoa_insert(mode, buf.bytes, pkt.size(), sizeof(buf.bytes), kClient, kClientPort);
        ASSERT_NE(len, 0u);
        EXPECT_EQ(load_be16(buf.bytes + len - 5 - 2), 0);  // UDP checksum: 2 bytes before payload
        EXPECT_EQ(buf.ip()->checksum, ipv4_header_checksum(buf.ip()));
    }
}

TEST(UoaInsertTest, TrailingPaddingIsDropped) {
    // Ethernet pads short frames: the buffer holds more than total_length says.
    Bytes padded = kDatagram;
    padded.resize(46, 0);
    for (UoaMode mode : {UoaMode::Ipo, UoaMode::Opp}) {
        Buffer buf(padded);
        size_t len =
            uoa_insert(mode, buf.bytes, padded.size(), sizeof(buf.bytes), kClient, kClientPort);
        EXPECT_EQ(len, kDatagram.size() + uoa_insert_len(mode));
        EXPECT_EQ(buf.first(len), mode == UoaMode::Ipo ? kWithIpo : kWithOpp);
    }
}

TEST(UoaInsertTest, RefusesWhatIsNotAWholeUdpDatagram) {
    struct Case {
        const char* description;
        void (*mutate)(Bytes&);
        size_t pkt_len_cut = 0;  // bytes removed from pkt_len
    };
    const Case cases[] = {
        {"TCP", [](Bytes& p) { p[9] = kIpProtoTcp; }},
        {"already opp", [](Bytes& p) { p[9] = kIpProtoUoaOpp; }},
        {"IPv6 version", [](Bytes& p) { p[0] = 0x65; }},
        {"IHL below 5", [](Bytes& p) { p[0] = 0x44; }},
        {"more fragments", [](Bytes& p) { p[6] = 0x20; }},
        {"fragment offset", [](Bytes& p) { p[7] = 0x01; }},
        {"total length past buffer", [](Bytes&) {}, 1},
        {"no room for UDP header", [](Bytes& p) { store_be16(&p[2], 27); }},
        {"IHL past total length", [](Bytes& p) { p[0] = 0x4f; }},
    };
    for (const Case& c : cases) {
        Bytes pkt = kDatagram;
        c.mutate(pkt);
        for (UoaMode mode : {UoaMode::Ipo, UoaMode::Opp}) {
            Buffer buf(pkt);
            EXPECT_EQ(uoa_insert(mode, buf.bytes, pkt.size() - c.pkt_len_cut, sizeof(buf.bytes),
                                 kClient, kClientPort),
                      0u)
                << c.description << (mode == UoaMode::Ipo ? " (ipo)" : " (opp)");
            EXPECT_EQ(buf.first(pkt.size()), pkt) << c.description;
        }
    }
    Buffer tiny(kDatagram);
    EXPECT_EQ(uoa_ipo_insert(tiny.bytes, 19, sizeof(tiny.bytes), kClient, kClientPort), 0u);
}

const UoaFlow kFlow = {.saddr_be = hton32(0x0a000002),
                       .daddr_be = hton32(0xc0a8000a),
                       .sport_be = hton16(40000),
                       .dport_be = hton16(53),
                       .client_be = kClient,
                       .cport_be = kClientPort,
                       .ip_id_be = hton16(1),
                       .ttl = 64};

TEST(UoaEmptyDatagramTest, IpoBytes) {
    const Bytes expected = {0x47, 0x00, 0x00, 0x24, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x8b, 0xcb,
                            0x0a, 0x00, 0x00, 0x02, 0xc0, 0xa8, 0x00, 0x0a, 0x1f, 0x08, 0xc7, 0x38,
                            0xcb, 0x00, 0x71, 0x07, 0x9c, 0x40, 0x00, 0x35, 0x00, 0x08, 0x98, 0xb4};
    Buffer buf(Bytes{});
    size_t len = uoa_empty_datagram_build(buf.bytes, sizeof(buf.bytes), UoaMode::Ipo, kFlow);
    ASSERT_EQ(len, 36u);
    EXPECT_EQ(buf.first(len), expected);
    EXPECT_EQ(buf.bytes[len], 0xee);
    expect_checksums_valid(buf.bytes);
}

TEST(UoaEmptyDatagramTest, OppBytes) {
    const Bytes expected = {0x45, 0x00, 0x00, 0x28, 0x00, 0x01, 0x00, 0x00, 0x40, 0xf8,
                            0xaf, 0x29, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0xa8, 0x00, 0x0a,
                            0x10, 0x11, 0x00, 0x0c, 0x1f, 0x08, 0xc7, 0x38, 0xcb, 0x00,
                            0x71, 0x07, 0x9c, 0x40, 0x00, 0x35, 0x00, 0x08, 0x98, 0xb4};
    Buffer buf(Bytes{});
    size_t len = uoa_empty_datagram_build(buf.bytes, sizeof(buf.bytes), UoaMode::Opp, kFlow);
    ASSERT_EQ(len, 40u);
    EXPECT_EQ(buf.first(len), expected);
    expect_checksums_valid(buf.bytes);
}

TEST(UoaEmptyDatagramTest, ShortBufferWritesNothing) {
    for (UoaMode mode : {UoaMode::Ipo, UoaMode::Opp}) {
        const size_t need = 28 + uoa_insert_len(mode);
        Buffer buf(Bytes{});
        EXPECT_EQ(uoa_empty_datagram_build(buf.bytes, need - 1, mode, kFlow), 0u);
        EXPECT_EQ(buf.first(need), Bytes(need, 0xee));
        EXPECT_EQ(uoa_empty_datagram_build(buf.bytes, need, mode, kFlow), need);
    }
}

TEST(UoaEmptyDatagramTest, ZeroUdpChecksumIsSentAsAllOnes) {
    // Choose the source port so the UDP sum comes out 0: start from any flow, read its
    // checksum c, then add c to the port word (one's complement) to cancel it.
    UoaFlow flow = kFlow;
    alignas(8) uint8_t probe[64];
    ASSERT_NE(uoa_empty_datagram_build(probe, sizeof(probe), UoaMode::Opp, flow), 0u);
    const uint16_t c = load_be16(probe + 32 + 6);
    uint32_t port = ntoh16(flow.sport_be) + uint32_t(c);
    port = (port & 0xffff) + (port >> 16);
    flow.sport_be = hton16(static_cast<uint16_t>(port));
    size_t len = uoa_empty_datagram_build(probe, sizeof(probe), UoaMode::Opp, flow);
    ASSERT_EQ(len, 40u);
    EXPECT_EQ(load_be16(probe + 32 + 6), 0xffff);
    expect_checksums_valid(probe);
}

}  // namespace
}  // namespace xvs::net
