// Packet tests: UOA (UDP option of address) in FULLNAT UDP — the client address and port on the
// first uoa_max_trail client->RS datagrams of a flow, as a protocol-248 header (opp) or an IPv4
// option (ipo), plain datagrams after that; a datagram with no room (MTU, mbuf tailroom, IPv4
// option space) is preceded by an empty datagram carrying UOA and forwarded unchanged. Expected
// frames are built from plain ones by inserting the bytes by hand, and every checksum is
// recomputed here from scratch (not by the data plane's helpers).
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstring>

#include "fixture/pipeline.h"
#include "lb/service.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 33000;  // 0x80e8
// {code 31, len 8, client port 33000, client 10.10.1.2}
const Bytes kUoaOpt = {31, 8, 0x80, 0xe8, 10, 10, 1, 2};
// opp header: version 1 (high nibble), protocol UDP, length 12, then the option.
const Bytes kOppHdr = {0x10, 17, 0x00, 0x0c};

enum class Mode { Opp, Ipo };

// RFC 1071 sum, written out here so the test does not trust net/checksum.
uint32_t sum16(const uint8_t* p, size_t n, uint32_t sum = 0) {
    for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(p[i]) << 8 | p[i + 1];
    if (n & 1) sum += uint32_t(p[n - 1]) << 8;
    return sum;
}
uint16_t fold(uint32_t sum) {
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}
void put16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
uint16_t get16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

// A plain Ethernet/IPv4/UDP frame with UOA inserted as the RS must see it: IP length, IHL or
// protocol and the IP checksum fixed; the UDP header and its checksum untouched.
Bytes with_uoa(Bytes f, Mode mode) {
    const size_t ihl = (f[14] & 0x0f) * 4;
    Bytes ins = mode == Mode::Opp ? kOppHdr : Bytes{};
    ins.insert(ins.end(), kUoaOpt.begin(), kUoaOpt.end());
    // ipo goes right after the fixed header (ahead of any option); opp after all options.
    const size_t at = 14 + (mode == Mode::Ipo ? 20 : ihl);
    f.insert(f.begin() + static_cast<long>(at), ins.begin(), ins.end());
    uint8_t* ip = f.data() + 14;
    put16(ip + 2, static_cast<uint16_t>(get16(ip + 2) + ins.size()));
    if (mode == Mode::Ipo)
        ip[0] = static_cast<uint8_t>(0x40 | ((ihl + 8) / 4));
    else
        ip[9] = 248;
    put16(ip + 10, 0);
    put16(ip + 10, fold(sum16(ip, (ip[0] & 0x0f) * 4)));
    return f;
}

// Checks the IP header checksum and the UDP checksum (pseudo-header with protocol 17, as the RS
// computes it once the UOA module took the opp header out) by full recomputation.
::testing::AssertionResult ChecksumsValid(const Bytes& f) {
    const uint8_t* ip = f.data() + 14;
    const size_t ihl = (ip[0] & 0x0f) * 4;
    if (fold(sum16(ip, ihl)) != 0) return ::testing::AssertionFailure() << "bad IP checksum";
    size_t udp_at = 14 + ihl;
    if (ip[9] == 248)
        udp_at += get16(f.data() + udp_at + 2);
    else if (ip[9] != 17)
        return ::testing::AssertionFailure() << "protocol " << int(ip[9]);
    const uint8_t* udp = f.data() + udp_at;
    const uint16_t udp_len = get16(udp + 4);
    if (udp_at + udp_len != size_t{14} + get16(ip + 2) || udp_at + udp_len > f.size())
        return ::testing::AssertionFailure() << "UDP length " << udp_len << " inconsistent";
    if (get16(udp + 6) == 0) return ::testing::AssertionSuccess();  // no checksum
    uint32_t sum = sum16(ip + 12, 8);
    sum += 17 + udp_len;
    if (fold(sum16(udp, udp_len, sum)) != 0)
        return ::testing::AssertionFailure() << "bad UDP checksum";
    return ::testing::AssertionSuccess();
}

