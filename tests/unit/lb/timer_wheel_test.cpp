// Tests lb/timer_wheel.{h,cpp}: a timer fires at the first tick at or after its expiry (never
// early, never a revolution late), cancel/re-arm work from anywhere including callbacks, and a
// budget-limited advance() resumes where it stopped.
#include "lb/timer_wheel.h"

#include <gtest/gtest.h>

#include <vector>

namespace xvs::lb {
namespace {

// A node that remembers when (in the test's clock) it fired. A wheel holds the nodes of one
// array (power-of-two stride): the fixture's pool_.
struct alignas(64) TestTimer {
    explicit TestTimer(int timer_id = 0) : id(timer_id) {}
    TimerNode node;  // first member: the callback casts back from TimerNode*
    int id;
    std::vector<uint64_t> fired_at;
};

TestTimer* owner(TimerNode* node) { return reinterpret_cast<TestTimer*>(node); }

class TimerWheelTest : public ::testing::Test {
protected:
    TimerWheelTest() { attach(wheel_); }
    void attach(TimerWheel& wheel) { wheel.attach(pool_, sizeof(TestTimer), kPool); }
    // The next unused node of the pool, with this id.
    TestTimer& make(int id = 0) {
        EXPECT_LT(used_, kPool);
        pool_[used_].id = id;
        return pool_[used_++];
    }

    static constexpr unsigned kPool = 64;
    TestTimer pool_[kPool];
    unsigned used_ = 0;
    // 8 slots of 10 ms: one revolution is 80 ms, short enough to cross it in tests.
    TimerWheel wheel_{8, 10, 0};
    uint64_t now_ = 0;
    std::vector<int> order_;

    size_t advance_to(uint64_t now_ms, size_t budget = SIZE_MAX) {
        now_ = now_ms;
        return wheel_.advance(
            now_ms,
            [this](TimerNode* node) {
                TestTimer* timer = owner(node);
                timer->fired_at.push_back(now_);
                order_.push_back(timer->id);
                EXPECT_FALSE(node->armed());
            },
            budget);
    }

