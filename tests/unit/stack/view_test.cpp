// stack/view.h: the own-address map (looked up for every received packet) finds what it holds,
// and its hash spreads addresses that differ only in their low octets, as a director's VIPs and
// local addresses do: a hash that gave every address of one /8 the same slot made each lookup
// walk all of them.
#include "stack/view.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
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
    view.set_own(items);
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

// is_own (the check of every new flow's source) asks the filter first: it must agree with
// own() for every address, own or not, of both families, and the filter must turn most
// strangers away on its own (else it only adds work).
TEST(StackView, IsOwnAgreesWithOwnAndTheFilterRejectsMostStrangers) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937_64 rng(7);
    std::vector<std::pair<AddrKey, OwnAddr>> items;
    std::vector<net::InetAddr> owned;
    for (uint32_t i = 0; i < 16; ++i) owned.push_back(v4(0x0a000001u + i));
    for (uint32_t i = 0; i < 4; ++i) {
        net::InetAddr a6{};
        a6.b[0] = 0x20;
        a6.b[1] = 0x01;
        a6.b[15] = static_cast<uint8_t>(i + 1);
        owned.push_back(a6);
    }
    items.reserve(owned.size());
    for (const auto& a : owned) items.push_back({AddrKey{a}, OwnAddr{}});
    StackView view;
    view.set_own(items);
    for (const auto& a : owned) EXPECT_TRUE(view.is_own(a)) << net::to_string(a);

    OwnFilter filter;
    for (const auto& o : owned) filter.add(o);
    unsigned strangers = 0, rejected = 0;
    for (int i = 0; i < 20000; ++i) {
        net::InetAddr a = v4(static_cast<uint32_t>(rng()));
        if (i % 2) {
            a = net::InetAddr{};
            const uint64_t hi = rng(), lo = rng();
            std::memcpy(a.b, &hi, 8);
            std::memcpy(a.b + 8, &lo, 8);
        }
        if (view.own(a)) continue;
        ++strangers;
        ASSERT_FALSE(view.is_own(a)) << net::to_string(a);
        rejected += !filter.may_hold(a);
    }
    // 20 of 256 bits set: ~92% of strangers rejected by the filter alone.
    EXPECT_GT(rejected, strangers * 85 / 100);

    // A view rebuilt without an address no longer owns it (the filter is rebuilt too).
    items.erase(items.begin());
    view.set_own(items);
    EXPECT_FALSE(view.is_own(owned[0]));
    EXPECT_TRUE(view.is_own(owned[1]));
}

}  // namespace
}  // namespace xvs::stack