class UoaTest : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
    }
    void start(Mode mode, std::optional<uint8_t> max_trail = std::nullopt) {
        mode_ = mode;
        const uint32_t flag = mode == Mode::Opp ? lb::kSvcFlagUoaOpp : lb::kSvcFlagUoaIpo;
        ASSERT_TRUE(director
                        ->service_edit(lb::ServiceSpec{17, *net::parse_ipv4("10.10.1.100"), 53,
                                                       "rr", lb::FwdMode::FullNat, flag})
                        .ok());
        if (max_trail) director->uoa_max_trail_set(*max_trail);
        director->commit();
        start_worker();
        learn_neighbours();
    }

    PacketBuilder client_builder(const std::string& data) {
        PacketBuilder b;
        b.eth(kClientMac, wan_mac()).ipv4("10.10.1.2", "10.10.1.100").udp(kCport, 53).payload(data);
        return b;
    }
    Bytes client(const std::string& data) { return client_builder(data).build(); }
    PacketBuilder to_rs_builder(const std::string& data) {
        PacketBuilder b;
        b.eth(lan_mac(), rs_mac_).ipv4("10.10.2.100", rs_).udp(lport_, 5353).payload(data);
        return b;
    }
    Bytes to_rs(const std::string& data) { return to_rs_builder(data).build(); }
    // The empty datagram xvs builds: IP id 0, no DF, TTL 64, no payload.
    Bytes empty_to_rs() {
        return with_uoa(PacketBuilder()
                            .eth(lan_mac(), rs_mac_)
                            .ipv4("10.10.2.100", rs_)
                            .ip_id(0)
                            .frag_off(0)
                            .ttl(64)
                            .udp(lport_, 5353)
                            .build(),
                        mode_);
    }

    // Learns the RS and local port from the first frame to the RS (UDP sits after the UOA).
    void learn_flow(const Bytes& out, bool has_uoa) {
        const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out.data() + 14);
        size_t udp_at = 14 + ip4->header_len();
        if (has_uoa && mode_ == Mode::Opp) udp_at += 12;
        rs_ = ip4->daddr == ip("10.10.2.2") ? "10.10.2.2" : "10.10.2.3";
        rs_mac_ = ip4->daddr == ip("10.10.2.2") ? kRs1Mac : kRs2Mac;
        lport_ = get16(out.data() + udp_at);
    }

    // Sends `frame` in an mbuf with only `tailroom` bytes after it.
    void send_with_tailroom(const Bytes& frame, uint16_t tailroom) {
        rte_mbuf* m = rte_pktmbuf_alloc(DpdkEnvironment::pool());
        ASSERT_NE(m, nullptr);
        m->data_off = static_cast<uint16_t>(m->buf_len - frame.size() - tailroom);
        // PMDs deliver frames at an even offset and the header structs are 2-byte aligned;
        // an odd start would test a frame no NIC hands us (UBSan: misaligned EtherHdr).
        ASSERT_EQ(m->data_off % 2, 0) << "pick an even frame size + tailroom";
        char* d = rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size()));
        ASSERT_NE(d, nullptr);
        std::memcpy(d, frame.data(), frame.size());
        ASSERT_EQ(rte_pktmbuf_tailroom(m), tailroom);
        ASSERT_EQ(rte_ring_enqueue(DpdkEnvironment::rx_ring(kWan), m), 0);
    }

    // The first three datagrams carry UOA, the fourth and later do not; RS replies unchanged.
    void first_three_then_plain() {
        auto out = roundtrip(kWan, client("query-1"), kLan);
        ASSERT_EQ(out.size(), 1u);
        learn_flow(out[0], true);
        EXPECT_TRUE(FramesEqual(with_uoa(to_rs("query-1"), mode_), out[0]));
        EXPECT_TRUE(ChecksumsValid(out[0]));
        for (const char* q : {"query-2", "query-3"}) {
            out = roundtrip(kWan, client(q), kLan);
            ASSERT_EQ(out.size(), 1u);
            EXPECT_TRUE(FramesEqual(with_uoa(to_rs(q), mode_), out[0])) << q;
            EXPECT_TRUE(ChecksumsValid(out[0]));
        }
        for (const char* q : {"query-4", "query-5"}) {
            out = roundtrip(kWan, client(q), kLan);
            ASSERT_EQ(out.size(), 1u);
            EXPECT_TRUE(FramesEqual(to_rs(q), out[0])) << q;
        }
        // RS -> client: untouched by UOA, plain FULLNAT.
        Bytes reply = PacketBuilder()
                          .eth(rs_mac_, lan_mac())
                          .ipv4(rs_, "10.10.2.100")
                          .udp(5353, lport_)
                          .payload("answer")
                          .build();
        Bytes to_client = PacketBuilder()
                              .eth(wan_mac(), kClientMac)
                              .ipv4("10.10.1.100", "10.10.1.2")
                              .udp(53, kCport)
                              .payload("answer")
                              .build();
        out = roundtrip(kLan, reply, kWan);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(to_client, out[0]));
        EXPECT_EQ(counter(Counter::uoa_inserted), 3u);
        EXPECT_EQ(counter(Counter::uoa_empty_sent), 0u);
    }

    Mode mode_ = Mode::Opp;
    const char* rs_ = "10.10.2.2";
    net::MacAddr rs_mac_ = kRs1Mac;
    uint16_t lport_ = 0;
};

