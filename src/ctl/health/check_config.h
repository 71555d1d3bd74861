// The typed model of keepalived's health-check configuration (keepalived.conf(5)): checker
// blocks of a real_server and the virtual_server settings that act on their verdicts (quorum,
// hysteresis, sorry server, alpha/omega). Filled by the parser with every default resolved
// (checker -> real_server -> virtual_server -> keepalived's default), so the health manager
// never looks up an inherited value. Times are milliseconds.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "net/addr.h"

namespace xvs::ctl {

enum class CheckType : uint8_t { Tcp, Http, Ssl, Udp, Dns, Ping, Smtp, Misc };
inline constexpr std::array kCheckTypeNames = {"TCP_CHECK",  "HTTP_GET",  "SSL_GET",
                                               "UDP_CHECK",  "DNS_CHECK", "PING_CHECK",
                                               "SMTP_CHECK", "MISC_CHECK"};
inline const char* to_string(CheckType t) {
    return kCheckTypeNames[static_cast<size_t>(t)];
}

// keepalived's defaults (keepalived.conf(5)).
inline constexpr uint32_t kDefaultDelayLoopMs = 60'000;
inline constexpr uint32_t kDefaultConnectTimeoutMs = 5'000;
inline constexpr uint32_t kDefaultRetry = 1;
inline constexpr uint32_t kDefaultDelayBeforeRetryMs = 1'000;
inline constexpr uint32_t kDefaultHttpDelayBeforeRetryMs = 3'000;

// Timing settings as written at one level; unset ones inherit from the level above.
struct CheckTimes {
    std::optional<uint32_t> delay_loop_ms;
    std::optional<uint32_t> connect_timeout_ms;
    std::optional<uint32_t> retry;
    std::optional<uint32_t> delay_before_retry_ms;
    std::optional<uint32_t> warmup_ms;
    bool operator==(const CheckTimes&) const = default;
};

// One `url { path ...; digest ...; status_code ...; virtualhost ... }` of HTTP_GET/SSL_GET.
struct HttpUrl {
    std::string path = "/";
    std::optional<std::array<uint8_t, 16>> digest;      // MD5 of the body
    std::vector<std::pair<uint16_t, uint16_t>> status;  // ranges; empty = 200..299
    std::string virtualhost;                            // resolved: url > checker > rs > vs
    bool operator==(const HttpUrl&) const = default;
};

struct CheckerConf {
    CheckType type = CheckType::Tcp;
    // Where the check goes and leaves from: connect_ip/connect_port default to the real
    // server's address and port (SMTP 25, DNS 53 when the service port is 0); bindto is the
    // source address (the director's kernel address on the exception path).
    std::optional<net::InetAddr> connect_ip;
    uint16_t connect_port = 0;  // 0 = the real server's port
    std::optional<net::InetAddr> bindto;
    // Resolved timings.
    uint32_t delay_loop_ms = kDefaultDelayLoopMs;
    uint32_t connect_timeout_ms = kDefaultConnectTimeoutMs;
    uint32_t retry = kDefaultRetry;
    uint32_t delay_before_retry_ms = kDefaultDelayBeforeRetryMs;
    uint32_t warmup_ms = 0;  // first check at a random time in [0, warmup]
    // HTTP_GET / SSL_GET: every url must pass (one connection each).
    std::vector<HttpUrl> urls;
    bool http11 = false;      // http_protocol 1.1 (default 1.0, as keepalived)
    bool enable_sni = false;  // SSL_GET: send the virtualhost (or connect_ip) as SNI
    // UDP_CHECK: payload sent; with require_reply a reply must come (starting with `reply`
    // when given) of min..max length; without it, only an ICMP error fails the check.
    std::string payload;
    bool require_reply = false;
    std::string reply;
    uint32_t min_reply_length = 0;
    uint32_t max_reply_length = 0;  // 0 = no limit
    // DNS_CHECK: query `name` of `type` (RR type number); passes on a matching reply with
    // RCODE NOERROR and at least one answer.
    uint16_t dns_type = 1;
    std::string dns_name = ".";
    // SMTP_CHECK: banner 220, `HELO helo_name` answered 250.
    std::string helo_name;
    // MISC_CHECK: argv of misc_path (split as keepalived does: spaces, quotes), killed after
    // misc_timeout; exit 0 up, 1 down, with misc_dynamic 2..255 up with weight code - 2.
    std::vector<std::string> misc_argv;
    uint32_t misc_timeout_ms = 0;  // resolved: default delay_loop
    bool misc_dynamic = false;
    // Parse-time only: what the block wrote, before resolution (not compared).
    CheckTimes own;
    std::string own_virtualhost;
    uint32_t line = 0;
    std::string file;

