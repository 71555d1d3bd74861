// Tests net/quic.cpp: the Destination Connection ID of QUIC long and short headers (RFC 8999
// invariants), and what is not taken for one.
#include "net/quic.h"

#include <gtest/gtest.h>

#include <vector>

namespace xvs::net {
namespace {

// A long header: first byte, version, DCID length and DCID, SCID length and SCID, then payload.
// Built byte by byte: GCC 12 at -O3 takes a range insert of an empty DCID for an
// out-of-bounds memcpy (-Warray-bounds, a false positive).
std::vector<uint8_t> long_header(uint8_t first, uint32_t version, const std::vector<uint8_t>& dcid) {
    std::vector<uint8_t> p;
    p.reserve(6 + dcid.size() + 8);
    for (uint8_t b : {first, uint8_t(version >> 24), uint8_t(version >> 16), uint8_t(version >> 8),
                      uint8_t(version), static_cast<uint8_t>(dcid.size())})
        p.push_back(b);
    for (uint8_t b : dcid) p.push_back(b);
    for (uint8_t b : {4, 0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x41, 0x00}) p.push_back(b);  // SCID, token, length
    return p;
}

std::vector<uint8_t> bytes(const QuicCid& c) {
    return c.data ? std::vector<uint8_t>(c.data, c.data + c.len) : std::vector<uint8_t>{};
}

const std::vector<uint8_t> kDcid{0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08};  // RFC 9001 A.1

TEST(QuicDcid, LongHeaderCarriesItsLength) {
    const auto initial = long_header(0xc3, 1, kDcid);  // QUIC v1 Initial
    EXPECT_EQ(bytes(quic_dcid(initial.data(), initial.size(), 0)), kDcid);
    // Any version but 0: the invariants are version-independent (a v2 Initial, 0x6b3343cf).
    const auto v2 = long_header(0xd3, 0x6b3343cf, kDcid);
    EXPECT_EQ(bytes(quic_dcid(v2.data(), v2.size(), 0)), kDcid);
    // With the servers' length known, a longer DCID is cut to it.
    EXPECT_EQ(bytes(quic_dcid(initial.data(), initial.size(), 4)),
              (std::vector<uint8_t>{0x83, 0x94, 0xc8, 0xf0}));
    // A shorter one is taken whole.
    EXPECT_EQ(bytes(quic_dcid(initial.data(), initial.size(), 12)), kDcid);
}

TEST(QuicDcid, LongHeaderRefusals) {
    const auto vn = long_header(0x80, 0, kDcid);  // Version Negotiation
    EXPECT_EQ(quic_dcid(vn.data(), vn.size(), 8).len, 0);
    const auto empty = long_header(0xc3, 1, {});
    EXPECT_EQ(quic_dcid(empty.data(), empty.size(), 8).len, 0);
    const auto too_long = long_header(0xc3, 1, std::vector<uint8_t>(21, 7));
    EXPECT_EQ(quic_dcid(too_long.data(), too_long.size(), 0).len, 0);
    const auto max = long_header(0xc3, 1, std::vector<uint8_t>(20, 7));
    EXPECT_EQ(quic_dcid(max.data(), max.size(), 0).len, 20);
    // Cut by the end of the datagram: at each length short of the whole DCID.
    const auto initial = long_header(0xc3, 1, kDcid);
    for (size_t n = 0; n < 6 + kDcid.size(); ++n)
        EXPECT_EQ(quic_dcid(initial.data(), n, 0).len, 0) << n;
    EXPECT_EQ(quic_dcid(initial.data(), 6 + kDcid.size(), 0).len, kDcid.size());
}

TEST(QuicDcid, ShortHeaderNeedsTheServersLength) {
    std::vector<uint8_t> one_rtt{0x41};  // short header, fixed bit set
    one_rtt.insert(one_rtt.end(), kDcid.begin(), kDcid.end());
    one_rtt.insert(one_rtt.end(), {0x12, 0x34, 0x56});
    EXPECT_EQ(quic_dcid(one_rtt.data(), one_rtt.size(), 0).len, 0);  // unknown length
    EXPECT_EQ(bytes(quic_dcid(one_rtt.data(), one_rtt.size(), 8)), kDcid);
    EXPECT_EQ(quic_dcid(one_rtt.data(), 8, 8).len, 0);  // shorter than 1 + 8
    EXPECT_EQ(quic_dcid(one_rtt.data(), 9, 8).len, 8);
    one_rtt[0] = 0x01;  // no fixed bit: not QUIC v1
    EXPECT_EQ(quic_dcid(one_rtt.data(), one_rtt.size(), 8).len, 0);
    EXPECT_EQ(quic_dcid(one_rtt.data(), 0, 8).len, 0);
}

// The Initial's DCID cut to the servers' length and a short header with that CID hash alike.
TEST(QuicDcid, LongAndShortHashAlikeForTheSameId) {
    const auto initial = long_header(0xc3, 1, kDcid);
    std::vector<uint8_t> one_rtt{0x5f, 0x83, 0x94, 0xc8, 0xf0, 0x00, 0x01};
    const uint64_t a = quic_cid_hash(quic_dcid(initial.data(), initial.size(), 4), 9);
    const uint64_t b = quic_cid_hash(quic_dcid(one_rtt.data(), one_rtt.size(), 4), 9);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, quic_cid_hash(quic_dcid(initial.data(), initial.size(), 0), 9));
}

}  // namespace
}  // namespace xvs::net