TEST_F(UoaTest, ExactOppBytes) {
    // One frame written out in full, so the helper above cannot hide a shared mistake.
    start(Mode::Opp);
    auto out = roundtrip(kWan, client("x"), kLan);
    ASSERT_EQ(out.size(), 1u);
    learn_flow(out[0], true);
    Bytes ip_and_up(out[0].begin() + 14, out[0].end());
    const uint8_t rs_last = std::string(rs_) == "10.10.2.2" ? 2 : 3;
    Bytes expected = {0x45,
                      0x00,
                      0x00,
                      0x29,
                      0x12,
                      0x34,
                      0x40,
                      0x00,
                      64,
                      248,
                      0x00,
                      0x00,
                      10,
                      10,
                      2,
                      100,
                      10,
                      10,
                      2,
                      rs_last,
                      0x10,
                      17,
                      0x00,
                      0x0c,
                      31,
                      8,
                      0x80,
                      0xe8,
                      10,
                      10,
                      1,
                      2,
                      static_cast<uint8_t>(lport_ >> 8),
                      static_cast<uint8_t>(lport_),
                      0x14,
                      0xe9,
                      0x00,
                      0x09,
                      0x00,
                      0x00,
                      'x'};
    put16(expected.data() + 10, fold(sum16(expected.data(), 20)));
    // UDP checksum over the pseudo-header LIP, RS, 17, 9 and the 9 UDP bytes (checksum 0).
    uint32_t sum = sum16(expected.data() + 12, 8) + 17 + 9;
    put16(expected.data() + 32 + 6, fold(sum16(expected.data() + 32, 9, sum)));
    EXPECT_TRUE(FramesEqual(expected, ip_and_up));
}

TEST_F(UoaTest, MaxTrailIsConfigurable) {
    start(Mode::Opp, 1);
    auto out = roundtrip(kWan, client("a"), kLan);
    ASSERT_EQ(out.size(), 1u);
    learn_flow(out[0], true);
    EXPECT_TRUE(FramesEqual(with_uoa(to_rs("a"), Mode::Opp), out[0]));
    out = roundtrip(kWan, client("b"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs("b"), out[0]));
    EXPECT_EQ(counter(Counter::uoa_inserted), 1u);
}

TEST_F(UoaTest, MaxTrailFive) {
    start(Mode::Ipo, 5);
    auto out = roundtrip(kWan, client("q"), kLan);
    ASSERT_EQ(out.size(), 1u);
    learn_flow(out[0], true);
    for (int i = 1; i < 7; ++i) {
        out = roundtrip(kWan, client("q"), kLan);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(i < 5 ? with_uoa(to_rs("q"), Mode::Ipo) : to_rs("q"), out[0])) << i;
    }
    EXPECT_EQ(counter(Counter::uoa_inserted), 5u);
}

TEST_F(UoaTest, MaxTrailZeroSendsNone) {
    start(Mode::Opp, 0);
    auto out = roundtrip(kWan, client("a"), kLan);
    ASSERT_EQ(out.size(), 1u);
    learn_flow(out[0], false);
    EXPECT_TRUE(FramesEqual(to_rs("a"), out[0]));
    EXPECT_EQ(counter(Counter::uoa_inserted), 0u);
}

TEST_F(UoaTest, ServiceWithoutUoaIsUnchanged) {
    director->commit();
    start_worker();
    learn_neighbours();
    auto out = roundtrip(kWan, client("a"), kLan);
    ASSERT_EQ(out.size(), 1u);
    learn_flow(out[0], false);
    EXPECT_TRUE(FramesEqual(to_rs("a"), out[0]));
    EXPECT_EQ(counter(Counter::uoa_inserted), 0u);
}

