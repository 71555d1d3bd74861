// Tests for net/checksum: full sums against published vectors and a byte-wise reference, and the
// incremental (RFC 1624) updates against full recomputation on many random IPv4 TCP/UDP packets.
#include "net/checksum.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace xvs::net {
namespace {

// Reference one's complement sum, written the slow obvious way: big-endian 16-bit words, an odd
// tail byte padded with zero, carries folded back in. Returns the folded sum in host order.
uint16_t ref_sum(const uint8_t* p, size_t n, uint32_t init = 0) {
    uint64_t sum = init;
    for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(p[i]) << 8 | p[i + 1];
    if (n & 1) sum += uint32_t(p[n - 1]) << 8;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(sum);
}

// Reference TCP/UDP checksum over an IPv4 pseudo-header, host order. Addresses in wire order.
uint16_t ref_l4_checksum(uint32_t saddr_be, uint32_t daddr_be, uint8_t proto, const uint8_t* l4,
                         size_t len) {
    uint8_t pseudo[12];
    std::memcpy(pseudo, &saddr_be, 4);
    std::memcpy(pseudo + 4, &daddr_be, 4);
    pseudo[8] = 0;
    pseudo[9] = proto;
    pseudo[10] = uint8_t(len >> 8);
    pseudo[11] = uint8_t(len);
    uint32_t sum = ref_sum(pseudo, sizeof(pseudo));
    return static_cast<uint16_t>(~ref_sum(l4, len, sum));
}

TEST(ChecksumTest, Rfc1071Example) {
    // RFC 1071 §3: these bytes sum to ddf2 (after the end-around carries).
    const uint8_t bytes[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    EXPECT_EQ(ntoh16(static_cast<uint16_t>(csum_partial(bytes, sizeof(bytes), 0))), 0xddf2);
    EXPECT_EQ(ntoh16(csum_fold(csum_partial(bytes, sizeof(bytes), 0))), 0x220d);
}

TEST(ChecksumTest, KnownIpv4Header) {
    // A captured header (192.168.0.1 -> 192.168.0.199, UDP, DF) whose checksum is b861.
    const uint8_t bytes[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                               0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    Ipv4Hdr ip;
    std::memcpy(&ip, bytes, sizeof(ip));
    EXPECT_EQ(ntoh16(ipv4_header_checksum(&ip)), 0xb861);
    // The stored value is skipped, so a zeroed or garbage field gives the same answer.
    ip.checksum = 0;
    EXPECT_EQ(ntoh16(ipv4_header_checksum(&ip)), 0xb861);
    ip.checksum = hton16(0x1234);
    EXPECT_EQ(ntoh16(ipv4_header_checksum(&ip)), 0xb861);
    // A header carrying its checksum sums to all ones.
    EXPECT_EQ(csum_fold(csum_partial(bytes, sizeof(bytes), 0)), 0);
}

TEST(ChecksumTest, KnownTcpSegment) {
    // 10.0.0.1:1234 -> 10.0.0.2:80 SYN, seq 1, window 8192, no options, no payload.
    // Sum by hand: pseudo 0a00+0001+0a00+0002+0006+0014 = 0x141d,
    // header 04d2+0050+0001+5002+2000 = 0x7525; total 0x8942, checksum ~ = 0x76bd.
    uint8_t seg[20] = {0x04, 0xd2, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0x00};
    const uint32_t saddr = hton32(0x0a000001), daddr = hton32(0x0a000002);
    EXPECT_EQ(ntoh16(ipv4_l4_checksum(saddr, daddr, kIpProtoTcp, seg, sizeof(seg))), 0x76bd);
}

TEST(ChecksumTest, PartialMatchesReferenceForAllSmallLengthsAndAlignments) {
    std::mt19937 rng(1071);
    std::vector<uint8_t> buf(256 + 8);
    for (auto& b : buf) b = uint8_t(rng());
    for (size_t shift = 0; shift < 8; ++shift) {
        for (size_t len = 0; len <= 256; ++len) {
            const uint8_t* p = buf.data() + shift;
            EXPECT_EQ(ntoh16(static_cast<uint16_t>(csum_partial(p, len, 0))), ref_sum(p, len))
                << "len " << len << " shift " << shift;
        }
    }
}

TEST(ChecksumTest, Partial20FoldsLikePartialOnRandomAndAllOnesHeaders) {
    // The receive path's unrolled 20-byte sum: the same folded checksum as csum_partial, at
    // every alignment, including the carry-heavy all-ones header and an all-zero one.
    std::mt19937 rng(20);
    uint8_t buf[24];
    for (int round = 0; round < 2000; ++round) {
        for (auto& b : buf) b = uint8_t(rng());
        if (round == 0) std::memset(buf, 0xff, sizeof buf);
        if (round == 1) std::memset(buf, 0, sizeof buf);
        for (size_t shift = 0; shift <= 4; ++shift) {
            const uint8_t* p = buf + shift;
            EXPECT_EQ(csum_fold(csum_partial20(p)), csum_fold(csum_partial(p, 20, 0)))
                << "round " << round << " shift " << shift;
            EXPECT_EQ(ntoh16(static_cast<uint16_t>(~csum_fold(csum_partial20(p)))) % 0xffff,
                      ref_sum(p, 20) % 0xffff);
        }
    }
}

TEST(ChecksumTest, PartialCarriesOnLongAllOnesBuffer) {
    // 0xff bytes maximise carries in the 64-bit accumulator; a jumbo frame's worth.
    std::vector<uint8_t> buf(9001, 0xff);
    for (size_t len : {4097u, 9000u, 9001u}) {
        EXPECT_EQ(ntoh16(static_cast<uint16_t>(csum_partial(buf.data(), len, 0))),
                  ref_sum(buf.data(), len));
    }
    // A nonzero initial sum is folded in.
    EXPECT_EQ(csum_partial(buf.data(), 0, 0x1234), 0x1234u);
    EXPECT_EQ(csum_partial(nullptr, 0, 0), 0u);
}

TEST(ChecksumTest, PartialMatchesReferenceOnRandomLengthsWithFullWidthInitialSums) {
    // csum_partial adds 64-bit words and counts their carries apart: every length to a jumbo
    // frame's, every alignment, random and all-ones data (the most carries), and initial sums
    // up to 32 bits (callers pass pseudo-header sums) against the byte-pair reference.
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(8);
    std::vector<uint8_t> buf(9000 + 8);
    for (int round = 0; round < 3000; ++round) {
        const bool ones = round % 4 == 0;
        const size_t len = round < 200 ? size_t(round) : rng() % (round % 10 == 0 ? 9000 : 1600);
        const size_t shift = rng() % 8;
        for (size_t i = 0; i < len + shift; ++i) buf[i] = ones ? 0xff : uint8_t(rng());
        const uint32_t init = round % 3 == 0 ? 0xffffffffu : uint32_t(rng());
        const uint8_t* p = buf.data() + shift;
        // The reference's sum in the word order csum_partial works in, plus the initial sum.
        uint64_t want = uint64_t{init} + hton16(ref_sum(p, len));
        while (want >> 16) want = (want & 0xffff) + (want >> 16);
        EXPECT_EQ(csum_partial(p, len, init), want)
            << "round " << round << " len " << len << " shift " << shift << " init " << init;
    }
}

TEST(ChecksumTest, Words32MatchesPartialOnEveryTcpHeaderLength) {
    // The SYN proxy sums the TCP headers it writes (20 to 60 bytes, whole words) this way:
    // the same result as csum_partial, at every alignment, for random and all-ones words and
    // initial sums up to 32 bits (a pseudo-header's).
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(32);
    uint8_t buf[64 + 4];
    for (int round = 0; round < 2000; ++round) {
        for (auto& b : buf) b = round % 5 == 0 ? 0xff : uint8_t(rng());
        const uint32_t init = round % 3 == 0 ? 0xffffffffu : uint32_t(rng());
        for (size_t words = 0; words <= 16; ++words) {
            const uint8_t* p = buf + round % 4;
            EXPECT_EQ(csum_words32(p, words, init), csum_partial(p, words * 4, init))
                << "round " << round << " words " << words;
        }
    }
}

// The IPv6 pseudo-header (RFC 8200 §8.1: source, destination, 32-bit upper-layer length,
// three zero bytes, next header) summed the slow way, against ipv6_pseudo_sum's word sums;
// all-ones addresses and lengths carry the most.
TEST(ChecksumTest, Ipv6PseudoSumMatchesTheReferenceOnRandomAndAllOnesInput) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(64);
    for (int round = 0; round < 2000; ++round) {
        uint8_t pseudo[40] = {};
        const bool ones = round < 2;
        for (int i = 0; i < 32; ++i) pseudo[i] = ones ? 0xff : uint8_t(rng());
        const uint32_t len = ones ? (round == 0 ? 0xffffffffu : 0xffffu) : rng() % 70000;
        const uint8_t proto = ones ? 0xff : uint8_t(rng());
        pseudo[32] = uint8_t(len >> 24);
        pseudo[33] = uint8_t(len >> 16);
        pseudo[34] = uint8_t(len >> 8);
        pseudo[35] = uint8_t(len);
        pseudo[39] = proto;
        const uint32_t got = ipv6_pseudo_sum(pseudo, pseudo + 16, proto, len);
        // csum_fold complements a host-order-agnostic 16-bit sum; compare uncomplemented.
        const uint16_t folded = static_cast<uint16_t>(~csum_fold(got));
        EXPECT_EQ(ntoh16(folded), ref_sum(pseudo, sizeof pseudo)) << "round " << round;
    }
}

TEST(ChecksumTest, Ipv4HeaderChecksumCoversOptions) {
    std::mt19937 rng(791);
    for (unsigned ihl = 5; ihl <= 15; ++ihl) {
        for (int round = 0; round < 50; ++round) {
            uint8_t hdr[64];  // room for a byte past the longest header
            for (auto& b : hdr) b = uint8_t(rng());
            hdr[0] = uint8_t(0x40 | ihl);
            const size_t len = ihl * 4;
            auto* ip = reinterpret_cast<Ipv4Hdr*>(hdr);
            hdr[10] = hdr[11] = 0;
            const uint16_t expect = static_cast<uint16_t>(~ref_sum(hdr, len));
            ip->checksum = uint16_t(rng());  // garbage must be ignored
            const uint16_t got = ipv4_header_checksum(ip);
            ASSERT_EQ(ntoh16(got), expect) << "ihl " << ihl;
            // Bytes past header_len() must not be summed.
            hdr[len] ^= 0xff;
            ASSERT_EQ(ipv4_header_checksum(ip), got);
            // Changing an option byte must change the checksum.
            if (ihl > 5) {
                hdr[20] ^= 0x01;
                EXPECT_NE(ipv4_header_checksum(ip), got);
            }
        }
    }
}

// A random IPv4 packet with either a TCP or UDP segment, checksums filled in by full compute.
struct Packet {
    std::vector<uint8_t> bytes;  // IPv4 header (no options) + L4 header + payload
    uint8_t proto = 0;

    Ipv4Hdr* ip() { return reinterpret_cast<Ipv4Hdr*>(bytes.data()); }
    uint8_t* l4() { return bytes.data() + sizeof(Ipv4Hdr); }
    size_t l4_len() const { return bytes.size() - sizeof(Ipv4Hdr); }
    size_t csum_at() const { return sizeof(Ipv4Hdr) + (proto == kIpProtoTcp ? 16 : 6); }
    uint16_t l4_csum() const {
        uint16_t c;
        std::memcpy(&c, bytes.data() + csum_at(), 2);
        return c;
    }
    void set_l4_csum(uint16_t c) { std::memcpy(bytes.data() + csum_at(), &c, 2); }

    // What a sender would put in the L4 checksum field now (UDP maps 0 to 0xffff).
    uint16_t full_l4_csum() {
        const uint16_t saved = l4_csum();
        set_l4_csum(0);
        uint16_t c = ipv4_l4_checksum(ip()->saddr, ip()->daddr, proto, l4(), l4_len());
        EXPECT_EQ(ntoh16(c), ref_l4_checksum(ip()->saddr, ip()->daddr, proto, l4(), l4_len()));
        set_l4_csum(saved);
        if (proto == kIpProtoUdp && c == 0) c = 0xffff;
        return c;
    }
    void fill_checksums() {
        ip()->checksum = 0;
        ip()->checksum = ipv4_header_checksum(ip());
        set_l4_csum(full_l4_csum());
    }
};

Packet random_packet(std::mt19937& rng, uint8_t proto) {
    Packet pkt;
    pkt.proto = proto;
    const size_t l4_hdr = proto == kIpProtoTcp ? 20 : 8;
    const size_t payload = rng() % 1500;  // odd and even lengths alike
    pkt.bytes.resize(sizeof(Ipv4Hdr) + l4_hdr + payload);
    for (auto& b : pkt.bytes) b = uint8_t(rng());
    Ipv4Hdr* ip = pkt.ip();
    ip->version_ihl = 0x45;
    ip->total_length = hton16(uint16_t(pkt.bytes.size()));
    ip->protocol = proto;
    if (proto == kIpProtoTcp) {
        pkt.l4()[12] = 0x50;
    } else {
        const uint16_t udp_len = hton16(uint16_t(pkt.l4_len()));
        std::memcpy(pkt.l4() + 4, &udp_len, 2);
    }
    pkt.fill_checksums();
    return pkt;
}

uint16_t load16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
uint32_t load32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// Rewrites one randomly chosen field the way a NAT does and updates checksums incrementally.
// Returns a description for failure messages.
const char* rewrite_random_field(std::mt19937& rng, Packet& pkt) {
    const bool udp = pkt.proto == kIpProtoUdp;
    uint16_t l4_csum = pkt.l4_csum();
    uint16_t ip_csum = pkt.ip()->checksum;
    auto replace2 = [&](uint16_t old_v, uint16_t new_v) {
        udp ? udp_csum_replace2(&l4_csum, old_v, new_v) : csum_replace2(&l4_csum, old_v, new_v);
    };
    auto replace4 = [&](uint32_t old_v, uint32_t new_v) {
        udp ? udp_csum_replace4(&l4_csum, old_v, new_v) : csum_replace4(&l4_csum, old_v, new_v);
    };
    const char* what = "";
    switch (rng() % 6) {
        case 0:
        case 1: {  // source or destination address: IP header and pseudo-header
            const size_t at = rng() % 2 ? 12 : 16;
            const uint32_t old_v = load32(pkt.bytes.data() + at);
            const uint32_t new_v = uint32_t(rng());
            std::memcpy(pkt.bytes.data() + at, &new_v, 4);
            csum_replace4(&ip_csum, old_v, new_v);
            replace4(old_v, new_v);
            what = at == 12 ? "saddr" : "daddr";
            break;
        }
        case 2:
        case 3: {  // source or destination port
            const size_t at = rng() % 2 ? 0 : 2;
            const uint16_t old_v = load16(pkt.l4() + at);
            const uint16_t new_v = uint16_t(rng());
            std::memcpy(pkt.l4() + at, &new_v, 2);
            replace2(old_v, new_v);
            what = at == 0 ? "sport" : "dport";
            break;
        }
        case 4: {  // TCP seq/ack, or for UDP the payload's first word
            const size_t at = udp ? 8 : (rng() % 2 ? 4 : 8);
            if (pkt.l4_len() < at + 4) return "skip";
            const uint32_t old_v = load32(pkt.l4() + at);
            const uint32_t new_v = old_v + uint32_t(rng());  // sequence shift, wraps
            std::memcpy(pkt.l4() + at, &new_v, 4);
            replace4(old_v, new_v);
            what = udp ? "udp payload" : (at == 4 ? "seq" : "ack");
            break;
        }
        case 5: {  // TTL decrement: IP header only (ttl and protocol share a word)
            const uint16_t old_v = load16(pkt.bytes.data() + 8);
            pkt.bytes[8] = uint8_t(pkt.bytes[8] - 1);
            csum_replace2(&ip_csum, old_v, load16(pkt.bytes.data() + 8));
            what = "ttl";
            break;
        }
    }
    pkt.set_l4_csum(l4_csum);
    pkt.ip()->checksum = ip_csum;
    return what;
}

void check_random_rewrites(uint8_t proto, uint32_t seed) {
    std::mt19937 rng(seed);
    for (int i = 0; i < 3000; ++i) {
        Packet pkt = random_packet(rng, proto);
        for (int step = 0; step < 4; ++step) {
            const char* what = rewrite_random_field(rng, pkt);
            ASSERT_EQ(pkt.ip()->checksum, ipv4_header_checksum(pkt.ip()))
                << "packet " << i << " step " << step << " " << what;
            ASSERT_EQ(pkt.l4_csum(), pkt.full_l4_csum())
                << "packet " << i << " step " << step << " " << what << " len " << pkt.l4_len();
        }
    }
}

TEST(ChecksumTest, IncrementalTcpMatchesFullRecompute) {
    check_random_rewrites(kIpProtoTcp, 6);
}

TEST(ChecksumTest, IncrementalUdpMatchesFullRecompute) {
    check_random_rewrites(kIpProtoUdp, 17);
}

TEST(ChecksumTest, Replace2And4AreInverseOfEachOther) {
    std::mt19937 rng(1624);
    for (int i = 0; i < 10000; ++i) {
        const uint16_t start = uint16_t(rng());
        if (start == 0xffff) continue;  // not produced by a full compute over nonzero data
        uint16_t c = start;
        const uint32_t a = uint32_t(rng()), b = uint32_t(rng());
        csum_replace4(&c, a, b);
        csum_replace4(&c, b, a);
        ASSERT_EQ(c, start);
        csum_replace2(&c, uint16_t(a), uint16_t(b));
        csum_replace2(&c, uint16_t(b), uint16_t(a));
        ASSERT_EQ(c, start);
    }
}

TEST(ChecksumTest, UdpZeroChecksumMeansNoneAndStaysZero) {
    std::mt19937 rng(768);
    Packet pkt = random_packet(rng, kIpProtoUdp);
    uint16_t c = 0;
    udp_csum_replace2(&c, 0x1234, 0x4321);
    EXPECT_EQ(c, 0);
    udp_csum_replace4(&c, 0x12345678, 0x87654321);
    EXPECT_EQ(c, 0);
    // The same update on a real checksum does change it (so the early return is what held).
    c = pkt.l4_csum();
    udp_csum_replace2(&c, 0x1234, 0x4321);
    EXPECT_NE(c, pkt.l4_csum());
}

// Finds a new source port that makes the full UDP checksum come out as 0 (sent as 0xffff).
std::optional<uint16_t> port_giving_zero_sum(Packet& pkt) {
    const uint16_t saved = load16(pkt.l4());
    std::optional<uint16_t> found;
    for (uint32_t p = 0; p <= 0xffff && !found; ++p) {
        const uint16_t v = uint16_t(p);
        std::memcpy(pkt.l4(), &v, 2);
        pkt.set_l4_csum(0);
        if (ipv4_l4_checksum(pkt.ip()->saddr, pkt.ip()->daddr, kIpProtoUdp, pkt.l4(),
                             pkt.l4_len()) == 0) {
            found = v;
        }
    }
    std::memcpy(pkt.l4(), &saved, 2);
    pkt.fill_checksums();
    return found;
}

TEST(ChecksumTest, UdpComputedZeroIsSentAsAllOnes) {
    std::mt19937 rng(65535);
    for (int i = 0; i < 20; ++i) {
        Packet pkt = random_packet(rng, kIpProtoUdp);
        const auto zero_port = port_giving_zero_sum(pkt);
        ASSERT_TRUE(zero_port);
        // Into the 0 case: the incremental update must yield 0xffff, never 0 ("no checksum").
        const uint16_t old_port = load16(pkt.l4());
        std::memcpy(pkt.l4(), &*zero_port, 2);
        uint16_t c = pkt.l4_csum();
        udp_csum_replace2(&c, old_port, *zero_port);
        ASSERT_EQ(c, 0xffff);
        ASSERT_EQ(c, pkt.full_l4_csum());
        pkt.set_l4_csum(c);
        // And out of it again: 0xffff is a real checksum (of sum 0) and must be updated.
        const uint16_t next_port = uint16_t(*zero_port + 1 + rng() % 1000);
        std::memcpy(pkt.l4(), &next_port, 2);
        udp_csum_replace2(&c, *zero_port, next_port);
        ASSERT_NE(c, 0xffff);
        ASSERT_EQ(c, pkt.full_l4_csum());
        // The 4-byte variant reaches 0 through an address change the same way.
        pkt.set_l4_csum(c);
        std::memcpy(pkt.l4(), &*zero_port, 2);
        pkt.fill_checksums();
        ASSERT_EQ(pkt.l4_csum(), 0xffff);
        uint16_t c4 = pkt.l4_csum();
        const uint32_t old_saddr = pkt.ip()->saddr;
        const uint32_t new_saddr = uint32_t(rng());
        pkt.ip()->saddr = new_saddr;
        udp_csum_replace4(&c4, old_saddr, new_saddr);
        ASSERT_EQ(c4, pkt.full_l4_csum());
    }
}

}  // namespace
}  // namespace xvs::net
