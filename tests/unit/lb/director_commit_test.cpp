// Tests for Director::commit (src/lb/director.cpp): with commit_waits on, commit returns only
// once every worker announced the new generation, so a change is in force for every packet
// received after xvsadm returns; and a new snapshot shares the views of the services whose
// inputs did not change. No EAL: the "workers" are plain threads that announce generations as
// Worker::refresh_snapshot does.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "lb/director.h"
#include "net/addr.h"
#include "net/byteorder.h"

namespace xvs::lb {
namespace {

using namespace std::chrono_literals;

TEST(DirectorCommit, WaitQuiescentNeedsEveryWorker) {
    Director d(2);
    const uint64_t gen = d.commit();  // commit_waits off: returns at once
    EXPECT_EQ(d.commit_wait_timeouts(), 0u);
    EXPECT_FALSE(d.wait_quiescent(gen, 5ms));
    d.worker_quiescent(0, gen);
    EXPECT_FALSE(d.wait_quiescent(gen, 5ms)) << "worker 1 still on an older snapshot";
    d.worker_quiescent(1, gen + 1);  // a later generation counts too
    EXPECT_TRUE(d.wait_quiescent(gen, 0ms));
}

TEST(DirectorCommit, CommitReturnsOnlyOnceTheWorkersUseIt) {
    Director d(2);
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> polls{0};
    auto worker = [&](unsigned id) {
        while (!stop.load()) {
            d.worker_quiescent(id, d.snapshot()->generation);
            polls.fetch_add(1);
            std::this_thread::sleep_for(200us);
        }
    };
    std::thread w0(worker, 0u), w1(worker, 1u);
    d.commit_waits_set(true);
    for (int i = 0; i < 20; ++i) {
        const uint64_t gen = d.commit();
        // Right after commit returns, neither worker may be on an older snapshot.
        EXPECT_TRUE(d.wait_quiescent(gen, 0ms)) << "commit " << i;
    }
    EXPECT_EQ(d.commit_wait_timeouts(), 0u);
    stop = true;
    w0.join();
    w1.join();
    EXPECT_GT(polls.load(), 0u);
}

TEST(DirectorCommit, AStalledWorkerBoundsTheWaitAndIsCounted) {
    Director d(2);
    d.commit_waits_set(true);
    d.worker_quiescent(0, 1000);  // worker 0 is always current; worker 1 never polls
    const auto t0 = std::chrono::steady_clock::now();
    d.commit();
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(d.commit_wait_timeouts(), 1u);
    EXPECT_GE(took, Director::kCommitWaitLimit);
    d.commit_waits_set(false);  // stopped workers: commits no longer wait
    d.commit();
    EXPECT_EQ(d.commit_wait_timeouts(), 1u);
}

net::InetAddr v4(const char* text) { return *net::parse_inet(text); }

class DirectorViews : public ::testing::Test {
  protected:
    void SetUp() override {
        add("10.0.0.1", "mh");
        add("10.0.0.2", "rr");
        d.commit();
    }
    void add(const char* vip, const char* sched) {
        ASSERT_TRUE(d.service_add(ServiceSpec{6, v4(vip), 80, sched}).ok());
        for (const char* rs : {"10.10.2.2", "10.10.2.3"}) {
            DestSpec dest{v4(rs), 8080, 1};
            dest.fwd = FwdMode::Nat;
            ASSERT_TRUE(d.dest_add(key(vip), dest).ok());
        }
    }
    static ServiceKey key(const char* vip) { return make_service_key(6, v4(vip), 80); }
    const ServiceView* view(const char* vip) const {
        return d.snapshot()->service(6, v4(vip), net::hton16(80));
    }
    DestSpec dest(const char* rs, int32_t weight) const {
        DestSpec s{v4(rs), 8080, weight};
        s.fwd = FwdMode::Nat;
        return s;
    }
    Director d;
};

TEST_F(DirectorViews, AWeightChangeRebuildsThatServiceOnly) {
    const ServiceView* a = view("10.0.0.1");
    const ServiceView* b = view("10.0.0.2");
    ASSERT_TRUE(a && b);
    const std::vector<uint32_t> a_table = a->plan.table;
    ASSERT_TRUE(d.dest_edit(key("10.0.0.1"), dest("10.10.2.2", 5)).ok());
    d.commit();
    EXPECT_EQ(view("10.0.0.2"), b) << "the untouched service keeps its view";
    const ServiceView* a2 = view("10.0.0.1");
    ASSERT_NE(a2, a) << "the edited service gets a new view";
    EXPECT_EQ(a2->plan.weights, (std::vector<int32_t>{5, 1}));
    EXPECT_NE(a2->plan.table, a_table) << "its Maglev table is rebuilt for the new weights";
    // The view the retired snapshot holds stays valid until it is reclaimed (no workers: now).
    EXPECT_EQ(a->plan.weights, (std::vector<int32_t>{1, 1}));
    d.commit();  // nothing changed: both views carry over
    EXPECT_EQ(view("10.0.0.1"), a2);
    EXPECT_EQ(view("10.0.0.2"), b);
}

TEST_F(DirectorViews, EveryInputOfAViewRebuildsIt) {
    auto changed = [&](const char* what, auto&& change) {
        const ServiceView* before = view("10.0.0.2");
        change();
        d.commit();
        EXPECT_NE(view("10.0.0.2"), before) << what;
    };
    changed("scheduler", [&] {
        ASSERT_TRUE(d.service_edit(ServiceSpec{6, v4("10.0.0.2"), 80, "wrr"}).ok());
    });
    changed("dest added", [&] { ASSERT_TRUE(d.dest_add(key("10.0.0.2"), dest("10.10.2.4", 1)).ok()); });
    changed("dest removed", [&] { ASSERT_TRUE(d.dest_del(key("10.0.0.2"), v4("10.10.2.4"), 8080).ok()); });
    changed("threshold", [&] {
        DestSpec s = dest("10.10.2.3", 1);
        s.upper_threshold = 10;
        ASSERT_TRUE(d.dest_edit(key("10.0.0.2"), s).ok());
    });
    changed("flags", [&] {
        ServiceSpec s{6, v4("10.0.0.2"), 80, "wrr"};
        s.conn_rate = 100;
        ASSERT_TRUE(d.service_edit(s).ok());
    });
    changed("persistence", [&] {
        ServiceSpec s{6, v4("10.0.0.2"), 80, "wrr"};
        s.conn_rate = 100;
        s.persistence_s = 60;
        ASSERT_TRUE(d.service_edit(s).ok());
    });
    ASSERT_TRUE(d.service_del(key("10.0.0.2")).ok());
    d.commit();
    EXPECT_EQ(view("10.0.0.2"), nullptr);
    add("10.0.0.2", "wrr");
    d.commit();
    ASSERT_NE(view("10.0.0.2"), nullptr);
    EXPECT_EQ(view("10.0.0.2")->persist_s, 0u) << "a re-added service is built anew";
}

}  // namespace
}  // namespace xvs::lb
