// Parser of keepalived's health-check configuration (keepalived.conf(5)): the checker blocks
// of a real_server, their url blocks, and the virtual_server / real_server settings around
// them. Inherited settings are resolved once the virtual_server block is read, since
// keepalived lets `delay_loop` come after the real servers it applies to.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ctl/config_parser_impl.h"

namespace xvs::ctl {

std::vector<std::string> script_split(std::string_view line) {
    std::vector<std::string> words;
    std::string cur;
    bool in_word = false;
    char quote = 0;
    for (size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (quote) {
            if (ch == quote) {
                quote = 0;
            } else if (ch == '\\' && quote == '"' && i + 1 < line.size()) {
                cur += line[++i];
            } else {
                cur += ch;
            }
        } else if (ch == '"' || ch == '\'') {
            quote = ch;
            in_word = true;
        } else if (ch == '\\' && i + 1 < line.size()) {
            cur += line[++i];
            in_word = true;
        } else if (ch == ' ' || ch == '\t') {
            if (in_word) words.push_back(std::move(cur));
            cur.clear();
            in_word = false;
        } else {
            cur += ch;
            in_word = true;
        }
    }
    if (in_word) words.push_back(std::move(cur));
    return words;
}

namespace parser_detail {

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// "0a1B..." -> bytes; nullopt on an odd length or a non-hex digit.
std::optional<std::string> hex_bytes(std::string_view text) {
    if (text.size() % 2) return std::nullopt;
    std::string out;
    for (size_t i = 0; i < text.size(); i += 2) {
        const int hi = hex_digit(text[i]);
        const int lo = hex_digit(text[i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi << 4 | lo);
    }
    return out;
}

struct DnsTypeName {
    std::string_view name;
    uint16_t type;
};
constexpr std::array<DnsTypeName, 8> kDnsTypes = {{{"A", 1},
                                                   {"NS", 2},
                                                   {"CNAME", 5},
                                                   {"SOA", 6},
                                                   {"PTR", 12},
                                                   {"MX", 15},
                                                   {"TXT", 16},
                                                   {"AAAA", 28}}};

constexpr uint32_t kMaxSecondsMs = 86'400'000;  // one day, for any check timer

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == 0) return "localhost";
    return buf;
}

}  // namespace

// Seconds, with an optional fraction down to milliseconds ("3", "1.5", "0.05"), as
// keepalived's timers are written; returned in ms, at least min_ms.
std::optional<uint32_t> Parser::seconds_value(const Token& kw, uint32_t min_ms) {
    const Token* val = value(kw);
    if (!val) return std::nullopt;
    const std::string& s = val->text;
    uint64_t ms = 0;
    size_t i = 0;
    size_t int_digits = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++int_digits)
        ms = std::min<uint64_t>(ms * 10 + uint64_t(s[i] - '0'), uint64_t{1} << 40);
    ms *= 1000;
    bool ok = int_digits > 0;
    if (i < s.size() && s[i] == '.') {
        ++i;
        uint64_t scale = 100;
        size_t frac = 0;
        for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++frac) {
            ms += uint64_t(s[i] - '0') * scale;
            scale /= 10;
        }
        ok = frac > 0 || int_digits > 0;
    }
    if (!ok || i != s.size()) {
        error(*val, kw.text + ": " + quoted(s) + " is not a number of seconds (e.g. 3 or 0.5)");
        return std::nullopt;
    }
    if (ms < min_ms || ms > kMaxSecondsMs) {
        error(*val, kw.text + ": " + s + " out of range " +
                        std::to_string(min_ms / 1000.0).substr(0, 5) + ".." +
                        std::to_string(kMaxSecondsMs / 1000) + " seconds");
        return std::nullopt;
    }
    return static_cast<uint32_t>(ms);
}

