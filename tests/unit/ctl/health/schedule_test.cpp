// Tests for src/ctl/health/schedule.h (keepalived's retry rules and quorum with hysteresis)
// and the loop's timers under an injected clock (src/ctl/health/loop.cpp).
#include "ctl/health/schedule.h"

#include <gtest/gtest.h>

#include <vector>

#include "ctl/health/loop.h"

namespace xvs::ctl::health {
namespace {

CheckerConf timings(uint32_t retry, uint32_t delay_before_retry_ms, uint32_t delay_loop_ms) {
    CheckerConf c;
    c.retry = retry;
    c.delay_before_retry_ms = delay_before_retry_ms;
    c.delay_loop_ms = delay_loop_ms;
    return c;
}

TEST(CheckSchedule, UpCheckerIsRetriedThenDown) {
    const CheckerConf c = timings(2, 1000, 6000);
    CheckState s;
    CheckStep st = check_step(s, c, true);
    EXPECT_FALSE(st.changed);
    EXPECT_EQ(st.next_in, 6000);
    // Failures 1 and 2 are retried delay_before_retry apart, the third marks it down.
    st = check_step(s, c, false);
    EXPECT_FALSE(st.changed);
    EXPECT_TRUE(s.up);
    EXPECT_EQ(st.next_in, 1000);
    st = check_step(s, c, false);
    EXPECT_FALSE(st.changed);
    EXPECT_EQ(st.next_in, 1000);
    st = check_step(s, c, false);
    EXPECT_TRUE(st.changed);
    EXPECT_FALSE(s.up);
    EXPECT_EQ(st.next_in, 6000);
    // Down: failures change nothing and are not retried; one success brings it back.
    st = check_step(s, c, false);
    EXPECT_FALSE(st.changed);
    EXPECT_EQ(st.next_in, 6000);
    st = check_step(s, c, true);
    EXPECT_TRUE(st.changed);
    EXPECT_TRUE(s.up);
    EXPECT_EQ(s.failures, 0u);
}

TEST(CheckSchedule, ASuccessBetweenRetriesStartsTheCountAgain) {
    const CheckerConf c = timings(1, 500, 3000);
    CheckState s;
    check_step(s, c, false);
    check_step(s, c, true);
    EXPECT_FALSE(check_step(s, c, false).changed);  // one failure again: retried
    EXPECT_TRUE(check_step(s, c, false).changed);   // second in a row: down
    CheckState none;
    EXPECT_TRUE(check_step(none, timings(0, 500, 3000), false).changed);  // retry 0: at once
}

// Worst-case time from a server's death to its removal, by the rules: at most one delay_loop
// until the next check, then retry + 1 attempts of up to connect_timeout each with
// delay_before_retry between them.
TEST(CheckSchedule, DetectionTimeArithmetic) {
    CheckerConf c = timings(3, 1000, 6000);
    c.connect_timeout_ms = 2000;
    CheckState s;
    Ms t = 6000;  // the first check after the death, at most a delay_loop later
    for (;;) {
        t += c.connect_timeout_ms;  // each attempt times out
        CheckStep st = check_step(s, c, false);
        if (st.changed) break;
        t += st.next_in;
    }
    EXPECT_EQ(t, 6000 + 3 * (2000 + 1000) + 2000);
}

TEST(Quorum, HysteresisDampensBothWays) {
    // quorum 4, hysteresis 1: lost below 3, gained at 5.
    bool up = true;
    up = quorum_next(up, 4, 4, 1);
    EXPECT_TRUE(up);
    up = quorum_next(up, 3, 4, 1);
    EXPECT_TRUE(up);  // 3 + 1 is not below 4
    up = quorum_next(up, 2, 4, 1);
    EXPECT_FALSE(up);
    up = quorum_next(up, 4, 4, 1);
    EXPECT_FALSE(up);  // 4 is below 4 + 1
    up = quorum_next(up, 5, 4, 1);
    EXPECT_TRUE(up);
    // Without hysteresis the threshold is exact; no live weight at all is always a loss.
    EXPECT_FALSE(quorum_next(true, 1, 2, 0));
    EXPECT_TRUE(quorum_next(false, 2, 2, 0));
    EXPECT_FALSE(quorum_next(true, 0, 1, 5));
    EXPECT_TRUE(quorum_next(true, 0, 0, 0));  // quorum 0: never lost
}

TEST(LoopTimers, InjectedClockFiresInOrderAndCancels) {
    Ms now = 1000;
    auto loop = std::move(*Loop::create([&] { return now; }));
    std::vector<int> fired;
    loop->timer_at(1300, [&] { fired.push_back(3); });
    auto second = loop->timer_at(1200, [&] { fired.push_back(2); });
    loop->timer_at(1100, [&] {
        fired.push_back(1);
        loop->timer_in(
            0, [&] { fired.push_back(10); });  // due now: this pass, after 2 (due as early, older)
    });
    auto cancelled = loop->timer_at(1150, [&] { fired.push_back(99); });
    loop->timer_cancel(cancelled);
    EXPECT_FALSE(cancelled);
    EXPECT_EQ(loop->next_timer(), 1100);
    loop->run_timers();
    EXPECT_TRUE(fired.empty());
    now = 1200;
    loop->run_timers();
    EXPECT_EQ(fired, (std::vector<int>{1, 2, 10}));
    loop->timer_cancel(second);  // fired already: harmless
    now = 5000;
    loop->run_timers();
    EXPECT_EQ(fired, (std::vector<int>{1, 2, 10, 3}));
    EXPECT_EQ(loop->timer_count(), 0u);
}

TEST(LoopTimers, RealClockWakesTheEpollFd) {
    auto loop = std::move(*Loop::create());
    bool fired = false;
    loop->timer_in(30, [&] { fired = true; });
    const Ms t0 = loop->now();
    while (!fired && loop->now() - t0 < 2000) loop->run_once(1000);
    EXPECT_TRUE(fired);
    EXPECT_LT(loop->now() - t0, 500);  // woken by the timerfd, not the 1 s wait
}

}  // namespace
}  // namespace xvs::ctl::health
