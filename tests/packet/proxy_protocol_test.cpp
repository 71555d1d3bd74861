// Packet tests: PROXY protocol v1/v2 in FULLNAT TCP — the header inserted in front of the
// client's first payload byte (the segment keeps its seq), later client segments shifted up by
// the header length, RS acks and SACK edges shifted back down, a retransmitted first segment
// carrying the header again; server-speaks-first (the handshake ACK is followed by a separate
// header segment, retransmitted until the RS acks it); the shift holds from the start, so a
// segment overtaking the first one is shifted before the header went out; a first segment with
// no room for the header gets it as its own segment ahead; RST at ISN + 1; UDP v2 (header in
// front of the first datagram).
#include "fixture/pipeline.h"
#include "lb/service.h"
#include "net/checksum.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 40000;
constexpr uint8_t kAck = net::kTcpAck;
constexpr uint8_t kAckPsh = net::kTcpAck | net::kTcpPsh;
const Bytes kSynOpts = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};
const Bytes kSynAckOpts = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 1, 1, 3, 3, 7};
const std::string kV1 = "PROXY TCP4 10.10.1.2 10.10.1.100 40000 80\r\n";  // 43 bytes
const Bytes kV2Tcp = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
                      0x21, 0x11, 0x00, 0x0c, 10, 10, 1, 2, 10, 10, 1, 100, 0x9c, 0x40, 0x00, 0x50};

Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

