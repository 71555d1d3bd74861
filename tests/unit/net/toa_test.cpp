// Tests for net/toa: the planned options area byte for byte, in-place insertion into IPv4/TCP
// packets (payload moved intact, doff and lengths exact, both checksums equal to a full
// recompute), the untouched-on-failure rule, and the SYN-ACK MSS clamp.
#include "net/toa.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "net/checksum.h"

namespace xvs::net {
namespace {

using Bytes = std::vector<uint8_t>;

const uint32_t kClientAddr = hton32(0xc0a80a07);  // 192.168.10.7
const uint16_t kClientPort = hton16(40000);       // 0x9c40
const uint32_t kLocalAddr = hton32(0x0a000001);   // FULLNAT local address 10.0.0.1
const uint32_t kRsAddr = hton32(0x0a000102);      // 10.0.1.2

// Our TOA for kClientAddr:kClientPort, as it must appear on the wire.
const Bytes kOurToa = {254, 8, 0x9c, 0x40, 192, 168, 10, 7};

const Bytes kNopNopTs = {1, 1, 8, 10, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
const Bytes kTs = {8, 10, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};

Bytes sack(int blocks) {
    Bytes out = {5, uint8_t(2 + 8 * blocks)};
    for (int i = 0; i < 8 * blocks; ++i) out.push_back(uint8_t(0xa0 + i));
    return out;
}

Bytes cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

Bytes pad4(Bytes b) {
    while (b.size() % 4) b.push_back(kTcpOptEol);
    return b;
}

Bytes payload_bytes(size_t n) {
    Bytes out(n);
    for (size_t i = 0; i < n; ++i) out[i] = uint8_t(i * 7 + 3);
    return out;
}

// An IPv4/TCP packet in a buffer with spare room after it; bytes past the packet are a canary.
struct Packet {
    static constexpr uint8_t kCanary = 0xcc;
    Bytes buf;
    size_t offset = 0;  // where the IPv4 header starts in buf (odd to test alignment)
    size_t len = 0;     // pkt_len handed to toa_insert_ipv4
    size_t ip_hlen = 20;

    uint8_t* ip() { return buf.data() + offset; }
    uint8_t* tcp() { return ip() + ip_hlen; }
    size_t total() { return load_be16(ip() + 2); }
    size_t doff_len() { return size_t(tcp()[12] >> 4) * 4; }
    Bytes opts() { return Bytes(tcp() + 20, tcp() + doff_len()); }
    Bytes payload() { return Bytes(tcp() + doff_len(), ip() + total()); }
};

// Builds a packet: ip_opts (multiple of 4), tcp options (padded to 4 by the caller), payload.
// `trailer` bytes of Ethernet padding follow the IPv4 total length inside pkt_len.
Packet make_packet(const Bytes& opts, const Bytes& payload, size_t spare = 64, size_t offset = 0,
                   const Bytes& ip_opts = {}, size_t trailer = 0,
                   uint8_t flags = kTcpAck | kTcpPsh) {
    EXPECT_EQ(opts.size() % 4, 0u);
    Packet p;
    p.offset = offset;
    p.ip_hlen = 20 + ip_opts.size();
    const size_t tcp_len = 20 + opts.size() + payload.size();
    const size_t total = p.ip_hlen + tcp_len;
    p.len = total + trailer;
    p.buf.assign(offset + p.len + spare, Packet::kCanary);
    uint8_t* ip = p.ip();
    std::memset(ip, 0, total);
    ip[0] = uint8_t(0x40 | (p.ip_hlen / 4));
    store_be16(ip + 2, uint16_t(total));
    store_be16(ip + 4, 0x1234);
    store_be16(ip + 6, kIpv4DontFragment);
    ip[8] = 64;
    ip[9] = kIpProtoTcp;
    std::memcpy(ip + 12, &kLocalAddr, 4);
    std::memcpy(ip + 16, &kRsAddr, 4);
    std::copy(ip_opts.begin(), ip_opts.end(), ip + 20);
    uint8_t* tcp = p.tcp();
    store_be16(tcp, 5000);
    store_be16(tcp + 2, 80);
    store_be32(tcp + 4, 0x01020304);
    store_be32(tcp + 8, 0x0a0b0c0d);
    tcp[12] = uint8_t((20 + opts.size()) / 4 << 4);
    tcp[13] = flags;
    store_be16(tcp + 14, 502);
    std::copy(opts.begin(), opts.end(), tcp + 20);
    std::copy(payload.begin(), payload.end(), tcp + 20 + opts.size());
    for (size_t i = 0; i < trailer; ++i) ip[total + i] = 0;  // Ethernet padding
    // Checksums computed from scratch on a 2-aligned copy.
    Bytes copy(ip, ip + total);
    const uint16_t ip_csum = ipv4_header_checksum(reinterpret_cast<const Ipv4Hdr*>(copy.data()));
    std::memcpy(ip + 10, &ip_csum, 2);
    const uint16_t tcp_csum =
        ipv4_l4_checksum(kLocalAddr, kRsAddr, kIpProtoTcp, copy.data() + p.ip_hlen, tcp_len);
    std::memcpy(tcp + 16, &tcp_csum, 2);
    return p;
}

// Full, independent recomputation of both checksums of the packet as it now stands.
void expect_checksums_valid(Packet& p) {
    Bytes copy(p.ip(), p.ip() + p.total());
    auto* ip = reinterpret_cast<Ipv4Hdr*>(copy.data());
    EXPECT_EQ(ipv4_header_checksum(ip), ip->checksum) << "IPv4 header checksum";
    auto* tcp = reinterpret_cast<TcpHdr*>(copy.data() + p.ip_hlen);
    const uint16_t stored = tcp->checksum;
    tcp->checksum = 0;
    EXPECT_EQ(ipv4_l4_checksum(ip->saddr, ip->daddr, kIpProtoTcp, tcp, p.total() - p.ip_hlen),
              stored)
        << "TCP checksum";
}

size_t count_kind(const Bytes& opts, uint8_t kind) {
    size_t n = 0;
    TcpOptionWalker walker(opts);
    TcpOption opt;
    while (walker.next(opt)) n += opt.kind == kind;
    EXPECT_FALSE(walker.malformed());
    return n;
}

// Inserts into p and checks everything that must hold after a successful insertion.
ToaResult insert_and_check(Packet& p, const Bytes& want_opts, ToaOutcome want,
                           bool allow_sack_prune = true) {
    const Bytes before_payload = p.payload();
    const size_t before_total = p.total();
    const size_t before_doff = p.doff_len();
    const ToaResult r = toa_insert_ipv4(p.ip(), p.len, p.buf.size() - p.offset, kClientAddr,
                                        kClientPort, allow_sack_prune);
    EXPECT_EQ(r.outcome, want) << toa_outcome_name(r.outcome);
    EXPECT_EQ(p.opts(), want_opts);
    EXPECT_EQ(p.doff_len(), 20 + want_opts.size());
    EXPECT_EQ(p.total(), before_total - before_doff + 20 + want_opts.size());
    EXPECT_EQ(r.new_pkt_len, p.total());
    EXPECT_EQ(p.payload(), before_payload);
    expect_checksums_valid(p);
    const auto found = toa_find(p.opts());
    EXPECT_TRUE(found);
    if (found) {
        EXPECT_EQ(found->first, kClientAddr);
        EXPECT_EQ(found->second, kClientPort);
    }
    EXPECT_EQ(count_kind(p.opts(), kTcpOptToa), 1u);
    // Untouched beyond the new packet end, up to the buffer end (the canary).
    for (size_t i = p.offset + std::max(p.len, r.new_pkt_len); i < p.buf.size(); ++i) {
        EXPECT_EQ(p.buf[i], Packet::kCanary) << "byte " << i;
    }
    return r;
}

void expect_untouched(Packet& p, ToaOutcome want, size_t capacity, bool allow_sack_prune = true) {
    const Bytes before = p.buf;
    const ToaResult r =
        toa_insert_ipv4(p.ip(), p.len, capacity, kClientAddr, kClientPort, allow_sack_prune);
    EXPECT_EQ(r.outcome, want) << toa_outcome_name(r.outcome);
    EXPECT_EQ(r.new_pkt_len, p.len);
    EXPECT_EQ(p.buf, before);
}

// ---- toa_plan ----

TEST(ToaPlan, EmptyOptionsGiveOnlyOurToa) {
    const ToaPlan plan = toa_plan({}, kClientAddr, kClientPort, false);
    EXPECT_EQ(plan.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), kOurToa);
    EXPECT_EQ(plan.forged_removed, 0);
}

TEST(ToaPlan, TimestampsKeepTheirAlignment) {
    const ToaPlan plan = toa_plan(kNopNopTs, kClientAddr, kClientPort, false);
    EXPECT_EQ(plan.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), cat({kOurToa, kNopNopTs}));
    EXPECT_EQ(parse_tcp_options(kNopNopTs).timestamp,
              parse_tcp_options(Bytes(plan.new_opts, plan.new_opts + plan.new_len)).timestamp);
}

TEST(ToaPlan, SynOptionsKeepValues) {
    // MSS, SACK-perm, TS, NOP, WS: 20 bytes, fits verbatim after the TOA.
    const Bytes syn = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7};
    const ToaPlan plan = toa_plan(syn, kClientAddr, kClientPort, false);
    ASSERT_EQ(plan.outcome, ToaOutcome::Inserted);
    const Bytes got(plan.new_opts, plan.new_opts + plan.new_len);
    EXPECT_EQ(got, cat({kOurToa, syn}));
    const auto a = parse_tcp_options(syn), b = parse_tcp_options(got);
    EXPECT_EQ(a.mss, b.mss);
    EXPECT_EQ(a.wscale, b.wscale);
    EXPECT_EQ(a.sack_perm, b.sack_perm);
    EXPECT_EQ(a.timestamp, b.timestamp);
}