// A script: one quoted string split into words (keepalived's rules, no shell), or else the
// words of the rest of the line.
std::vector<std::string> Parser::script_value(const Token& kw) {
    std::vector<std::string> argv;
    if (!has_value(kw)) {
        error(kw, kw.text + ": missing value");
        return argv;
    }
    if (peek()->kind == TokenKind::String) {
        argv = script_split(take().text);  // a quoted command is the whole statement
    } else {
        while (has_value(kw)) argv.push_back(take().text);  // else the rest of the line
    }
    if (argv.empty()) error(kw, kw.text + ": empty command");
    return argv;
}

// delay_loop, connect_timeout, retry, delay_before_retry, warmup: at any level.
bool Parser::check_times_keyword(const Token& t, CheckTimes& times) {
    const std::string& k = t.text;
    if (k == "delay_loop") {
        if (auto ms = seconds_value(t, 1)) times.delay_loop_ms = *ms;
    } else if (k == "connect_timeout") {
        if (auto ms = seconds_value(t, 1)) times.connect_timeout_ms = *ms;
    } else if (k == "retry" || k == "nb_get_retry") {
        if (auto n = number_value(t, 0, 1000)) times.retry = *n;
    } else if (k == "delay_before_retry") {
        if (auto ms = seconds_value(t, 0)) times.delay_before_retry_ms = *ms;
    } else if (k == "warmup") {
        if (auto ms = seconds_value(t, 0)) times.warmup_ms = *ms;
    } else {
        return false;
    }
    return true;
}

bool Parser::health_vs_keyword(const Token& t, VirtualServer& vs) {
    VsHealth& h = vs.health;
    const std::string& k = t.text;
    if (check_times_keyword(t, h.times)) return true;
    if (k == "virtualhost") {
        if (const Token* val = value(t)) h.virtualhost = val->text;
    } else if (k == "quorum") {
        if (auto n = number_value(t, 0, UINT32_MAX)) h.quorum = *n;
    } else if (k == "hysteresis") {
        if (auto n = number_value(t, 0, UINT32_MAX)) h.hysteresis = *n;
    } else if (k == "quorum_up") {
        h.quorum_up = script_value(t);
    } else if (k == "quorum_down") {
        h.quorum_down = script_value(t);
    } else if (k == "alpha") {
        h.alpha = true;
    } else if (k == "omega") {
        h.omega = true;
    } else if (k == "sorry_server_inhibit") {
        h.sorry_inhibit = true;
    } else if (k == "passive_check") {
        passive_block(t, h.passive);
    } else if (k == "sorry_server") {
        auto addr = inet_value(t);
        auto port = addr ? port_value(t) : std::nullopt;
        if (addr && port) h.sorry = SorryServer{*addr, *port, loc(t).file, t.line};
    } else if (k == "feedback") {
        feedback_block(t, vs);
    } else {
        return false;
    }
    return true;
}

