// Tests for src/ctl/worker_watch.cpp: a worker whose heartbeat stops for the stall limit is
// reported stuck once (and the watchdog withheld), reported again once when it moves; the
// stall limit follows the watchdog period.
#include "ctl/worker_watch.h"

#include <gtest/gtest.h>

#include <array>

namespace xvs::ctl {
namespace {

using std::chrono::milliseconds;
using Clock = WorkerWatch::Clock;
const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1);

TEST(WorkerWatch, MovingWorkersAreAlive) {
    WorkerWatch w(milliseconds(1000));
    std::array<uint64_t, 2> beats{0, 0};
    for (int tick = 0; tick < 50; ++tick) {
        beats[0] += 1000;
        beats[1] += 1;
        EXPECT_TRUE(w.check(beats, t0 + milliseconds(200 * tick)).empty());
    }
    EXPECT_TRUE(w.all_alive());
}

TEST(WorkerWatch, StuckWorkerReportedOnceThenRecovered) {
    WorkerWatch w(milliseconds(1000));
    std::array<uint64_t, 2> beats{10, 20};
    EXPECT_TRUE(w.check(beats, t0).empty());  // first sight starts the clocks
    beats[0] = 11;  // worker 0 moves, worker 1 does not
    EXPECT_TRUE(w.check(beats, t0 + milliseconds(999)).empty());
    EXPECT_TRUE(w.all_alive());
    beats[0] = 12;
    auto events = w.check(beats, t0 + milliseconds(1000));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].worker, 1u);
    EXPECT_TRUE(events[0].stuck);
    EXPECT_EQ(events[0].silent, milliseconds(1000));
    EXPECT_FALSE(w.all_alive());
    EXPECT_EQ(w.stuck_count(), 1u);
    // Still stuck: no second report, the watchdog stays withheld.
    beats[0] = 13;
    EXPECT_TRUE(w.check(beats, t0 + milliseconds(5000)).empty());
    EXPECT_FALSE(w.all_alive());
    // It moves again: one report, with how long it was silent.
    beats[0] = 14;
    beats[1] = 21;
    events = w.check(beats, t0 + milliseconds(7000));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].worker, 1u);
    EXPECT_FALSE(events[0].stuck);
    EXPECT_EQ(events[0].silent, milliseconds(7000));
    EXPECT_TRUE(w.all_alive());
}

TEST(WorkerWatch, AWorkerThatNeverStartsIsStuckAfterTheStartLimit) {
    WorkerWatch w(milliseconds(500), milliseconds(3000));
    std::array<uint64_t, 2> beats{0, 7};
    EXPECT_TRUE(w.check(beats, t0).empty());
    // Worker 1 has run and stops: the stall limit. Worker 0 never ran: the start limit.
    auto events = w.check(beats, t0 + milliseconds(500));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].worker, 1u);
    EXPECT_TRUE(w.check(beats, t0 + milliseconds(2999)).empty());
    events = w.check(beats, t0 + milliseconds(3000));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].worker, 0u);
    EXPECT_TRUE(events[0].stuck);
    EXPECT_EQ(w.stuck_count(), 2u);
    // Its first iteration: from now on the stall limit applies to it.
    beats[0] = 1;
    events = w.check(beats, t0 + milliseconds(3100));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_FALSE(events[0].stuck);
    EXPECT_EQ(w.check(beats, t0 + milliseconds(3600)).size(), 1u);  // stuck again after 500 ms
}

TEST(WorkerWatch, StallLimitFollowsTheWatchdogPeriod) {
    using std::chrono::microseconds;
    EXPECT_EQ(WorkerWatch::stall_limit_for(microseconds(0)), milliseconds(5000));
    EXPECT_EQ(WorkerWatch::stall_limit_for(microseconds(30'000'000)), milliseconds(5000));
    EXPECT_EQ(WorkerWatch::stall_limit_for(microseconds(4'000'000)), milliseconds(2000));
    EXPECT_EQ(WorkerWatch::stall_limit_for(microseconds(1'000'000)), milliseconds(1000));
}

}  // namespace
}  // namespace xvs::ctl