TEST(ToaPlan, FullAreaPrunesSackOnlyWhenAllowed) {
    // NOP NOP TS (12) + NOP NOP SACK x3 (28) = 40: no room even without NOPs (8+10+26 = 44).
    const Bytes old = cat({kNopNopTs, {1, 1}, sack(3)});
    ASSERT_EQ(old.size(), 40u);
    const ToaPlan pruned = toa_plan(old, kClientAddr, kClientPort, true);
    EXPECT_EQ(pruned.outcome, ToaOutcome::InsertedPrunedSack);
    EXPECT_EQ(Bytes(pruned.new_opts, pruned.new_opts + pruned.new_len), cat({kOurToa, kNopNopTs}));
    const ToaPlan refused = toa_plan(old, kClientAddr, kClientPort, false);
    EXPECT_EQ(refused.outcome, ToaOutcome::NoRoom);
    EXPECT_EQ(refused.new_len, 0);
}

TEST(ToaPlan, BriefLayoutThirtyEightBytes) {
    // NOP NOP TS + SACK x3 without NOPs = 38, padded to 40.
    const Bytes old = pad4(cat({kNopNopTs, sack(3)}));
    EXPECT_EQ(toa_plan(old, kClientAddr, kClientPort, true).outcome,
              ToaOutcome::InsertedPrunedSack);
    EXPECT_EQ(toa_plan(old, kClientAddr, kClientPort, false).outcome, ToaOutcome::NoRoom);
}

