// Tests for net/proxy_protocol: exact v1/v2 bytes, parse round trips, strict rejection of
// malformed and truncated headers, and the sequence-space shift (seq, ack, SACK with the TCP
// checksum checked against a full recompute), including across the 2^32 wrap.
#include "net/proxy_protocol.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/headers.h"
#include "net/tcp_options.h"
#include "net/tcp_seq.h"

namespace xvs::net {
namespace {

using Bytes = std::vector<uint8_t>;

const uint32_t kSrc = hton32(0xc0a8010a);  // 192.168.1.10
const uint32_t kDst = hton32(0x0a000001);  // 10.0.0.1
const uint16_t kSport = hton16(54321);
const uint16_t kDport = hton16(80);

Bytes to_bytes(const std::string& s) {
    return Bytes(s.begin(), s.end());
}

std::optional<PpParsed> parse(const Bytes& b) {
    return pp_parse(b);
}
std::optional<PpParsed> parse(const std::string& s) {
    return pp_parse(to_bytes(s));
}

// ---- v1 ----

TEST(PpV1BuildTest, ExactBytes) {
    uint8_t out[kPpV1MaxLen];
    size_t len = pp_v1_build(out, sizeof(out), kSrc, kDst, kSport, kDport);
    EXPECT_EQ(std::string(out, out + len), "PROXY TCP4 192.168.1.10 10.0.0.1 54321 80\r\n");

    len = pp_v1_build(out, sizeof(out), 0, 0, 0, 0);
    EXPECT_EQ(std::string(out, out + len), "PROXY TCP4 0.0.0.0 0.0.0.0 0 0\r\n");
}

TEST(PpV1BuildTest, LongestLineAndCapacity) {
    const std::string longest = "PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n";
    ASSERT_EQ(longest.size(), kPpV1Tcp4MaxLen);
    uint8_t out[kPpV1Tcp4MaxLen];
    std::memset(out, 0xee, sizeof(out));
    EXPECT_EQ(pp_v1_build(out, kPpV1Tcp4MaxLen - 1, ~0u, ~0u, 0xffff, 0xffff), 0u);
    EXPECT_EQ(out[0], 0xee);  // nothing written
    EXPECT_EQ(pp_v1_build(out, kPpV1Tcp4MaxLen, ~0u, ~0u, 0xffff, 0xffff), kPpV1Tcp4MaxLen);
    EXPECT_EQ(std::string(out, out + kPpV1Tcp4MaxLen), longest);
    // A shorter line fits a buffer sized to it exactly.
    const std::string short_line = "PROXY TCP4 192.168.1.10 10.0.0.1 54321 80\r\n";
    EXPECT_EQ(pp_v1_build(out, short_line.size(), kSrc, kDst, kSport, kDport), short_line.size());
    EXPECT_EQ(pp_v1_build(out, short_line.size() - 1, kSrc, kDst, kSport, kDport), 0u);
}

TEST(PpV1ParseTest, RoundTripAndPayloadAfterHeader) {
    uint8_t out[kPpV1MaxLen + 4];
    size_t len = pp_v1_build(out, sizeof(out), kSrc, kDst, kSport, kDport);
    std::memcpy(out + len, "GET ", 4);
    auto parsed = pp_parse({out, len + 4});
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->version, 1);
    EXPECT_FALSE(parsed->local);
    EXPECT_EQ(parsed->family, PpFamily::Inet);
    EXPECT_EQ(parsed->transport, kIpProtoTcp);
    EXPECT_EQ(parsed->src_v4_be(), kSrc);
    EXPECT_EQ(parsed->dst_v4_be(), kDst);
    EXPECT_EQ(parsed->sport_be, kSport);
    EXPECT_EQ(parsed->dport_be, kDport);
    EXPECT_EQ(parsed->header_len, len);
}

TEST(PpV1ParseTest, Tcp6AndUnknown) {
    auto v6 = parse("PROXY TCP6 2001:db8::1 ::ffff:10.0.0.1 1 65535\r\n");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->family, PpFamily::Inet6);
    EXPECT_EQ(v6->src_addr[0], 0x20);
    EXPECT_EQ(v6->src_addr[2], 0x0d);
    EXPECT_EQ(v6->src_addr[15], 0x01);
    EXPECT_EQ(v6->dst_addr[10], 0xff);
    EXPECT_EQ(v6->dst_addr[12], 10);
    EXPECT_EQ(ntoh16(v6->sport_be), 1);
    EXPECT_EQ(ntoh16(v6->dport_be), 65535);

