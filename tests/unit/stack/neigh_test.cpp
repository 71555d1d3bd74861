// stack/neigh.cpp as a shared table: the owner publishes every change, readers on other threads
// never see a torn entry (an address with another entry's state, port or MAC), and a slot
// cached under a generation is refused once entries moved or went.
#include "stack/neigh.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace xvs::stack {
namespace {

// Address i: both 64-bit words carry i, so a reader mixing the words of two entries would
// look up an address nobody has.
net::InetAddr addr_of(unsigned i) {
    uint8_t b[16] = {0xfd, 0, 0, 0, 0, 0, uint8_t(i >> 8), uint8_t(i)};
    b[14] = uint8_t(i >> 8);
    b[15] = uint8_t(i);
    return net::InetAddr::v6(b);
}

// Version v of entry i: the MAC names i and v, the port follows from both. A link whose MAC
// names another address, or whose port does not fit its MAC, is torn.
net::MacAddr mac_of(unsigned i, unsigned v) {
    return net::MacAddr{{0x02, uint8_t(i >> 8), uint8_t(i), uint8_t(v), uint8_t(v >> 8), 0x5a}};
}
uint8_t port_of(unsigned i, unsigned v) {
    return uint8_t((i + v) % 8);
}
bool link_fits(const NeighLink& l, unsigned i) {
    // add_static of a new address creates it (Incomplete, no MAC yet), then sets it: a reader
    // may see the first step, whole.
    if (l.state == NeighState::Incomplete) return l.mac == net::MacAddr{};
    if (l.mac.b[0] != 0x02 || l.mac.b[5] != 0x5a) return false;
    if (unsigned(l.mac.b[1] << 8 | l.mac.b[2]) != i) return false;
    const unsigned v = l.mac.b[3] | unsigned(l.mac.b[4]) << 8;
    return l.port == port_of(i, v) && l.state == NeighState::Static;
}

TEST(NeighShared, UnsharedTablePublishesNothing) {
    Neighbours t(64);
    EXPECT_FALSE(t.shared());
    Neighbours s(64, {}, true);
    EXPECT_TRUE(s.shared());
}

TEST(NeighShared, ReaderSeesWhatTheOwnerPublishes) {
    Neighbours t(64, {}, true);
    NeighLink link;
    uint16_t slot = 0, gen = 0;
    EXPECT_FALSE(t.lookup(addr_of(1), link, slot, gen));

    // Created for output: Incomplete, published as such (a reader hands its packets over).
    NeighEntry* e = t.get_or_create(addr_of(1), 3, 10);
    ASSERT_NE(e, nullptr);
    ASSERT_TRUE(t.lookup(addr_of(1), link, slot, gen));
    EXPECT_EQ(link.state, NeighState::Incomplete);
    EXPECT_FALSE(link.sendable());
    EXPECT_EQ(slot, t.index_of(e));
    EXPECT_EQ(gen, t.generation());

    // Learned: Reachable with its MAC and port.
    ASSERT_EQ(t.learn(addr_of(1), mac_of(1, 7), 3, 20, false), e);
    ASSERT_TRUE(t.lookup(addr_of(1), link, slot, gen));
    EXPECT_EQ(link.state, NeighState::Reachable);
    EXPECT_TRUE(link.sendable());
    EXPECT_EQ(link.port, 3);
    EXPECT_EQ(link.mac, mac_of(1, 7));

    // A direct edit is seen once published.
    e->state = NeighState::Stale;
    ASSERT_TRUE(t.lookup(addr_of(1), link, slot, gen));
    EXPECT_EQ(link.state, NeighState::Reachable) << "not published yet";
    t.publish(*e);
    ASSERT_TRUE(t.lookup(addr_of(1), link, slot, gen));
    EXPECT_EQ(link.state, NeighState::Stale);
    EXPECT_TRUE(link.sendable()) << "a stale MAC is still sent to while the owner probes";

    t.remove(addr_of(1));
    EXPECT_FALSE(t.lookup(addr_of(1), link, slot, gen));
}

TEST(NeighShared, CachedSlotIsRefusedOnceEntriesMoveOrGo) {
    Neighbours t(16, {}, true);  // 16 slots: the entries below share probe chains
    for (unsigned i = 0; i < 10; ++i) t.add_static(addr_of(i), mac_of(i, 0), port_of(i, 0));
    std::vector<uint16_t> slots(10), gens(10);
    for (unsigned i = 0; i < 10; ++i) {
        NeighLink link;
        ASSERT_TRUE(t.lookup(addr_of(i), link, slots[i], gens[i]));
        ASSERT_TRUE(link_fits(link, i));
        ASSERT_NE(gens[i], 0);
        NeighLink again;
        ASSERT_TRUE(t.read(slots[i], gens[i], again));
        EXPECT_EQ(again.mac, link.mac);
    }
    // A new MAC for entry 2 keeps the slots (the link word changes in place): a cached slot
    // reads the new MAC, under the same generation or a later one.
    const uint16_t before = t.generation();
    t.add_static(addr_of(2), mac_of(2, 1), port_of(2, 1));
    NeighLink link;
    if (t.read(slots[2], before, link)) {
        EXPECT_EQ(link.mac, mac_of(2, 1));
    }

    // Removing an entry shifts others back: every cached slot of the old generation is refused.
    const uint16_t gen = t.generation();
    t.remove(addr_of(0));
    EXPECT_NE(t.generation(), gen);
    for (unsigned i = 1; i < 10; ++i) EXPECT_FALSE(t.read(slots[i], gen, link)) << i;
    // Looked up again, each is where it now is, whole.
    for (unsigned i = 1; i < 10; ++i) {
        uint16_t s = 0, g = 0;
        ASSERT_TRUE(t.lookup(addr_of(i), link, s, g));
        EXPECT_TRUE(link_fits(link, i));
        EXPECT_EQ(g, t.generation());
    }
}

TEST(NeighShared, GenerationNeverZeroAndResetEmpties) {
    Neighbours t(16, {}, true);
    for (unsigned i = 0; i < 70000; ++i) {
        t.invalidate_cached();
        ASSERT_NE(t.generation(), 0) << "0 is an empty cache";
    }
    t.add_static(addr_of(1), mac_of(1, 0), 1);
    const uint16_t gen = t.generation();
    NeighTimes times;
    times.reachable_ms = 5;
    t.reset(times);
    EXPECT_EQ(t.size(), 0u);
    EXPECT_EQ(t.times().reachable_ms, 5u);
    EXPECT_NE(t.generation(), gen);
    NeighLink link;
    uint16_t s = 0, g = 0;
    EXPECT_FALSE(t.lookup(addr_of(1), link, s, g));
}

TEST(NeighShared, ReadersTouchKeepsTheEntryUsed) {
    Neighbours t(16, {}, true);
    NeighEntry* e = t.learn(addr_of(1), mac_of(1, 0), 1, 100, true);  // learned from a request
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(t.used_ms(*e), 0u) << "learned, never used for output";
    t.touch(t.index_of(e), 500);
    EXPECT_EQ(t.used_ms(*e), 500u);
    EXPECT_EQ(t.reader_used_ms(*e), 500u);
    t.touch(t.index_of(e), 900);  // within a second of the last touch: no store
    EXPECT_EQ(t.reader_used_ms(*e), 500u);
    t.touch(t.index_of(e), 1600);
    EXPECT_EQ(t.reader_used_ms(*e), 1600u);
}

// One writer rewrites, removes and re-adds entries in a small table (so removals shift probe
// chains) while readers look them up and reuse cached slots. No reader may ever get a link
// that is not exactly some version of the entry it asked for.
TEST(NeighShared, ConcurrentReadersNeverSeeATornEntry) {
    constexpr unsigned kEntries = 40;  // of 64 slots (capacity 48)
    constexpr unsigned kReaders = 2;
    Neighbours t(64, {}, true);
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> bad{0}, found{0}, cached_hits{0}, refused{0};

    std::thread writer([&] {
        unsigned v = 0;
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(700);
        while (std::chrono::steady_clock::now() < end) {
            ++v;
            for (unsigned i = 0; i < kEntries; ++i) t.add_static(addr_of(i), mac_of(i, v), port_of(i, v));
            for (unsigned i = v % 3; i < kEntries; i += 3) t.remove(addr_of(i));
        }
        stop = true;
    });
    std::vector<std::thread> readers;
    for (unsigned r = 0; r < kReaders; ++r) {
        readers.emplace_back([&, r] {
            std::vector<uint16_t> slot(kEntries, 0), gen(kEntries, 0);
            unsigned i = r;
            while (!stop.load(std::memory_order_relaxed)) {
                i = (i + 7) % kEntries;
                NeighLink link;
                if (gen[i] && t.read(slot[i], gen[i], link)) {
                    // A slot cached under this generation still holds entry i.
                    if (!link_fits(link, i)) {
                        ++bad;
                        std::printf("cached bad i=%u state=%d port=%d mac=%02x%02x v=%d\n", i, int(link.state), link.port, link.mac.b[1], link.mac.b[2], link.mac.b[3]);
                    }
                    ++cached_hits;
                    continue;
                }
                if (gen[i]) ++refused;
                gen[i] = 0;
                uint16_t s = 0, g = 0;
                if (!t.lookup(addr_of(i), link, s, g)) continue;
                if (!link_fits(link, i)) {
                    ++bad;
                    std::printf("lookup bad i=%u state=%d port=%d mac=%02x%02x v=%d\n", i, int(link.state), link.port, link.mac.b[1], link.mac.b[2], link.mac.b[3]);
                }
                ++found;
                slot[i] = s;
                gen[i] = g;
            }
        });
    }
    writer.join();
    for (auto& th : readers) th.join();
    EXPECT_EQ(bad.load(), 0u);
    EXPECT_GT(found.load(), 0u);
    EXPECT_GT(cached_hits.load(), 0u);
    EXPECT_GT(refused.load(), 0u) << "the writer's removals must have invalidated cached slots";
    // Once the writer stopped, every entry left reads whole.
    for (unsigned i = 0; i < kEntries; ++i) {
        NeighLink link;
        uint16_t s = 0, g = 0;
        if (t.lookup(addr_of(i), link, s, g)) {
            EXPECT_TRUE(link_fits(link, i)) << i;
        }
        EXPECT_EQ(t.lookup(addr_of(i), link, s, g), t.find(addr_of(i)) != nullptr) << i;
    }
    std::printf("readers: %llu lookups found, %llu cached hits, %llu cached slots refused\n",
                (unsigned long long)found.load(), (unsigned long long)cached_hits.load(),
                (unsigned long long)refused.load());
}

}  // namespace
}  // namespace xvs::stack
