// stack/view.h: the own-address map (looked up for every received packet) finds what it holds,
// and its hash spreads addresses that differ only in their low octets, as a director's VIPs and
// local addresses do: a hash that gave every address of one /8 the same slot made each lookup
// walk all of them.
#include "stack/view.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "net/addr.h"

namespace xvs::stack {
namespace {

net::InetAddr v4(uint32_t host) {
    return net::InetAddr::v4(__builtin_bswap32(host));
}

TEST(StackView, OwnFindsEveryAddressAndNothingElse) {
    std::vector<std::pair<AddrKey, OwnAddr>> items;
    for (uint32_t i = 0; i < 1000; ++i)
        items.push_back({AddrKey{v4(0x0a000000u + i)}, OwnAddr{AddrKind::Vip, uint8_t(i % 3)}});
    StackView view;
    view.addrs = FlatMap<AddrKey, OwnAddr>(items);
    for (uint32_t i = 0; i < 1000; ++i) {
        const OwnAddr* own = view.own(v4(0x0a000000u + i));
        ASSERT_NE(own, nullptr) << i;
        EXPECT_EQ(own->port, i % 3);
    }
    EXPECT_EQ(view.own(v4(0x0a000000u + 1000)), nullptr);
    EXPECT_EQ(view.own(v4(0x0b000000u)), nullptr);
}

// The map masks the hash's low bits: 64 addresses of one /24, and 64 one /24 apart, must take
// many of 256 slots (a uniform hash gives ~57 distinct values; the old one gave 1).
TEST(StackView, OwnAddressHashSpreadsLowBits) {
    for (const uint32_t stride : {1u, 256u}) {
        std::set<uint64_t> slots;
        for (uint32_t i = 0; i < 64; ++i)
            slots.insert(flat_hash(AddrKey{v4(0x0a0a0301u + i * stride)}) & 255);
        EXPECT_GE(slots.size(), 40u) << "stride " << stride;
    }
}

}  // namespace
}  // namespace xvs::stack