// `feedback { port N; key TEXT | keyfile PATH; interval S; smoothing F; floor W; ceiling W;
// on_silence keep|configured|zero; silence S; metric cpu|runq|loadavg|mem|conns|custom ...;
// conns_max N; listen ADDR; max_skew S }` (xvs; ctl/health/feedback.h).
void Parser::feedback_block(const Token& kw, VirtualServer& vs) {
    if (vs.health.feedback) {
        error(kw, "feedback: a virtual_server has one feedback block");
        skip_statement(kw);
        return;
    }
    FeedbackConf fb;
    fb.file = loc(kw).file;
    fb.line = kw.line;
    bool ok = true;
    bool has_port = false;
    std::optional<SourceLoc> key_loc;
    std::optional<SourceLoc> floor_loc;
    block(kw, [&](const Token& t) {
        if (classified(t, "feedback")) return;
        const std::string& k = t.text;
        if (k == "port") {
            auto p = port_value(t);
            if (p && *p == 0) error(t, "feedback: port 0: name the UDP port the agents report to");
            if (p && *p) {
                fb.port = *p;
                has_port = true;
            }
        } else if (k == "listen") {
            if (auto a = inet_value(t)) fb.listen = *a;
        } else if (k == "key" || k == "keyfile") {
            const Token* val = value(t);
            if (!val) return;
            if (key_loc) {
                error(t, "feedback: one key or keyfile");
                ok = false;
                return;
            }
            key_loc = loc(t);
            std::string text = val->text;
            if (k == "keyfile") {
                std::string path = val->text;
                const std::string& f = loc(t).file;
                if (!path.empty() && path[0] != '/' && f.rfind('/') != std::string::npos)
                    path = f.substr(0, f.rfind('/') + 1) + path;
                std::ifstream in(path, std::ios::binary);
                std::ostringstream buf;
                if (in) buf << in.rdbuf();
                if (!in || in.bad()) {
                    error(*val, "feedback: keyfile " + path + ": " + std::strerror(errno));
                    ok = false;
                    return;
                }
                text = buf.str();
            }
            size_t n = 0;
            for (char c : text)
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') ++n;
            if (n < 16) {
                error(*val, "feedback: " + k +
                                ": the key must have at least 16 characters (e.g. "
                                "`head -c 32 /dev/urandom | base64`)");
                ok = false;
                return;
            }
            fb.secret = std::move(text);
        } else if (k == "interval") {
            if (auto ms = seconds_value(t, 100)) fb.interval_ms = *ms;
        } else if (k == "silence") {
            if (auto ms = seconds_value(t, 100)) fb.silence_ms = *ms;
        } else if (k == "max_skew") {
            if (auto ms = seconds_value(t, 100)) fb.max_skew_ms = *ms;
        } else if (k == "smoothing") {
            const Token* val = value(t);
            if (!val) return;
            // 0, 0.5, .75 ... below 1: the share of the previous load kept.
            const std::string& v = val->text;
            uint32_t permille = 0;
            size_t i = 0;
            bool good = !v.empty();
            if (i < v.size() && v[i] == '0') ++i;
            if (i < v.size() && v[i] == '.') {
                ++i;
                uint32_t scale = 100;
                size_t digits = 0;
                for (; i < v.size() && v[i] >= '0' && v[i] <= '9' && digits < 3; ++i, ++digits) {
                    permille += uint32_t(v[i] - '0') * scale;
                    scale /= 10;
                }
                good = good && digits > 0;
            }
            if (!good || i != v.size()) {
                error(*val, "feedback: smoothing " + quoted(v) +
                                ": a fraction from 0 to 0.999 (the share of the previous load "
                                "kept at each report)");
                return;
            }
            fb.smoothing_permille = permille;
        } else if (k == "floor") {
            if (auto n = number_value(t, 0, 65535)) {
                fb.floor = *n;
                floor_loc = loc(t);
            }
        } else if (k == "ceiling") {
            if (auto n = number_value(t, 1, 65535)) fb.ceiling = *n;
        } else if (k == "conns_max") {
            if (auto n = number_value(t, 1, UINT32_MAX)) fb.conns_max = *n;
        } else if (k == "on_silence") {
            if (auto v = choice(t, kFeedbackSilence)) fb.on_silence = *v;
        } else if (k == "metric") {
            fb.metrics = 0;
            if (!has_value(t))
                error(t, "metric: missing value (cpu runq loadavg mem conns custom)");
            while (has_value(t)) {
                const Token& val = take();
                auto it = std::find_if(kFeedbackMetrics.begin(), kFeedbackMetrics.end(),
                                       [&](const auto& m) { return m.first == val.text; });
                if (it == kFeedbackMetrics.end()) {
                    error(val, "metric: bad value " + quoted(val.text) +
                                   " (cpu|runq|loadavg|mem|conns|custom)");
                    continue;
                }
                fb.metrics |= static_cast<uint32_t>(it->second);
            }
        } else {
            unknown(t, "feedback");
        }
    });
    if (!has_port) {
        error(kw, "feedback: port missing: the UDP port xvs-agent reports to");
        ok = false;
    }
    if (!key_loc && ok) {
        error(kw, "feedback: key or keyfile missing: reports are authenticated with a shared key");
        ok = false;
    }
    if (fb.ceiling && fb.floor > fb.ceiling) {
        error(floor_loc ? *floor_loc : loc(kw), "feedback: floor " + std::to_string(fb.floor) +
                                                    " above ceiling " + std::to_string(fb.ceiling));
        ok = false;
    }
    if ((fb.metrics & static_cast<uint32_t>(FeedbackMetric::Conns)) && !fb.conns_max) {
        error(kw,
              "feedback: metric conns needs conns_max (the connection count that is full load)");
        ok = false;
    }
    if (fb.silence_ms && fb.silence_ms < fb.interval_ms) {
        error(kw, "feedback: silence " + std::to_string(fb.silence_ms) +
                      " ms is shorter than the interval (" + std::to_string(fb.interval_ms) +
                      " ms): every server would count as silent");
        ok = false;
    }
    if (ok) vs.health.feedback = std::move(fb);
}