    // Same check (a reload keeps its state): everything but where it was written.
    bool same_check(const CheckerConf& o) const {
        auto key = [](const CheckerConf& c) {
            return std::tie(c.type, c.connect_ip, c.connect_port, c.bindto, c.delay_loop_ms,
                            c.connect_timeout_ms, c.retry, c.delay_before_retry_ms, c.warmup_ms,
                            c.urls, c.http11, c.enable_sni, c.payload, c.require_reply, c.reply,
                            c.min_reply_length, c.max_reply_length, c.dns_type, c.dns_name,
                            c.helo_name, c.misc_argv, c.misc_timeout_ms, c.misc_dynamic);
        };
        return key(*this) == key(o);
    }
};

// xvs's passive_check { failures N window S }: a real server whose connections fail (the RS
// answers the SYN with a RST, or never answers it) at least `failures` times within the last
// `window`, more often than they succeed, is marked down at once, as a failed check would;
// only its active checkers' next success brings it back (ctl/health/passive.h).
inline constexpr uint32_t kDefaultPassiveFailures = 5;
inline constexpr uint32_t kDefaultPassiveWindowMs = 2'000;
struct PassiveConf {
    uint32_t failures = kDefaultPassiveFailures;
    uint32_t window_ms = kDefaultPassiveWindowMs;
    uint32_t line = 0;  // where it was written (resolution errors)
    std::string file;
    bool operator==(const PassiveConf& o) const {
        return failures == o.failures && window_ms == o.window_ms;
    }
};

// Real-server settings of health checking.
struct RsHealth {
    std::vector<CheckerConf> checkers;
    // Resolved: its own passive_check, else its virtual server's (only with a checker).
    std::optional<PassiveConf> passive;
    bool inhibit_on_failure = false;     // down: weight 0 instead of removal
    std::vector<std::string> notify_up;  // argv, empty = none
    std::vector<std::string> notify_down;
    CheckTimes times;         // parse-time defaults for its checkers
    std::string virtualhost;  // parse-time default for its HTTP checks
};

struct SorryServer {
    net::InetAddr addr;
    uint16_t port = 0;
    std::string file;
    uint32_t line = 0;
};

// A virtual server's `feedback { ... }` block (xvs, issue 14 item 4, seed 002): its real
// servers run xvs-agent, which reports their load over UDP to `port` on the director's kernel
// addresses; each report turns into a dynamic weight (ctl/health/feedback.h has the formula).
enum class FeedbackMetric : uint8_t {
    Cpu = 1,
    Runq = 2,
    Mem = 4,
    Conns = 8,
    Custom = 16,
    Loadavg = 32
};
inline constexpr std::array<std::pair<std::string_view, FeedbackMetric>, 6> kFeedbackMetrics = {{
    {"cpu", FeedbackMetric::Cpu},
    {"runq", FeedbackMetric::Runq},
    {"loadavg", FeedbackMetric::Loadavg},
    {"mem", FeedbackMetric::Mem},
    {"conns", FeedbackMetric::Conns},
    {"custom", FeedbackMetric::Custom},
}};
// What a real server's weight becomes once its reports stop for `silence` ms: the last
// dynamic weight (keep), its configured weight (configured), or 0 (zero: quiesced).
enum class FeedbackSilence : uint8_t { Keep, Configured, Zero };
inline constexpr std::array<std::pair<std::string_view, FeedbackSilence>, 3> kFeedbackSilence = {{
    {"keep", FeedbackSilence::Keep},
    {"configured", FeedbackSilence::Configured},
    {"zero", FeedbackSilence::Zero},
}};

struct FeedbackConf {
    uint16_t port = 0;                    // UDP port the reports go to (required)
    std::optional<net::InetAddr> listen;  // default: every address of the director's kernel
    std::string secret;                   // `key TEXT` or the content of `keyfile PATH`
    uint32_t interval_ms = 1000;          // how often the agents report
    uint32_t smoothing_permille = 500;    // share of the previous load kept at each report
    uint32_t floor = 1;                   // lowest dynamic weight
    uint32_t ceiling = 0;                 // highest; 0 = the real server's configured weight
    FeedbackSilence on_silence = FeedbackSilence::Configured;
    uint32_t silence_ms = 0;  // no report for this long = silent; 0 = 3 x interval
    uint32_t metrics = static_cast<uint32_t>(FeedbackMetric::Cpu);  // FeedbackMetric bits
    uint32_t conns_max = 0;          // metric conns: load 1 at this many connections
    uint32_t max_skew_ms = 30'000;   // a report's clock may differ from the director's by this
    std::string file;
    uint32_t line = 0;
    uint32_t silence_after_ms() const { return silence_ms ? silence_ms : 3 * interval_ms; }
    // Same receiver and formula (a reload keeps the state): everything but where it was written.
    bool same(const FeedbackConf& o) const {
        auto key = [](const FeedbackConf& c) {
            return std::tie(c.port, c.listen, c.secret, c.interval_ms, c.smoothing_permille,
                            c.floor, c.ceiling, c.on_silence, c.silence_ms, c.metrics,
                            c.conns_max, c.max_skew_ms);
        };
        return key(*this) == key(o);
    }
};

// Virtual-server settings of health checking.
struct VsHealth {
    uint32_t quorum = 1;                 // live weight needed
    uint32_t hysteresis = 0;             // gained at >= quorum + h, lost below quorum - h
    std::vector<std::string> quorum_up;  // argv
    std::vector<std::string> quorum_down;
    bool alpha = false;  // real servers start down until their checks pass
    bool omega = false;  // on shutdown / removal run quorum_down and notify_down
    std::optional<SorryServer> sorry;
    std::optional<PassiveConf> passive;  // default of its real servers that have a checker
    bool sorry_inhibit = false;  // sorry_server_inhibit: kept at weight 0 while quorum holds
    CheckTimes times;            // parse-time defaults
    std::string virtualhost;     // parse-time default
    std::optional<FeedbackConf> feedback;  // load feedback from xvs-agent
};

// keepalived splits a script line into words at blanks, honouring "double" and 'single'
// quotes and backslash escapes; no shell is involved.
std::vector<std::string> script_split(std::string_view line);

}  // namespace xvs::ctl
