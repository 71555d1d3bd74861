// Tests for src/tools/xvs-agent/sample.cpp: the agent's parsing of proc(5) and cgroup files
// and of the operator's load value, on fixed texts.
#include "sample.h"

#include <gtest/gtest.h>

namespace xvs::agent {
namespace {

TEST(AgentSample, ProcStatBusyShareBetweenSamples) {
    // user nice system idle iowait irq softirq steal guest guest_nice
    auto a = parse_proc_stat("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n");
    auto b = parse_proc_stat("cpu  400 0 150 900 50 0 0 0 40 0\n");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->total, 1000u);
    EXPECT_EQ(a->busy, 150u);
    EXPECT_EQ(cpu_permille(*a, *b), 800);  // 400 busy of 500
    EXPECT_EQ(cpu_permille(*a, *a), 0);
    EXPECT_FALSE(parse_proc_stat("intr 1 2 3\n"));
    EXPECT_FALSE(parse_proc_stat("cpu  1 x 3 4\n"));
}

TEST(AgentSample, LoadavgAndMeminfo) {
    auto la = parse_loadavg("7.56 3.10 1.02 5/1234 5678\n");
    ASSERT_TRUE(la);
    EXPECT_EQ(la->x100, 756u);
    EXPECT_EQ(la->running, 5);
    EXPECT_FALSE(parse_loadavg("garbage"));
    auto m = parse_meminfo_permille(
        "MemTotal:        8000000 kB\nMemFree:   100 kB\nMemAvailable:    6000000 kB\n");
    ASSERT_TRUE(m);
    EXPECT_EQ(*m, 250);
    EXPECT_FALSE(parse_meminfo_permille("MemTotal: 0 kB\nMemAvailable: 0 kB\n"));
}

TEST(AgentSample, CountsEstablishedRowsOnly) {
    const char* tcp =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"
        "   0: 0902A8C0:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0\n"
        "   1: 0902A8C0:1F90 0101A8C0:C350 01 00000000:00000000 00:00000000 00000000     0\n"
        "   2: 0902A8C0:1F90 0201A8C0:C351 01 00000000:00000000 00:00000000 00000000     0\n"
        "   3: 0902A8C0:1F90 0301A8C0:C352 06 00000000:00000000 00:00000000 00000000     0\n";
    EXPECT_EQ(count_established(tcp), 2u);
    EXPECT_EQ(count_established(""), 0u);
}

TEST(AgentSample, LoadPercentIsClampedPermille) {
    EXPECT_EQ(parse_load_percent("37.5\n"), 375u);
    EXPECT_EQ(parse_load_percent(" 80 %"), 800u);
    EXPECT_EQ(parse_load_percent("250"), 1000u);
    EXPECT_EQ(parse_load_percent("0"), 0u);
    EXPECT_FALSE(parse_load_percent("high"));
    EXPECT_FALSE(parse_load_percent("-5"));
}

TEST(AgentSample, StatState) {
    EXPECT_EQ(parse_stat_state("4242 (sh) R 1 4242 4242 0 -1"), 'R');
    EXPECT_EQ(parse_stat_state("17 (a (b) c) S 1 2"), 'S');
    EXPECT_FALSE(parse_stat_state("17 (trunc"));
}

TEST(AgentSample, CgroupUsage) {
    EXPECT_EQ(parse_cgroup_v2_usage_ns("usage_usec 1500\nuser_usec 1000\n"), 1'500'000u);
    EXPECT_FALSE(parse_cgroup_v2_usage_ns("user_usec 1000\n"));
    EXPECT_EQ(parse_cgroup_v1_usage_ns("123456789\n"), 123456789u);
    // One CPU of two busy for the whole second: 50 %.
    EXPECT_EQ(cgroup_cpu_permille(1'000'000'000, 1'000'000'000, 2), 500);
    EXPECT_EQ(cgroup_cpu_permille(5'000'000'000, 1'000'000'000, 2), 1000);
    EXPECT_EQ(cgroup_cpu_permille(1, 0, 2), 0);
}

}  // namespace
}  // namespace xvs::agent
