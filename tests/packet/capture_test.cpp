// Packet tests: capture at named points (stack/capture.h) through the real pipeline. A tap
// armed through the worker's command channel (Worker::set_capture, as xvsctl capture does)
// sees exactly the frames of its point: a dropped bare ACK under its reason, byte for byte;
// the client's SYN at rx and the RS SYN at tx on the LAN port; a filter and a port narrow it;
// nothing is captured once the tap is disarmed, and capture changes no forwarding.
#include <memory>

#include "ctl/capture_session.h"
#include "fixture/pipeline.h"
#include "stack/capture.h"

namespace xvs::test {
namespace {

using stack::CapturePoint;
using stack::CaptureRecord;
using stack::CaptureSpec;
using stack::CaptureTap;
using stack::Counter;

class CaptureTest : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        start_worker();
        learn_neighbours();
    }
    std::shared_ptr<CaptureTap> arm(CaptureSpec spec) {
        auto tap = std::make_shared<CaptureTap>(std::move(spec));
        auto r = worker->set_capture(tap, 1000);
        EXPECT_TRUE(r.ok()) << r.error();
        return tap;
    }
    void disarm() {
        auto r = worker->set_capture(nullptr, 1000);
        EXPECT_TRUE(r.ok()) << r.error();
    }
    static std::vector<CaptureRecord> drain(CaptureTap& tap) {
        std::vector<CaptureRecord> out;
        tap.drain(out, 100);
        return out;
    }
    static Bytes bytes_of(const CaptureRecord& r) { return Bytes(r.data, r.data + r.len); }

    Bytes client_tcp(uint16_t cport, uint8_t flags) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", "10.10.1.100")
            .tcp(cport, 80)
            .seq(1000)
            .ack(flags & net::kTcpAck ? 1 : 0)
            .flags(flags)
            .build();
    }
};

TEST_F(CaptureTest, DropPointHoldsExactlyTheDroppedFrameUnderItsReason) {
    auto tap = arm(CaptureSpec{CapturePoint::Drop, -1, Counter::drop_tcp_no_conn, {}, 16});
    const Bytes ack = client_tcp(40000, net::kTcpAck);
    EXPECT_TRUE(roundtrip(kWan, ack, kLan).empty());
    EXPECT_EQ(counter(Counter::drop_tcp_no_conn), 1u);
    auto recs = drain(*tap);
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_TRUE(FramesEqual(ack, bytes_of(recs[0])));
    EXPECT_EQ(recs[0].reason, Counter::drop_tcp_no_conn);
    EXPECT_EQ(recs[0].wire_len, ack.size());
    EXPECT_EQ(recs[0].port, kWan);
    // A SYN is forwarded, not dropped: nothing more in the drop capture.
    EXPECT_EQ(roundtrip(kWan, client_tcp(40001, net::kTcpSyn), kLan).size(), 1u);
    EXPECT_TRUE(drain(*tap).empty());
    disarm();
}

TEST_F(CaptureTest, OtherDropReasonsAreNotInAOneReasonCapture) {
    auto tap = arm(CaptureSpec{CapturePoint::Drop, -1, Counter::drop_blacklisted, {}, 16});
    EXPECT_TRUE(roundtrip(kWan, client_tcp(40000, net::kTcpAck), kLan).empty());
    EXPECT_TRUE(drain(*tap).empty());
    EXPECT_EQ(tap->matched(), 0u);
    disarm();
}

TEST_F(CaptureTest, RxAndTxPointsWithPortAndFilter) {
    auto filter = ctl::capture_compile_filter("tcp[tcpflags] & tcp-syn != 0");
    ASSERT_TRUE(filter.ok()) << filter.error();
    auto rx = arm(CaptureSpec{CapturePoint::Rx, kWan, Counter::Count, *filter, 16});
    const Bytes syn = client_tcp(40000, net::kTcpSyn);
    auto out = roundtrip(kWan, syn, kLan);
    ASSERT_EQ(out.size(), 1u);
    auto recs = drain(*rx);
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_TRUE(FramesEqual(syn, bytes_of(recs[0])));
    // The bare ACK does not pass the filter.
    EXPECT_TRUE(roundtrip(kWan, client_tcp(40002, net::kTcpAck), kLan).empty());
    EXPECT_TRUE(drain(*rx).empty());

    auto tx = arm(CaptureSpec{CapturePoint::Tx, kLan, Counter::Count, {}, 16});
    auto out2 = roundtrip(kWan, client_tcp(40003, net::kTcpSyn), kLan);
    ASSERT_EQ(out2.size(), 1u);
    recs = drain(*tx);
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_TRUE(FramesEqual(out2[0], bytes_of(recs[0])));  // what left, byte for byte
    EXPECT_TRUE(drain(*rx).empty());  // the replaced tap no longer sees anything

    // tx on the WAN port: the LAN-bound SYN is not there.
    auto tx_wan = arm(CaptureSpec{CapturePoint::Tx, kWan, Counter::Count, {}, 16});
    ASSERT_EQ(roundtrip(kWan, client_tcp(40004, net::kTcpSyn), kLan).size(), 1u);
    EXPECT_TRUE(drain(*tx_wan).empty());
    disarm();
    ASSERT_EQ(roundtrip(kWan, client_tcp(40005, net::kTcpSyn), kLan).size(), 1u);
    EXPECT_TRUE(drain(*tx_wan).empty());
}

TEST_F(CaptureTest, AFullRingLosesFramesAndCountsThem) {
    auto tap = arm(CaptureSpec{CapturePoint::Drop, -1, Counter::Count, {}, 2});
    for (uint16_t i = 0; i < 5; ++i)
        EXPECT_TRUE(roundtrip(kWan, client_tcp(static_cast<uint16_t>(41000 + i), net::kTcpAck), kLan).empty());
    EXPECT_EQ(tap->matched(), 2u);
    EXPECT_EQ(tap->lost(), 3u);
    auto recs = drain(*tap);
    ASSERT_EQ(recs.size(), 2u);  // the first two, in order
    EXPECT_TRUE(FramesEqual(client_tcp(41000, net::kTcpAck), bytes_of(recs[0])));
    EXPECT_TRUE(FramesEqual(client_tcp(41001, net::kTcpAck), bytes_of(recs[1])));
    disarm();
}

}  // namespace
}  // namespace xvs::test
