// Tests for src/ctl/status_history.cpp: interval rates from counter deltas, the per-service
// series aligned with the director's, series of removed services dropped, the ring bounded.
#include "ctl/status_history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace xvs::ctl {
namespace {

using nlohmann::json;
using stack::Counter;

class StatusHistoryTest : public ::testing::Test {
  protected:
    void sample(int64_t t, double dt, std::initializer_list<const char*> services) {
        const stack::Counters* const ws[] = {&w0_, &w1_};
        history_.sample_begin(t, dt, ws);
        double n = 1;
        for (const char* s : services) history_.sample_service(s, {n, 10 * n, 20 * n}), n += 1;
        history_.sample_end();
    }
    stack::Counters w0_, w1_;
    StatusHistory history_;
};

TEST_F(StatusHistoryTest, FirstSampleIsTheBaselineThenRatesPerSecond) {
    sample(100, 0, {"TCP 10.0.0.1:80"});
    EXPECT_EQ(history_.size(), 0u);
    EXPECT_EQ(history_.service_json("TCP 10.0.0.1:80")["cps"], json::array());

    w0_.inc(Counter::rx_packets, 200);
    w0_.inc(Counter::drop_tcp_no_conn, 10);
    w1_.inc(Counter::rx_packets, 100);
    w1_.inc(Counter::lb_forwarded, 50);
    w1_.inc(Counter::drop_tcp_no_conn, 4);
    sample(102, 2.0, {"TCP 10.0.0.1:80"});
    ASSERT_EQ(history_.size(), 1u);
    EXPECT_EQ(history_.director_json(), (json{{"t", {102}}, {"drops", {7.0}}}));
    EXPECT_EQ(history_.service_json("TCP 10.0.0.1:80"),
              (json{{"cps", {1.0}}, {"inpps", {10.0}}, {"outpps", {20.0}}}));
    const auto& rates = history_.counter_rates();
    EXPECT_DOUBLE_EQ(rates[static_cast<size_t>(Counter::drop_tcp_no_conn)], 7.0);
    EXPECT_DOUBLE_EQ(rates[static_cast<size_t>(Counter::rx_packets)], 150.0);
    ASSERT_EQ(history_.worker_rates().size(), 2u);
    EXPECT_DOUBLE_EQ(history_.worker_rates()[0].rx_pps, 100.0);
    EXPECT_DOUBLE_EQ(history_.worker_rates()[0].drops_pps, 5.0);
    EXPECT_DOUBLE_EQ(history_.worker_rates()[1].forwarded_pps, 25.0);
    EXPECT_DOUBLE_EQ(history_.worker_rates()[1].drops_pps, 2.0);

    // Nothing moved: rates back to 0.
    sample(104, 2.0, {"TCP 10.0.0.1:80"});
    EXPECT_EQ(history_.director_json()["drops"], (json{7.0, 0.0}));
    EXPECT_DOUBLE_EQ(history_.worker_rates()[0].rx_pps, 0.0);
}

TEST_F(StatusHistoryTest, ServiceSeriesFollowTheServices) {
    sample(0, 0, {});
    sample(2, 2, {"A"});
    sample(4, 2, {"A", "B"});
    // B is new: shorter, its last point at the last time.
    EXPECT_EQ(history_.service_json("A")["cps"], (json{1.0, 1.0}));
    EXPECT_EQ(history_.service_json("B")["inpps"], (json{20.0}));
    sample(6, 2, {"B"});  // A removed: its series goes
    EXPECT_EQ(history_.service_json("A")["cps"], json::array());
    EXPECT_EQ(history_.service_json("B")["cps"], (json{2.0, 1.0}));
    sample(8, 2, {"A"});  // re-added: starts anew
    EXPECT_EQ(history_.service_json("A")["cps"], (json{1.0}));
}

TEST_F(StatusHistoryTest, BoundedToFiveMinutes) {
    sample(0, 0, {"A"});
    for (int64_t i = 1; i <= 400; ++i) sample(2 * i, 2, {"A"});
    EXPECT_EQ(history_.size(), StatusHistory::kSamples);
    const json d = history_.director_json();
    EXPECT_EQ(d["t"].size(), StatusHistory::kSamples);
    EXPECT_EQ(d["t"].front(), 2 * (400 - static_cast<int64_t>(StatusHistory::kSamples) + 1));
    EXPECT_EQ(d["t"].back(), 800);
    EXPECT_EQ(history_.service_json("A")["outpps"].size(), StatusHistory::kSamples);
}

}  // namespace
}  // namespace xvs::ctl