class ProxyProtocolTest : public PipelineTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
    }
    void start(uint32_t flags) {
        ASSERT_TRUE(director->service_edit(lb::ServiceSpec{6, *net::parse_ipv4("10.10.1.100"), 80, "rr",
                                                           lb::FwdMode::FullNat, flags})
                        .ok());
        director->commit();
        start_worker();
        learn_neighbours();
        hdr_ = (flags & lb::kSvcFlagPpV1) ? bytes(kV1) : (flags & lb::kSvcFlagPpV2) ? kV2Tcp : Bytes{};
    }

    Bytes client(uint32_t seq, uint32_t ack, uint8_t flags, Bytes data = {}, Bytes opts = {}) {
        return PacketBuilder().eth(kClientMac, wan_mac()).ipv4("10.10.1.2", "10.10.1.100")
            .tcp(kCport, 80).seq(seq).ack(ack).flags(flags).tcp_options(std::move(opts))
            .payload(std::move(data)).build();
    }
    Bytes to_rs(uint32_t seq, uint32_t ack, uint8_t flags, Bytes data = {}, Bytes opts = {},
                uint16_t ip_id = 0x1234) {
        return PacketBuilder().eth(lan_mac(), rs_mac_).ipv4("10.10.2.100", rs_).ip_id(ip_id)
            .tcp(lport_, 8080).seq(seq).ack(ack).flags(flags).tcp_options(std::move(opts))
            .payload(std::move(data)).build();
    }
    Bytes rs(uint32_t seq, uint32_t ack, uint8_t flags, Bytes data = {}, Bytes opts = {}) {
        return PacketBuilder().eth(rs_mac_, lan_mac()).ipv4(rs_, "10.10.2.100")
            .tcp(8080, lport_).seq(seq).ack(ack).flags(flags).tcp_options(std::move(opts))
            .payload(std::move(data)).build();
    }
    Bytes to_client(uint32_t seq, uint32_t ack, uint8_t flags, Bytes data = {}, Bytes opts = {}) {
        return PacketBuilder().eth(wan_mac(), kClientMac).ipv4("10.10.1.100", "10.10.1.2")
            .tcp(80, kCport).seq(seq).ack(ack).flags(flags).tcp_options(std::move(opts))
            .payload(std::move(data)).build();
    }

    // The SYN passes unchanged; the SYN-ACK's MSS is lowered by the header length.
    void handshake() {
        auto out = roundtrip(kWan, client(1000, 0, net::kTcpSyn, {}, kSynOpts), kLan);
        ASSERT_EQ(out.size(), 1u);
        const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
        const auto* tcp = reinterpret_cast<const net::TcpHdr*>(out[0].data() + 34);
        rs_ = ip4->daddr == ip("10.10.2.2") ? "10.10.2.2" : "10.10.2.3";
        rs_mac_ = ip4->daddr == ip("10.10.2.2") ? kRs1Mac : kRs2Mac;
        lport_ = net::ntoh16(tcp->sport);
        ASSERT_TRUE(FramesEqual(to_rs(1000, 0, net::kTcpSyn, {}, kSynOpts), out[0]));
        out = roundtrip(kLan, rs(5000, 1001, net::kTcpSyn | net::kTcpAck, {}, kSynAckOpts), kWan);
        ASSERT_EQ(out.size(), 1u);
        Bytes clamped = kSynAckOpts;  // MSS 1460 - header length
        const uint16_t mss = static_cast<uint16_t>(1460 - hdr_.size());
        clamped[2] = uint8_t(mss >> 8);
        clamped[3] = uint8_t(mss);
        ASSERT_TRUE(FramesEqual(to_client(5000, 1001, net::kTcpSyn | net::kTcpAck, {}, clamped), out[0]));
        EXPECT_EQ(counter(Counter::pp_mss_clamped), hdr_.empty() ? 0u : 1u);
    }
    Bytes forward(const Bytes& from_client) {
        auto out = roundtrip(kWan, from_client, kLan);
        EXPECT_EQ(out.size(), 1u);
        return out.empty() ? Bytes{} : out[0];
    }
    Bytes back(const Bytes& from_rs) {
        auto out = roundtrip(kLan, from_rs, kWan);
        EXPECT_EQ(out.size(), 1u);
        return out.empty() ? Bytes{} : out[0];
    }

    // Header in the first data segment, then the whole shifted conversation.
    void first_data_segment_carries_header() {
        handshake();
        const uint32_t d = static_cast<uint32_t>(hdr_.size());
        EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, kAckPsh, cat(hdr_, bytes("GET /"))),
                                forward(client(1001, 5001, kAckPsh, bytes("GET /")))));
        EXPECT_EQ(counter(Counter::pp_inserted), 1u);
        // Later client data: seq + d.
        EXPECT_TRUE(FramesEqual(to_rs(1006 + d, 5001, kAckPsh, bytes(" HTTP/1.0")),
                                forward(client(1006, 5001, kAckPsh, bytes(" HTTP/1.0")))));
        // RS acks everything: ack - d for the client; RS seq untouched.
        EXPECT_TRUE(FramesEqual(to_client(5001, 1015, kAckPsh, bytes("200 OK")),
                                back(rs(5001, 1015 + d, kAckPsh, bytes("200 OK")))));
        // Pure ACK from the client is shifted too.
        EXPECT_TRUE(FramesEqual(to_rs(1015 + d, 5007, kAck), forward(client(1015, 5007, kAck))));
        // SACK blocks from the RS come back in client sequence space.
        const Bytes sack_rs = {1, 1, 5, 10, 0, 0, 0x04, 0x4c + 0, 0, 0, 0x04, 0xb0};
        Bytes sack_rs_shifted = sack_rs;
        auto put32 = [](Bytes& b, size_t at, uint32_t v) {
            b[at] = uint8_t(v >> 24); b[at + 1] = uint8_t(v >> 16); b[at + 2] = uint8_t(v >> 8); b[at + 3] = uint8_t(v);
        };
        put32(sack_rs_shifted, 4, 1100 + d);
        put32(sack_rs_shifted, 8, 1200 + d);
        Bytes sack_client = sack_rs;
        put32(sack_client, 4, 1100);
        put32(sack_client, 8, 1200);
        EXPECT_TRUE(FramesEqual(to_client(5007, 1015, kAck, {}, sack_client),
                                back(rs(5007, 1015 + d, kAck, {}, sack_rs_shifted))));
        // Client FIN: shifted.
        EXPECT_TRUE(FramesEqual(to_rs(1015 + d, 5007, net::kTcpFin | kAck),
                                forward(client(1015, 5007, net::kTcpFin | kAck))));
        EXPECT_TRUE(FramesEqual(to_client(5007, 1016, kAck), back(rs(5007, 1016 + d, kAck))));
        EXPECT_EQ(counter(Counter::pp_inserted), 1u);
        EXPECT_EQ(counter(Counter::pp_header_segment_sent), 0u);
    }

    Bytes hdr_;
    const char* rs_ = "";
    net::MacAddr rs_mac_{};
    uint16_t lport_ = 0;
};

TEST_F(ProxyProtocolTest, V1HeaderInFirstDataSegmentAndShiftedStream) {
    start(lb::kSvcFlagPpV1);
    ASSERT_EQ(hdr_.size(), 43u);
    first_data_segment_carries_header();
}

