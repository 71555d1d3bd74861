// IPv4 fragmentation helpers (net/ipv4_frag.h): copied options and fragment payload sizes.
#include "net/ipv4_frag.h"

#include <gtest/gtest.h>

#include <vector>

namespace xvs::net {
namespace {

TEST(Ipv4Frag, OnlyCopiedOptionsGoToLaterFragments) {
    // NOP, timestamp (0x44, not copied, 8 bytes), router alert (0x94, copied, 4 bytes),
    // NOP, loose source route (0x83, copied, 7 bytes), EOL.
    const std::vector<uint8_t> opts = {1, 0x44, 8,    5, 0, 0,  0, 0, 0, 0x94, 4, 0,
                                       0, 1,    0x83, 7, 4, 10, 0, 0, 1, 0,    0, 0};
    uint8_t out[40];
    const size_t n = ipv4_copied_options(opts.data(), opts.size(), out);
    const std::vector<uint8_t> want = {0x94, 4, 0, 0, 0x83, 7, 4, 10, 0, 0, 1, 0};
    ASSERT_EQ(n, want.size());
    EXPECT_EQ(std::vector<uint8_t>(out, out + n), want);
}

TEST(Ipv4Frag, NoOptionsAndMalformed) {
    uint8_t out[40];
    const uint8_t none[] = {1, 1, 1, 0};
    EXPECT_EQ(ipv4_copied_options(none, sizeof none, out), 0u);
    const uint8_t bad[] = {0x94, 9, 0, 0};  // length beyond the option space: scan stops
    EXPECT_EQ(ipv4_copied_options(bad, sizeof bad, out), 0u);
}

TEST(Ipv4Frag, PayloadPerFragment) {
    EXPECT_EQ(ipv4_fragment_payload(1500, 20), 1480u);
    EXPECT_EQ(ipv4_fragment_payload(1500, 24), 1472u);  // 1476 rounded down to 8
    EXPECT_EQ(ipv4_fragment_payload(68, 60), 8u);
    EXPECT_EQ(ipv4_fragment_payload(60, 60), 0u);
}

}  // namespace
}  // namespace xvs::net
