// Tests for net/tcp_options: the walker on well-formed and malformed option areas, the parsed
// summary, and MSS/SACK rewrites whose incremental checksum must equal a full recompute.
#include "net/tcp_options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "net/byteorder.h"
#include "net/checksum.h"

namespace xvs::net {
namespace {

using Bytes = std::vector<uint8_t>;

// What a Linux SYN carries: MSS 1460, SACK permitted, timestamps, NOP, window scale 7.
const Bytes kLinuxSyn = {0x02, 0x04, 0x05, 0xb4,                          // MSS 1460
                         0x04, 0x02,                                      // SACK permitted
                         0x08, 0x0a, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0,  // TS 0x11223344, 0
                         0x01,                                            // NOP
                         0x03, 0x03, 0x07};                               // WS 7

struct Seen {
    uint8_t kind;
    uint8_t len;
    size_t offset;
    bool operator==(const Seen&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Seen& s) {
    return os << "{kind " << int(s.kind) << " len " << int(s.len) << " at " << s.offset << "}";
}

// Walks to the end and records what the walker reported, checking each option's invariants.
std::vector<Seen> walk(const Bytes& opts, bool* malformed = nullptr) {
    std::vector<Seen> seen;
    TcpOptionWalker walker(opts);
    TcpOption opt;
    while (walker.next(opt)) {
        seen.push_back({opt.kind, opt.len, opt.offset});
        EXPECT_LE(opt.offset + opt.len, opts.size());
        if (opt.kind == kTcpOptNop) {
            EXPECT_EQ(opt.data, nullptr);
            EXPECT_TRUE(opt.payload().empty());
        } else {
            EXPECT_EQ(opt.data, opts.data() + opt.offset + 2);
            EXPECT_EQ(opt.payload().size(), opt.len - 2u);
        }
        EXPECT_LT(seen.size(), 64u) << "walker does not advance";
        if (seen.size() >= 64) break;
    }
    // Once finished, the walker stays finished.
    EXPECT_FALSE(walker.next(opt));
    if (malformed) *malformed = walker.malformed();
    return seen;
}

TEST(TcpOptionWalkerTest, WalksLinuxSynOptions) {
    bool malformed = true;
    const auto seen = walk(kLinuxSyn, &malformed);
    const std::vector<Seen> expect = {{kTcpOptMss, 4, 0},
                                      {kTcpOptSackPerm, 2, 4},
                                      {kTcpOptTimestamp, 10, 6},
                                      {kTcpOptNop, 1, 16},
                                      {kTcpOptWscale, 3, 17}};
    EXPECT_EQ(seen, expect);
    EXPECT_FALSE(malformed);
}

TEST(TcpOptionWalkerTest, ReportsPayloadBytes) {
    TcpOptionWalker walker(kLinuxSyn);
    TcpOption opt;
    ASSERT_TRUE(walker.next(opt));
    ASSERT_EQ(opt.payload().size(), 2u);
    EXPECT_EQ(opt.payload()[0], 0x05);
    EXPECT_EQ(opt.payload()[1], 0xb4);
}

TEST(TcpOptionWalkerTest, EmptyAreaHasNoOptionsAndIsNotMalformed) {
    bool malformed = true;
    EXPECT_TRUE(walk({}, &malformed).empty());
    EXPECT_FALSE(malformed);
}

TEST(TcpOptionWalkerTest, EolEndsTheWalkAndHidesWhatFollows) {
    // After EOL comes what would be a malformed option; it must not be looked at.
    const Bytes opts = {0x02, 0x04, 0x05, 0xb4, 0x00, 0x02, 0x00, 0x01};
    bool malformed = true;
    const std::vector<Seen> expect = {{kTcpOptMss, 4, 0}};
    EXPECT_EQ(walk(opts, &malformed), expect);
    EXPECT_FALSE(malformed);
    EXPECT_FALSE(parse_tcp_options(opts).malformed);
}

TEST(TcpOptionWalkerTest, NopsAreReportedOneByOne) {
    const Bytes opts = {0x01, 0x01, 0x08, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<Seen> expect = {
        {kTcpOptNop, 1, 0}, {kTcpOptNop, 1, 1}, {kTcpOptTimestamp, 10, 2}};
    EXPECT_EQ(walk(opts), expect);
}

TEST(TcpOptionWalkerTest, UnknownKindsAreWalkedByLength) {
    // MPTCP (30) and TOA (254) are not interpreted here but must be stepped over correctly.
    const Bytes opts = {30, 4, 0xaa, 0xbb, kTcpOptToa, 8, 0x1f, 0x90, 10, 0, 0, 1, 0x01, 0x01};
    const std::vector<Seen> expect = {
        {30, 4, 0}, {kTcpOptToa, 8, 4}, {kTcpOptNop, 1, 12}, {kTcpOptNop, 1, 13}};
    EXPECT_EQ(walk(opts), expect);
}

TEST(TcpOptionWalkerTest, OptionExactlyFillingTheAreaIsWellFormed) {
    const Bytes opts = {0x01, 0x01, 0x05, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8};
    bool malformed = true;
    EXPECT_EQ(walk(opts, &malformed).size(), 3u);
    EXPECT_FALSE(malformed);
}

struct MalformedCase {
    const char* name;
    Bytes opts;
    size_t options_before;  // how many options are reported before the walk stops
};

TEST(TcpOptionWalkerTest, MalformedAreasStopTheWalk) {
    Bytes huge(40, 0x01);  // 38 NOPs, then a SACK claiming 255 bytes
    huge[38] = kTcpOptSack;
    huge[39] = 0xff;
    const MalformedCase cases[] = {
        {"zero length", {0x02, 0x00, 0x05, 0xb4}, 0},
        {"length 1", {0x01, 0x03, 0x01, 0x07}, 1},
        {"overruns by one", {0x01, 0x08, 0x0a, 1, 2, 3, 4, 5, 6, 7}, 1},
        {"truncated length byte", {0x01, 0x01, 0x02}, 2},
        {"lone kind byte", {0x08}, 0},
        {"huge length", huge, 38},
        {"after a good option", {0x02, 0x04, 0x05, 0xb4, 0x03, 0x00, 0x00, 0x00}, 1},
    };
    for (const auto& c : cases) {
        bool malformed = false;
        EXPECT_EQ(walk(c.opts, &malformed).size(), c.options_before) << c.name;
        EXPECT_TRUE(malformed) << c.name;
        EXPECT_TRUE(parse_tcp_options(c.opts).malformed) << c.name;
    }
}

TEST(TcpOptionWalkerTest, WalkerReadsOnlyItsSpan) {
    // The byte after the span would make the last option valid; the walker must not see it.
    const Bytes backing = {0x01, 0x02, 0x04, 0x05, 0xb4};
    TcpOptionWalker walker(std::span<const uint8_t>(backing.data(), 4));
    TcpOption opt;
    ASSERT_TRUE(walker.next(opt));
    EXPECT_EQ(opt.kind, kTcpOptNop);
    EXPECT_FALSE(walker.next(opt));
    EXPECT_TRUE(walker.malformed());
}

TEST(ParseTcpOptionsTest, LinuxSyn) {
    const ParsedTcpOptions p = parse_tcp_options(kLinuxSyn);
    EXPECT_EQ(p.mss, 1460);
    EXPECT_EQ(p.wscale, 7);
    EXPECT_TRUE(p.sack_perm);
    ASSERT_TRUE(p.timestamp);
    EXPECT_EQ(p.timestamp->first, 0x11223344u);
    EXPECT_EQ(p.timestamp->second, 0u);
    EXPECT_EQ(p.sack_blocks, 0);
    EXPECT_FALSE(p.malformed);
}

TEST(ParseTcpOptionsTest, NothingWhenEmpty) {
    const ParsedTcpOptions p = parse_tcp_options({});
    EXPECT_FALSE(p.mss || p.wscale || p.timestamp || p.sack_perm || p.malformed);
    EXPECT_EQ(p.sack_blocks, 0);
}

TEST(ParseTcpOptionsTest, TimestampAndSackOnDataSegment) {
    const Bytes opts = {0x01, 0x01, 0x08, 0x0a, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04,
                        0x01, 0x01, 0x05, 0x1a,  // SACK, 3 blocks
                        0,    0,    0,    1,    0,    0,    0,    2,    0,    0,    0,    3,
                        0,    0,    0,    4,    0,    0,    0,    5,    0,    0,    0,    6};
    const ParsedTcpOptions p = parse_tcp_options(opts);
    ASSERT_TRUE(p.timestamp);
    EXPECT_EQ(p.timestamp->first, 0xdeadbeefu);
    EXPECT_EQ(p.timestamp->second, 0x01020304u);
    EXPECT_EQ(p.sack_blocks, 3);
    EXPECT_FALSE(p.mss);
    EXPECT_FALSE(p.sack_perm);
    EXPECT_FALSE(p.malformed);
}

TEST(ParseTcpOptionsTest, WrongLengthsOfKnownKindsAreIgnoredNotMalformed) {
    const Bytes opts = {
        0x02, 0x03, 0x05,                             // MSS of length 3
        0x03, 0x04, 0x07, 0x00,                       // WS of length 4
        0x04, 0x03, 0x00,                             // SACK-permitted of length 3
        0x08, 0x06, 1,    2,    3, 4,                 // timestamp of length 6
        0x05, 0x0b, 0,    0,    0, 1, 0, 0, 0, 2, 0,  // SACK of length 11 (not 2 + 8n)
        0x05, 0x02,                                   // SACK with no blocks
    };
    const ParsedTcpOptions p = parse_tcp_options(opts);
    EXPECT_FALSE(p.mss);
    EXPECT_FALSE(p.wscale);
    EXPECT_FALSE(p.sack_perm);
    EXPECT_FALSE(p.timestamp);
    EXPECT_EQ(p.sack_blocks, 0);
    EXPECT_FALSE(p.malformed);
}

TEST(ParseTcpOptionsTest, FirstWellFormedOccurrenceWins) {
    const Bytes opts = {0x02, 0x03, 0x00,        // bad MSS, skipped
                        0x02, 0x04, 0x05, 0xb4,  // 1460
                        0x02, 0x04, 0x02, 0x18,  // 536, a duplicate
                        0x03, 0x03, 0x02, 0x03, 0x03, 0x09};
    const ParsedTcpOptions p = parse_tcp_options(opts);
    EXPECT_EQ(p.mss, 1460);
    EXPECT_EQ(p.wscale, 2);
    EXPECT_EQ(tcp_find_mss(opts), 1460);
}

TEST(ParseTcpOptionsTest, MalformedKeepsOptionsBeforeIt) {
    const Bytes opts = {0x02, 0x04, 0x05, 0xb4, 0x03, 0x03, 0x07, 0x04, 0x00};
    const ParsedTcpOptions p = parse_tcp_options(opts);
    EXPECT_EQ(p.mss, 1460);
    EXPECT_EQ(p.wscale, 7);
    EXPECT_FALSE(p.sack_perm);
    EXPECT_TRUE(p.malformed);
}

// parse_tcp_options is a hand-written single pass for speed; it must say exactly what the
// walker-based summary below says, for any bytes, malformed or not.
ParsedTcpOptions parse_by_walker(std::span<const uint8_t> opts) {
    ParsedTcpOptions p;
    TcpOptionWalker walker(opts);
    TcpOption opt;
    while (walker.next(opt)) {
        if (opt.kind == kTcpOptMss && opt.len == 4 && !p.mss) p.mss = load_be16(opt.data);
        if (opt.kind == kTcpOptWscale && opt.len == 3 && !p.wscale) p.wscale = opt.data[0];
        if (opt.kind == kTcpOptSackPerm && opt.len == 2) p.sack_perm = true;
        if (opt.kind == kTcpOptSack && opt.len >= 10 && (opt.len - 2) % 8 == 0)
            p.sack_blocks = uint8_t(p.sack_blocks + (opt.len - 2) / 8);
        if (opt.kind == kTcpOptTimestamp && opt.len == 10 && !p.timestamp)
            p.timestamp.emplace(load_be32(opt.data), load_be32(opt.data + 4));
    }
    p.malformed = walker.malformed();
    return p;
}

TEST(ParseTcpOptionsTest, AgreesWithTheWalkerOnArbitraryBytes) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(17);
    // Kinds and lengths near the interesting values, so most areas hold several options.
    const uint8_t kinds[] = {0, 1, 1, 2, 3, 4, 5, 8, 30, 254};
    const uint8_t lens[] = {0, 1, 2, 3, 4, 5, 10, 18, 26, 34, 40, 255};
    for (int round = 0; round < 20000; ++round) {
        Bytes opts(rng() % 41);
        for (size_t i = 0; i < opts.size(); ++i) {
            const unsigned r = rng() % 4;
            opts[i] = r == 0   ? kinds[rng() % std::size(kinds)]
                      : r == 1 ? lens[rng() % std::size(lens)]
                               : uint8_t(rng());
        }
        const ParsedTcpOptions got = parse_tcp_options(opts), want = parse_by_walker(opts);
        ASSERT_EQ(got.mss, want.mss) << "round " << round;
        ASSERT_EQ(got.wscale, want.wscale) << "round " << round;
        ASSERT_EQ(got.sack_perm, want.sack_perm) << "round " << round;
        ASSERT_EQ(got.timestamp, want.timestamp) << "round " << round;
        ASSERT_EQ(got.sack_blocks, want.sack_blocks) << "round " << round;
        ASSERT_EQ(got.malformed, want.malformed) << "round " << round;
    }
}

// The two Linux layouts parse_tcp_options reads without walking, and every variant of them
// with one byte changed (most fall back to the walk, some are malformed): the same answer as
// the walker, so the shortcut is exact.
TEST(ParseTcpOptionsTest, LinuxLayoutsAndTheirOneByteVariantsAgreeWithTheWalker) {
    const Bytes data_ts = {0x01, 0x01, 0x08, 0x0a, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04};
    const uint8_t values[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0a, 0x0b, 0x14, 0xff};
    unsigned variants = 0;
    for (const Bytes& layout : {kLinuxSyn, data_ts}) {
        const ParsedTcpOptions exact = parse_tcp_options(layout);
        EXPECT_TRUE(exact.timestamp);
        EXPECT_FALSE(exact.malformed);
        for (size_t i = 0; i < layout.size(); ++i) {
            for (uint8_t v : values) {
                Bytes opts = layout;
                opts[i] = v;
                const ParsedTcpOptions got = parse_tcp_options(opts), want = parse_by_walker(opts);
                ASSERT_EQ(got.mss, want.mss) << "byte " << i << " = " << int(v);
                ASSERT_EQ(got.wscale, want.wscale) << "byte " << i << " = " << int(v);
                ASSERT_EQ(got.sack_perm, want.sack_perm) << "byte " << i << " = " << int(v);
                ASSERT_EQ(got.timestamp, want.timestamp) << "byte " << i << " = " << int(v);
                ASSERT_EQ(got.sack_blocks, want.sack_blocks) << "byte " << i << " = " << int(v);
                ASSERT_EQ(got.malformed, want.malformed) << "byte " << i << " = " << int(v);
                ++variants;
            }
        }
        // One byte shorter or longer is not the layout either.
        for (Bytes opts : {Bytes(layout.begin(), layout.end() - 1), layout}) {
            if (opts.size() == layout.size()) opts.push_back(0);
            const ParsedTcpOptions got = parse_tcp_options(opts), want = parse_by_walker(opts);
            ASSERT_EQ(got.mss, want.mss);
            ASSERT_EQ(got.wscale, want.wscale);
            ASSERT_EQ(got.timestamp, want.timestamp);
            ASSERT_EQ(got.malformed, want.malformed);
        }
    }
    EXPECT_EQ(variants, (20u + 12u) * std::size(values));
}

TEST(TcpFindMssTest, FindsOrNot) {
    EXPECT_EQ(tcp_find_mss(kLinuxSyn), 1460);
    EXPECT_EQ(tcp_find_mss(Bytes{0x01, 0x01, 0x02, 0x04, 0xff, 0xff}), 65535);
    EXPECT_FALSE(tcp_find_mss(Bytes{0x01, 0x03, 0x03, 0x07}));
    EXPECT_FALSE(tcp_find_mss(Bytes{0x02, 0x04, 0x05}));              // truncated
    EXPECT_FALSE(tcp_find_mss(Bytes{0x00, 0x02, 0x04, 0x05, 0xb4}));  // after EOL
}

TEST(TcpOptionsSpanTest, FollowsDataOffset) {
    alignas(4) uint8_t seg[64] = {};
    auto* tcp = reinterpret_cast<TcpHdr*>(seg);
    const TcpHdr* ctcp = tcp;

    for (unsigned doff = 0; doff < 16; ++doff) {
        tcp->data_off = uint8_t(doff << 4);
        const size_t expect = doff >= 5 ? (doff - 5) * 4 : 0;
        const auto opts = tcp_options_span(tcp);
        EXPECT_EQ(opts.size(), expect) << "doff " << doff;
        if (!opts.empty()) {
            EXPECT_EQ(opts.data(), seg + 20);
        }
        EXPECT_EQ(tcp_options_span(ctcp).size(), expect);
        EXPECT_EQ(tcp_options_span(tcp, sizeof(seg)).size(), expect);
        EXPECT_EQ(tcp_options_span(ctcp, sizeof(seg)).size(), expect);
    }
}

TEST(TcpOptionsSpanTest, BoundedVariantRefusesDataOffsetPastTheBuffer) {
    alignas(4) uint8_t seg[60] = {};
    auto* tcp = reinterpret_cast<TcpHdr*>(seg);
    const TcpHdr* ctcp = tcp;
    tcp->data_off = 0xf0;  // claims 60 bytes
    EXPECT_EQ(tcp_options_span(tcp, 60).size(), 40u);
    EXPECT_TRUE(tcp_options_span(tcp, 59).empty());
    EXPECT_TRUE(tcp_options_span(ctcp, 59).empty());
    EXPECT_TRUE(tcp_options_span(tcp, 19).empty());
    tcp->data_off = 0x50;
    EXPECT_TRUE(tcp_options_span(tcp, 20).empty());
    EXPECT_TRUE(tcp_options_span(tcp, 0).empty());
}

// A TCP segment (header, options padded with EOL to a 4-byte multiple, payload) with a valid
// checksum, for checking incremental updates against a full recompute.
struct Segment {
    Bytes bytes;
    uint32_t saddr = hton32(0xc0a80001);
    uint32_t daddr = hton32(0x0a000002);

