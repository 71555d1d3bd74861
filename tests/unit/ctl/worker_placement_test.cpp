// Worker placement (`worker_defs { workers N cpus LIST }`) and the port queues N workers
// need: the cpu-list syntax, the default placement that leaves CPU 0 to the control thread,
// and every refusal at its file:line, over explicit sets of available CPUs (machine-free).
#include "ctl/worker_placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ctl/config_parser.h"

namespace xvs::ctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(CpuList, LinuxSyntax) {
    EXPECT_THAT(*parse_cpu_list("0"), ElementsAre(0u));
    EXPECT_THAT(*parse_cpu_list("1-3,5"), ElementsAre(1u, 2u, 3u, 5u));
    EXPECT_THAT(*parse_cpu_list("5,1-2"), ElementsAre(5u, 1u, 2u));  // the order written
    EXPECT_THAT(*parse_cpu_list("1,1"), ElementsAre(1u, 1u));        // two workers, one CPU
    EXPECT_EQ(parse_cpu_list("3-1").error(), "'3-1' is a reversed range");
    EXPECT_EQ(parse_cpu_list("a").error(), "'a' is not a CPU number (0..1023)");
    EXPECT_EQ(parse_cpu_list("1024").error(), "'1024' is not a CPU number (0..1023)");
    EXPECT_EQ(parse_cpu_list("1-").error(), "'1-' is not a CPU range (N-M, CPUs 0..1023)");
    EXPECT_EQ(parse_cpu_list("1,,2").error(), "empty element in CPU list '1,,2'");
    EXPECT_FALSE(parse_cpu_list(""));
    EXPECT_FALSE(parse_cpu_list("-1"));
    EXPECT_EQ(cpu_list_text({5, 0, 1, 2, 2, 7}), "0-2,5,7");
    EXPECT_EQ(cpu_list_text({3}), "3");
}

WorkerDefs defs(uint32_t workers, std::vector<unsigned> cpus = {}) {
    WorkerDefs w;
    w.workers = workers;
    w.workers_loc = {"x.conf", 4};
    w.cpus = std::move(cpus);
    if (!w.cpus.empty()) w.cpus_loc = {"x.conf", 5};
    return w;
}

TEST(WorkerPlacement, DefaultLeavesCpuZeroToTheControlThread) {
    auto p = worker_placement(defs(3), {0, 1, 2, 3});
    ASSERT_TRUE(p) << p.error();
    EXPECT_THAT(p->worker_cpu, ElementsAre(1u, 2u, 3u));
    EXPECT_THAT(p->control_cpus, ElementsAre(0u));
    EXPECT_THAT(p->warnings, IsEmpty());
    // Fewer workers than CPUs: the control thread gets the rest too.
    p = worker_placement(defs(1), {0, 1, 2, 3});
    ASSERT_TRUE(p);
    EXPECT_THAT(p->worker_cpu, ElementsAre(1u));
    EXPECT_THAT(p->control_cpus, ElementsAre(0u, 2u, 3u));
}

TEST(WorkerPlacement, DefaultRoundRobinWarnsOfSharing) {
    // Two CPUs, two workers: both on CPU 1 (CPU 0 stays the control thread's).
    auto p = worker_placement(defs(2), {0, 1});
    ASSERT_TRUE(p) << p.error();
    EXPECT_THAT(p->worker_cpu, ElementsAre(1u, 1u));
    EXPECT_THAT(p->control_cpus, ElementsAre(0u));
    ASSERT_EQ(p->warnings.size(), 1u);
    EXPECT_THAT(p->warnings[0], HasSubstr("workers 0, 1 share CPU 1"));
    // The first CPU we may use stands for CPU 0 (a cpuset of 4-7).
    p = worker_placement(defs(2), {4, 5, 6, 7});
    ASSERT_TRUE(p);
    EXPECT_THAT(p->worker_cpu, ElementsAre(5u, 6u));
    EXPECT_THAT(p->control_cpus, ElementsAre(4u, 7u));
}

TEST(WorkerPlacement, OneCpuIsShared) {
    auto p = worker_placement(defs(1), {0});
    ASSERT_TRUE(p) << p.error();
    EXPECT_THAT(p->worker_cpu, ElementsAre(0u));
    EXPECT_THAT(p->control_cpus, ElementsAre(0u));
    ASSERT_EQ(p->warnings.size(), 1u);
    EXPECT_THAT(p->warnings[0], HasSubstr("no CPU is left for the control thread"));
}

TEST(WorkerPlacement, ListedCpusInOrder) {
    auto p = worker_placement(defs(2, {3, 1}), {0, 1, 2, 3});
    ASSERT_TRUE(p) << p.error();
    EXPECT_THAT(p->worker_cpu, ElementsAre(3u, 1u));
    EXPECT_THAT(p->control_cpus, ElementsAre(0u, 2u));
    EXPECT_THAT(p->warnings, IsEmpty());
    // A list longer than the workers: the rest unused, said so.
    p = worker_placement(defs(1, {2, 3}), {0, 1, 2, 3});
    ASSERT_TRUE(p);
    EXPECT_THAT(p->worker_cpu, ElementsAre(2u));
    ASSERT_EQ(p->warnings.size(), 1u);
    EXPECT_THAT(p->warnings[0], HasSubstr("x.conf:5: cpus lists 2 CPUs for 1 worker: the last 1 are not used"));
    // Every CPU a worker's: the control thread shares them all, with a warning.
    p = worker_placement(defs(2, {0, 1}), {0, 1});
    ASSERT_TRUE(p);
    EXPECT_THAT(p->control_cpus, ElementsAre(0u, 1u));
    EXPECT_THAT(p->warnings, ElementsAre(HasSubstr("no CPU is left for the control thread")));
}

