// Tests for the SYN-cookie secrets of src/lb/director.cpp (random keys, rotation, publication in
// the snapshot) and their periodic rotation by Controller::cookie_tick (src/ctl/controller.cpp).
// No EAL: a Director and a Controller without workers.
#include <gtest/gtest.h>

#include "ctl/controller.h"
#include "lb/director.h"
#include "net/syncookie.h"

namespace xvs::lb {
namespace {

bool all_zero(const std::array<uint8_t, 16>& k) {
    for (uint8_t b : k)
        if (b) return false;
    return true;
}

bool same(const net::CookieKeys& a, const net::CookieKeys& b) {
    return a.k0 == b.k0;
}

TEST(DirectorCookie, RandomKeysPublishedAtConstruction) {
    Director d;
    const net::CookieSecrets& s = d.cookie_secrets();
    EXPECT_FALSE(all_zero(s.current.k0));
    EXPECT_FALSE(all_zero(s.previous.k0));
    EXPECT_FALSE(same(s.current, s.previous));
    EXPECT_EQ(s.current_since, 0u);
    ASSERT_NE(d.snapshot(), nullptr);
    EXPECT_TRUE(same(d.snapshot()->cookie.current, s.current));
    EXPECT_TRUE(same(d.snapshot()->cookie.previous, s.previous));

    Director other;  // every daemon start draws its own keys
    EXPECT_FALSE(same(other.cookie_secrets().current, s.current));
}

TEST(DirectorCookie, RotationPublishesNewKeysKeepingTheOldAsPrevious) {
    Director d;
    const net::CookieKeys old_current = d.cookie_secrets().current;
    const uint64_t gen = d.snapshot()->generation;
    d.rotate_cookie_secrets(5000);
    const Snapshot* snap = d.snapshot();
    EXPECT_GT(snap->generation, gen);
    EXPECT_TRUE(same(snap->cookie.previous, old_current));
    EXPECT_FALSE(same(snap->cookie.current, old_current));
    EXPECT_EQ(snap->cookie.current_since, 5001u);
    EXPECT_TRUE(same(snap->cookie.current, d.cookie_secrets().current));

    // Later config commits keep the same secrets.
    d.commit();
    EXPECT_TRUE(same(d.snapshot()->cookie.current, snap->cookie.current));
    EXPECT_EQ(d.snapshot()->cookie.current_since, 5001u);
}

TEST(DirectorCookie, CookieFromBeforeRotationStillValidAfter) {
    Director d;
    const net::CookieTuple t{0x0a00000a, 0x640000c0, 0x3930, 0x5000};
    const net::CookieOptions o{3, 7, true, true};
    const uint32_t now = 70'000;
    const uint32_t c = net::syncookie_make(d.snapshot()->cookie, t, 1, now, o);
    d.rotate_cookie_secrets(now);
    EXPECT_EQ(net::syncookie_check(d.snapshot()->cookie, t, 1, c, now + 1), o);
    EXPECT_EQ(net::syncookie_check(d.snapshot()->cookie, t, 1, c, now + 2), o);
    // Minted after the rotation with the new snapshot: valid too.
    const uint32_t c2 = net::syncookie_make(d.snapshot()->cookie, t, 1, now + 1, o);
    EXPECT_EQ(net::syncookie_check(d.snapshot()->cookie, t, 1, c2, now + 1), o);
    // Two rotations later the first keys are gone.
    d.rotate_cookie_secrets(now + 1);
    EXPECT_FALSE(net::syncookie_check(d.snapshot()->cookie, t, 1, c, now + 2));
}

TEST(ControllerCookieTick, RotatesEveryRotatePeriods) {
    Director d;
    ctl::Controller ctl(d, {}, {}, [] { return Result<void>{}; });
    const uint32_t start = 1'000;
    const uint32_t period = ctl::Controller::kCookieRotatePeriods;
    ASSERT_EQ(period, 60u);
    const net::CookieKeys first = d.cookie_secrets().current;
    EXPECT_FALSE(ctl.cookie_tick(start));  // records the start only
    EXPECT_FALSE(ctl.cookie_tick(start + period - 1));
    EXPECT_TRUE(same(d.cookie_secrets().current, first));
    EXPECT_TRUE(ctl.cookie_tick(start + period));
    EXPECT_FALSE(same(d.cookie_secrets().current, first));
    EXPECT_EQ(d.snapshot()->cookie.current_since, start + period + 1);
    EXPECT_FALSE(ctl.cookie_tick(start + period + 1));
    EXPECT_FALSE(ctl.cookie_tick(start + 2 * period - 1));
    EXPECT_TRUE(ctl.cookie_tick(start + 2 * period));
    EXPECT_EQ(d.snapshot()->cookie.current_since, start + 2 * period + 1);
}

TEST(ControllerCookieTick, CounterWrapDoesNotStall) {
    Director d;
    ctl::Controller ctl(d, {}, {}, [] { return Result<void>{}; });
    EXPECT_FALSE(ctl.cookie_tick(0xFFFFFFF0u));
    EXPECT_FALSE(ctl.cookie_tick(0x0000001Au));  // 42 periods later, across the wrap
    EXPECT_TRUE(ctl.cookie_tick(0x0000002Cu));   // 60 periods
}

}  // namespace
}  // namespace xvs::lb