TEST_F(ProxyProtocolTest, V2HeaderInFirstDataSegmentAndShiftedStream) {
    start(lb::kSvcFlagPpV2);
    first_data_segment_carries_header();
}

TEST_F(ProxyProtocolTest, RetransmittedFirstSegmentCarriesTheHeaderAgain) {
    start(lb::kSvcFlagPpV1);
    handshake();
    const Bytes first = to_rs(1001, 5001, kAckPsh, cat(hdr_, bytes("hello")));
    EXPECT_TRUE(FramesEqual(first, forward(client(1001, 5001, kAckPsh, bytes("hello")))));
    EXPECT_TRUE(FramesEqual(first, forward(client(1001, 5001, kAckPsh, bytes("hello")))));
    EXPECT_EQ(counter(Counter::pp_inserted), 2u);
    // The stream after it is shifted once, not twice.
    EXPECT_TRUE(FramesEqual(to_rs(1006 + 43, 5001, kAckPsh, bytes("!")),
                            forward(client(1006, 5001, kAckPsh, bytes("!")))));
}

// The first data segment is lost or reordered: the second reaches the RS first, already
// shifted by the header length (the RS keeps it out of order at the right place), its SACK
// comes back in client space, and the first segment later brings the header in front.
TEST_F(ProxyProtocolTest, ReorderedSecondSegmentIsShiftedBeforeTheHeaderWentOut) {
    start(lb::kSvcFlagPpV2);
    handshake();
    const uint32_t d = static_cast<uint32_t>(hdr_.size());
    EXPECT_TRUE(FramesEqual(to_rs(1101 + d, 5001, kAck, bytes("later")),
                            forward(client(1101, 5001, kAck, bytes("later")))));
    EXPECT_EQ(counter(Counter::pp_inserted), 0u);
    EXPECT_EQ(counter(Counter::pp_header_segment_sent), 0u);
    // The RS still expects the header's first byte (ack ISN + 1) and SACKs the later bytes.
    const Bytes sack_rs = {1, 1, 5, 10, 0, 0, 0x04, uint8_t(0x4d + d), 0, 0, 0x04, uint8_t(0x52 + d)};
    const Bytes sack_client = {1, 1, 5, 10, 0, 0, 0x04, 0x4d, 0, 0, 0x04, 0x52};  // 1101..1106
    EXPECT_TRUE(FramesEqual(to_client(5001, 1001, kAck, {}, sack_client),
                            back(rs(5001, 1001, kAck, {}, sack_rs))));
    // The first segment arrives: header in front, seq unchanged; it fills the gap exactly.
    const Bytes first(100, 'a');
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, kAckPsh, cat(hdr_, first)),
                            forward(client(1001, 5001, kAckPsh, first))));
    EXPECT_EQ(counter(Counter::pp_inserted), 1u);
    EXPECT_TRUE(FramesEqual(to_client(5001, 1106, kAck), back(rs(5001, 1106 + d, kAck))));
}

TEST_F(ProxyProtocolTest, ServerSpeaksFirstGetsASeparateHeaderSegment) {
    start(lb::kSvcFlagPpV2);
    handshake();
    auto out = roundtrip(kWan, client(1001, 5001, kAck), kLan);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, kAck), out[0]));
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, kAckPsh, kV2Tcp, {}, 0), out[1]));
    EXPECT_EQ(counter(Counter::pp_header_segment_sent), 1u);
    // RS greets and acks the header: the client sees its ISN + 1 acked.
    EXPECT_TRUE(FramesEqual(to_client(5001, 1001, kAckPsh, bytes("220 hi")),
                            back(rs(5001, 1001 + 28, kAckPsh, bytes("220 hi")))));
    // The client's first data is shifted, not given a second header.
    EXPECT_TRUE(FramesEqual(to_rs(1001 + 28, 5007, kAckPsh, bytes("HELO")),
                            forward(client(1001, 5007, kAckPsh, bytes("HELO")))));
    // A duplicate bare ACK sends no second header segment.
    EXPECT_TRUE(FramesEqual(to_rs(1001 + 28, 5001, kAck), forward(client(1001, 5001, kAck))));
    EXPECT_EQ(counter(Counter::pp_header_segment_sent), 1u);
    EXPECT_EQ(counter(Counter::pp_inserted), 0u);
    // Acked at once: the retransmit deadline passes without a second header segment.
    worker->advance_clock(1000);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_EQ(counter(Counter::pp_header_retransmitted), 0u);
}

