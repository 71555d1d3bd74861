// Capture's control-plane parts: the tcpdump-language filter compiled by libpcap and run on
// frames by the tap, drop reasons refused with what to do, and the xvsctl capture command
// line.
#include <gtest/gtest.h>

#include "ctl/capture_session.h"
#include "ctl/xvsctl_args.h"

namespace xvs::ctl {
namespace {

// An Ethernet + IPv4 + TCP frame to dport with the given flags.
std::vector<uint8_t> tcp_frame(uint16_t dport, uint8_t flags) {
    std::vector<uint8_t> f(54, 0);
    f[12] = 0x08;               // IPv4
    f[14] = 0x45;               // version 4, 20-byte header
    f[16] = 0, f[17] = 40;      // total length
    f[22] = 64, f[23] = 6;      // TTL, TCP
    f[26] = 10, f[29] = 2;      // 10.0.0.2
    f[30] = 10, f[33] = 100;    // 10.0.0.100
    f[34] = 0x9c, f[35] = 0x40;  // sport 40000
    f[36] = static_cast<uint8_t>(dport >> 8), f[37] = static_cast<uint8_t>(dport);
    f[46] = 0x50;  // data offset 5
    f[47] = flags;
    return f;
}

TEST(CaptureFilter, CompilesAndSelectsFrames) {
    auto insns = capture_compile_filter("tcp dst port 80 and tcp[tcpflags] & tcp-syn != 0");
    ASSERT_TRUE(insns.ok()) << insns.error();
    stack::CaptureTap tap(stack::CaptureSpec{stack::CapturePoint::Rx, -1, stack::Counter::Count,
                                             *insns, 8});
    auto syn80 = tcp_frame(80, 0x02), ack80 = tcp_frame(80, 0x10), syn81 = tcp_frame(81, 0x02);
    for (const auto* f : {&syn80, &ack80, &syn81})
        tap.offer_bytes(stack::CapturePoint::Rx, 0, stack::Counter::Count, f->data(),
                        static_cast<uint32_t>(f->size()), static_cast<uint32_t>(f->size()));
    std::vector<stack::CaptureRecord> out;
    EXPECT_EQ(tap.drain(out, 10), 1u);
    EXPECT_EQ(std::vector<uint8_t>(out[0].data, out[0].data + out[0].len), syn80);
    EXPECT_EQ(tap.matched(), 1u);
    EXPECT_EQ(tap.lost(), 0u);
}

TEST(CaptureFilter, EmptyIsEveryFrameAndBadIsLibpcapsMessage) {
    auto none = capture_compile_filter("");
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->empty());
    auto bad = capture_compile_filter("tcp port");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("filter 'tcp port': "), std::string::npos) << bad.error();
    EXPECT_NE(bad.error().find("syntax error"), std::string::npos) << bad.error();
}

TEST(CaptureTap, RingKeepsOrderAndCountsWhatAFullRingLoses) {
    stack::CaptureTap tap(stack::CaptureSpec{stack::CapturePoint::Drop, -1, stack::Counter::Count, {}, 3});
    // 3 slots round up to 4.
    for (uint16_t i = 0; i < 6; ++i) {
        auto f = tcp_frame(static_cast<uint16_t>(1000 + i), 0x10);
        tap.offer_bytes(stack::CapturePoint::Drop, 1, stack::Counter::drop_tcp_no_conn, f.data(),
                        static_cast<uint32_t>(f.size()), 60);
    }
    EXPECT_EQ(tap.matched(), 4u);
    EXPECT_EQ(tap.lost(), 2u);
    std::vector<stack::CaptureRecord> out;
    EXPECT_EQ(tap.drain(out, 3), 3u);
    EXPECT_EQ(tap.drain(out, 3), 1u);
    ASSERT_EQ(out.size(), 4u);
    for (uint16_t i = 0; i < 4; ++i) {
        EXPECT_EQ(out[i].data[37], static_cast<uint8_t>((1000 + i) & 0xff));
        EXPECT_EQ(out[i].wire_len, 60u);
        EXPECT_EQ(out[i].reason, stack::Counter::drop_tcp_no_conn);
        EXPECT_EQ(out[i].port, 1);
    }
    // Drained slots are free again.
    auto f = tcp_frame(2000, 0x10);
    tap.offer_bytes(stack::CapturePoint::Drop, 1, stack::Counter::drop_tcp_no_conn, f.data(), 54, 54);
    EXPECT_EQ(tap.matched(), 5u);
}