bool Parser::health_rs_keyword(const Token& t, RealServer& rs) {
    RsHealth& h = rs.health;
    const std::string& k = t.text;
    if (check_times_keyword(t, h.times)) return true;
    if (k == "virtualhost") {
        if (const Token* val = value(t)) h.virtualhost = val->text;
    } else if (k == "inhibit_on_failure") {
        h.inhibit_on_failure = true;
    } else if (k == "notify_up") {
        h.notify_up = script_value(t);
    } else if (k == "notify_down") {
        h.notify_down = script_value(t);
    } else if (k == "passive_check") {
        passive_block(t, h.passive);
    } else {
        for (size_t i = 0; i < kCheckTypeNames.size(); ++i) {
            if (k == kCheckTypeNames[i]) {
                checker_block(t, rs, static_cast<CheckType>(i));
                return true;
            }
        }
        return false;
    }
    return true;
}

void Parser::checker_block(const Token& kw, RealServer& rs, CheckType type) {
    CheckerConf c;
    c.type = type;
    c.file = loc(kw).file;
    c.line = kw.line;
    block(kw, [&](const Token& t) { checker_keyword(t, c); });
    if ((type == CheckType::Http || type == CheckType::Ssl) && c.urls.empty())
        error(kw, kw.text + ": no url block (e.g. `url { path /healthz status_code 200 }`)");
    if (type == CheckType::Misc && c.misc_argv.empty())
        error(kw, kw.text + ": misc_path missing (the command to run)");
    if (type != CheckType::Ssl && c.enable_sni)
        error(kw, kw.text + ": enable_sni is for SSL_GET only");
    rs.health.checkers.push_back(std::move(c));
}