TEST(ToaPlan, NopPruneKeepsAlignmentWhenItFits) {
    // NOP NOP TS, NOP NOP SACK x2, 4 stray NOPs: 36 -> 44 verbatim. Without NOPs, aligned:
    // TOA | NOP NOP TS | NOP NOP SACK x2 = 8 + 12 + 20 = 40.
    const Bytes old = cat({kNopNopTs, {1, 1}, sack(2), {1, 1, 1, 1}});
    ASSERT_EQ(old.size(), 36u);
    const ToaPlan plan = toa_plan(old, kClientAddr, kClientPort, false);
    EXPECT_EQ(plan.outcome, ToaOutcome::InsertedPrunedNop);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len),
              cat({kOurToa, kNopNopTs, {1, 1}, sack(2)}));
}

TEST(ToaPlan, NopPrunePacksUnalignedWhenAlignmentDoesNotFit) {
    // TS, SACK x2 and a 4-byte unknown option (kind 30): packed 8+10+18+4 = 40, aligned 44.
    const Bytes unknown = {30, 4, 0xde, 0xad};
    const Bytes old = cat({kNopNopTs, {1, 1}, sack(2), unknown});
    ASSERT_EQ(old.size(), 36u);
    const ToaPlan plan = toa_plan(old, kClientAddr, kClientPort, false);
    EXPECT_EQ(plan.outcome, ToaOutcome::InsertedPrunedNop);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len),
              cat({kOurToa, kTs, sack(2), unknown}));
}