TEST_F(ProxyProtocolTest, ServerSpeaksFirstV1) {
    start(lb::kSvcFlagPpV1);
    handshake();
    auto out = roundtrip(kWan, client(1001, 5001, kAck), kLan);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, kAck), out[0]));
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, kAckPsh, bytes(kV1), {}, 0), out[1]));
    EXPECT_TRUE(FramesEqual(to_rs(1001 + 43, 5001, kAckPsh, bytes("x")),
                            forward(client(1001, 5001, kAckPsh, bytes("x")))));
}

// Lost header segment: the client has nothing to retransmit, so xvs resends the exact same
// segment every RTO (1 s, doubling) until the RS acks past it.
TEST_F(ProxyProtocolTest, LostHeaderSegmentIsRetransmittedUntilTheRsAcksIt) {
    start(lb::kSvcFlagPpV2);
    handshake();
    auto out = roundtrip(kWan, client(1001, 5001, kAck), kLan);
    ASSERT_EQ(out.size(), 2u);
    const Bytes header_segment = out[1];
    ASSERT_TRUE(FramesEqual(to_rs(1001, 5001, kAckPsh, kV2Tcp, {}, 0), header_segment));
    // "Lost": no RS ACK. Nothing before the RTO ...
    worker->advance_clock(900);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    // ... then the very same segment, once.
    worker->advance_clock(100);
    poll();
    out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(header_segment, out[0]));
    EXPECT_EQ(counter(Counter::pp_header_retransmitted), 1u);
    EXPECT_EQ(counter(Counter::pp_header_segment_sent), 1u);
    // The RTO doubled: nothing at +1.9 s, again at +2 s.
    worker->advance_clock(1900);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    worker->advance_clock(100);
    poll();
    out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(header_segment, out[0]));
    EXPECT_EQ(counter(Counter::pp_header_retransmitted), 2u);
    // The RS acks the header (client sees ISN + 1 acked): retransmissions stop for good.
    EXPECT_TRUE(FramesEqual(to_client(5001, 1001, kAck), back(rs(5001, 1001 + 28, kAck))));
    for (int i = 0; i < 60; ++i) {
        worker->advance_clock(1000);
        poll();
        ASSERT_TRUE(recv(kLan).empty()) << "at +" << i + 1 << " s after the RS ack";
    }
    EXPECT_EQ(counter(Counter::pp_header_retransmitted), 2u);
    EXPECT_EQ(counter(Counter::pp_header_gave_up), 0u);
    // The stream after it is shifted exactly as before.
    EXPECT_TRUE(FramesEqual(to_rs(1001 + 28, 5001, kAckPsh, bytes("HELO")),
                            forward(client(1001, 5001, kAckPsh, bytes("HELO")))));
}

// Never acked: five retransmissions (+1, +3, +7, +15, +31 s), one give-up, and the idle timeout
// (ESTABLISHED 90 s from the handshake ACK) still expires the conn on time.
TEST_F(ProxyProtocolTest, HeaderSegmentRetransmissionGivesUpAndIdleTimeoutStillHolds) {
    start(lb::kSvcFlagPpV1);
    handshake();
    auto out = roundtrip(kWan, client(1001, 5001, kAck), kLan);
    ASSERT_EQ(out.size(), 2u);
    const Bytes header_segment = out[1];
    std::vector<uint64_t> sent_at;
    for (uint64_t t = 100; t <= 89'900; t += 100) {
        worker->advance_clock(100);
        poll();
        for (const Bytes& f : recv(kLan)) {
            EXPECT_TRUE(FramesEqual(header_segment, f));
            sent_at.push_back(t);
        }
    }
    EXPECT_EQ(sent_at, (std::vector<uint64_t>{1000, 3000, 7000, 15000, 31000}));
    EXPECT_EQ(counter(Counter::pp_header_retransmitted), 5u);
    EXPECT_EQ(counter(Counter::pp_header_gave_up), 1u);
    EXPECT_EQ(counter(Counter::conns_expired), 0u);
    worker->advance_clock(200);
    poll();
    EXPECT_EQ(counter(Counter::conns_expired), 1u);
    EXPECT_TRUE(recv(kLan).empty());
}

