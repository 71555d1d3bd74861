// Tests for src/net/sync_wire.cpp: the IPVS sync v1 layout byte for byte (entries written out
// by hand from the field description in net/sync_wire.h), xvs's optional parameters, unknown
// parameters, and every way a message is refused (truncated, oversized, wrong size field).
#include "net/sync_wire.h"

#include <gtest/gtest.h>

#include <vector>

#include "net/byteorder.h"

namespace xvs::net {
namespace {

InetAddr v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    return InetAddr::v4(hton32(uint32_t(a) << 24 | uint32_t(b) << 16 | uint32_t(c) << 8 | d));
}

SyncConn tcp_conn() {
    SyncConn c;
    c.proto = 6;
    c.flags = kIpvsFwdMasq;
    c.state = 1;  // ESTABLISHED
    c.cport = hton16(40000);
    c.vport = hton16(80);
    c.dport = hton16(8080);
    c.fwmark = 0;
    c.timeout_s = 900;
    c.caddr = v4(10, 10, 1, 2);
    c.vaddr = v4(10, 10, 1, 100);
    c.daddr = v4(10, 10, 2, 2);
    return c;
}

// The 36-byte IPv4 entry of tcp_conn(), from the layout.
const std::vector<uint8_t> kTcpEntry = {
    0x00, 0x06, 0x00, 0x24,              // type v4, TCP, version 0 size 36
    0x00, 0x00, 0x00, 0x00,              // flags: masq
    0x00, 0x01, 0x9c, 0x40,              // state 1, cport 40000
    0x00, 0x50, 0x1f, 0x90,              // vport 80, dport 8080
    0x00, 0x00, 0x00, 0x00,              // fwmark
    0x00, 0x00, 0x03, 0x84,              // timeout 900 s
    10,   10,   1,    2,    10, 10, 1, 100, 10, 10, 2, 2,  // caddr vaddr daddr
};

TEST(SyncWire, OneIpv4ConnExactBytes) {
    SyncEncoder enc(7);
    ASSERT_TRUE(enc.add(tcp_conn()));
    std::vector<uint8_t> want = {0x00, 7, 0x00, 44, 1, 1, 0x00, 0x00};  // header, size 8 + 36
    want.insert(want.end(), kTcpEntry.begin(), kTcpEntry.end());
    const auto b = enc.bytes();
    EXPECT_EQ(std::vector<uint8_t>(b.begin(), b.end()), want);
    auto m = sync_decode(b);
    ASSERT_TRUE(m) << m.error();
    EXPECT_EQ(m->syncid, 7);
    ASSERT_EQ(m->conns.size(), 1u);
    EXPECT_EQ(m->conns[0], tcp_conn());
    EXPECT_FALSE(m->has_control);
}

TEST(SyncWire, Ipv6ConnIs72BytesWithAddressesAt24) {
    SyncConn c = tcp_conn();
    c.v6 = true;
    uint8_t a[16] = {0x20, 0x01, 0x0d, 0xb8};
    a[15] = 1;
    c.caddr = InetAddr::v6(a);
    a[15] = 2;
    c.vaddr = InetAddr::v6(a);
    a[15] = 3;
    c.daddr = InetAddr::v6(a);
    c.fwmark = 0x01020304;
    SyncEncoder enc(0);
    ASSERT_TRUE(enc.add(c));
    const auto b = enc.bytes();
    ASSERT_EQ(b.size(), 8u + 72u);
    const uint8_t* e = b.data() + 8;
    EXPECT_EQ(e[0], 1);  // IPv6
    EXPECT_EQ(load_be16(e + 2), 72);
    EXPECT_EQ(load_be32(e + 16), 0x01020304u);
    EXPECT_EQ(e[24], 0x20);
    EXPECT_EQ(e[24 + 15], 1);
    EXPECT_EQ(e[40 + 15], 2);
    EXPECT_EQ(e[56 + 15], 3);
    auto m = sync_decode(b);
    ASSERT_TRUE(m) << m.error();
    ASSERT_EQ(m->conns.size(), 1u);
    EXPECT_EQ(m->conns[0], c);
}

TEST(SyncWire, XvsParametersAreOptionalAndRoundTrip) {
    SyncConn c = tcp_conn();
    c.has_xvs = true;
    c.xvs.mode = 0;
    c.xvs.conn_flags = 0x0101;
    c.xvs.laddr = v4(10, 10, 2, 100);
    c.xvs.lport = hton16(1234);
    c.has_feat = true;
    c.feat = SyncXvsFeat{0x11223344, 0x55667788, hton16(512), 3, 1};
    c.has_synproxy = true;
    c.synproxy = SyncXvsSynproxy{0xdeadbeef, 7, 7, 9};
    SyncEncoder enc(1);
    ASSERT_TRUE(enc.add(c));
    const auto b = enc.bytes();
    const size_t size = 36 + 24 + 14 + 12;
    ASSERT_EQ(b.size(), 8 + size);
    const uint8_t* e = b.data() + 8;
    EXPECT_EQ(load_be16(e + 2), size);
    // The first parameter: type 0x48 (bit 0x40: optional), length 22.
    EXPECT_EQ(e[36], 0x48);
    EXPECT_EQ(e[37], 22);
    EXPECT_EQ(e[36] & kSyncOptOptional, kSyncOptOptional);
    EXPECT_EQ(e[36 + 24], 0x49);
    EXPECT_EQ(e[36 + 24 + 14], 0x4a);
    EXPECT_EQ(load_be32(e + 36 + 24 + 14 + 2), 0xdeadbeefu);
    auto m = sync_decode(b);
    ASSERT_TRUE(m) << m.error();
    ASSERT_EQ(m->conns.size(), 1u);
    EXPECT_EQ(m->conns[0], c);
}

TEST(SyncWire, EntriesArePaddedToFourBytesBetweenThemNotAfterTheLast) {
    SyncConn a = tcp_conn();
    a.has_synproxy = true;  // 36 + 12 = 48: already aligned
    SyncConn b = tcp_conn();
    b.has_feat = true;  // 36 + 14 = 50: 2 bytes of padding before the next
    SyncEncoder enc(1);
    ASSERT_TRUE(enc.add(a));
    ASSERT_TRUE(enc.add(b));
    ASSERT_TRUE(enc.add(tcp_conn()));
    EXPECT_EQ(enc.bytes().size(), 8u + 48 + 50 + 2 + 36);
    EXPECT_EQ(enc.bytes()[4], 3);
    auto m = sync_decode(enc.bytes());
    ASSERT_TRUE(m) << m.error();
    ASSERT_EQ(m->conns.size(), 3u);
    EXPECT_EQ(m->conns[1], b);
    EXPECT_EQ(m->conns[2], tcp_conn());
}

// A message written by hand: an entry with IPVS sequence data, an unknown optional parameter
// (skipped), then an entry with an unknown mandatory one (that conn alone is dropped).
TEST(SyncWire, UnknownOptionalParametersAreSkippedMandatoryDropTheConn) {
    std::vector<uint8_t> e1 = kTcpEntry;
    e1.insert(e1.end(), {0x01, 24});  // sequence data
    for (int i = 0; i < 24; ++i) e1.push_back(static_cast<uint8_t>(i));
    e1.insert(e1.end(), {0x5f, 3, 0xaa, 0xbb, 0xcc});  // unknown, optional
    store_be16(e1.data() + 2, static_cast<uint16_t>(e1.size()));  // 36 + 26 + 5 = 67
    std::vector<uint8_t> e2 = kTcpEntry;
    e2.insert(e2.end(), {0x1f, 2, 0, 0});  // unknown, mandatory
    store_be16(e2.data() + 2, static_cast<uint16_t>(e2.size()));
    std::vector<uint8_t> msg = {0, 9, 0, 0, 3, 1, 0, 0};
    msg.insert(msg.end(), e1.begin(), e1.end());
    msg.push_back(0);  // pad 67 -> 68
    msg.insert(msg.end(), e2.begin(), e2.end());
    msg.insert(msg.end(), kTcpEntry.begin(), kTcpEntry.end());
    store_be16(msg.data() + 2, static_cast<uint16_t>(msg.size()));
    auto m = sync_decode(msg);
    ASSERT_TRUE(m) << m.error();
    EXPECT_EQ(m->conns_skipped, 1u);
    ASSERT_EQ(m->conns.size(), 2u);
    EXPECT_TRUE(m->conns[0].has_seq);
    EXPECT_EQ(m->conns[0].in_seq, (SyncSeq{0x00010203, 0x04050607, 0x08090a0b}));
    EXPECT_EQ(m->conns[0].out_seq.previous_delta, 0x14151617u);
    EXPECT_FALSE(m->conns[0].has_xvs);
    EXPECT_EQ(m->conns[1], tcp_conn());
}

std::vector<uint8_t> one_conn_message() {
    SyncEncoder enc(3);
    EXPECT_TRUE(enc.add(tcp_conn()));
    return {enc.bytes().begin(), enc.bytes().end()};
}

TEST(SyncWire, TruncatedMessagesAreRefused) {
    const auto msg = one_conn_message();
    for (size_t n = 0; n < msg.size(); ++n) {
        std::vector<uint8_t> cut(msg.begin(), msg.begin() + static_cast<ptrdiff_t>(n));
        EXPECT_FALSE(sync_decode(cut)) << n << " bytes";
        if (n >= 4) {
            store_be16(cut.data() + 2, static_cast<uint16_t>(n));  // consistent size field
            EXPECT_FALSE(sync_decode(cut)) << n << " bytes, size field fixed";
        }
    }
}

TEST(SyncWire, OversizedOrInconsistentMessagesAreRefused) {
    auto msg = one_conn_message();
    auto longer = msg;
    longer.push_back(0);  // one byte more than the size field says
    EXPECT_FALSE(sync_decode(longer));
    std::vector<uint8_t> huge(kSyncMaxMessage + 1, 0);
    huge[5] = 1;
    store_be16(huge.data() + 2, static_cast<uint16_t>(huge.size()));
    auto r = sync_decode(huge);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("more than 9000"), std::string::npos) << r.error();
    auto big_entry = msg;
    store_be16(big_entry.data() + 8 + 2, 40);  // entry claims 40 bytes, 36 are there
    EXPECT_FALSE(sync_decode(big_entry));
    auto small_entry = msg;
    store_be16(small_entry.data() + 8 + 2, 30);  // less than the fixed part
    EXPECT_FALSE(sync_decode(small_entry));
    auto ver = msg;
    ver[8 + 2] |= 0x10;  // entry version 1
    EXPECT_FALSE(sync_decode(ver));
    auto v0 = msg;
    v0[0] = 1;  // reserved byte set: a version 0 message
    EXPECT_FALSE(sync_decode(v0));
    auto type = msg;
    type[8] = 2;
    EXPECT_FALSE(sync_decode(type));
}