    // Advances one millisecond at a time and returns the first time t fired (0 = never).
    uint64_t step_until_fired(TestTimer& t, uint64_t until_ms) {
        for (uint64_t ms = now_ + 1; ms <= until_ms; ++ms) {
            advance_to(ms);
            if (!t.fired_at.empty()) return t.fired_at.front();
        }
        return 0;
    }
};

TEST_F(TimerWheelTest, SlotsRoundUpToPowerOfTwo) {
    // 5 slots become 8: a timer 8 ticks ahead lands in the slot of tick 0 and must wait a full
    // revolution rather than fire at tick 0 or tick 5.
    TimerWheel wheel(5, 1, 0);
    attach(wheel);
    TestTimer& t = make();
    wheel.arm(&t.node, 8);
    size_t fired = 0;
    for (uint64_t ms = 0; ms < 8; ++ms) fired += wheel.advance(ms, [](TimerNode*) {});
    EXPECT_EQ(fired, 0u);
    EXPECT_EQ(wheel.advance(8, [](TimerNode*) {}), 1u);
}

TEST_F(TimerWheelTest, ArmAndAdvanceFiresOnceAtExpiry) {
    TestTimer& t = make();
    wheel_.arm(&t.node, 30);
    EXPECT_TRUE(t.node.armed());
    EXPECT_EQ(wheel_.size(), 1u);
    EXPECT_EQ(step_until_fired(t, 200), 30u);
    EXPECT_FALSE(t.node.armed());
    EXPECT_EQ(wheel_.size(), 0u);
    advance_to(400);
    EXPECT_EQ(t.fired_at.size(), 1u);
}

TEST_F(TimerWheelTest, ExpiryInsideATickRoundsUpNeverEarly) {
    TestTimer& t = make();
    wheel_.arm(&t.node, 25);  // tick 2 starts at 20 ms, before 25: must wait for tick 3
    EXPECT_EQ(step_until_fired(t, 200), 30u);
}

TEST_F(TimerWheelTest, NotEarlyForAnyExpiry) {
    for (uint64_t expires = 1; expires < 200; expires += 7) {
        TimerWheel wheel(8, 10, 0);
        attach(wheel);
        TestTimer& t = make();
        wheel.arm(&t.node, expires);
        uint64_t fired_at = 0;
        for (uint64_t ms = 0; ms <= 300 && fired_at == 0; ++ms) {
            wheel.advance(ms, [&](TimerNode*) { fired_at = ms; });
        }
        EXPECT_GE(fired_at, expires);
        EXPECT_LT(fired_at, expires + 10) << "later than one tick after " << expires;
    }
}

TEST_F(TimerWheelTest, CoarseAdvanceFiresEverythingDue) {
    TestTimer &a = make(1), &b = make(2), &c = make(3);
    wheel_.arm(&a.node, 50);
    wheel_.arm(&b.node, 10);
    wheel_.arm(&c.node, 500);
    EXPECT_EQ(advance_to(60), 2u);
    EXPECT_EQ(order_, (std::vector<int>{2, 1}));  // in expiry order
    EXPECT_EQ(wheel_.size(), 1u);
}

TEST_F(TimerWheelTest, LongerThanOneRevolutionFiresOnTime) {
    TestTimer& t = make();
    wheel_.arm(&t.node, 250);  // > 3 revolutions of 80 ms; shares a slot with 10, 90, 170
    EXPECT_EQ(step_until_fired(t, 400), 250u);
}

TEST_F(TimerWheelTest, SameSlotDifferentRevolutions) {
    TestTimer &soon = make(1), &later = make(2);
    wheel_.arm(&later.node, 90);  // tick 9, slot 1
    wheel_.arm(&soon.node, 10);   // tick 1, slot 1
    advance_to(10);
    EXPECT_EQ(order_, (std::vector<int>{1}));
    EXPECT_TRUE(later.node.armed());
    advance_to(89);
    EXPECT_EQ(order_, (std::vector<int>{1}));
    advance_to(90);
    EXPECT_EQ(order_, (std::vector<int>{1, 2}));
}

TEST_F(TimerWheelTest, SameTickFiresInArmOrder) {
    TestTimer &a = make(1), &b = make(2), &c = make(3);
    wheel_.arm(&b.node, 40);
    wheel_.arm(&a.node, 40);
    wheel_.arm(&c.node, 35);
    advance_to(40);
    EXPECT_EQ(order_, (std::vector<int>{2, 1, 3}));
}

TEST_F(TimerWheelTest, CancelPreventsFiring) {
    TestTimer &a = make(1), &b = make(2);
    wheel_.arm(&a.node, 20);
    wheel_.arm(&b.node, 20);
    wheel_.cancel(&a.node);
    EXPECT_FALSE(a.node.armed());
    EXPECT_EQ(wheel_.size(), 1u);
    wheel_.cancel(&a.node);  // cancelling an unarmed node is a no-op
    EXPECT_EQ(wheel_.size(), 1u);
    advance_to(100);
    EXPECT_EQ(order_, (std::vector<int>{2}));
    EXPECT_TRUE(a.fired_at.empty());
}

TEST_F(TimerWheelTest, RearmMovesTheTimer) {
    TestTimer& t = make();
    wheel_.arm(&t.node, 20);
    wheel_.arm(&t.node, 70);  // re-arm while armed: moves, does not duplicate
    EXPECT_EQ(wheel_.size(), 1u);
    EXPECT_EQ(step_until_fired(t, 200), 70u);
    EXPECT_EQ(t.fired_at.size(), 1u);

    TestTimer& u = make();
    wheel_.arm(&u.node, 190);
    wheel_.arm(&u.node, 100);  // earlier than before
    EXPECT_EQ(step_until_fired(u, 300), 100u);
}

TEST_F(TimerWheelTest, PastExpiryFiresAtTheNextTickNotARevolutionLate) {
    advance_to(100);  // ticks up to 10 are processed
    TestTimer& t = make();
    wheel_.arm(&t.node, 20);  // already in the past: its slot was passed long ago
    EXPECT_EQ(advance_to(109), 0u);
    EXPECT_EQ(advance_to(110), 1u);
    EXPECT_EQ(t.fired_at, (std::vector<uint64_t>{110}));
}

TEST_F(TimerWheelTest, NonZeroStartTime) {
    TimerWheel wheel(8, 10, 1'000'000);
    attach(wheel);
    TestTimer& t = make();
    wheel.arm(&t.node, 1'000'050);
    EXPECT_EQ(wheel.advance(1'000'049, [](TimerNode*) {}), 0u);
    EXPECT_EQ(wheel.advance(1'000'050, [](TimerNode*) {}), 1u);
}

TEST_F(TimerWheelTest, ClockGoingBackwardsFiresNothing) {
    TestTimer& t = make();
    wheel_.arm(&t.node, 50);
    advance_to(40);
    EXPECT_EQ(advance_to(10), 0u);
    EXPECT_TRUE(t.node.armed());
    EXPECT_EQ(advance_to(50), 1u);
}

TEST_F(TimerWheelTest, RearmFromCallbackFiresAgainLater) {
    TestTimer& t = make();
    wheel_.arm(&t.node, 30);
    int fires = 0;
    for (uint64_t ms = 1; ms <= 200; ++ms) {
        now_ = ms;
        wheel_.advance(ms, [&](TimerNode* node) {
            ++fires;
            owner(node)->fired_at.push_back(ms);
            if (fires < 3) wheel_.arm(node, ms + 45);  // e.g. a conn seen again: lazy re-arm
        });
    }
    EXPECT_EQ(t.fired_at, (std::vector<uint64_t>{30, 80, 130}));  // 75 and 125 round up
    EXPECT_FALSE(t.node.armed());
    EXPECT_EQ(wheel_.size(), 0u);
}

TEST_F(TimerWheelTest, ReuseFromCallbackIsAllowed) {
    // An expired conn's slot goes back to the pool and may be taken (overwritten) at once.
    TestTimer& t = make(1);
    TestTimer& u = make(2);
    wheel_.arm(&t.node, 10);
    wheel_.arm(&u.node, 10);
    size_t fired = wheel_.advance(10, [](TimerNode* node) { *owner(node) = TestTimer{9}; });
    EXPECT_EQ(fired, 2u);
    EXPECT_EQ(wheel_.size(), 0u);
    EXPECT_EQ(t.id, 9);
    EXPECT_FALSE(t.node.armed());
    EXPECT_EQ(advance_to(200), 0u);
}

TEST_F(TimerWheelTest, FiresMsIsTheStartOfTheNodesTick) {
    TestTimer& t = make();
    wheel_.arm(&t.node, 25);
    EXPECT_EQ(wheel_.fires_ms(t.node), 30u);
    advance_to(400);
    wheel_.arm(&t.node, 1000);
    EXPECT_EQ(wheel_.fires_ms(t.node), 1000u);
}

TEST_F(TimerWheelTest, TicksPastTwoToTheThirtyTwo) {
    // Ticks are 32 bits in a node: a wheel whose clock crosses 2^32 ticks (1 ms ticks: 49.7
    // days of uptime) still fires on time, and a timer armed before the wrap fires after it.
    const uint64_t start = (uint64_t{1} << 32) - 5;
    TimerWheel wheel(8, 1, start);
    attach(wheel);
    TestTimer& a = make(1);
    TestTimer& b = make(2);
    wheel.arm(&a.node, start + 3);   // before the wrap
    wheel.arm(&b.node, start + 12);  // after it, another revolution
    EXPECT_EQ(wheel.fires_ms(b.node), start + 12);
    std::vector<std::pair<int, uint64_t>> fired;
    for (uint64_t ms = start; ms <= start + 20; ++ms)
        wheel.advance(ms, [&](TimerNode* n) { fired.emplace_back(owner(n)->id, ms); });
    EXPECT_EQ(fired, (std::vector<std::pair<int, uint64_t>>{{1, start + 3}, {2, start + 12}}));
}

TEST_F(TimerWheelTest, FarFutureFiresEarlyAtTheLimit) {
    // More than 2^31 ticks ahead does not fit a node's 32-bit difference: it fires at the
    // limit (the lazy callers re-arm), never wrapped into the past.
    TimerWheel wheel(8, 1, 0);
    attach(wheel);
    TestTimer& t = make();
    wheel.arm(&t.node, uint64_t{1} << 40);
    EXPECT_EQ(wheel.fires_ms(t.node), (uint64_t{1} << 31) - 1);
    EXPECT_EQ(wheel.advance(1000, [](TimerNode*) {}), 0u);
}

TEST_F(TimerWheelTest, BudgetStopsAndResumesAtTheSameTick) {
    TestTimer &a = make(1), &b = make(2), &c = make(3), &d = make(4);
    wheel_.arm(&a.node, 20);
    wheel_.arm(&b.node, 20);
    wheel_.arm(&c.node, 20);
    wheel_.arm(&d.node, 30);
    EXPECT_EQ(advance_to(100, 2), 2u);
    EXPECT_EQ(order_, (std::vector<int>{1, 2}));
    EXPECT_EQ(wheel_.size(), 2u);
    EXPECT_EQ(advance_to(100, 1), 1u);
    EXPECT_EQ(order_, (std::vector<int>{1, 2, 3}));  // c before d: resumed at tick 2
    EXPECT_EQ(advance_to(100), 1u);
    EXPECT_EQ(order_, (std::vector<int>{1, 2, 3, 4}));
    EXPECT_EQ(wheel_.size(), 0u);
}

TEST_F(TimerWheelTest, ZeroBudgetFiresNothing) {
    TestTimer& t = make();
    wheel_.arm(&t.node, 10);
    EXPECT_EQ(advance_to(50, 0), 0u);
    EXPECT_TRUE(t.node.armed());
    EXPECT_EQ(advance_to(50), 1u);
}

TEST_F(TimerWheelTest, BudgetLeavesFutureRevolutionsAlone) {
    TestTimer &due = make(1), &due2 = make(2), &later = make(3);
    wheel_.arm(&later.node, 90);  // slot 1, next revolution
    wheel_.arm(&due.node, 10);    // slot 1
    wheel_.arm(&due2.node, 10);   // slot 1
    EXPECT_EQ(advance_to(10, 1), 1u);
    EXPECT_EQ(advance_to(10), 1u);
    EXPECT_EQ(order_, (std::vector<int>{1, 2}));
    EXPECT_TRUE(later.node.armed());
    EXPECT_EQ(step_until_fired(later, 200), 90u);
}

TEST_F(TimerWheelTest, SizeCountsArmedTimers) {
    TestTimer* timers = &make();
    for (int i = 1; i < 5; ++i) make();
    for (int i = 0; i < 5; ++i) wheel_.arm(&timers[i].node, 10 * (i + 1));
    EXPECT_EQ(wheel_.size(), 5u);
    wheel_.cancel(&timers[4].node);
    EXPECT_EQ(wheel_.size(), 4u);
    advance_to(25);
    EXPECT_EQ(wheel_.size(), 2u);
    advance_to(100);
    EXPECT_EQ(wheel_.size(), 0u);
}

TEST_F(TimerWheelTest, CancelAnotherDueTimerFromCallback) {
    // An expiry that tears down a related object (say a conn and its template) cancels that
    // object's timer, which may be the very next node in the slot being walked.
    TestTimer &a = make(1), &b = make(2), &c = make(3);
    wheel_.arm(&a.node, 20);
    wheel_.arm(&b.node, 20);
    wheel_.arm(&c.node, 20);
    size_t fired = wheel_.advance(20, [&](TimerNode* node) {
        order_.push_back(owner(node)->id);
        if (node == &a.node) wheel_.cancel(&b.node);
    });
    EXPECT_EQ(fired, 2u);
    EXPECT_EQ(order_, (std::vector<int>{1, 3}));
    EXPECT_FALSE(b.node.armed());
    EXPECT_EQ(wheel_.size(), 0u);
}

TEST_F(TimerWheelTest, RearmAnotherDueTimerFromCallback) {
    TestTimer &a = make(1), &b = make(2), &c = make(3);
    wheel_.arm(&a.node, 20);
    wheel_.arm(&b.node, 20);
    wheel_.arm(&c.node, 20);
    size_t fired = wheel_.advance(20, [&](TimerNode* node) {
        order_.push_back(owner(node)->id);
        if (node == &a.node) wheel_.arm(&b.node, 50);  // postpone b into another slot
    });
    EXPECT_EQ(fired, 2u);
    EXPECT_EQ(order_, (std::vector<int>{1, 3}));
    EXPECT_EQ(wheel_.size(), 1u);
    EXPECT_EQ(advance_to(49), 0u);
    EXPECT_EQ(advance_to(50), 1u);
}

TEST_F(TimerWheelTest, RearmToNowFromCallbackWaitsForTheNextTick) {
    // Re-arming at (or before) the time being processed must not fire again within the same
    // advance(): with an unlimited budget that would spin forever.
    TestTimer& t = make();
    wheel_.arm(&t.node, 20);
    size_t calls = 0;
    size_t fired = wheel_.advance(
        20,
        [&](TimerNode* node) {
            ++calls;
            wheel_.arm(node, 20);
        },
        10);
    EXPECT_EQ(fired, 1u);
    EXPECT_EQ(calls, 1u);
    EXPECT_TRUE(t.node.armed());
    EXPECT_EQ(wheel_.advance(29, [](TimerNode*) {}), 0u);
    EXPECT_EQ(wheel_.advance(30, [](TimerNode*) {}), 1u);
}

}  // namespace
}  // namespace xvs::lb