// Client traffic keeps the conn alive past the retransmissions; the RS never acks (it is gone):
// the timer keeps serving the idle deadline, which moved with the traffic.
TEST_F(ProxyProtocolTest, HeaderRetransmissionKeepsTheIdleTimeoutExact) {
    start(lb::kSvcFlagPpV2);
    handshake();
    ASSERT_EQ(roundtrip(kWan, client(1001, 5001, kAck), kLan).size(), 2u);
    for (int i = 0; i < 3; ++i) {
        worker->advance_clock(60'000);
        poll();
        recv(kLan);
        // A keepalive-like ACK from the client refreshes the 90 s idle deadline.
        EXPECT_TRUE(FramesEqual(to_rs(1001 + 28, 5001, kAck), forward(client(1001, 5001, kAck))));
    }
    EXPECT_EQ(counter(Counter::conns_expired), 0u);
    worker->advance_clock(89'900);
    poll();
    EXPECT_EQ(counter(Counter::conns_expired), 0u);
    worker->advance_clock(200);
    poll();
    EXPECT_EQ(counter(Counter::conns_expired), 1u);
}

TEST_F(ProxyProtocolTest, ServiceWithoutProxyProtocolIsUnchanged) {
    start(0);
    handshake();
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, kAck), forward(client(1001, 5001, kAck))));
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, kAckPsh, bytes("GET /")),
                            forward(client(1001, 5001, kAckPsh, bytes("GET /")))));
    EXPECT_TRUE(FramesEqual(to_client(5001, 1006, kAck), back(rs(5001, 1006, kAck))));
    EXPECT_EQ(counter(Counter::pp_inserted), 0u);
    EXPECT_EQ(counter(Counter::pp_header_segment_sent), 0u);
}

TEST_F(ProxyProtocolTest, FullMssFirstSegmentFitsBecauseTheMssWasLowered) {
    start(lb::kSvcFlagPpV1);
    handshake();
    const Bytes body(1460 - kV1.size(), 'q');  // a full segment at the MSS the client was given
    Bytes with_header = bytes(kV1);
    with_header.insert(with_header.end(), body.begin(), body.end());
    Bytes out = forward(client(1001, 5001, kAck, body));
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, kAck, with_header), out));
    EXPECT_EQ(out.size(), 1514u);
    EXPECT_EQ(counter(Counter::pp_inserted), 1u);
    EXPECT_EQ(counter(Counter::pp_fail_mtu), 0u);
}

// A client ignoring the lowered MSS: IP 1500, no room for 43 more at MTU 1500. The header goes
// as its own segment just ahead, the data follows shifted; the header segment is retransmitted
// until the RS acks past it.
TEST_F(ProxyProtocolTest, FullSizeFirstSegmentGetsTheHeaderAsItsOwnSegmentAhead) {
    start(lb::kSvcFlagPpV1);
    handshake();
    const uint32_t d = 43;
    const Bytes body(1460, 'q');
    auto out = roundtrip(kWan, client(1001, 5001, kAck, body), kLan);
    ASSERT_EQ(out.size(), 2u);
    const Bytes header_segment = to_rs(1001, 5001, kAckPsh, bytes(kV1), {}, 0);
    EXPECT_TRUE(FramesEqual(header_segment, out[0]));
    EXPECT_TRUE(FramesEqual(to_rs(1001 + d, 5001, kAck, body), out[1]));
    EXPECT_EQ(counter(Counter::pp_fail_mtu), 1u);
    EXPECT_EQ(counter(Counter::pp_inserted), 0u);
    EXPECT_EQ(counter(Counter::pp_header_segment_sent), 1u);
    EXPECT_EQ(counter(Counter::pp_header_segment_for_room), 1u);
    // The rest of the stream is shifted.
    EXPECT_TRUE(FramesEqual(to_rs(2461 + d, 5001, kAck), forward(client(2461, 5001, kAck))));
    // The RS lost the header segment: it acks ISN + 1 and SACKs the data ...
    const Bytes sack_rs = {1, 1, 5, 10, 0, 0, 0x04, 0x14, 0, 0, 0x09, 0xc8};  // 1044..2504
    const Bytes sack_client = {1, 1, 5, 10, 0, 0, 0x03, 0xe9, 0, 0, 0x09, 0x9d};  // 1001..2461
    EXPECT_TRUE(FramesEqual(to_client(5001, 1001, kAck, {}, sack_client),
                            back(rs(5001, 1001, kAck, {}, sack_rs))));
    // ... the client's retransmission of the first segment goes shifted, no second header ...
    out = roundtrip(kWan, client(1001, 5001, kAck, body), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(1001 + d, 5001, kAck, body), out[0]));
    // ... and the timer resends the header segment after the RTO.
    worker->advance_clock(1000);
    poll();
    out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(header_segment, out[0]));
    EXPECT_EQ(counter(Counter::pp_header_retransmitted), 1u);
    // Acked: the client sees all its data acked, retransmissions stop.
    EXPECT_TRUE(FramesEqual(to_client(5001, 2461, kAck), back(rs(5001, 2461 + d, kAck))));
    worker->advance_clock(10'000);
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_EQ(counter(Counter::pp_header_retransmitted), 1u);
}