    for (const char* line : {"PROXY UNKNOWN\r\n", "PROXY UNKNOWN whatever  follows\r\n"}) {
        auto unknown = parse(line);
        ASSERT_TRUE(unknown) << line;
        EXPECT_EQ(unknown->family, PpFamily::Unspec);
        EXPECT_EQ(unknown->transport, 0);
        EXPECT_EQ(unknown->header_len, std::strlen(line));
    }
}

TEST(PpV1ParseTest, RejectsMalformed) {
    const char* bad[] = {
        "PROXY TCP4 192.168.1.10 10.0.0.1 54321 80\n",      // LF without CR
        "PROXY TCP4 192.168.1.10 10.0.0.1 54321 80\r",      // CR without LF
        "PROXY TCP4 192.168.1.10\r10.0.0.1 54321 80\r\n",   // stray CR
        "PROXY TCP4 192.168.1.10 10.0.0.1 54321 80",        // no line end
        "PROXY  TCP4 192.168.1.10 10.0.0.1 54321 80\r\n",   // double space
        "PROXY TCP4 192.168.1.10 10.0.0.1 54321 80 \r\n",   // trailing space
        " PROXY TCP4 192.168.1.10 10.0.0.1 54321 80\r\n",   // leading space
        "proxy TCP4 192.168.1.10 10.0.0.1 54321 80\r\n",    // case matters
        "PROXY TCP5 192.168.1.10 10.0.0.1 54321 80\r\n",    // unknown protocol
        "PROXY UDP4 192.168.1.10 10.0.0.1 54321 80\r\n",    // v1 has no UDP
        "PROXY TCP4 192.168.1.10 10.0.0.1 54321\r\n",       // missing port
        "PROXY TCP4 192.168.1.10 10.0.0.1 54321 80 8\r\n",  // extra field
        "PROXY TCP4 192.168.1.010 10.0.0.1 54321 80\r\n",   // leading zero in an octet
        "PROXY TCP4 192.168.1.256 10.0.0.1 54321 80\r\n",   // octet out of range
        "PROXY TCP4 192.168.1 10.0.0.1 54321 80\r\n",       // three octets
        "PROXY TCP4 2001:db8::1 10.0.0.1 54321 80\r\n",     // IPv6 address in TCP4
        "PROXY TCP6 192.168.1.10 10.0.0.1 54321 80\r\n",    // IPv4 address in TCP6
        "PROXY TCP4 192.168.1.10 10.0.0.1 65536 80\r\n",    // port out of range
        "PROXY TCP4 192.168.1.10 10.0.0.1 054321 80\r\n",   // leading zero in a port
        "PROXY TCP4 192.168.1.10 10.0.0.1 +5432 80\r\n",    // sign
        "PROXY TCP4 192.168.1.10 10.0.0.1 5432a 80\r\n",    // not a number
        "PROXY TCP4 192.168.1.10 10.0.0.1 999999 80\r\n",   // too many digits
        "PROXY\r\n",
        "PROXY \r\n",
        "\r\n",
        "",
    };
    for (const char* line : bad) EXPECT_FALSE(parse(line)) << '"' << line << '"';
}

TEST(PpV1ParseTest, LineEndMustComeWithin107Bytes) {
    // UNKNOWN lets the line be padded to any length: 107 bytes with CRLF is the limit.
    std::string line = "PROXY UNKNOWN ";
    line.append(kPpV1MaxLen - 2 - line.size(), 'x');
    line += "\r\n";
    ASSERT_EQ(line.size(), kPpV1MaxLen);
    EXPECT_TRUE(parse(line));
    line.insert(line.size() - 2, "x");
    EXPECT_FALSE(parse(line));
}

TEST(PpV1ParseTest, EveryTruncationIsRejected) {
    const Bytes full = to_bytes("PROXY TCP4 192.168.1.10 10.0.0.1 54321 80\r\n");
    for (size_t n = 0; n < full.size(); ++n) {
        EXPECT_FALSE(pp_parse({full.data(), n})) << n << " bytes";
    }
    EXPECT_TRUE(pp_parse(full));
}