    TcpHdr* tcp() { return reinterpret_cast<TcpHdr*>(bytes.data()); }
    std::span<uint8_t> opts() { return tcp_options_span(tcp(), bytes.size()); }
    uint16_t stored_csum() const {
        uint16_t c;
        std::memcpy(&c, bytes.data() + 16, 2);
        return c;
    }
    void store_csum(uint16_t c) { std::memcpy(bytes.data() + 16, &c, 2); }
    uint16_t full_csum() {
        const uint16_t saved = stored_csum();
        store_csum(0);
        const uint16_t c = ipv4_l4_checksum(saddr, daddr, kIpProtoTcp, bytes.data(), bytes.size());
        store_csum(saved);
        return c;
    }
};

Segment make_segment(Bytes options, size_t payload_len, std::mt19937& rng) {
    while (options.size() % 4) options.push_back(kTcpOptEol);
    EXPECT_LE(options.size(), kTcpOptionsMaxLen);
    Segment seg;
    seg.bytes.resize(20 + options.size() + payload_len);
    for (auto& b : seg.bytes) b = uint8_t(rng());
    seg.tcp()->data_off = uint8_t((20 + options.size()) / 4 << 4);
    std::copy(options.begin(), options.end(), seg.bytes.begin() + 20);
    seg.store_csum(seg.full_csum());
    return seg;
}

TEST(TcpSetMssTest, RewritesAndUpdatesChecksumAtEvenAndOddOffsets) {
    std::mt19937 rng(4);
    for (size_t nops = 0; nops < 4; ++nops) {  // shifts the MSS value across word boundaries
        for (int round = 0; round < 200; ++round) {
            Bytes options(nops, kTcpOptNop);
            const uint16_t old_mss = uint16_t(rng());
            options.insert(options.end(), {kTcpOptMss, 4, uint8_t(old_mss >> 8), uint8_t(old_mss)});
            options.insert(options.end(), {kTcpOptSackPerm, 2, kTcpOptWscale, 3, 7});
            Segment seg = make_segment(options, rng() % 64, rng);
            const Bytes before = seg.bytes;

            const uint16_t new_mss = uint16_t(rng());
            uint16_t csum = seg.stored_csum();
            ASSERT_TRUE(tcp_set_mss(seg.opts(), new_mss, &csum));
            seg.store_csum(csum);
            ASSERT_EQ(tcp_find_mss(seg.opts()), new_mss);
            ASSERT_EQ(csum, seg.full_csum()) << "nops " << nops << " round " << round;
            // Only the two MSS value bytes (and the checksum) changed.
            for (size_t i = 0; i < before.size(); ++i) {
                if (i == 16 || i == 17 || i == 20 + nops + 2 || i == 20 + nops + 3) continue;
                ASSERT_EQ(seg.bytes[i], before[i]) << "byte " << i;
            }
        }
    }
}

TEST(TcpSetMssTest, RewritesEveryDuplicate) {
    std::mt19937 rng(44);
    Segment seg = make_segment(
        {kTcpOptNop, kTcpOptMss, 4, 0x23, 0x28, kTcpOptMss, 4, 0x05, 0xb4, kTcpOptMss, 3, 0x11}, 33,
        rng);
    uint16_t csum = seg.stored_csum();
    ASSERT_TRUE(tcp_set_mss(seg.opts(), 1400, &csum));
    seg.store_csum(csum);
    EXPECT_EQ(csum, seg.full_csum());
    EXPECT_EQ(load_be16(&seg.bytes[20 + 3]), 1400);
    EXPECT_EQ(load_be16(&seg.bytes[20 + 7]), 1400);
    EXPECT_EQ(seg.bytes[20 + 11], 0x11);  // the len-3 "MSS" is not an MSS option
}

TEST(TcpSetMssTest, NoMssLeavesEverythingAlone) {
    std::mt19937 rng(444);
    Segment seg = make_segment({kTcpOptSackPerm, 2, kTcpOptNop, kTcpOptWscale, 3, 7}, 10, rng);
    const Bytes before = seg.bytes;
    uint16_t csum = seg.stored_csum();
    EXPECT_FALSE(tcp_set_mss(seg.opts(), 1200, &csum));
    EXPECT_EQ(csum, seg.stored_csum());
    EXPECT_EQ(seg.bytes, before);
    EXPECT_FALSE(tcp_set_mss({}, 1200, &csum));
}

TEST(TcpSetMssTest, NullChecksumOnlyRewrites) {
    Bytes opts = {kTcpOptNop, kTcpOptMss, 4, 0x05, 0xb4};
    EXPECT_TRUE(tcp_set_mss(opts, 1000, nullptr));
    EXPECT_EQ(tcp_find_mss(opts), 1000);
}

// Reads the SACK blocks of a single SACK option that starts at `at`.
std::vector<uint32_t> sack_edges(std::span<const uint8_t> opts, size_t at) {
    std::vector<uint32_t> edges;
    for (size_t i = at + 2; i < at + opts[at + 1]; i += 4) edges.push_back(load_be32(&opts[i]));
    return edges;
}

Bytes sack_option(const std::vector<uint32_t>& edges) {
    Bytes opt = {kTcpOptSack, uint8_t(2 + 4 * edges.size())};
    for (uint32_t e : edges) {
        opt.insert(opt.end(), {uint8_t(e >> 24), uint8_t(e >> 16), uint8_t(e >> 8), uint8_t(e)});
    }
    return opt;
}

TEST(TcpSackAdjustTest, AddsDeltaWithWraparound) {
    std::mt19937 rng(2018);
    const std::vector<uint32_t> edges = {0xfffffff0, 0x00000010, 0x7ffffff8,
                                         0x80000008, 0x00000000, 0xffffffff};
    for (size_t nops = 0; nops < 2; ++nops) {  // even and odd offsets
        for (int32_t delta : {0x20, -0x20, INT32_MIN, INT32_MAX, 1}) {
            Bytes options(nops, kTcpOptNop);
            const Bytes sack = sack_option(edges);
            options.insert(options.end(), sack.begin(), sack.end());
            Segment seg = make_segment(options, rng() % 100, rng);

            uint16_t csum = seg.stored_csum();
            ASSERT_EQ(tcp_sack_blocks_adjust(seg.opts(), delta, &csum), 3u);
            seg.store_csum(csum);
            EXPECT_EQ(csum, seg.full_csum()) << "nops " << nops << " delta " << delta;
            const auto got = sack_edges(seg.opts(), nops);
            ASSERT_EQ(got.size(), edges.size());
            for (size_t i = 0; i < edges.size(); ++i) {
                EXPECT_EQ(got[i], uint32_t(edges[i] + uint32_t(delta))) << i;
            }
        }
    }
    // The wrap itself, spelled out.
    Bytes opts = sack_option({0xfffffff0, 0x00000010});
    tcp_sack_blocks_adjust(opts, 0x20, nullptr);
    EXPECT_EQ(sack_edges(opts, 0), (std::vector<uint32_t>{0x00000010, 0x00000030}));
    tcp_sack_blocks_adjust(opts, -0x40, nullptr);
    EXPECT_EQ(sack_edges(opts, 0), (std::vector<uint32_t>{0xffffffd0, 0xfffffff0}));
}

TEST(TcpSackAdjustTest, RandomLayoutsMatchFullRecompute) {
    std::mt19937 rng(5);
    for (int round = 0; round < 2000; ++round) {
        // Timestamps (sometimes), some NOPs for misalignment, then a SACK of 1..3 blocks.
        Bytes options(rng() % 4, kTcpOptNop);
        if (rng() % 2)
            options.insert(options.end(), {kTcpOptTimestamp, 10, 1, 2, 3, 4, 5, 6, 7, 8});
        const size_t max_blocks = (kTcpOptionsMaxLen - options.size() - 2) / 8;
        std::vector<uint32_t> edges(2 * (1 + rng() % std::min<size_t>(3, max_blocks)));
        for (auto& e : edges) e = uint32_t(rng());
        const Bytes sack = sack_option(edges);
        options.insert(options.end(), sack.begin(), sack.end());
        Segment seg = make_segment(options, rng() % 200, rng);

        const int32_t delta = int32_t(rng());
        uint16_t csum = seg.stored_csum();
        ASSERT_EQ(tcp_sack_blocks_adjust(seg.opts(), delta, &csum), edges.size() / 2);
        seg.store_csum(csum);
        ASSERT_EQ(csum, seg.full_csum()) << "round " << round;
        // Undoing the shift restores the original bytes and checksum.
        tcp_sack_blocks_adjust(seg.opts(), int32_t(0u - uint32_t(delta)), &csum);
        seg.store_csum(csum);
        ASSERT_EQ(csum, seg.full_csum());
        ASSERT_EQ(parse_tcp_options(seg.opts()).sack_blocks, edges.size() / 2);
    }
}

TEST(TcpSackAdjustTest, IgnoresMalformedSackOptions) {
    // SACK of length 11 is not 2 + 8n and must be left alone; the second, valid one adjusted.
    Bytes opts = {kTcpOptSack, 11, 0, 0, 0, 1, 0, 0, 0, 2, 0};
    const Bytes good = sack_option({100, 200});
    opts.insert(opts.end(), good.begin(), good.end());
    const Bytes before = opts;
    EXPECT_EQ(tcp_sack_blocks_adjust(opts, 5, nullptr), 1u);
    EXPECT_TRUE(std::equal(opts.begin(), opts.begin() + 11, before.begin()));
    EXPECT_EQ(sack_edges(opts, 11), (std::vector<uint32_t>{105, 205}));
    // No SACK at all.
    Bytes syn = kLinuxSyn;
    uint16_t csum = 0x1234;
    EXPECT_EQ(tcp_sack_blocks_adjust(syn, 5, &csum), 0u);
    EXPECT_EQ(syn, kLinuxSyn);
    EXPECT_EQ(csum, 0x1234);
}

TEST(TcpSackUnshiftTest, ClampsEdgesInsideTheInsertedBytes) {
    // 28 bytes inserted at 0xfffffff8 (wrapping): [0xfffffff8, 0x14) is inserted data.
    std::mt19937 rng(248);
    const uint32_t from = 0xfffffff8, delta = 28;
    const std::vector<uint32_t> edges = {0xfffffff0, 0xfffffff8, 0xfffffffc,
                                         0x00000013, 0x00000014, 0x00001000};
    const std::vector<uint32_t> want = {0xfffffff0, 0xfffffff8, 0xfffffff8,
                                        0xfffffff8, 0xfffffff8, 0x00001000 - 28};
    for (size_t nops = 0; nops < 2; ++nops) {  // even and odd offsets
        Bytes options(nops, kTcpOptNop);
        const Bytes sack = sack_option(edges);
        options.insert(options.end(), sack.begin(), sack.end());
        Segment seg = make_segment(options, rng() % 100, rng);
        uint16_t csum = seg.stored_csum();
        ASSERT_EQ(tcp_sack_blocks_unshift(seg.opts(), from, delta, &csum), 3u);
        seg.store_csum(csum);
        EXPECT_EQ(csum, seg.full_csum()) << "nops " << nops;
        EXPECT_EQ(sack_edges(seg.opts(), nops), want);
    }
    // delta 0 changes nothing.
    Bytes opts = sack_option(edges);
    EXPECT_EQ(tcp_sack_blocks_unshift(opts, from, 0, nullptr), 3u);
    EXPECT_EQ(sack_edges(opts, 0), edges);
}

}  // namespace
}  // namespace xvs::net
