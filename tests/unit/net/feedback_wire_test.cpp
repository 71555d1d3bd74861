// Tests for src/net/feedback_wire.cpp: load-feedback reports round-trip, and every way a
// datagram is refused (size, magic, version, a wrong key, a changed byte).
#include "net/feedback_wire.h"

#include <gtest/gtest.h>

namespace xvs::net {
namespace {

FeedbackReport sample_report() {
    FeedbackReport r;
    r.sent_ms = 1'764'000'000'123ull;
    r.interval_ms = 1000;
    r.cpu_permille = 734;
    r.mem_permille = 228;
    r.loadavg_x100 = 756;
    r.running = 7;
    r.ncpu = 2;
    r.established = 70'000;
    r.has_custom = true;
    r.custom_permille = 425;
    return r;
}

TEST(FeedbackWire, RoundTripsWithTheSameKey) {
    const FeedbackKey key = feedback_key("correct horse battery staple");
    const FeedbackReport r = sample_report();
    const FeedbackDatagram d = feedback_encode(r, key);
    EXPECT_EQ(d.size(), 72u);
    EXPECT_EQ(d[0], 'X');
    EXPECT_EQ(d[4], kFeedbackVersion);
    FeedbackReport out;
    ASSERT_EQ(feedback_decode(d, key, out), FeedbackError::none);
    EXPECT_EQ(out, r);
    // Big-endian fields at their offsets.
    EXPECT_EQ(d[20], 734 >> 8);
    EXPECT_EQ(d[21], 734 & 0xff);
}

TEST(FeedbackWire, WithoutCustomTheValueIsZero) {
    const FeedbackKey key = feedback_key("0123456789abcdef");
    FeedbackReport r = sample_report();
    r.has_custom = false;
    FeedbackReport out;
    ASSERT_EQ(feedback_decode(feedback_encode(r, key), key, out), FeedbackError::none);
    EXPECT_FALSE(out.has_custom);
    EXPECT_EQ(out.custom_permille, 0u);
}

TEST(FeedbackWire, KeyIgnoresSurroundingBlanks) {
    EXPECT_EQ(feedback_key("secret-secret-secret\n"), feedback_key("  secret-secret-secret"));
    EXPECT_NE(feedback_key("secret-secret-secret"), feedback_key("secret-secret-secreT"));
}

TEST(FeedbackWire, RefusesWrongKeyTamperingAndMalformedDatagrams) {
    const FeedbackKey key = feedback_key("the director's key");
    const FeedbackDatagram good = feedback_encode(sample_report(), key);
    FeedbackReport out;
    out.cpu_permille = 1;  // untouched on refusal
    EXPECT_EQ(feedback_decode(good, feedback_key("a forger's key"), out), FeedbackError::bad_mac);
    for (size_t i : {8u, 20u, 39u, 40u, 71u}) {  // any byte of body or MAC
        FeedbackDatagram bad = good;
        bad[i] ^= 0x01;
        EXPECT_EQ(feedback_decode(bad, key, out), FeedbackError::bad_mac) << "byte " << i;
    }
    EXPECT_EQ(feedback_decode(std::span(good).first(71), key, out), FeedbackError::bad_size);
    EXPECT_EQ(feedback_decode(std::span<const uint8_t>(), key, out), FeedbackError::bad_size);
    FeedbackDatagram magic = good;
    magic[0] = 'Y';
    EXPECT_EQ(feedback_decode(magic, key, out), FeedbackError::bad_magic);
    FeedbackDatagram version = good;
    version[4] = 2;
    EXPECT_EQ(feedback_decode(version, key, out), FeedbackError::bad_version);
    EXPECT_EQ(out.cpu_permille, 1);
    EXPECT_EQ(to_string(FeedbackError::bad_mac), "bad_mac");
}

}  // namespace
}  // namespace xvs::net