TEST(ToaPlan, SackPruneReAlignsTimestamp) {
    // Unaligned TS after SACK x3 with no NOPs: 26 + 10 = 36 -> needs SACK pruning.
    const Bytes old = pad4(cat({sack(3), kTs}));
    const ToaPlan plan = toa_plan(old, kClientAddr, kClientPort, true);
    EXPECT_EQ(plan.outcome, ToaOutcome::InsertedPrunedSack);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), cat({kOurToa, kNopNopTs}));
}

TEST(ToaPlan, ForgedToaRemovedOursFirst) {
    const Bytes forged = {254, 8, 0x00, 0x50, 6, 6, 6, 6};
    const Bytes odd_forged = {254, 6, 1, 2, 3, 4};  // RFC 6994-style experiment, also removed
    const Bytes old = pad4(cat({forged, kNopNopTs, odd_forged}));
    const ToaPlan plan = toa_plan(old, kClientAddr, kClientPort, false);
    EXPECT_EQ(plan.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(plan.forged_removed, 2);
    const Bytes got(plan.new_opts, plan.new_opts + plan.new_len);
    EXPECT_EQ(got, cat({kOurToa, kNopNopTs}));
    EXPECT_EQ(count_kind(got, kTcpOptToa), 1u);
}

TEST(ToaPlan, ForgedToaFillingTheAreaMakesRoomForOurs) {
    // Five forged TOAs fill 40 bytes; ours replaces them all.
    Bytes old;
    for (int i = 0; i < 5; ++i) old = cat({old, {254, 8, 0, 1, 1, 1, 1, 1}});
    const ToaPlan plan = toa_plan(old, kClientAddr, kClientPort, false);
    EXPECT_EQ(plan.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(plan.forged_removed, 5);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), kOurToa);
}

TEST(ToaPlan, EarlyEolDropsWhatFollows) {
    // NOP, EOL, then bytes a receiver ignores, including something that looks like a TOA.
    const Bytes old = {1, 0, 254, 8, 9, 9, 9, 9, 9, 9, 0, 0};
    const ToaPlan plan = toa_plan(old, kClientAddr, kClientPort, false);
    EXPECT_EQ(plan.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(plan.forged_removed, 0);  // never seen: it is not an option
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), cat({kOurToa, {1, 0, 0, 0}}));
}

TEST(ToaPlan, LoneNopsKeptVerbatimWhenTheyFit) {
    const Bytes old = {1, 1, 1, 1};
    const ToaPlan plan = toa_plan(old, kClientAddr, kClientPort, false);
    EXPECT_EQ(plan.outcome, ToaOutcome::Inserted);
    EXPECT_EQ(Bytes(plan.new_opts, plan.new_opts + plan.new_len), cat({kOurToa, old}));
    // 40 NOPs: dropped entirely.
    const ToaPlan many = toa_plan(Bytes(40, 1), kClientAddr, kClientPort, false);
    EXPECT_EQ(many.outcome, ToaOutcome::InsertedPrunedNop);
    EXPECT_EQ(Bytes(many.new_opts, many.new_opts + many.new_len), kOurToa);
}