class UoaModeTest : public UoaTest, public testing::WithParamInterface<Mode> {};

TEST_P(UoaModeTest, ZeroUdpChecksumStaysZero) {
    const Mode mode = GetParam();
    start(mode);
    auto out = roundtrip(kWan, client_builder("nocsum").udp_no_checksum().build(), kLan);
    ASSERT_EQ(out.size(), 1u);
    learn_flow(out[0], true);
    EXPECT_TRUE(
        FramesEqual(with_uoa(to_rs_builder("nocsum").udp_no_checksum().build(), mode), out[0]));
    const size_t udp_at = 14 + 20 + 8 + (mode == Mode::Opp ? 4 : 0);
    EXPECT_EQ(get16(out[0].data() + udp_at + 6), 0u);
    EXPECT_TRUE(ChecksumsValid(out[0]));
}

// A datagram of exactly the MTU: UOA cannot grow it, so an empty datagram carrying UOA goes
// first and the datagram follows unchanged; it still counts as one of the first three.
TEST_P(UoaModeTest, MtuSizedDatagramGetsAnEmptyDatagramFirst) {
    const Mode mode = GetParam();
    start(mode);
    const std::string big(1500 - 28, 'm');
    auto out = roundtrip(kWan, client(big), kLan);
    ASSERT_EQ(out.size(), 2u);
    learn_flow(out[1], false);
    EXPECT_TRUE(FramesEqual(empty_to_rs(), out[0]));
    EXPECT_TRUE(ChecksumsValid(out[0]));
    EXPECT_EQ(out[0].size(), mode == Mode::Opp ? 54u : 50u);
    EXPECT_TRUE(FramesEqual(to_rs(big), out[1]));
    EXPECT_EQ(out[1].size(), 1514u);
    EXPECT_EQ(counter(Counter::uoa_fail_mtu), 1u);
    EXPECT_EQ(counter(Counter::uoa_empty_sent), 1u);
    // Seven bytes under the limit still has no room for 8 or 12 more; a small one has.
    out = roundtrip(kWan, client(std::string(1500 - 28 - 7, 'n')), kLan);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(FramesEqual(empty_to_rs(), out[0]));
    out = roundtrip(kWan, client("small"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(with_uoa(to_rs("small"), mode), out[0]));
    EXPECT_EQ(counter(Counter::uoa_empty_sent), 2u);
    EXPECT_EQ(counter(Counter::uoa_inserted), 1u);
    // The trail is spent: a fourth datagram, even a big one, goes plain and alone.
    out = roundtrip(kWan, client(big), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(big), out[0]));
}

TEST_P(UoaModeTest, FirstThreeDatagramsCarryUoaThenPlain) {
    start(GetParam());
    first_three_then_plain();
}

INSTANTIATE_TEST_SUITE_P(Modes, UoaModeTest, testing::Values(Mode::Opp, Mode::Ipo),
                         [](const testing::TestParamInfo<Mode>& i) {
                             return std::string(i.param == Mode::Opp ? "opp" : "ipo");
                         });

TEST_F(UoaTest, LargestDatagramThatFitsGetsUoaInPlace) {
    start(Mode::Opp);
    const std::string data(1500 - 28 - 12, 'f');
    auto out = roundtrip(kWan, client(data), kLan);
    ASSERT_EQ(out.size(), 1u);
    learn_flow(out[0], true);
    EXPECT_TRUE(FramesEqual(with_uoa(to_rs(data), Mode::Opp), out[0]));
    EXPECT_EQ(out[0].size(), 1514u);
    EXPECT_TRUE(ChecksumsValid(out[0]));
}

TEST_F(UoaTest, NoTailroomGetsAnEmptyDatagramFirst) {
    start(Mode::Opp);
    send_with_tailroom(client("tight!"), 4);  // even length, so the frame starts 2-aligned
    poll();
    auto out = recv(kLan);
    ASSERT_EQ(out.size(), 2u);
    learn_flow(out[1], false);
    EXPECT_TRUE(FramesEqual(empty_to_rs(), out[0]));
    EXPECT_TRUE(FramesEqual(to_rs("tight!"), out[1]));
    EXPECT_EQ(counter(Counter::uoa_fail_no_room), 1u);
    EXPECT_EQ(counter(Counter::uoa_empty_sent), 1u);
    // Exactly enough room: in place.
    send_with_tailroom(client("fits"), 12);
    poll();
    out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(with_uoa(to_rs("fits"), Mode::Opp), out[0]));
}

