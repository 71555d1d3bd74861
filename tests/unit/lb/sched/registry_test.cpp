// Tests lb/sched/registry.cpp: schedulers are found by their ipvsadm names and only by them.
#include <gtest/gtest.h>

#include <algorithm>

#include "lb/sched/sched.h"

namespace xvs::lb {
namespace {

TEST(SchedRegistry, FindsEachSchedulerByName) {
    for (std::string_view name : {"rr", "wrr", "wlc"}) {
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
    EXPECT_EQ(names, (std::vector<std::string_view>{"rr", "wrr", "wlc"}));
    for (std::string_view name : names) EXPECT_NE(sched_find(name), nullptr) << name;
}

}  // namespace
}  // namespace xvs::lb