TEST(ToaPlan, NoRoomForUnprunableOptions) {
    // 36 bytes of an unknown option: nothing may be dropped.
    Bytes old = {30, 36};
    old.resize(36, 0x42);
    EXPECT_EQ(toa_plan(old, kClientAddr, kClientPort, true).outcome, ToaOutcome::NoRoom);
    // 32 bytes fit exactly.
    Bytes fits = {30, 32};
    fits.resize(32, 0x42);
    EXPECT_EQ(toa_plan(fits, kClientAddr, kClientPort, true).outcome, ToaOutcome::Inserted);
}

TEST(ToaPlan, MalformedAreas) {
    const Bytes cases[] = {
        {2},                                    // kind without length byte
        {2, 0, 0, 0},                           // length 0
        {2, 1, 0, 0},                           // length 1
        {1, 1, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0},  // TS claims 12 bytes, 10 are left
        {254, 9, 0, 0, 0, 0, 0, 0},             // forged TOA overrunning the area
    };
    for (const auto& old : cases) {
        const ToaPlan plan = toa_plan(old, kClientAddr, kClientPort, true);
        EXPECT_EQ(plan.outcome, ToaOutcome::Malformed);
        EXPECT_EQ(plan.new_len, 0);
    }
    EXPECT_EQ(toa_plan(Bytes(44, 1), kClientAddr, kClientPort, true).outcome,
              ToaOutcome::Malformed);  // more than 40 bytes cannot be a TCP options area
}

TEST(ToaPlan, BudgetBelowFortyBytes) {
    EXPECT_EQ(toa_plan(kNopNopTs, kClientAddr, kClientPort, false, 20).outcome,
              ToaOutcome::Inserted);
    EXPECT_EQ(toa_plan(kNopNopTs, kClientAddr, kClientPort, false, 19).outcome, ToaOutcome::NoRoom);
    EXPECT_EQ(toa_plan({}, kClientAddr, kClientPort, false, 7).outcome, ToaOutcome::NoRoom);
}

TEST(ToaPlan, OutcomeNames) {
    EXPECT_EQ(toa_outcome_name(ToaOutcome::Inserted), "toa_inserted");
    EXPECT_EQ(toa_outcome_name(ToaOutcome::Malformed), "toa_malformed");
    EXPECT_EQ(kToaOutcomeCount, 6u);
}

// ---- toa_insert_ipv4 ----

TEST(ToaInsert, ThirdHandshakeAckWithoutOptions) {
    Packet p = make_packet({}, {}, 64, 0, {}, 0, kTcpAck);
    const ToaResult r = insert_and_check(p, kOurToa, ToaOutcome::Inserted);
    EXPECT_EQ(r.new_pkt_len, 48u);
    EXPECT_EQ(p.tcp()[12], 7 << 4);
    EXPECT_EQ(p.tcp()[13], kTcpAck);
}

TEST(ToaInsert, AckDataWithTimestamps) {
    Packet p = make_packet(kNopNopTs, payload_bytes(517));
    const ToaResult r = insert_and_check(p, cat({kOurToa, kNopNopTs}), ToaOutcome::Inserted);
    EXPECT_EQ(r.new_pkt_len, 20 + 20 + 20 + 517u);  // IPv4, TCP, options, payload
    EXPECT_EQ(r.forged_removed, 0);
}

TEST(ToaInsert, FullMssPayloadMovedIntact) {
    // 1448 = 1500 - 20 - 20 - 12: the client used the whole MSS.
    const Bytes payload = payload_bytes(1448);
    Packet p = make_packet(kNopNopTs, payload, 8);
    insert_and_check(p, cat({kOurToa, kNopNopTs}), ToaOutcome::Inserted);
    EXPECT_EQ(p.payload(), payload);
    EXPECT_EQ(p.total(), 1508u);
}

TEST(ToaInsert, FullMssOverMtuIsTooBigAndUntouched) {
    Packet p = make_packet(kNopNopTs, payload_bytes(1448), 8);
    expect_untouched(p, ToaOutcome::TooBig, 1500);
}