TEST(SyncWire, MalformedParametersRefuseTheMessage) {
    std::vector<uint8_t> e = kTcpEntry;
    e.insert(e.end(), {0x48, 0});  // length 0
    store_be16(e.data() + 2, static_cast<uint16_t>(e.size()));
    std::vector<uint8_t> msg = {0, 0, 0, 0, 1, 1, 0, 0};
    msg.insert(msg.end(), e.begin(), e.end());
    store_be16(msg.data() + 2, static_cast<uint16_t>(msg.size()));
    EXPECT_FALSE(sync_decode(msg));
    msg[8 + 37] = 30;  // past the entry
    EXPECT_FALSE(sync_decode(msg));
    msg[8 + 37] = 2;  // xvs conn parameter of the wrong length
    msg.insert(msg.end(), {0, 0});
    store_be16(msg.data() + 8 + 2, 40);
    store_be16(msg.data() + 2, static_cast<uint16_t>(msg.size()));
    auto r = sync_decode(msg);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("not 22"), std::string::npos) << r.error();
}

TEST(SyncWire, EncoderStopsAtTheMessageSize) {
    SyncEncoder enc(1, 8 + 36 * 3 + 8);  // below the floor: clamped up to hold one v6 entry
    unsigned n = 0;
    while (enc.add(tcp_conn())) ++n;
    EXPECT_GE(n, 5u);
    EXPECT_LE(enc.bytes().size(), 8u + 72 + 128);
    SyncEncoder full(1);
    unsigned m = 0;
    while (full.add(tcp_conn())) ++m;
    EXPECT_EQ(m, (kSyncDefaultMessage - 8) / 36);  // 40 entries of 36 bytes in 1472
    EXPECT_LE(full.bytes().size(), kSyncDefaultMessage);
    full.reset();
    EXPECT_EQ(full.bytes().size(), 8u);
    EXPECT_EQ(full.bytes()[4], 0);
}

TEST(SyncWire, ControlMessageIsAnEmptyIpvsMessageWithATrailer) {
    SyncControl c;
    c.kind = SyncControlKind::resync_request;
    c.role = SyncRole::backup;
    c.flags = kSyncControlActive;
    c.node_id = 0x0a0a010c;
    c.seq = 42;
    c.laddrs = {v4(10, 10, 2, 102), v4(10, 10, 2, 103)};
    const auto b = sync_encode_control(5, c);
    ASSERT_EQ(b.size(), 8u + 16 + 32);
    const std::vector<uint8_t> head = {0, 5, 0, 56, 0, 1, 0, 0, 'X', 'V', 'S', 'c', 2, 2, 1, 2};
    EXPECT_EQ(std::vector<uint8_t>(b.begin(), b.begin() + 16), head);
    auto m = sync_decode(b);
    ASSERT_TRUE(m) << m.error();
    EXPECT_TRUE(m->conns.empty());
    ASSERT_TRUE(m->has_control);
    EXPECT_EQ(m->control, c);
    auto bad = b;
    bad[8 + 7] = 3;  // three addresses announced, two there
    EXPECT_FALSE(sync_decode(bad));
}

}  // namespace
}  // namespace xvs::net
