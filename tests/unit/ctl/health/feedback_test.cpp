// Tests for src/ctl/health/feedback.cpp and its use by the health manager: the weight formula
// (metrics, smoothing, floor and ceiling, silence), replay and skew checks, the listener's
// counters by reason, and reports reaching the Director's dest weights through the manager.
#include "ctl/health/feedback.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ctl/config_apply.h"
#include "ctl/config_parser.h"
#include "ctl/health/manager.h"
#include "ctl/xvsctl_format.h"

namespace xvs::ctl::health {
namespace {

using ::testing::HasSubstr;

net::FeedbackReport report(uint16_t cpu_permille, uint64_t sent_ms = 1) {
    net::FeedbackReport r;
    r.sent_ms = sent_ms;
    r.cpu_permille = cpu_permille;
    r.ncpu = 2;
    return r;
}

FeedbackConf conf() {
    FeedbackConf c;
    c.port = 7070;
    c.secret = "0123456789abcdef";
    return c;
}

TEST(FeedbackFormula, SampleIsTheLargestSelectedMetric) {
    FeedbackConf c = conf();
    net::FeedbackReport r = report(300);
    r.mem_permille = 900;
    r.loadavg_x100 = 300;  // 1.5 per CPU: clamped to 1
    r.running = 1;         // 0.5 per CPU
    r.established = 50;
    r.has_custom = true;
    r.custom_permille = 600;
    EXPECT_DOUBLE_EQ(feedback_sample(c, r), 0.3);  // default: cpu only
    c.metrics = uint32_t(FeedbackMetric::Cpu) | uint32_t(FeedbackMetric::Custom);
    EXPECT_DOUBLE_EQ(feedback_sample(c, r), 0.6);
    c.metrics = uint32_t(FeedbackMetric::Mem);
    EXPECT_DOUBLE_EQ(feedback_sample(c, r), 0.9);
    c.metrics = uint32_t(FeedbackMetric::Loadavg);
    EXPECT_DOUBLE_EQ(feedback_sample(c, r), 1.0);
    c.metrics = uint32_t(FeedbackMetric::Runq);
    EXPECT_DOUBLE_EQ(feedback_sample(c, r), 0.5);
    c.metrics = uint32_t(FeedbackMetric::Conns);
    c.conns_max = 200;
    EXPECT_DOUBLE_EQ(feedback_sample(c, r), 0.25);
    r.has_custom = false;  // no custom value reported: that metric adds nothing
    c.metrics = uint32_t(FeedbackMetric::Custom);
    EXPECT_DOUBLE_EQ(feedback_sample(c, r), 0.0);
}

TEST(FeedbackFormula, SmoothingFloorAndCeiling) {
    FeedbackConf c = conf();  // smoothing 0.5, floor 1, ceiling = configured weight
    FeedbackState st;
    EXPECT_EQ(feedback_weight(st, c, 100, 0), std::nullopt);  // no report yet: configured
    feedback_observe(st, c, report(800), 0);                  // first report: taken whole
    EXPECT_DOUBLE_EQ(*st.load, 0.8);
    EXPECT_EQ(feedback_weight(st, c, 100, 0), 20u);
    feedback_observe(st, c, report(0), 1000);  // 0.5 * 0.8 + 0.5 * 0
    EXPECT_DOUBLE_EQ(*st.load, 0.4);
    EXPECT_EQ(feedback_weight(st, c, 100, 1000), 60u);
    feedback_observe(st, c, report(0), 2000);
    EXPECT_EQ(feedback_weight(st, c, 100, 2000), 80u);

    FeedbackState full;
    feedback_observe(full, c, report(1000), 0);
    EXPECT_EQ(feedback_weight(full, c, 100, 0), 1u);  // the floor
    c.floor = 10;
    EXPECT_EQ(feedback_weight(full, c, 100, 0), 10u);
    EXPECT_EQ(feedback_weight(full, c, 4, 0), 4u);  // the floor never exceeds the top
    c.floor = 0;
    EXPECT_EQ(feedback_weight(full, c, 100, 0), 0u);
    c.ceiling = 50;  // top = 50 whatever the configured weight
    FeedbackState idle;
    feedback_observe(idle, c, report(0), 0);
    EXPECT_EQ(feedback_weight(idle, c, 100, 0), 50u);
    EXPECT_EQ(feedback_weight(idle, c, 1, 0), 50u);

    c = conf();
    c.smoothing_permille = 0;  // no smoothing: the last sample
    FeedbackState raw;
    feedback_observe(raw, c, report(900), 0);
    feedback_observe(raw, c, report(100), 1000);
    EXPECT_EQ(feedback_weight(raw, c, 100, 1000), 90u);
}

TEST(FeedbackFormula, SilenceKeepsRestoresOrZeroes) {
    FeedbackConf c = conf();  // interval 1 s: silent after 3 s
    FeedbackState st;
    feedback_observe(st, c, report(500), 0);
    EXPECT_FALSE(feedback_silent(st, c, 3000));
    EXPECT_TRUE(feedback_silent(st, c, 3001));
    EXPECT_EQ(feedback_weight(st, c, 100, 3000), 50u);
    EXPECT_EQ(feedback_weight(st, c, 100, 3001), std::nullopt);  // configured (default)
    c.on_silence = FeedbackSilence::Keep;
    EXPECT_EQ(feedback_weight(st, c, 100, 9000), 50u);
    c.on_silence = FeedbackSilence::Zero;
    EXPECT_EQ(feedback_weight(st, c, 100, 9000), 0u);
    c.silence_ms = 10'000;
    EXPECT_EQ(feedback_weight(st, c, 100, 9000), 50u);
    // A report after a silence starts afresh, without the old load.
    c = conf();
    feedback_observe(st, c, report(0), 20'000);
    EXPECT_DOUBLE_EQ(*st.load, 0.0);
}

TEST(FeedbackFormula, DeadBandIgnoresSmallChanges) {
    EXPECT_TRUE(feedback_weight_changes(std::nullopt, 50u, 100));
    EXPECT_TRUE(feedback_weight_changes(50u, std::nullopt, 100));
    EXPECT_FALSE(feedback_weight_changes(50u, 50u, 100));
    EXPECT_FALSE(feedback_weight_changes(50u, 51u, 100));  // 1% of 100
    EXPECT_TRUE(feedback_weight_changes(50u, 52u, 100));
    EXPECT_TRUE(feedback_weight_changes(99u, 100u, 100));  // the top always applies
    EXPECT_TRUE(feedback_weight_changes(1u, 0u, 100));
    EXPECT_TRUE(feedback_weight_changes(1u, 2u, 5));
}

TEST(FeedbackAdmitTest, ReplayedAndStaleReportsAreRefused) {
    uint64_t last = 0;
    const uint64_t now = 1'000'000;
    EXPECT_EQ(feedback_admit(last, now - 5, now, 30'000), FeedbackAdmit::accepted);
    EXPECT_EQ(last, now - 5);
    EXPECT_EQ(feedback_admit(last, now - 5, now, 30'000), FeedbackAdmit::replayed);
    EXPECT_EQ(feedback_admit(last, now - 6, now, 30'000), FeedbackAdmit::replayed);
    EXPECT_EQ(feedback_admit(last, now - 40'000, now, 30'000), FeedbackAdmit::stale);
    EXPECT_EQ(feedback_admit(last, now + 40'000, now, 30'000), FeedbackAdmit::stale);
    EXPECT_EQ(feedback_admit(last, now + 1, now, 30'000), FeedbackAdmit::accepted);
    EXPECT_EQ(last, now + 1);
}

constexpr const char* kPrelude = R"(netif_defs {
    port wan0 { dev net_ring0 }
    port lan0 { dev net_ring1 }
}
ip_defs { address 10.10.1.1/24 dev wan0
          address 10.10.2.1/24 dev lan0 }
local_address_group lips { 10.10.2.100-101 lan0 }
)";

// The manager with an injected loop clock and a hub fed datagrams directly (no socket
// traffic; the listener still binds its port, 0 = an ephemeral one is not allowed, so the
// tests use a high port and SO_REUSEADDR).
class FeedbackManagerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(director_.port_add({"wan0", 0, net::MacAddr{}, 1500}));
        ASSERT_TRUE(director_.port_add({"lan0", 1, net::MacAddr{}, 1500}));
        mgr_ = std::move(*Manager::create(director_, [this] { return now_; }));
        mgr_->log = [this](const std::string& l) { log_.push_back(l); };
    }
    Config load(const std::string& body) {
        ParseOutcome out = parse_config(std::string(kPrelude) + body, "t.conf");
        EXPECT_TRUE(out.config) << ::testing::PrintToString(out.errors);
        return out.config ? *out.config : Config{};
    }
    void start(const Config& cfg) {
        mgr_->configure(cfg);
        auto r = config_apply(director_, mgr_->effective(cfg));
        ASSERT_TRUE(r) << r.error();
    }
    std::vector<std::string> dests() {
        std::vector<std::string> out;
        auto svc =
            director_.service_find(lb::make_service_key(6, *net::parse_inet("10.10.1.100"), 80));
        if (!svc) return {"<no service>"};
        for (const auto& d : svc->dests)
            out.push_back(net::to_string(net::InetEndpoint{d->addr, d->port}) + "=" +
                          std::to_string(d->weight.load()));
        std::sort(out.begin(), out.end());
        return out;
    }
    // A report of `cpu_permille` from src, signed with `secret`, sent now (wall = loop ms
    // plus a base, so skew checks see a current clock).
    void send(const char* src, uint16_t cpu_permille, const std::string& secret = kSecret,
              std::optional<uint64_t> sent = std::nullopt) {
        net::FeedbackReport r = report(cpu_permille, sent ? *sent : wall());
        last_ = net::feedback_encode(r, net::feedback_key(secret));
        mgr_->feedback().on_datagram(0, *net::parse_inet(src), last_);
    }
    void advance(Ms ms) {
        now_ += ms;
        mgr_->loop().run_timers();
    }
    static uint64_t wall() {
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count()) +
               uint64_t(++seq_);
    }
    using V = std::vector<std::string>;
    static constexpr const char* kSecret = "feedback-test-secret";
    static inline int seq_ = 0;

    Ms now_ = 1'000'000;
    lb::Director director_;
    std::unique_ptr<Manager> mgr_;
    std::vector<std::string> log_;
    net::FeedbackDatagram last_{};
};

constexpr const char* kService = R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    lb_algo wrr
    feedback { port 47070 key feedback-test-secret interval 1 smoothing 0 floor 5 }
    real_server 10.10.2.2 80 { weight 100 }
    real_server 10.10.2.3 80 { weight 100 }
}
)";

TEST_F(FeedbackManagerTest, ReportsSetWeightsAndSilenceRestoresThem) {
    start(load(kService));
    ASSERT_EQ(mgr_->feedback().listener_count(), 1u);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=100", "10.10.2.3:80=100"}));
    const uint64_t gen = director_.snapshot()->generation;
    send("10.10.2.2", 700);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=30", "10.10.2.3:80=100"}));
    EXPECT_GT(director_.snapshot()->generation, gen);  // committed for the workers
    send("10.10.2.3", 990);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=30", "10.10.2.3:80=5"}));  // floor 5
    // Load gone: the weight recovers.
    advance(1000);
    send("10.10.2.2", 0);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=100", "10.10.2.3:80=5"}));
    // 10.10.2.3 stops reporting: after 3 intervals it has its configured weight again.
    advance(1000);
    send("10.10.2.2", 0);
    advance(1000);
    send("10.10.2.2", 0);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=100", "10.10.2.3:80=5"}));
    advance(1500);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=100", "10.10.2.3:80=100"}));
    EXPECT_EQ(mgr_->feedback().counters(0).accepted, 5u);

    const nlohmann::json show = mgr_->feedback_show();
    ASSERT_EQ(show["servers"].size(), 2u);
    const auto& s3 = show["servers"][1];
    EXPECT_EQ(s3["dest"], "10.10.2.3:80");
    EXPECT_EQ(s3["state"], "silent");
    EXPECT_EQ(s3["weight"], 100);
    auto text = format_feedback(show);
    ASSERT_TRUE(text) << text.error();
    EXPECT_THAT(*text, HasSubstr("accepted 5 rejected 0"));
    EXPECT_THAT(*text, HasSubstr("10.10.2.3:80"));
    EXPECT_THAT(*text, HasSubstr("silent"));
}

TEST_F(FeedbackManagerTest, ForgedReplayedStaleAndStrangersAreCountedAndIgnored) {
    start(load(kService));
    send("10.10.2.2", 900, "a forger's guessed key");
    EXPECT_EQ(mgr_->feedback().counters(0).bad_mac, 1u);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=100", "10.10.2.3:80=100"}));
    send("10.10.2.2", 500);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=50", "10.10.2.3:80=100"}));
    // The same datagram again (a capture replayed), and an older one.
    const net::FeedbackDatagram captured = last_;
    mgr_->feedback().on_datagram(0, *net::parse_inet("10.10.2.2"), captured);
    send("10.10.2.2", 900, kSecret, wall() - 10'000);
    EXPECT_EQ(mgr_->feedback().counters(0).replayed, 2u);
    // Far outside the clock window: stale.
    send("10.10.2.2", 900, kSecret, wall() + 3'600'000);
    EXPECT_EQ(mgr_->feedback().counters(0).stale, 1u);
    // Authentic but from an address that is no real server of the service.
    send("10.10.2.77", 900);
    EXPECT_EQ(mgr_->feedback().counters(0).unknown_source, 1u);
    // Truncated.
    mgr_->feedback().on_datagram(0, *net::parse_inet("10.10.2.2"),
                                 std::span<const uint8_t>(captured).first(10));
    const FeedbackCounters& c = mgr_->feedback().counters(0);
    EXPECT_EQ(c.bad_size, 1u);
    EXPECT_EQ(c.accepted, 1u);
    EXPECT_EQ(c.rejected(), 6u);
    EXPECT_EQ(c.received, 7u);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=50", "10.10.2.3:80=100"}));  // none of them applied
}

TEST_F(FeedbackManagerTest, ReloadKeepsTheListenerAndTheDynamicWeight) {
    const Config cfg = load(kService);
    start(cfg);
    send("10.10.2.2", 600);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=40", "10.10.2.3:80=100"}));
    start(cfg);  // a reload with the same block
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=40", "10.10.2.3:80=100"}));
    EXPECT_EQ(mgr_->feedback().counters(0).accepted, 1u);
    // Without feedback the configured weights come back and the listener closes.
    std::string plain = kService;
    plain.erase(plain.find("    feedback"),
                plain.find("    real_server") - plain.find("    feedback"));
    start(load(plain));
    EXPECT_EQ(mgr_->feedback().listener_count(), 0u);
    EXPECT_EQ(dests(), (V{"10.10.2.2:80=100", "10.10.2.3:80=100"}));
}

// ---- configuration ----------------------------------------------------------------------
std::vector<std::string> errors_of(const std::string& body) {
    return parse_config(std::string(kPrelude) + body, "t.conf").errors;
}

TEST(FeedbackConfig, ParsesEverySetting) {
    ParseOutcome out = parse_config(std::string(kPrelude) + R"(virtual_server 10.10.1.100 80 {
    laddr_group_name lips
    feedback {
        port 7070
        listen 10.10.2.9
        key "a-long-enough-secret"
        interval 0.5
        smoothing 0.75
        floor 2
        ceiling 200
        metric cpu custom conns runq loadavg
        conns_max 5000
        silence 4
        on_silence zero
        max_skew 10
    }
    real_server 10.10.2.2 80 { weight 100 }
}
)",
                                    "t.conf");
    ASSERT_TRUE(out.config) << ::testing::PrintToString(out.errors);
    const auto& fb = out.config->virtual_servers.at(0).health.feedback;
    ASSERT_TRUE(fb);
    EXPECT_EQ(fb->port, 7070);
    EXPECT_EQ(net::to_string(*fb->listen), "10.10.2.9");
    EXPECT_EQ(fb->secret, "a-long-enough-secret");
    EXPECT_EQ(fb->interval_ms, 500u);
    EXPECT_EQ(fb->smoothing_permille, 750u);
    EXPECT_EQ(fb->floor, 2u);
    EXPECT_EQ(fb->ceiling, 200u);
    EXPECT_EQ(fb->metrics, uint32_t(FeedbackMetric::Cpu) | uint32_t(FeedbackMetric::Custom) |
                               uint32_t(FeedbackMetric::Conns) | uint32_t(FeedbackMetric::Runq) |
                               uint32_t(FeedbackMetric::Loadavg));
    EXPECT_EQ(fb->conns_max, 5000u);
    EXPECT_EQ(fb->silence_ms, 4000u);
    EXPECT_EQ(fb->on_silence, FeedbackSilence::Zero);
    EXPECT_EQ(fb->max_skew_ms, 10'000u);
}

TEST(FeedbackConfig, RefusalsNameFileAndLine) {
    auto vs = [](const std::string& fb) {
        return "virtual_server 10.10.1.100 80 {\n    laddr_group_name lips\n    feedback { " + fb +
               " }\n    real_server 10.10.2.2 80 { weight 100 }\n}\n";
    };
    using ::testing::ElementsAre;
    EXPECT_THAT(errors_of(vs("key 0123456789abcdef")),
                ElementsAre(HasSubstr("t.conf:10: feedback: port missing")));
    EXPECT_THAT(errors_of(vs("port 7070")),
                ElementsAre(HasSubstr("t.conf:10: feedback: key or keyfile missing")));
    EXPECT_THAT(errors_of(vs("port 7070 key short")),
                ElementsAre(HasSubstr("at least 16 characters")));
    EXPECT_THAT(errors_of(vs("port 7070 key 0123456789abcdef smoothing 1")),
                ElementsAre(HasSubstr("t.conf:10: feedback: smoothing '1'")));
    EXPECT_THAT(errors_of(vs("port 7070 key 0123456789abcdef floor 20 ceiling 10")),
                ElementsAre(HasSubstr("floor 20 above ceiling 10")));
    EXPECT_THAT(errors_of(vs("port 7070 key 0123456789abcdef metric conns")),
                ElementsAre(HasSubstr("metric conns needs conns_max")));
    EXPECT_THAT(errors_of(vs("port 7070 key 0123456789abcdef metric load")),
                ElementsAre(HasSubstr("metric: bad value 'load'")));
    EXPECT_THAT(errors_of(vs("port 7070 key 0123456789abcdef on_silence drop")),
                ElementsAre(HasSubstr("on_silence: bad value 'drop' (keep|configured|zero)")));
    EXPECT_THAT(errors_of(vs("port 7070 key 0123456789abcdef interval 2 silence 1")),
                ElementsAre(HasSubstr("shorter than the interval")));
    EXPECT_THAT(errors_of(vs("port 7070 key 0123456789abcdef listen 10.10.1.1")),
                ElementsAre(HasSubstr("is an address of xvs")));
    EXPECT_THAT(errors_of(vs("port 7070 keyfile /nonexistent/xvs-key")),
                ElementsAre(HasSubstr("t.conf:10: feedback: keyfile /nonexistent/xvs-key")));
    EXPECT_THAT(errors_of(vs("port 7070 key 0123456789abcdef weight 3")),
                ElementsAre(HasSubstr("unknown keyword 'weight' in feedback")));
    // Two services on one port with different keys.
    const std::string two =
        vs("port 7070 key 0123456789abcdef") +
        "virtual_server 10.10.1.100 81 {\n    laddr_group_name lips\n    feedback { port 7070 "
        "key fedcba9876543210 }\n    real_server 10.10.2.2 80 { weight 1 }\n}\n";
    EXPECT_THAT(errors_of(two), ElementsAre(HasSubstr("t.conf:15: feedback: port 7070 is also "
                                                      "used at t.conf:10 with another key")));
}

}  // namespace
}  // namespace xvs::ctl::health