TEST(CaptureTap, WantsItsPointPortAndReasonOnly) {
    stack::CaptureTap drops(stack::CaptureSpec{stack::CapturePoint::Drop, 1, stack::Counter::drop_no_service, {}, 2});
    EXPECT_TRUE(drops.wants(stack::CapturePoint::Drop, 1, stack::Counter::drop_no_service));
    EXPECT_FALSE(drops.wants(stack::CapturePoint::Drop, 0, stack::Counter::drop_no_service));
    EXPECT_FALSE(drops.wants(stack::CapturePoint::Drop, 1, stack::Counter::drop_tcp_no_conn));
    EXPECT_FALSE(drops.wants(stack::CapturePoint::Rx, 1, stack::Counter::Count));
    stack::CaptureTap all(stack::CaptureSpec{stack::CapturePoint::Drop, -1, stack::Counter::Count, {}, 2});
    EXPECT_TRUE(all.wants(stack::CapturePoint::Drop, 3, stack::Counter::drop_tcp_no_conn));
}

TEST(CaptureReason, RefusesCountersAndWhatReassemblyHolds) {
    auto ok = capture_drop_reason("drop_tcp_no_conn");
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(*ok, stack::Counter::drop_tcp_no_conn);
    auto counter = capture_drop_reason("rx_packets");
    ASSERT_FALSE(counter.ok());
    EXPECT_NE(counter.error().find("not a drop reason"), std::string::npos);
    auto frag = capture_drop_reason("drop_frag_timeout");
    ASSERT_FALSE(frag.ok());
    EXPECT_NE(frag.error().find("capture rx with a filter"), std::string::npos);
    auto none = capture_drop_reason("drop_nonexistent");
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().find("xvsctl stats -a"), std::string::npos);
}

TEST(XvsctlCaptureArgs, ParsesPointsReasonPortFilterAndLimits) {
    auto c = parse_xvsctl_args({"capture", "drop", "drop_tcp_no_conn", "port", "wan0", "filter",
                                "tcp port 80", "-w", "f.pcap", "-c", "5", "-t", "10"});
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, CtlCommandKind::Capture);
    EXPECT_EQ(c->capture.point, "drop");
    EXPECT_EQ(c->capture.reason, "drop_tcp_no_conn");
    EXPECT_EQ(c->capture.ifname, "wan0");
    EXPECT_EQ(c->capture.filter, "tcp port 80");
    EXPECT_EQ(c->capture.file, "f.pcap");
    EXPECT_EQ(c->capture.count, 5u);
    EXPECT_EQ(c->capture.seconds, 10u);
    auto rx = parse_xvsctl_args({"cap", "-w", "-"});
    ASSERT_TRUE(rx.ok()) << rx.error();
    EXPECT_EQ(rx->capture.point, "rx");
    EXPECT_FALSE(rx->capture.count);
}

TEST(XvsctlCaptureArgs, RefusesWhatItCannotUse) {
    EXPECT_NE(parse_xvsctl_args({"capture", "rx"}).error().find("-w FILE"), std::string::npos);
    EXPECT_NE(parse_xvsctl_args({"capture", "-w", "f", "-c", "0"}).error().find("invalid \"-c\""),
              std::string::npos);
    EXPECT_FALSE(parse_xvsctl_args({"capture", "-w", "f", "-t", "x"}).ok());
    EXPECT_FALSE(parse_xvsctl_args({"capture", "sideways", "-w", "f"}).ok());
    EXPECT_FALSE(parse_xvsctl_args({"capture", "-w"}).ok());
}

}  // namespace
}  // namespace xvs::ctl