// A FIN at ISN + 1 with no header sent yet (the handshake ACK was not seen): the header goes
// ahead of it, and the FIN sits after the header.
TEST_F(ProxyProtocolTest, FinBeforeAnyHeaderGetsTheHeaderSegmentAhead) {
    start(lb::kSvcFlagPpV2);
    handshake();
    auto out = roundtrip(kWan, client(1001, 5001, net::kTcpFin | kAck), kLan);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(FramesEqual(to_rs(1001, 5001, kAckPsh, kV2Tcp, {}, 0), out[0]));
    EXPECT_TRUE(FramesEqual(to_rs(1001 + 28, 5001, net::kTcpFin | kAck), out[1]));
    EXPECT_EQ(counter(Counter::pp_header_segment_sent), 1u);
}

// A RST at ISN + 1 must carry the RS's next expected seq: ISN + 1 until the RS acked the
// header, ISN + 1 + header length after.
TEST_F(ProxyProtocolTest, RstAtIsnPlusOneIsShiftedOnlyOnceTheRsAckedTheHeader) {
    start(lb::kSvcFlagPpV2);
    handshake();
    // Before any header.
    EXPECT_TRUE(FramesEqual(to_rs(1001, 0, net::kTcpRst), forward(client(1001, 0, net::kTcpRst))));
    // Header segment sent (server speaks first), not yet acked.
    ASSERT_EQ(roundtrip(kWan, client(1001, 5001, kAck), kLan).size(), 2u);
    EXPECT_TRUE(FramesEqual(to_rs(1001, 0, net::kTcpRst), forward(client(1001, 0, net::kTcpRst))));
    // The RS answers with a challenge ACK that acks the header: the client's RST now matches.
    EXPECT_TRUE(FramesEqual(to_client(5001, 1001, kAck), back(rs(5001, 1001 + 28, kAck))));
    EXPECT_TRUE(FramesEqual(to_rs(1001 + 28, 0, net::kTcpRst), forward(client(1001, 0, net::kTcpRst))));
}

TEST_F(ProxyProtocolTest, UdpV2HeaderBeforeTheFirstDatagramOnly) {
    ASSERT_TRUE(director->service_edit(lb::ServiceSpec{17, *net::parse_ipv4("10.10.1.100"), 53, "rr",
                                                       lb::FwdMode::FullNat, lb::kSvcFlagPpV2})
                    .ok());
    director->commit();
    start_worker();
    learn_neighbours();
    auto dgram = [&](const std::string& data) {
        return PacketBuilder().eth(kClientMac, wan_mac()).ipv4("10.10.1.2", "10.10.1.100")
            .udp(33000, 53).payload(data).build();
    };
    auto out = roundtrip(kWan, dgram("query-1"), kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* ip4 = reinterpret_cast<const net::Ipv4Hdr*>(out[0].data() + 14);
    const auto* udp = reinterpret_cast<const net::UdpHdr*>(out[0].data() + 34);
    const bool rs1 = ip4->daddr == ip("10.10.2.2");
    const uint16_t lport = net::ntoh16(udp->sport);
    const Bytes v2udp = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
                         0x21, 0x12, 0x00, 0x0c, 10, 10, 1, 2, 10, 10, 1, 100, 0x80, 0xe8, 0x00, 53};
    auto to_rs_udp = [&](Bytes data) {
        return PacketBuilder().eth(lan_mac(), rs1 ? kRs1Mac : kRs2Mac)
            .ipv4("10.10.2.100", rs1 ? "10.10.2.2" : "10.10.2.3").udp(lport, 5353)
            .payload(std::move(data)).build();
    };
    EXPECT_TRUE(FramesEqual(to_rs_udp(cat(v2udp, bytes("query-1"))), out[0]));
    out = roundtrip(kWan, dgram("query-2"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs_udp(bytes("query-2")), out[0]));
    EXPECT_EQ(counter(Counter::pp_inserted), 1u);
}

}  // namespace
}  // namespace xvs::test