void Parser::checker_keyword(const Token& t, CheckerConf& c) {
    const std::string& k = t.text;
    const char* own_block = c.type == CheckType::Ssl ? "HTTP_GET" : to_string(c.type);
    const Keyword* row = keyword_find(own_block, k);
    const char* row_block = own_block;
    if (!row) {
        row = keyword_find("checker", k);
        row_block = "checker";
    }
    if (!row) return unknown(t, to_string(c.type));
    if (row->cls != KeywordClass::Applied) {
        classified(t, row_block);
        return;
    }
    if (check_times_keyword(t, c.own)) return;
    if (k == "connect_ip") {
        if (auto a = inet_value(t)) c.connect_ip = *a;
    } else if (k == "connect_port") {
        if (auto p = port_value(t)) c.connect_port = *p;
    } else if (k == "bindto") {
        if (auto a = inet_value(t)) c.bindto = *a;
    } else if (k == "url") {
        url_block(t, c);
    } else if (k == "virtualhost") {
        if (const Token* val = value(t)) c.own_virtualhost = val->text;
    } else if (k == "http_protocol") {
        static constexpr std::array<std::pair<std::string_view, bool>, 3> kProtos = {
            {{"1.0", false}, {"1.0C", false}, {"1.1", true}}};
        if (auto v = choice(t, kProtos)) c.http11 = *v;
    } else if (k == "enable_sni") {
        c.enable_sni = true;
    } else if (k == "payload") {
        if (const Token* val = value(t)) {
            if (auto bytes = hex_bytes(val->text))
                c.payload = *bytes;
            else
                error(*val, "payload: " + quoted(val->text) + " is not hex bytes (e.g. 0a1b2c)");
        }
    } else if (k == "require_reply") {
        c.require_reply = true;
        if (has_value(t)) {
            const Token& val = take();
            if (auto bytes = hex_bytes(val.text))
                c.reply = *bytes;
            else
                error(val, "require_reply: " + quoted(val.text) + " is not hex bytes");
        }
    } else if (k == "min_reply_length") {
        if (auto n = number_value(t, 0, 65535)) c.min_reply_length = *n;
    } else if (k == "max_reply_length") {
        if (auto n = number_value(t, 0, 65535)) c.max_reply_length = *n;
    } else if (k == "type") {
        if (const Token* val = value(t)) {
            const std::string name = upper(val->text);
            auto it = std::find_if(kDnsTypes.begin(), kDnsTypes.end(),
                                   [&](const DnsTypeName& d) { return d.name == name; });
            if (it == kDnsTypes.end())
                error(*val,
                      "type: bad value " + quoted(val->text) + " (A|NS|CNAME|SOA|PTR|MX|TXT|AAAA)");
            else
                c.dns_type = it->type;
        }
    } else if (k == "name") {
        if (const Token* val = value(t)) {
            bool ok = !val->text.empty() && val->text.size() <= 253;
            size_t label = 0;
            for (char ch : val->text) {
                label = ch == '.' ? 0 : label + 1;
                if (label > 63 || ch == ' ') ok = false;
            }
            if (!ok)
                error(*val, "name: " + quoted(val->text) +
                                " is not a DNS name (labels of at most "
                                "63 characters, 253 in all)");
            else
                c.dns_name = val->text;
        }
    } else if (k == "helo_name") {
        if (const Token* val = value(t)) c.helo_name = val->text;
    } else if (k == "misc_path") {
        c.misc_argv = script_value(t);
    } else if (k == "misc_timeout") {
        if (auto ms = seconds_value(t, 1)) c.misc_timeout_ms = *ms;
    } else if (k == "misc_dynamic") {
        c.misc_dynamic = true;
    } else {
        unknown(t, own_block);
    }
}

// `url { path P; digest HEX; status_code N [N-M ...]; virtualhost H }`.
void Parser::url_block(const Token& kw, CheckerConf& c) {
    HttpUrl url;
    block(kw, [&](const Token& t) {
        if (classified(t, "url")) return;
        const std::string& k = t.text;
        if (k == "path") {
            if (const Token* val = value(t)) url.path = val->text;
        } else if (k == "digest") {
            const Token* val = value(t);
            if (!val) return;
            auto bytes = hex_bytes(val->text);
            if (!bytes || bytes->size() != 16)
                return error(*val, "digest: " + quoted(val->text) +
                                       " is not an MD5 digest (32 hex digits, as genhash prints)");
            std::array<uint8_t, 16> d{};
            std::memcpy(d.data(), bytes->data(), 16);
            url.digest = d;
        } else if (k == "status_code") {
            if (!has_value(t)) return error(t, "status_code: missing value");
            // Codes and ranges; a word that does not start with a digit is the next keyword.
            while (has_value(t) && peek()->text[0] >= '0' && peek()->text[0] <= '9') {
                const Token& val = take();
                const size_t dash = val.text.find('-');
                auto num = [&](std::string_view s) -> std::optional<uint16_t> {
                    unsigned n = 0;
                    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
                    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || n < 100 ||
                        n > 599)
                        return std::nullopt;
                    return static_cast<uint16_t>(n);
                };
                std::string_view text = val.text;
                auto lo = num(text.substr(0, dash));
                auto hi = dash == std::string_view::npos ? lo : num(text.substr(dash + 1));
                if (!lo || !hi || *hi < *lo) {
                    error(val, "status_code: " + quoted(val.text) +
                                   " is not an HTTP status or range (100..599, e.g. 200-299)");
                    continue;
                }
                url.status.emplace_back(*lo, *hi);
            }
        } else if (k == "virtualhost") {
            if (const Token* val = value(t)) url.virtualhost = val->text;
        } else {
            unknown(t, "url");
        }
    });
    c.urls.push_back(std::move(url));
}

