// Tests for Director::commit's wait for the workers (src/lb/director.cpp): with commit_waits on,
// commit returns only once every worker announced the new generation, so a change is in force
// for every packet received after xvsadm returns. No EAL: the "workers" are plain threads that
// announce generations as Worker::refresh_snapshot does.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "lb/director.h"

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

}  // namespace
}  // namespace xvs::lb