TEST(ToaInsert, CapacityMakesItPruneToFit) {
    // 1 byte of payload, capacity = current length: only SACK pruning keeps it within.
    const Bytes old = cat({kNopNopTs, {1, 1}, sack(1)});  // 24 bytes
    Packet p = make_packet(old, payload_bytes(1), 0);
    const size_t cap = p.len;
    expect_untouched(p, ToaOutcome::TooBig, cap, false);
    const ToaResult r = toa_insert_ipv4(p.ip(), p.len, cap, kClientAddr, kClientPort, true);
    EXPECT_EQ(r.outcome, ToaOutcome::InsertedPrunedSack);
    EXPECT_EQ(p.opts(), cat({kOurToa, kNopNopTs}));
    EXPECT_EQ(r.new_pkt_len, cap - 4);
    expect_checksums_valid(p);
}

TEST(ToaInsert, FortyByteOptionsPruneSackOrNoRoom) {
    const Bytes old = cat({kNopNopTs, {1, 1}, sack(3)});
    const Bytes payload = payload_bytes(300);
    Packet refused = make_packet(old, payload);
    expect_untouched(refused, ToaOutcome::NoRoom, refused.buf.size(), false);

    Packet p = make_packet(old, payload);
    const ToaResult r =
        insert_and_check(p, cat({kOurToa, kNopNopTs}), ToaOutcome::InsertedPrunedSack);
    EXPECT_EQ(r.new_pkt_len, 20 + 20 + 20 + 300u);  // shrank by 20
}

TEST(ToaInsert, ForgedToaReplacedSameLength) {
    // The forged TOA is as long as ours: delta 0.
    const Bytes forged = {254, 8, 0x00, 0x50, 1, 2, 3, 4};
    Packet p = make_packet(cat({forged, kNopNopTs}), payload_bytes(99));
    const size_t before = p.total();
    const ToaResult r = insert_and_check(p, cat({kOurToa, kNopNopTs}), ToaOutcome::Inserted);
    EXPECT_EQ(r.new_pkt_len, before);
    EXPECT_EQ(r.forged_removed, 1);
}

TEST(ToaInsert, ForgedToasRemovedPacketShrinks) {
    // Two forged TOAs + 24 NOPs = 40 -> ours + 24 NOPs = 32: the payload moves back 8 bytes.
    const Bytes old =
        cat({{254, 8, 0, 1, 1, 1, 1, 1}, Bytes(12, 1), {254, 8, 0, 2, 2, 2, 2, 2}, Bytes(12, 1)});
    ASSERT_EQ(old.size(), 40u);
    Packet p = make_packet(old, payload_bytes(1000));
    const ToaResult r = insert_and_check(p, cat({kOurToa, Bytes(24, 1)}), ToaOutcome::Inserted);
    EXPECT_EQ(r.forged_removed, 2);
    EXPECT_EQ(r.new_pkt_len, 20 + 52 + 1000u);
}

TEST(ToaInsert, OddLayouts) {
    {  // EOL first, garbage after it
        Packet p = make_packet({0, 254, 8, 1, 1, 1, 1, 1}, payload_bytes(10));
        insert_and_check(p, kOurToa, ToaOutcome::Inserted);
    }
    {  // lone NOPs
        Packet p = make_packet({1, 1, 1, 1}, payload_bytes(11));
        insert_and_check(p, cat({kOurToa, {1, 1, 1, 1}}), ToaOutcome::Inserted);
    }
    {  // unaligned TS, padded at the end with NOPs
        Packet p = make_packet({8, 10, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1}, payload_bytes(3));
        insert_and_check(p,
                         {254, 8, 0x9c, 0x40, 192, 168, 10, 7, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1},
                         ToaOutcome::Inserted);
    }
}

