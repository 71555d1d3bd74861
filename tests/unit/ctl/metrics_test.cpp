// Tests for src/ctl/metrics.cpp: the Prometheus text format (HELP/TYPE, labels, escaping,
// numbers) and the metrics endpoint's HTTP replies.
#include "ctl/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace xvs::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(PromText, FamiliesAndSamples) {
    PromText p;
    p.family("xvs_a_total", "counter", "Things that happened.");
    p.sample({}, uint64_t{0});
    p.sample({{"worker", "0"}, {"reason", "drop_x"}}, std::numeric_limits<uint64_t>::max());
    p.family("xvs_b", "gauge", "A level.");
    p.sample({{"kind", "cps"}}, 2.5);
    p.sample({{"kind", "inpps"}}, 0.0);
    EXPECT_EQ(p.text(),
              "# HELP xvs_a_total Things that happened.\n"
              "# TYPE xvs_a_total counter\n"
              "xvs_a_total 0\n"
              "xvs_a_total{worker=\"0\",reason=\"drop_x\"} 18446744073709551615\n"
              "# HELP xvs_b A level.\n"
              "# TYPE xvs_b gauge\n"
              "xvs_b{kind=\"cps\"} 2.5\n"
              "xvs_b{kind=\"inpps\"} 0\n");
}

// A label value from the configuration (a SNAT service's name, a port name) may hold any
// byte: backslash, quote and newline are escaped, so no value can end its line or its quotes.
TEST(PromText, LabelValuesAndHelpAreEscaped) {
    PromText p;
    p.family("m", "gauge", "help with \\ and\nnewline");
    p.sample({{"name", "a\"b\\c\nd"}}, uint64_t{1});
    EXPECT_EQ(p.text(),
              "# HELP m help with \\\\ and\\nnewline\n"
              "# TYPE m gauge\n"
              "m{name=\"a\\\"b\\\\c\\nd\"} 1\n");
}

std::string body() { return "m 1\n"; }

TEST(MetricsHttp, GetMetricsIs200WithTheExpositionType) {
    auto r = metrics_http_reply("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*", body);
    EXPECT_EQ(r.problem, "");
    EXPECT_EQ(r.text,
              "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
              "Content-Length: 4\r\nConnection: close\r\n\r\nm 1\n");
    // Prometheus may add a query string; HTTP/1.0 clients are served too.
    EXPECT_THAT(metrics_http_reply("GET /metrics?x=1 HTTP/1.0", body).text,
                StartsWith("HTTP/1.1 200 OK\r\n"));
}

TEST(MetricsHttp, HeadHasTheLengthAndNoBody) {
    auto r = metrics_http_reply("HEAD /metrics HTTP/1.1", body);
    EXPECT_THAT(r.text, HasSubstr("Content-Length: 4\r\n"));
    EXPECT_TRUE(r.text.ends_with("\r\n\r\n")) << r.text;
}

TEST(MetricsHttp, OtherPathsMethodsAndGarbage) {
    bool called = false;
    auto never = [&] {
        called = true;
        return std::string();
    };
    EXPECT_THAT(metrics_http_reply("GET / HTTP/1.1", never).text, StartsWith("HTTP/1.1 404 "));
    EXPECT_THAT(metrics_http_reply("GET /metricsx HTTP/1.1", never).text,
                StartsWith("HTTP/1.1 404 "));
    auto post = metrics_http_reply("POST /metrics HTTP/1.1\r\nContent-Length: 0", never);
    EXPECT_THAT(post.text, StartsWith("HTTP/1.1 405 "));
    EXPECT_THAT(post.text, HasSubstr("\r\nAllow: GET, HEAD\r\n"));
    for (const char* bad : {"", "GET", "GET /metrics", "GET /metrics SSH-2.0", "\x16\x03\x01",
                            "GET metrics HTTP/1.1"}) {
        auto r = metrics_http_reply(bad, never);
        EXPECT_THAT(r.text, StartsWith("HTTP/1.1 400 ")) << bad;
        EXPECT_NE(r.problem, "") << bad;
    }
    EXPECT_FALSE(called) << "the body is built only for a 200";
}

}  // namespace
}  // namespace xvs::ctl