// ---- v2 ----

const Bytes kV2Tcp = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                      0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,  // signature
                      0x21, 0x11, 0x00, 0x0c,              // v2 PROXY, TCP/IPv4, 12 bytes
                      0xc0, 0xa8, 0x01, 0x0a,              // 192.168.1.10
                      0x0a, 0x00, 0x00, 0x01,              // 10.0.0.1
                      0xd4, 0x31, 0x00, 0x50};             // 54321, 80

TEST(PpV2BuildTest, ExactBytesTcpAndUdp) {
    uint8_t out[64];
    ASSERT_EQ(pp_v2_build(out, sizeof(out), kIpProtoTcp, kSrc, kDst, kSport, kDport), 28u);
    EXPECT_EQ(Bytes(out, out + 28), kV2Tcp);

    Bytes udp = kV2Tcp;
    udp[13] = 0x12;
    ASSERT_EQ(pp_v2_build(out, sizeof(out), kIpProtoUdp, kSrc, kDst, kSport, kDport), 28u);
    EXPECT_EQ(Bytes(out, out + 28), udp);
}

TEST(PpV2BuildTest, RefusesShortBufferAndOtherTransports) {
    uint8_t out[28];
    std::memset(out, 0xee, sizeof(out));
    EXPECT_EQ(pp_v2_build(out, 27, kIpProtoTcp, kSrc, kDst, kSport, kDport), 0u);
    EXPECT_EQ(pp_v2_build(out, 28, kIpProtoIcmp, kSrc, kDst, kSport, kDport), 0u);
    EXPECT_EQ(Bytes(out, out + 28), Bytes(28, 0xee));
    EXPECT_EQ(pp_v2_build(out, 28, kIpProtoTcp, kSrc, kDst, kSport, kDport), 28u);
}

TEST(PpV2ParseTest, RoundTripTcpAndUdp) {
    for (uint8_t transport : {kIpProtoTcp, kIpProtoUdp}) {
        uint8_t out[40];
        size_t len = pp_v2_build(out, sizeof(out), transport, kSrc, kDst, kSport, kDport);
        auto parsed = pp_parse({out, sizeof(out)});  // trailing bytes are payload
        ASSERT_TRUE(parsed);
        EXPECT_EQ(parsed->version, 2);
        EXPECT_FALSE(parsed->local);
        EXPECT_EQ(parsed->family, PpFamily::Inet);
        EXPECT_EQ(parsed->transport, transport);
        EXPECT_EQ(parsed->src_v4_be(), kSrc);
        EXPECT_EQ(parsed->dst_v4_be(), kDst);
        EXPECT_EQ(parsed->sport_be, kSport);
        EXPECT_EQ(parsed->dport_be, kDport);
        EXPECT_EQ(parsed->header_len, len);
        EXPECT_EQ(parsed->tlv_len, 0u);
    }
}

TEST(PpV2ParseTest, TlvsLocalAndIpv6) {
    // Two TLVs after the addresses: NOOP (type 4) with 2 bytes, then an empty one.
    Bytes with_tlv = kV2Tcp;
    with_tlv.insert(with_tlv.end(), {0x04, 0x00, 0x02, 0xaa, 0xbb, 0x05, 0x00, 0x00});
    with_tlv[15] = 12 + 8;
    auto parsed = parse(with_tlv);
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->header_len, 36u);
    EXPECT_EQ(parsed->tlv_offset, 28u);
    EXPECT_EQ(parsed->tlv_len, 8u);
    EXPECT_EQ(parsed->src_v4_be(), kSrc);

    // LOCAL: addresses present but to be ignored.
    Bytes local = kV2Tcp;
    local[12] = 0x20;
    parsed = parse(local);
    ASSERT_TRUE(parsed);
    EXPECT_TRUE(parsed->local);
    EXPECT_EQ(parsed->family, PpFamily::Unspec);
    EXPECT_EQ(parsed->src_v4_be(), 0u);
    EXPECT_EQ(parsed->header_len, 28u);

    // LOCAL, AF_UNSPEC, no address block.
    Bytes bare(kV2Tcp.begin(), kV2Tcp.begin() + 16);
    bare[12] = 0x20;
    bare[13] = 0x00;
    bare[15] = 0;
    parsed = parse(bare);
    ASSERT_TRUE(parsed);
    EXPECT_TRUE(parsed->local);
    EXPECT_EQ(parsed->header_len, 16u);

    // UDP over IPv6.
    Bytes v6(kV2Tcp.begin(), kV2Tcp.begin() + 16);
    v6[13] = 0x22;
    v6[15] = 36;
    for (int i = 0; i < 32; ++i) v6.push_back(static_cast<uint8_t>(i));
    v6.insert(v6.end(), {0x12, 0x34, 0x01, 0xbb});
    parsed = parse(v6);
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->family, PpFamily::Inet6);
    EXPECT_EQ(parsed->transport, kIpProtoUdp);
    EXPECT_EQ(parsed->src_addr[15], 15);
    EXPECT_EQ(parsed->dst_addr[0], 16);
    EXPECT_EQ(ntoh16(parsed->sport_be), 0x1234);
    EXPECT_EQ(ntoh16(parsed->dport_be), 443);
}

