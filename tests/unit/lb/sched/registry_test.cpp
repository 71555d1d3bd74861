// Tests lb/sched/registry.cpp: schedulers are found by their ipvsadm names and only by them.
#include <gtest/gtest.h>

#include <algorithm>

#include "lb/sched/sched.h"

namespace xvs::lb {
namespace {

TEST(SchedRegistry, FindsEachSchedulerByName) {
    for (std::string_view name : {"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed",
                                  "nq", "fo", "ovf", "mh", "twos", "conhash"}) {
        const Scheduler* sched = sched_find(name);
        ASSERT_NE(sched, nullptr) << name;
        EXPECT_EQ(sched->name, name);
        EXPECT_NE(sched->build, nullptr) << name;
        EXPECT_NE(sched->pick, nullptr) << name;
    }
}

TEST(SchedRegistry, DistinctSchedulersForDistinctNames) {
    EXPECT_NE(sched_find("rr"), sched_find("wrr"));
    EXPECT_NE(sched_find("wrr"), sched_find("wlc"));
    EXPECT_NE(sched_find("rr"), sched_find("wlc"));
}

TEST(SchedRegistry, UnknownNameIsNull) {
    EXPECT_EQ(sched_find("nosuch"), nullptr);
    EXPECT_EQ(sched_find(""), nullptr);
    EXPECT_EQ(sched_find("RR"), nullptr);  // ipvsadm names are lower case
    EXPECT_EQ(sched_find("wr"), nullptr);  // no prefix matching
    EXPECT_EQ(sched_find("rrr"), nullptr);
}

TEST(SchedRegistry, NamesListsEveryRegisteredSchedulerInOrder) {
    const std::vector<std::string_view> names = sched_names();
    EXPECT_EQ(names,
              (std::vector<std::string_view>{"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh",
                                             "sed", "nq", "fo", "ovf", "mh", "twos", "conhash"}));
    for (std::string_view name : names) EXPECT_NE(sched_find(name), nullptr) << name;
}

TEST(SchedRegistry, OnlyShAndMhTakeFallbackAndPortFlags) {
    for (std::string_view name : sched_names()) {
        const uint32_t expected =
            name == "sh" || name == "mh" ? kSchedFlagFallback | kSchedFlagPort : 0u;
        EXPECT_EQ(sched_find(name)->flags, expected) << name;
        EXPECT_EQ(sched_find(name)->needs_locality, name == "lblc" || name == "lblcr") << name;
    }
}

TEST(SchedRegistry, FlagNamesAsIpvsadmPrintsThem) {
    EXPECT_EQ(sched_flag_names("sh", kSchedFlagFallback | kSchedFlagPort),
              (std::vector<std::string>{"sh-fallback", "sh-port"}));
    EXPECT_EQ(sched_flag_names("mh", kSchedFlagPort), (std::vector<std::string>{"mh-port"}));
    EXPECT_EQ(sched_flag_names("rr", kSchedFlagFallback | kSchedFlag3),
              (std::vector<std::string>{"flag-1", "flag-3"}));
    uint32_t flag = 0;
    EXPECT_TRUE(sched_flag_parse("mh-fallback", flag));
    EXPECT_EQ(flag, kSchedFlagFallback);
    EXPECT_TRUE(sched_flag_parse("flag-2", flag));
    EXPECT_EQ(flag, kSchedFlagPort);
    EXPECT_FALSE(sched_flag_parse("rr-port", flag));
    EXPECT_FALSE(sched_flag_parse("sh-", flag));
}

TEST(SchedRegistry, Primes) {
    for (uint32_t p : {2u, 3u, 251u, 65537u, 131071u}) EXPECT_TRUE(sched_is_prime(p)) << p;
    for (uint32_t n : {0u, 1u, 4u, 65536u, 65535u, 251u * 257u})
        EXPECT_FALSE(sched_is_prime(n)) << n;
}

}  // namespace
}  // namespace xvs::lb
