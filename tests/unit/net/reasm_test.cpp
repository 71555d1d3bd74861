// Fragment reassembly core (net/reasm.h): every arrival order, duplicates, overlaps (RFC 5722),
// bad lengths, timeouts and each limit.
#include "net/reasm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <random>
#include <vector>

#include "net/byteorder.h"

namespace xvs::net {
namespace {

constexpr uint32_t kCap = 65535;

struct Frag {
    uint32_t off;
    uint32_t len;
    bool more;
};

class ReasmTest : public ::testing::Test {
  protected:
    // Buffers handed out by the allocator; user is the buffer's index + 1.
    std::vector<std::vector<uint8_t>> bufs;
    unsigned allocs = 0;
    bool fail_alloc = false;

    ReasmKey key(uint32_t id = 7) const {
        ReasmKey k;
        k.src = InetAddr::v4(hton32(0x0a0a0102));
        k.dst = InetAddr::v4(hton32(0x0a0a0164));
        k.id = id;
        k.proto = 17;
        return k;
    }
    static std::vector<uint8_t> payload(uint32_t n) {
        std::vector<uint8_t> p(n);
        for (uint32_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * 7 + i / 251);
        return p;
    }
    ReasmResult add(Reassembler& r, const ReasmKey& k, const std::vector<uint8_t>& data,
                    const Frag& f, uint64_t now = 0, uint32_t cap = kCap) {
        return r.add(k, f.off, f.len, f.more, data.data() + f.off, 65515, now, [&] {
            ++allocs;
            if (fail_alloc) return ReasmBuffer{};
            bufs.emplace_back(cap);
            return ReasmBuffer{bufs.back().data(), cap,
                               reinterpret_cast<void*>(uintptr_t{bufs.size()})};
        });
    }
    // The bytes of a completed datagram.
    std::vector<uint8_t> take(Reassembler& r, uint32_t slot) {
        const uint32_t total = r.datagram(slot).total;
        const auto idx = reinterpret_cast<uintptr_t>(r.take(slot)) - 1;
        return {bufs[idx].begin(), bufs[idx].begin() + total};
    }
    static std::vector<Frag> split(uint32_t total, uint32_t step) {
        std::vector<Frag> v;
        for (uint32_t off = 0; off < total; off += step)
            v.push_back({off, std::min(step, total - off), off + step < total});
        return v;
    }
    // Feeds frags in the order given; expects the last one to complete with the right bytes.
    void expect_reassembles(const std::vector<Frag>& frags, uint32_t total) {
        Reassembler r;
        const auto data = payload(total);
        for (size_t i = 0; i < frags.size(); ++i) {
            const ReasmResult res = add(r, key(), data, frags[i]);
            if (i + 1 < frags.size()) {
                ASSERT_EQ(res.status, ReasmStatus::Held) << "fragment " << i;
                EXPECT_EQ(r.held_fragments(), i + 1);
            } else {
                ASSERT_EQ(res.status, ReasmStatus::Complete);
                EXPECT_EQ(r.datagram(res.slot).nfrags, frags.size());
                EXPECT_EQ(take(r, res.slot), data);
            }
        }
        EXPECT_EQ(r.in_flight(), 0u);
        EXPECT_EQ(r.held_fragments(), 0u);
    }
};

TEST_F(ReasmTest, InOrder) {
    expect_reassembles(split(4000, 1480), 4000);
}

TEST_F(ReasmTest, Reverse) {
    auto f = split(4000, 1480);
    std::reverse(f.begin(), f.end());
    expect_reassembles(f, 4000);
}

TEST_F(ReasmTest, EveryPermutationOfFive) {
    auto f = split(100, 24);  // 24, 24, 24, 24, 4
    ASSERT_EQ(f.size(), 5u);
    std::array<size_t, 5> idx{0, 1, 2, 3, 4};
    unsigned n = 0;
    do {
        std::vector<Frag> order;
        order.reserve(idx.size());
        for (size_t i : idx) order.push_back(f[i]);
        expect_reassembles(order, 100);
        ++n;
    } while (std::next_permutation(idx.begin(), idx.end()));
    EXPECT_EQ(n, 120u);
}

TEST_F(ReasmTest, RandomPermutationsOfMany) {
    // NOLINTNEXTLINE(cert-msc32-c,cert-msc51-cpp): a fixed seed keeps the test reproducible
    std::mt19937 rng(11);
    for (int round = 0; round < 50; ++round) {
        auto f = split(8000, 8 * (1 + rng() % 40));
        if (f.size() > 64) continue;
        std::shuffle(f.begin(), f.end(), rng);
        expect_reassembles(f, 8000);
    }
}

TEST_F(ReasmTest, ExactDuplicateIsDroppedAloneInAnyPosition) {
    const auto data = payload(3000);
    const auto f = split(3000, 1000);
    for (size_t dup = 0; dup < f.size() - 1; ++dup) {
        Reassembler r;
        ASSERT_EQ(add(r, key(), data, f[dup]).status, ReasmStatus::Held);
        EXPECT_EQ(add(r, key(), data, f[dup]).status, ReasmStatus::Duplicate);
        EXPECT_EQ(r.held_fragments(), 1u);
        ReasmResult last{};
        for (size_t i = 0; i < f.size(); ++i)
            if (i != dup) last = add(r, key(), data, f[i]);
        ASSERT_EQ(last.status, ReasmStatus::Complete);
        EXPECT_EQ(take(r, last.slot), data);
    }
}

TEST_F(ReasmTest, OverlapDropsTheWholeDatagram) {
    const auto data = payload(3000);
    // Partial overlaps on either side, containment both ways.
    const Frag overlapping[] = {
        {992, 16, true}, {8, 8, true}, {0, 2000, true}, {1000, 8, true}, {1008, 992, true}};
    for (const Frag& o : overlapping) {
        Reassembler r;
        ASSERT_EQ(add(r, key(), data, {0, 1000, true}).status, ReasmStatus::Held);
        ASSERT_EQ(add(r, key(), data, {1000, 1000, true}).status, ReasmStatus::Held);
        const ReasmResult res = add(r, key(), data, o);
        EXPECT_EQ(res.status, ReasmStatus::Overlap) << o.off << "+" << o.len;
        EXPECT_EQ(res.freed_frags, 2u);
        EXPECT_NE(res.freed_user, nullptr);
        EXPECT_EQ(r.in_flight(), 0u);
        EXPECT_EQ(r.held_fragments(), 0u);
        // A later fragment of that id starts a new datagram.
        EXPECT_EQ(add(r, key(), data, {2000, 1000, false}).status, ReasmStatus::Held);
    }
}

TEST_F(ReasmTest, NonLastFragmentMustBeAMultipleOfEight) {
    Reassembler r;
    const auto data = payload(3000);
    EXPECT_EQ(add(r, key(), data, {0, 1001, true}).status, ReasmStatus::BadLength);
    EXPECT_EQ(add(r, key(), data, {0, 0, true}).status, ReasmStatus::BadLength);
    EXPECT_EQ(r.in_flight(), 0u);
    // The last one may have any length.
    EXPECT_EQ(add(r, key(), data, {0, 1000, true}).status, ReasmStatus::Held);
    EXPECT_EQ(add(r, key(), data, {1000, 1001, false}).status, ReasmStatus::Complete);
}

TEST_F(ReasmTest, InconsistentEndDropsTheDatagram) {
    const auto data = payload(3000);
    {
        Reassembler r;  // two different last fragments
        ASSERT_EQ(add(r, key(), data, {1000, 1000, false}).status, ReasmStatus::Held);
        const auto res = add(r, key(), data, {2000, 8, false});
        EXPECT_EQ(res.status, ReasmStatus::BadLength);
        EXPECT_EQ(res.freed_frags, 1u);
        EXPECT_EQ(r.in_flight(), 0u);
    }
    {
        Reassembler r;  // a fragment beyond the last one's end
        ASSERT_EQ(add(r, key(), data, {1000, 1000, false}).status, ReasmStatus::Held);
        EXPECT_EQ(add(r, key(), data, {2000, 8, true}).status, ReasmStatus::BadLength);
    }
    {
        Reassembler r;  // a last fragment ending before stored bytes
        ASSERT_EQ(add(r, key(), data, {1000, 1000, true}).status, ReasmStatus::Held);
        EXPECT_EQ(add(r, key(), data, {0, 8, false}).status, ReasmStatus::BadLength);
    }
}

TEST_F(ReasmTest, BeyondTheProtocolLimitOrTheBuffer) {
    const auto data = payload(65535 + 8);
    Reassembler r;
    // 65512 + 8 > 65515: IPv4 with a 20-byte header cannot carry it.
    EXPECT_EQ(add(r, key(), data, {65512, 8, false}).status, ReasmStatus::TooBig);
    EXPECT_EQ(r.in_flight(), 0u);
    EXPECT_EQ(allocs, 0u);
    // A buffer of 4096 bytes: a fragment beyond it drops the datagram it belongs to.
    ASSERT_EQ(add(r, key(), data, {0, 1000, true}, 0, 4096).status, ReasmStatus::Held);
    const auto res = add(r, key(), data, {4000, 200, false}, 0, 4096);
    EXPECT_EQ(res.status, ReasmStatus::TooBig);
    EXPECT_EQ(res.freed_frags, 1u);
    EXPECT_EQ(r.in_flight(), 0u);
    // And a first fragment that alone does not fit gives its buffer back.
    const auto first = add(r, key(), data, {4000, 200, false}, 0, 4096);
    EXPECT_EQ(first.status, ReasmStatus::TooBig);
    EXPECT_NE(first.freed_user, nullptr);
}

TEST_F(ReasmTest, TimeoutDropsOldestFirst) {
    ReasmLimits lim;
    lim.timeout_ms = 1000;
    Reassembler r(lim);
    const auto data = payload(3000);
    ASSERT_EQ(add(r, key(1), data, {0, 1000, true}, 0).status, ReasmStatus::Held);
    ASSERT_EQ(add(r, key(2), data, {0, 1000, true}, 500).status, ReasmStatus::Held);
    ASSERT_EQ(add(r, key(2), data, {1000, 1000, true}, 900).status, ReasmStatus::Held);
    std::vector<std::pair<void*, uint32_t>> dropped;
    auto fn = [&](void* u, uint32_t n) { dropped.emplace_back(u, n); };
    r.expire(999, fn);
    EXPECT_TRUE(dropped.empty());
    r.expire(1000, fn);
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(dropped[0].second, 1u);
    EXPECT_EQ(r.in_flight(), 1u);
    r.expire(1500, fn);
    ASSERT_EQ(dropped.size(), 2u);
    EXPECT_EQ(dropped[1].second, 2u);
    EXPECT_EQ(r.held_fragments(), 0u);
    // A fragment of an expired datagram starts over.
    EXPECT_EQ(add(r, key(1), data, {1000, 2000, false}, 1600).status, ReasmStatus::Held);
}

TEST_F(ReasmTest, TableFull) {
    ReasmLimits lim;
    lim.max_datagrams = 3;
    Reassembler r(lim);
    const auto data = payload(2000);
    for (uint32_t id = 0; id < 3; ++id)
        ASSERT_EQ(add(r, key(id), data, {0, 1000, true}).status, ReasmStatus::Held);
    EXPECT_EQ(add(r, key(9), data, {0, 1000, true}).status, ReasmStatus::TableFull);
    // Fragments of datagrams already in flight still go in.
    const auto done = add(r, key(1), data, {1000, 1000, false});
    ASSERT_EQ(done.status, ReasmStatus::Complete);
    r.take(done.slot);
    EXPECT_EQ(add(r, key(9), data, {0, 1000, true}).status, ReasmStatus::Held);
}

TEST_F(ReasmTest, TooManyFragments) {
    ReasmLimits lim;
    lim.max_fragments = 4;
    Reassembler r(lim);
    const auto data = payload(80);
    for (uint32_t i = 0; i < 4; ++i)
        ASSERT_EQ(add(r, key(), data, {i * 8, 8, true}).status, ReasmStatus::Held);
    const auto res = add(r, key(), data, {32, 8, true});
    EXPECT_EQ(res.status, ReasmStatus::TooManyFragments);
    EXPECT_EQ(res.freed_frags, 4u);
    EXPECT_EQ(r.in_flight(), 0u);
    // Four fragments are still enough for a datagram.
    expect_reassembles(split(32, 8), 32);
}

TEST_F(ReasmTest, AllocatorFailure) {
    Reassembler r;
    const auto data = payload(2000);
    fail_alloc = true;
    EXPECT_EQ(add(r, key(), data, {0, 1000, true}).status, ReasmStatus::NoBuffer);
    EXPECT_EQ(r.in_flight(), 0u);
}

TEST_F(ReasmTest, KeysKeepDatagramsApart) {
    Reassembler r;
    const auto a = payload(2000);
    std::vector<uint8_t> b(2000, 0x5a);
    ReasmKey other = key();
    other.proto = 6;  // same addresses and id, another protocol: another datagram (RFC 791)
    ASSERT_EQ(add(r, key(), a, {0, 1000, true}).status, ReasmStatus::Held);
    ASSERT_EQ(add(r, other, b, {1000, 1000, false}).status, ReasmStatus::Held);
    const auto other_done = add(r, other, b, {0, 1000, true});
    ASSERT_EQ(other_done.status, ReasmStatus::Complete);
    EXPECT_EQ(take(r, other_done.slot), b);
    EXPECT_EQ(r.in_flight(), 1u);
    const auto done = add(r, key(), a, {1000, 1000, false});
    ASSERT_EQ(done.status, ReasmStatus::Complete);
    EXPECT_EQ(take(r, done.slot), a);
}

TEST_F(ReasmTest, EmptyLastFragment) {
    Reassembler r;
    const auto data = payload(16);
    ASSERT_EQ(add(r, key(), data, {0, 16, true}).status, ReasmStatus::Held);
    const auto res = add(r, key(), data, {16, 0, false});
    ASSERT_EQ(res.status, ReasmStatus::Complete);
    EXPECT_EQ(r.datagram(res.slot).nfrags, 2u);
    EXPECT_EQ(take(r, res.slot), data);
}

TEST_F(ReasmTest, ReleaseAll) {
    Reassembler r;
    const auto data = payload(2000);
    for (uint32_t id = 0; id < 5; ++id) add(r, key(id), data, {0, 1000, true});
    uint32_t frags = 0;
    r.release_all([&](void*, uint32_t n) { frags += n; });
    EXPECT_EQ(frags, 5u);
    EXPECT_EQ(r.in_flight(), 0u);
}

}  // namespace
}  // namespace xvs::net