// xvs's `passive_check { failures N window S }` (ctl/health/passive.h), in a virtual_server
// (default of its real servers) or a real_server.
void Parser::passive_block(const Token& kw, std::optional<PassiveConf>& out) {
    PassiveConf p;
    p.file = loc(kw).file;
    p.line = kw.line;
    block(kw, [&](const Token& t) {
        if (classified(t, "passive_check")) return;
        if (t.text == "failures") {
            if (auto n = number_value(t, 1, 1'000'000)) p.failures = *n;
        } else if (t.text == "window") {
            if (auto ms = seconds_value(t, 100)) p.window_ms = *ms;
        } else {
            unknown(t, "passive_check");
        }
    });
    out = p;
}

// Settings inherited checker <- real_server <- virtual_server <- keepalived's default.
void Parser::health_resolve(VirtualServer& vs) {
    const CheckTimes& v = vs.health.times;
    std::string helo;
    for (RealServer& rs : vs.real_servers) {
        // Passive checks bring a real server down; only an active check can bring it back.
        if (rs.health.passive && rs.health.checkers.empty())
            error(SourceLoc{rs.health.passive->file, rs.health.passive->line},
                  "passive_check: real server " +
                      net::to_string(net::InetEndpoint{rs.addr, rs.port}) +
                      " has no checker to bring it back up: add one (e.g. TCP_CHECK)");
        if (!rs.health.passive && !rs.health.checkers.empty())
            rs.health.passive = vs.health.passive;
        const CheckTimes& r = rs.health.times;
        for (CheckerConf& c : rs.health.checkers) {
            auto pick = [&](const std::optional<uint32_t>& own, const std::optional<uint32_t>& rs_v,
                            const std::optional<uint32_t>& vs_v, uint32_t dflt) {
                return own ? *own : rs_v ? *rs_v : vs_v ? *vs_v : dflt;
            };
            const bool http = c.type == CheckType::Http || c.type == CheckType::Ssl;
            c.delay_loop_ms =
                pick(c.own.delay_loop_ms, r.delay_loop_ms, v.delay_loop_ms, kDefaultDelayLoopMs);
            c.connect_timeout_ms = pick(c.own.connect_timeout_ms, r.connect_timeout_ms,
                                        v.connect_timeout_ms, kDefaultConnectTimeoutMs);
            c.retry = pick(c.own.retry, r.retry, v.retry, kDefaultRetry);
            c.delay_before_retry_ms =
                pick(c.own.delay_before_retry_ms, r.delay_before_retry_ms, v.delay_before_retry_ms,
                     http ? kDefaultHttpDelayBeforeRetryMs : kDefaultDelayBeforeRetryMs);
            c.warmup_ms = pick(c.own.warmup_ms, r.warmup_ms, v.warmup_ms, 0);
            if (c.type == CheckType::Misc && c.misc_timeout_ms == 0)
                c.misc_timeout_ms = c.delay_loop_ms;
            for (HttpUrl& u : c.urls) {
                if (!u.virtualhost.empty()) continue;
                u.virtualhost = !c.own_virtualhost.empty()       ? c.own_virtualhost
                                : !rs.health.virtualhost.empty() ? rs.health.virtualhost
                                                                 : vs.health.virtualhost;
            }
            if (c.type == CheckType::Smtp && c.helo_name.empty()) {
                if (helo.empty()) helo = host_name();
                c.helo_name = helo;
            }
            if (c.type == CheckType::Udp && c.max_reply_length &&
                c.max_reply_length < c.min_reply_length)
                error(SourceLoc{c.file, c.line},
                      "UDP_CHECK: max_reply_length " + std::to_string(c.max_reply_length) +
                          " is below min_reply_length " + std::to_string(c.min_reply_length));
        }
    }
    if (vs.health.sorry_inhibit && !vs.health.sorry)
        error(vs.loc, "virtual_server: sorry_server_inhibit without a sorry_server");
}

}  // namespace parser_detail
}  // namespace xvs::ctl