TEST(PpV2ParseTest, RejectsMalformed) {
    struct Case {
        const char* description;
        void (*mutate)(Bytes&);
    };
    const Case cases[] = {
        {"signature byte", [](Bytes& b) { b[11] = 0x0b; }},
        {"version 1", [](Bytes& b) { b[12] = 0x11; }},
        {"version 3", [](Bytes& b) { b[12] = 0x31; }},
        {"command 2", [](Bytes& b) { b[12] = 0x22; }},
        {"AF_UNIX stream", [](Bytes& b) { b[13] = 0x31; }},
        {"family 4", [](Bytes& b) { b[13] = 0x41; }},
        {"transport 3", [](Bytes& b) { b[13] = 0x13; }},
        {"IPv4 with UNSPEC transport", [](Bytes& b) { b[13] = 0x10; }},
        {"length below the IPv4 block", [](Bytes& b) { b[15] = 11; }},
        {"IPv6 with an IPv4-sized block", [](Bytes& b) { b[13] = 0x21; }},
        {"length past the buffer", [](Bytes& b) { b[15] = 13; }},
        {"TLV header cut short",
         [](Bytes& b) {
             b.insert(b.end(), {0x04, 0x00});
             b[15] = 14;
         }},
        {"TLV value past the header",
         [](Bytes& b) {
             b.insert(b.end(), {0x04, 0x00, 0x03, 0xaa, 0xbb});
             b[15] = 17;
         }},
    };
    for (const Case& c : cases) {
        Bytes b = kV2Tcp;
        c.mutate(b);
        EXPECT_FALSE(parse(b)) << c.description;
    }
}

TEST(PpV2ParseTest, EveryTruncationIsRejected) {
    for (size_t n = 0; n < kV2Tcp.size(); ++n) {
        EXPECT_FALSE(pp_parse({kV2Tcp.data(), n})) << n << " bytes";
    }
    EXPECT_TRUE(parse(kV2Tcp));
}

// ---- sequence space ----

TEST(TcpSeqTest, ComparisonsWrap) {
    EXPECT_TRUE(seq_lt(1, 2));
    EXPECT_TRUE(seq_lt(0xfffffff0u, 0x10));  // across the wrap
    EXPECT_FALSE(seq_lt(0x10, 0xfffffff0u));
    EXPECT_TRUE(seq_gt(0x10, 0xfffffff0u));
    EXPECT_TRUE(seq_le(5, 5));
    EXPECT_TRUE(seq_ge(5, 5));
    EXPECT_FALSE(seq_lt(5, 5));
    EXPECT_TRUE(seq_lt(0, 0x7fffffffu));
    EXPECT_TRUE(seq_gt(0, 0x80000001u));  // more than 2^31 ahead reads as behind
}

TEST(PpSeqShiftTest, NothingMovesBeforeTheHeaderIsSent) {
    const PpSeqShift none{.insert_seq = 1001, .delta = 0};
    for (uint32_t v : {0u, 1000u, 1001u, 5000u, 0xffffffffu}) {
        EXPECT_EQ(seq_client_to_rs(v, none), v);
        EXPECT_EQ(ack_rs_to_client(v, none), v);
    }
}