// Ethernet padding of a short frame is not part of the datagram: UOA goes in front of the UDP
// header and the padding is gone.
TEST_F(UoaTest, EthernetPaddingIsDropped) {
    start(Mode::Ipo);
    Bytes padded = client("p");
    padded.resize(60, 0);
    auto out = roundtrip(kWan, padded, kLan);
    ASSERT_EQ(out.size(), 1u);
    learn_flow(out[0], true);
    EXPECT_TRUE(FramesEqual(with_uoa(to_rs("p"), Mode::Ipo), out[0]));
}

// Inserts `opts` (a multiple of 4 bytes) as IPv4 options of a plain frame.
Bytes with_ip_options(Bytes f, const Bytes& opts) {
    f.insert(f.begin() + 34, opts.begin(), opts.end());
    uint8_t* ip = f.data() + 14;
    ip[0] = static_cast<uint8_t>(0x40 | (5 + opts.size() / 4));
    put16(ip + 2, static_cast<uint16_t>(get16(ip + 2) + opts.size()));
    put16(ip + 10, 0);
    put16(ip + 10, fold(sum16(ip, 20 + opts.size())));
    return f;
}

// ipo needs 8 bytes of option space: with 36 bytes of options already there (IHL 14) it
// cannot be inserted, so the empty datagram carries it; with 32 (IHL 13) it goes first.
TEST_F(UoaTest, IpoWithoutOptionSpaceGetsAnEmptyDatagramFirst) {
    start(Mode::Ipo);
    const Bytes nops36(36, 1);
    auto out = roundtrip(kWan, with_ip_options(client("opt"), nops36), kLan);
    ASSERT_EQ(out.size(), 2u);
    learn_flow(out[1], false);
    EXPECT_TRUE(FramesEqual(empty_to_rs(), out[0]));
    EXPECT_TRUE(FramesEqual(with_ip_options(to_rs("opt"), nops36), out[1]));
    EXPECT_EQ(counter(Counter::uoa_fail_ip_options), 1u);
    const Bytes nops32(32, 1);
    out = roundtrip(kWan, with_ip_options(client("opt"), nops32), kLan);
    ASSERT_EQ(out.size(), 1u);
    Bytes expected = with_uoa(with_ip_options(to_rs("opt"), nops32), Mode::Ipo);
    EXPECT_TRUE(FramesEqual(expected, out[0]));
    EXPECT_EQ(out[0][14], 0x4f);
    EXPECT_TRUE(ChecksumsValid(out[0]));
}

// opp keeps the client's IP options and goes after them.
TEST_F(UoaTest, OppGoesAfterIpOptions) {
    start(Mode::Opp);
    const Bytes nops(8, 1);
    auto out = roundtrip(kWan, with_ip_options(client("o"), nops), kLan);
    ASSERT_EQ(out.size(), 1u);
    learn_flow(out[0], true);
    EXPECT_TRUE(FramesEqual(with_uoa(with_ip_options(to_rs("o"), nops), Mode::Opp), out[0]));
    EXPECT_TRUE(ChecksumsValid(out[0]));
}

TEST_F(UoaTest, EachFlowHasItsOwnTrail) {
    start(Mode::Opp, 1);
    auto out = roundtrip(kWan, client("a"), kLan);
    ASSERT_EQ(out.size(), 1u);
    learn_flow(out[0], true);
    EXPECT_TRUE(FramesEqual(with_uoa(to_rs("a"), Mode::Opp), out[0]));
    // A second client port: a new connection, a new trail.
    Bytes other = PacketBuilder()
                      .eth(kClientMac, wan_mac())
                      .ipv4("10.10.1.2", "10.10.1.100")
                      .udp(kCport + 1, 53)
                      .payload("b")
                      .build();
    out = roundtrip(kWan, other, kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0][14 + 9], 248);
    EXPECT_EQ(get16(out[0].data() + 14 + 20 + 6), kCport + 1);
    EXPECT_TRUE(ChecksumsValid(out[0]));
    EXPECT_EQ(counter(Counter::uoa_inserted), 2u);
}

}  // namespace
}  // namespace xvs::test