TEST(ToaInsert, IpOptionsOddAlignmentAndEthernetPadding) {
    // IPv4 header with 4 bytes of options (NOP x3 + EOL), the packet at an odd address, and
    // 6 bytes of Ethernet padding after the total length (a 60-byte minimum frame).
    Packet p = make_packet({}, {}, 32, 1, {1, 1, 1, 0}, 2);
    ASSERT_EQ(p.len, 46u);
    const ToaResult r = insert_and_check(p, kOurToa, ToaOutcome::Inserted);
    EXPECT_EQ(r.new_pkt_len, 52u);
    EXPECT_EQ(p.ip()[20], 1);  // IP options untouched
}

TEST(ToaInsert, BadChecksumStaysBad) {
    Packet p = make_packet(kNopNopTs, payload_bytes(40));
    p.tcp()[17] ^= 0x01;  // corrupt the TCP checksum
    ASSERT_EQ(toa_insert_ipv4(p.ip(), p.len, p.buf.size(), kClientAddr, kClientPort, false).outcome,
              ToaOutcome::Inserted);
    Bytes copy(p.ip(), p.ip() + p.total());
    auto* tcp = reinterpret_cast<TcpHdr*>(copy.data() + 20);
    const uint16_t stored = tcp->checksum;
    tcp->checksum = 0;
    EXPECT_NE(ipv4_l4_checksum(kLocalAddr, kRsAddr, kIpProtoTcp, tcp, copy.size() - 20), stored);
}

TEST(ToaInsert, MalformedPacketsUntouched) {
    {  // malformed TCP options
        Packet p = make_packet({1, 1, 2, 9}, payload_bytes(20));
        expect_untouched(p, ToaOutcome::Malformed, p.buf.size());
    }
    {  // not TCP
        Packet p = make_packet({}, payload_bytes(20));
        p.ip()[9] = kIpProtoUdp;
        expect_untouched(p, ToaOutcome::Malformed, p.buf.size());
    }
    {  // fragment (MF)
        Packet p = make_packet({}, payload_bytes(20));
        store_be16(p.ip() + 6, 0x2000);
        expect_untouched(p, ToaOutcome::Malformed, p.buf.size());
    }
    {  // total length beyond the bytes present
        Packet p = make_packet({}, payload_bytes(20));
        p.len -= 1;
        expect_untouched(p, ToaOutcome::Malformed, p.buf.size());
    }
    {  // total length too short for a TCP header
        Packet p = make_packet({}, {});
        store_be16(p.ip() + 2, 39);
        expect_untouched(p, ToaOutcome::Malformed, p.buf.size());
    }
    {  // doff below 5
        Packet p = make_packet({}, payload_bytes(20));
        p.tcp()[12] = 4 << 4;
        expect_untouched(p, ToaOutcome::Malformed, p.buf.size());
    }
    {  // doff past the segment
        Packet p = make_packet({}, payload_bytes(20));
        p.tcp()[12] = 15 << 4;
        expect_untouched(p, ToaOutcome::Malformed, p.buf.size());
    }
    {  // IPv6 version nibble, IHL below 5, too short
        Packet p = make_packet({}, payload_bytes(20));
        p.ip()[0] = 0x65;
        expect_untouched(p, ToaOutcome::Malformed, p.buf.size());
        p.ip()[0] = 0x44;
        expect_untouched(p, ToaOutcome::Malformed, p.buf.size());
        EXPECT_EQ(toa_insert_ipv4(p.ip(), 19, 100, kClientAddr, kClientPort, true).outcome,
                  ToaOutcome::Malformed);
    }
}