TEST(PpSeqShiftTest, ClientSeqAndRsAck) {
    const PpSeqShift shift{.insert_seq = 1001, .delta = 28};  // ISN 1000, v2 header
    EXPECT_EQ(seq_client_to_rs(1000, shift), 1000u);          // the SYN
    EXPECT_EQ(seq_client_to_rs(1001, shift), 1029u);  // first payload byte, after the header
    EXPECT_EQ(seq_client_to_rs(2001, shift), 2029u);

    EXPECT_EQ(ack_rs_to_client(1001, shift), 1001u);  // SYN-ACK acks ISN + 1
    EXPECT_EQ(ack_rs_to_client(1000, shift), 1000u);
    EXPECT_EQ(ack_rs_to_client(1002, shift), 1001u);  // part of the header only
    EXPECT_EQ(ack_rs_to_client(1028, shift), 1001u);
    EXPECT_EQ(ack_rs_to_client(1029, shift), 1001u);  // the whole header, no payload
    EXPECT_EQ(ack_rs_to_client(1030, shift), 1002u);
    EXPECT_EQ(ack_rs_to_client(2029, shift), 2001u);

    for (uint32_t seq = 1001; seq < 1200; ++seq) {
        EXPECT_EQ(ack_rs_to_client(seq_client_to_rs(seq, shift), shift), seq);
    }
}

TEST(PpSeqShiftTest, Wraparound) {
    // Header and payload straddle 2^32 from three starting points.
    for (uint32_t insert : {0xffffffffu, 0xfffffff0u, 0xffffffe4u}) {
        const PpSeqShift shift{.insert_seq = insert, .delta = 28};
        SCOPED_TRACE(insert);
        EXPECT_EQ(seq_client_to_rs(insert - 1, shift), insert - 1);
        EXPECT_EQ(seq_client_to_rs(insert, shift), insert + 28);
        EXPECT_EQ(seq_client_to_rs(insert + 100, shift), insert + 128);
        EXPECT_EQ(ack_rs_to_client(insert, shift), insert);
        EXPECT_EQ(ack_rs_to_client(insert + 1, shift), insert);
        EXPECT_EQ(ack_rs_to_client(insert + 27, shift), insert);
        EXPECT_EQ(ack_rs_to_client(insert + 28, shift), insert);
        EXPECT_EQ(ack_rs_to_client(insert + 29, shift), insert + 1);
        EXPECT_EQ(ack_rs_to_client(insert + 1028, shift), insert + 1000);
        EXPECT_EQ(ack_rs_to_client(insert - 5, shift), insert - 5);
        for (uint32_t off = 0; off < 200; ++off) {
            EXPECT_EQ(ack_rs_to_client(seq_client_to_rs(insert + off, shift), shift), insert + off);
        }
    }
}

// An IPv4/TCP RS->client segment whose options area is `opts` (a multiple of 4 bytes), with a
// valid TCP checksum.
struct Segment {
    Bytes bytes;  // TCP header + options + 3 bytes of payload
    uint32_t saddr = hton32(0xc0a8000a);
    uint32_t daddr = hton32(0xc0a8010a);

    explicit Segment(const Bytes& opts) {
        bytes.assign(20, 0);
        store_be16(&bytes[0], 80);
        store_be16(&bytes[2], 54321);
        store_be32(&bytes[4], 0x11223344);
        bytes[12] = static_cast<uint8_t>((20 + opts.size()) / 4 << 4);
        bytes[13] = kTcpAck;
        bytes.insert(bytes.end(), opts.begin(), opts.end());
        bytes.insert(bytes.end(), {'a', 'b', 'c'});
        store_be16(&bytes[16], 0);
        uint16_t c = ipv4_l4_checksum(saddr, daddr, kIpProtoTcp, bytes.data(), bytes.size());
        std::memcpy(&bytes[16], &c, 2);
    }
    std::span<uint8_t> opts() { return {bytes.data() + 20, (bytes[12] >> 4) * 4u - 20}; }
    uint16_t* csum() { return &reinterpret_cast<TcpHdr*>(bytes.data())->checksum; }
    uint32_t edge(size_t offset_in_opts) const { return load_be32(&bytes[20 + offset_in_opts]); }
    bool checksum_valid() const {
        Bytes copy = bytes;
        copy[16] = copy[17] = 0;
        uint16_t c = ipv4_l4_checksum(saddr, daddr, kIpProtoTcp, copy.data(), copy.size());
        return std::memcmp(&c, &bytes[16], 2) == 0;
    }
};