TEST(WorkerPlacement, RefusalsAtTheirLine) {
    EXPECT_EQ(worker_placement(defs(3), {0, 1}).error(),
              "x.conf:4: workers 3: xvsd may run on 2 CPUs (0-1): use at most 2, or give xvsd "
              "more CPUs (taskset, the cgroup's cpuset)");
    EXPECT_EQ(worker_placement(defs(2, {1, 7}), {0, 1, 2}).error(),
              "x.conf:5: cpus: CPU 7 is not one xvsd may run on (0-2)");
    EXPECT_EQ(worker_placement(defs(2, {1}), {0, 1, 2}).error(),
              "x.conf:5: cpus lists 1 CPU for 2 workers: list one per worker (a CPU may "
              "repeat), or lower workers");
}

// The parser reads `cpus` into the list, in the forms an operator writes it.
TEST(WorkerPlacement, ParsedFromTheConfig) {
    for (const char* line : {"cpus 1-2,5", "cpus 1-2, 5", "cpus 1 2 5", "cpus 1-2 ,5"}) {
        SCOPED_TRACE(line);
        auto out = parse_config(std::string("worker_defs {\n    workers 2\n    ") + line + "\n}\n",
                                "x.conf");
        ASSERT_THAT(out.errors, IsEmpty());
        EXPECT_THAT(out.config->worker.cpus, ElementsAre(1u, 2u, 5u));
        EXPECT_EQ(out.config->worker.cpus_loc.line, 3u);
    }
    auto bad = parse_config("worker_defs {\n    cpus 2-1\n}\n", "x.conf");
    EXPECT_THAT(bad.errors, ElementsAre("x.conf:2: cpus: '2-1' is a reversed range"));
    bad = parse_config("worker_defs { cpus }\n", "x.conf");
    EXPECT_THAT(bad.errors, ElementsAre("x.conf:1: cpus: missing value"));
}

Config two_ports(uint32_t workers, const std::string& wan, const std::string& lan) {
    Config cfg;
    cfg.worker = defs(workers);
    PortDef a;
    a.name = "wan0";
    a.dev = wan;
    a.loc = {"x.conf", 2};
    PortDef b;
    b.name = "lan0";
    b.dev = lan;
    b.loc = {"x.conf", 3};
    cfg.netif.ports = {a, b};
    return cfg;
}

// Each worker polls its own queue on every port: the PMD must have exactly N of them.
TEST(WorkersErrors, PortQueuesMatchTheWorkers) {
    const std::vector<unsigned> cpus{0, 1, 2};
    EXPECT_EQ(workers_errors(two_ports(2, "net_af_packet0,iface=a,qpairs=2",
                                       "net_af_packet1,qpairs=2,iface=b"),
                             cpus),
              "");
    EXPECT_EQ(workers_errors(two_ports(1, "net_af_packet0,iface=a", "net_ring1"), cpus), "");
    EXPECT_EQ(workers_errors(two_ports(2, "net_af_packet0,iface=a", "net_af_packet1,iface=b,qpairs=3"),
                             cpus),
              "x.conf:2: port wan0: net_af_packet0 has one queue pair (no qpairs=) but xvsd "
              "runs 2 workers, each on its own queue pair: add qpairs=2 in its dev\n"
              "x.conf:3: port lan0: net_af_packet1 has qpairs=3 but xvsd runs 2 workers, each "
              "on its own queue pair: set qpairs=2 in its dev");
    EXPECT_EQ(workers_errors(two_ports(2, "net_af_xdp0,iface=a", "net_ring1"), cpus),
              "x.conf:2: port wan0: net_af_xdp0 has one queue pair (no queue_count=) but xvsd "
              "runs 2 workers, each on its own queue pair: add queue_count=2 in its dev (and "
              "the interface that many combined channels: ethtool -L IF combined 2)");
    EXPECT_EQ(workers_errors(two_ports(2, "net_af_xdp0,iface=a,queue_count=2", "net_tap0"), cpus),
              "");
    // Placement and queues in one verdict, a line each.
    EXPECT_EQ(workers_errors(two_ports(4, "net_af_packet0,qpairs=4", "net_ring1"), cpus),
              "x.conf:4: workers 4: xvsd may run on 3 CPUs (0-2): use at most 3, or give xvsd "
              "more CPUs (taskset, the cgroup's cpuset)");
}

TEST(WorkersErrors, AvailableCpusAreTheProcessAffinity) {
    const auto& cpus = cpus_available();
    ASSERT_FALSE(cpus.empty());
    EXPECT_TRUE(std::is_sorted(cpus.begin(), cpus.end()));
    EXPECT_EQ(&cpus, &cpus_available());  // read once
}

}  // namespace
}  // namespace xvs::ctl