// Random well-formed option areas: every insertion keeps the invariants, every refusal leaves
// the packet alone. A cheap in-tree cousin of tests/fuzz/toa_fuzz.cpp.
TEST(ToaInsert, RandomOptionAreas) {
    std::mt19937 rng(42);
    const Bytes pieces[] = {{1},
                            kTs,
                            sack(1),
                            sack(2),
                            sack(3),
                            sack(4),
                            {2, 4, 5, 0xb4},
                            {3, 3, 7},
                            {4, 2},
                            {254, 8, 0, 1, 2, 3, 4, 5},
                            {254, 2},
                            {30, 5, 1, 2, 3}};
    size_t inserted = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        Bytes opts;
        for (;;) {
            const Bytes& piece = pieces[rng() % std::size(pieces)];
            if (opts.size() + piece.size() > 40) break;
            opts = cat({opts, piece});
            if (rng() % 4 == 0) break;
        }
        opts = pad4(opts);
        if (opts.size() > 40) continue;
        const bool allow = rng() & 1;
        Packet p = make_packet(opts, payload_bytes(rng() % 64), 48);
        const Bytes before = p.buf;
        const size_t cap = p.len + rng() % 48;
        const ToaResult r = toa_insert_ipv4(p.ip(), p.len, cap, kClientAddr, kClientPort, allow);
        ASSERT_NE(r.outcome, ToaOutcome::Malformed);
        if (!toa_inserted(r.outcome)) {
            EXPECT_EQ(p.buf, before);
            continue;
        }
        ++inserted;
        EXPECT_LE(r.new_pkt_len, cap);
        const Bytes got = p.opts();
        EXPECT_EQ(Bytes(got.begin(), got.begin() + 8), kOurToa);
        EXPECT_EQ(count_kind(got, kTcpOptToa), 1u);
        const auto a = parse_tcp_options(opts), b = parse_tcp_options(got);
        EXPECT_EQ(a.mss, b.mss);
        EXPECT_EQ(a.wscale, b.wscale);
        EXPECT_EQ(a.sack_perm, b.sack_perm);
        EXPECT_EQ(a.timestamp, b.timestamp);
        if (r.outcome != ToaOutcome::InsertedPrunedSack) {
            EXPECT_EQ(a.sack_blocks, b.sack_blocks);
        }
        if (!allow) {
            EXPECT_NE(r.outcome, ToaOutcome::InsertedPrunedSack);
        }
        expect_checksums_valid(p);
        for (size_t i = p.offset + cap; i < p.buf.size(); ++i) ASSERT_EQ(p.buf[i], before[i]);
    }
    EXPECT_GT(inserted, 1000u);
}

// ---- toa_clamp_mss / toa_find ----

TEST(ToaClampMss, SynAckMssLoweredByToaLength) {
    const Bytes synack = {2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7};  // MSS 1460
    Packet p = make_packet(synack, {}, 0, 0, {}, 0, kTcpSyn | kTcpAck);
    uint16_t csum;
    std::memcpy(&csum, p.tcp() + 16, 2);
    std::span<uint8_t> opts(p.tcp() + 20, synack.size());
    EXPECT_TRUE(toa_clamp_mss(opts, &csum));
    std::memcpy(p.tcp() + 16, &csum, 2);
    EXPECT_EQ(tcp_find_mss(opts), 1452);
    expect_checksums_valid(p);
    EXPECT_EQ(parse_tcp_options(opts).wscale, 7);
}

TEST(ToaClampMss, NoMssOrTooSmall) {
    Bytes none = {1, 1, 4, 2};
    uint16_t csum = 0x1234;
    EXPECT_FALSE(toa_clamp_mss(none, &csum));
    EXPECT_EQ(csum, 0x1234);
    Bytes tiny = {2, 4, 0, 8};
    EXPECT_FALSE(toa_clamp_mss(tiny, &csum));
    EXPECT_EQ(tiny, (Bytes{2, 4, 0, 8}));
    Bytes small = {2, 4, 0, 9};
    EXPECT_TRUE(toa_clamp_mss(small, nullptr));
    EXPECT_EQ(tcp_find_mss(small), 1);
}

TEST(ToaFind, FirstLengthEightOnly) {
    EXPECT_FALSE(toa_find(kNopNopTs));
    const Bytes opts = {254, 6, 1, 2,   3, 4, 254, 8, 0x00, 0x50, 10,
                        0,   0, 9, 254, 8, 0, 1,   1, 1,    1,    1};
    const auto found = toa_find(opts);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->first, hton32(0x0a000009));
    EXPECT_EQ(found->second, hton16(80));
}

}  // namespace
}  // namespace xvs::net