Bytes sack_option(std::initializer_list<uint32_t> edges, size_t nops) {
    Bytes opts(nops, kTcpOptNop);
    opts.push_back(kTcpOptSack);
    opts.push_back(static_cast<uint8_t>(2 + 4 * edges.size()));
    for (uint32_t e : edges) {
        opts.resize(opts.size() + 4);
        store_be32(&opts[opts.size() - 4], e);
    }
    while (opts.size() % 4) opts.push_back(kTcpOptEol);
    return opts;
}

TEST(PpSeqShiftTest, SackBlocksMapLikeAcks) {
    const PpSeqShift shift{.insert_seq = 1001, .delta = 28};
    // Blocks: after the header; straddling its end; inside it; before the insertion point.
    // Aligned (NOP NOP) and at an odd offset (one NOP) for the checksum update.
    for (size_t nops : {2u, 1u}) {
        SCOPED_TRACE(nops);
        Segment seg(sack_option({2029, 3029, 1020, 1100, 1005, 1020, 900, 1001}, nops));
        ASSERT_TRUE(seg.checksum_valid());
        EXPECT_EQ(pp_sack_rs_to_client(seg.opts(), shift, seg.csum()), 4u);
        const size_t e = nops + 2;  // first edge
        EXPECT_EQ(seg.edge(e + 0), 2001u);
        EXPECT_EQ(seg.edge(e + 4), 3001u);
        EXPECT_EQ(seg.edge(e + 8), 1001u);  // left edge inside the header clamps
        EXPECT_EQ(seg.edge(e + 12), 1072u);
        EXPECT_EQ(seg.edge(e + 16), 1001u);  // wholly inside: empty block at insert_seq
        EXPECT_EQ(seg.edge(e + 20), 1001u);
        EXPECT_EQ(seg.edge(e + 24), 900u);  // before the insertion point: unchanged
        EXPECT_EQ(seg.edge(e + 28), 1001u);
        EXPECT_TRUE(seg.checksum_valid());
    }
}

TEST(PpSeqShiftTest, SackAcrossTheWrap) {
    const PpSeqShift shift{.insert_seq = 0xfffffff0u, .delta = 56};
    Segment seg(sack_option({0xfffffff0u + 56, 0x00000100u, 0x00000010u, 0x00000030u}, 2));
    EXPECT_EQ(pp_sack_rs_to_client(seg.opts(), shift, seg.csum()), 2u);
    EXPECT_EQ(seg.edge(4), 0xfffffff0u);
    EXPECT_EQ(seg.edge(8), 0x00000100u - 56);
    EXPECT_EQ(seg.edge(12), 0xfffffff0u);  // 0x10 is inside the header (ends at 0x28)
    EXPECT_EQ(seg.edge(16), 0x00000030u - 56);
    EXPECT_TRUE(seg.checksum_valid());
}

TEST(PpSeqShiftTest, SackWithTimestampsAndNullChecksum) {
    // Linux data segments carry NOP NOP TS then NOP NOP SACK; without csum only edges change.
    const PpSeqShift shift{.insert_seq = 1001, .delta = 28};
    Bytes opts = {kTcpOptNop, kTcpOptNop, kTcpOptTimestamp, 10, 0, 0, 0, 1, 0, 0, 0, 2};
    Bytes sack = sack_option({5029, 6029}, 2);
    opts.insert(opts.end(), sack.begin(), sack.end());
    Segment seg(opts);
    EXPECT_EQ(pp_sack_rs_to_client(seg.opts(), shift, nullptr), 1u);
    EXPECT_EQ(seg.edge(16), 5001u);
    EXPECT_EQ(seg.edge(20), 6001u);
    EXPECT_EQ(seg.edge(4), 1u);  // TSval untouched
    EXPECT_FALSE(seg.checksum_valid());
}

}  // namespace
}  // namespace xvs::net
