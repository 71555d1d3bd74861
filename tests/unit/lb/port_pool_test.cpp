// Tests lb/port_pool.cpp: the worker's share of lo..hi, no port handed out twice while in use,
// FIFO reuse, exhaustion and bad-free counters, and the seeded shuffle.
#include "lb/port_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

namespace xvs::lb {
namespace {

std::vector<uint16_t> drain(PortPool& pool) {
    std::vector<uint16_t> ports;
    while (auto port = pool.alloc()) ports.push_back(*port);
    return ports;
}

TEST(PortPool, FullRangeCapacityWithOneWorker) {
    PortPool pool;  // 1025..65535
    EXPECT_EQ(pool.capacity(), 64511u);
    EXPECT_EQ(pool.available(), 64511u);
}

TEST(PortPool, TwoWorkersSplitByParityAndCoverTheRange) {
    PortPool even(1025, 65535, 0, 2);
    PortPool odd(1025, 65535, 1, 2);
    EXPECT_EQ(even.capacity(), 32255u);  // 1026..65534
    EXPECT_EQ(odd.capacity(), 32256u);   // 1025..65535
    EXPECT_EQ(even.capacity() + odd.capacity(), 64511u);

    std::set<uint16_t> seen;
    for (uint16_t port : drain(even)) {
        EXPECT_EQ(port % 2, 0) << port;
        seen.insert(port);
    }
    for (uint16_t port : drain(odd)) {
        EXPECT_EQ(port % 2, 1) << port;
        EXPECT_TRUE(seen.insert(port).second) << "port in both pools: " << port;
    }
    EXPECT_EQ(seen.size(), 64511u);
    EXPECT_EQ(*seen.begin(), 1025);
    EXPECT_EQ(*seen.rbegin(), 65535);
}

TEST(PortPool, ThreeWorkersGetResidues) {
    PortPool pool(1000, 1011, 2, 3);
    EXPECT_EQ(drain(pool), (std::vector<uint16_t>{1001, 1004, 1007, 1010}));
}

TEST(PortPool, IdentityOrderWithoutSeed) {
    PortPool pool(5000, 5004);
    EXPECT_EQ(drain(pool), (std::vector<uint16_t>{5000, 5001, 5002, 5003, 5004}));
}

TEST(PortPool, AllocUntilExhaustedNeverRepeats) {
    PortPool pool(1025, 65535, 0, 1, 42);
    std::set<uint16_t> seen;
    for (size_t i = 0; i < pool.capacity(); ++i) {
        auto port = pool.alloc();
        ASSERT_TRUE(port.has_value()) << i;
        EXPECT_TRUE(seen.insert(*port).second) << "repeated " << *port;
        EXPECT_TRUE(pool.in_use(*port));
        EXPECT_GE(*port, 1025);
    }
    EXPECT_EQ(pool.available(), 0u);
    EXPECT_EQ(pool.exhausted(), 0u);
    EXPECT_FALSE(pool.alloc().has_value());
}

TEST(PortPool, ExhaustionIsCounted) {
    PortPool pool(2000, 2001);
    EXPECT_TRUE(pool.alloc());
    EXPECT_TRUE(pool.alloc());
    EXPECT_EQ(pool.exhausted(), 0u);
    EXPECT_FALSE(pool.alloc());
    EXPECT_FALSE(pool.alloc());
    EXPECT_EQ(pool.exhausted(), 2u);
}

TEST(PortPool, FreeThenReallocAndFifoReuse) {
    PortPool pool(3000, 3003);
    const std::vector<uint16_t> first = drain(pool);
    ASSERT_EQ(first.size(), 4u);
    pool.free(3002);
    pool.free(3000);
    EXPECT_FALSE(pool.in_use(3002));
    EXPECT_TRUE(pool.in_use(3001));
    EXPECT_EQ(pool.available(), 2u);
    // Freed ports come back in the order they were freed.
    EXPECT_EQ(pool.alloc(), std::optional<uint16_t>(3002));
    EXPECT_EQ(pool.alloc(), std::optional<uint16_t>(3000));
    EXPECT_FALSE(pool.alloc());
}

TEST(PortPool, FreedPortIsReusedAsLateAsPossible) {
    PortPool pool(4000, 4003);
    auto port = pool.alloc();  // 4000
    ASSERT_EQ(port, std::optional<uint16_t>(4000));
    pool.free(*port);
    // 4001..4003 were free longer, so they go out before 4000 comes back.
    EXPECT_EQ(drain(pool), (std::vector<uint16_t>{4001, 4002, 4003, 4000}));
}

TEST(PortPool, WrapsAroundTheRingManyTimes) {
    PortPool pool(6000, 6002);
    std::vector<uint16_t> order;
    for (int i = 0; i < 10; ++i) {
        auto port = pool.alloc();
        ASSERT_TRUE(port);
        order.push_back(*port);
        pool.free(*port);
    }
    EXPECT_EQ(order, (std::vector<uint16_t>{6000, 6001, 6002, 6000, 6001, 6002, 6000, 6001,
                                            6002, 6000}));
    EXPECT_EQ(pool.available(), 3u);
}

TEST(PortPool, BadFreesAreIgnoredAndCounted) {
    PortPool pool(7000, 7003, 0, 2);  // owns 7000 and 7002
    auto port = pool.alloc();
    ASSERT_EQ(port, std::optional<uint16_t>(7000));

    pool.free(7002);  // ours but not in use
    pool.free(7001);  // another worker's
    pool.free(9000);  // outside the range
    EXPECT_EQ(pool.bad_frees(), 3u);
    EXPECT_EQ(pool.available(), 1u);

    pool.free(7000);
    EXPECT_EQ(pool.bad_frees(), 3u);
    pool.free(7000);  // double free
    EXPECT_EQ(pool.bad_frees(), 4u);
    EXPECT_EQ(pool.available(), 2u);  // the ring holds each port once
    EXPECT_EQ(drain(pool), (std::vector<uint16_t>{7002, 7000}));
}

TEST(PortPool, ShuffleIsAPermutationAndDiffersFromIdentity) {
    PortPool plain(1025, 65535);
    PortPool shuffled(1025, 65535, 0, 1, 0x5eed);
    const std::vector<uint16_t> identity = drain(plain);
    const std::vector<uint16_t> order = drain(shuffled);
    EXPECT_NE(order, identity);
    std::vector<uint16_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, identity);
    // Not merely rotated or barely touched: most positions hold a different port.
    size_t moved = 0;
    for (size_t i = 0; i < order.size(); ++i) moved += order[i] != identity[i];
    EXPECT_GT(moved, order.size() * 9 / 10);
}

TEST(PortPool, ShuffleIsDeterministicPerSeed) {
    PortPool a(1025, 2048, 0, 1, 7);
    PortPool b(1025, 2048, 0, 1, 7);
    PortPool c(1025, 2048, 0, 1, 8);
    const std::vector<uint16_t> order_a = drain(a);
    EXPECT_EQ(order_a, drain(b));
    EXPECT_NE(order_a, drain(c));
}

TEST(PortPool, ShuffleKeepsWorkerShare) {
    PortPool pool(1025, 65535, 1, 4, 99);
    for (uint16_t port : drain(pool)) EXPECT_EQ(port % 4, 1) << port;
}

TEST(PortPool, EmptyRange) {
    PortPool pool(2000, 1999);
    EXPECT_EQ(pool.capacity(), 0u);
    EXPECT_FALSE(pool.alloc());
    EXPECT_EQ(pool.exhausted(), 1u);
    pool.free(2000);
    EXPECT_EQ(pool.bad_frees(), 1u);
}

TEST(PortPool, SinglePortAtTopOfRange) {
    // hi == 65535 must not wrap the loop counter.
    PortPool pool(65535, 65535);
    EXPECT_EQ(drain(pool), (std::vector<uint16_t>{65535}));
}

}  // namespace
}  // namespace xvs::lb
