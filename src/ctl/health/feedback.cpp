// Load feedback on the director; see feedback.h.
#include "ctl/health/feedback.h"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "ctl/health/probe.h"

namespace xvs::ctl::health {

namespace {

bool has(const FeedbackConf& c, FeedbackMetric m) {
    return (c.metrics & static_cast<uint32_t>(m)) != 0;
}

uint64_t wall_now_ms() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
}

uint32_t top_of(const FeedbackConf& conf, uint32_t base) {
    return conf.ceiling ? conf.ceiling : base;
}

}  // namespace

double feedback_sample(const FeedbackConf& conf, const net::FeedbackReport& r) {
    double s = 0;
    if (has(conf, FeedbackMetric::Cpu)) s = std::max(s, r.cpu_permille / 1000.0);
    const double ncpu = std::max<uint16_t>(r.ncpu, 1);
    if (has(conf, FeedbackMetric::Runq)) s = std::max(s, r.running / ncpu);
    if (has(conf, FeedbackMetric::Loadavg)) s = std::max(s, r.loadavg_x100 / 100.0 / ncpu);
    if (has(conf, FeedbackMetric::Mem)) s = std::max(s, r.mem_permille / 1000.0);
    if (has(conf, FeedbackMetric::Conns) && conf.conns_max)
        s = std::max(s, double(r.established) / conf.conns_max);
    if (has(conf, FeedbackMetric::Custom) && r.has_custom)
        s = std::max(s, r.custom_permille / 1000.0);
    return std::clamp(s, 0.0, 1.0);
}

void feedback_observe(FeedbackState& st, const FeedbackConf& conf, const net::FeedbackReport& r,
                      Ms now) {
    const double sample = feedback_sample(conf, r);
    // After a silence the old load says nothing about the new one.
    const bool fresh = !st.load || feedback_silent(st, conf, now);
    const double s = conf.smoothing_permille / 1000.0;
    st.load = fresh ? sample : s * *st.load + (1 - s) * sample;
    st.last = r;
    st.last_ms = now;
    ++st.reports;
}

bool feedback_silent(const FeedbackState& st, const FeedbackConf& conf, Ms now) {
    return st.load && now - st.last_ms > Ms(conf.silence_after_ms());
}

std::optional<uint32_t> feedback_weight(const FeedbackState& st, const FeedbackConf& conf,
                                        uint32_t base, Ms now) {
    if (!st.load) return std::nullopt;
    if (feedback_silent(st, conf, now)) {
        if (conf.on_silence == FeedbackSilence::Configured) return std::nullopt;
        if (conf.on_silence == FeedbackSilence::Zero) return 0u;
    }
    const uint32_t top = top_of(conf, base);
    const double w = std::round(top * (1.0 - *st.load));
    const uint32_t lo = std::min(conf.floor, top);
    return std::clamp(static_cast<uint32_t>(std::max(w, 0.0)), lo, top);
}

bool feedback_weight_changes(std::optional<uint32_t> applied, std::optional<uint32_t> next,
                             uint32_t top) {
    if (applied.has_value() != next.has_value()) return true;
    if (!next || *applied == *next) return false;
    // Reaching an end (0, floor, top) always applies; otherwise at least 2% of top.
    if (*next == 0 || *next == top) return true;
    const uint32_t diff = *applied > *next ? *applied - *next : *next - *applied;
    return uint64_t{diff} * 50 >= top;
}

FeedbackAdmit feedback_admit(uint64_t& last, uint64_t sent_ms, uint64_t wall_now_ms,
                             uint32_t max_skew_ms) {
    const uint64_t lo = wall_now_ms > max_skew_ms ? wall_now_ms - max_skew_ms : 0;
    if (sent_ms < lo || sent_ms > wall_now_ms + max_skew_ms) return FeedbackAdmit::stale;
    if (sent_ms <= last) return FeedbackAdmit::replayed;
    last = sent_ms;
    return FeedbackAdmit::accepted;
}

FeedbackHub::FeedbackHub(Loop& loop, OnReport on_report, WallClock wall)
    : loop_(loop), on_report_(std::move(on_report)), wall_(wall ? std::move(wall) : wall_now_ms) {}

FeedbackHub::~FeedbackHub() {
    for (auto& l : listeners_) {
        if (l->fd < 0) continue;
        loop_.unwatch(l->fd);
        ::close(l->fd);
    }
}

std::optional<size_t> FeedbackHub::find(const Spec& s) const {
    for (size_t i = 0; i < listeners_.size(); ++i) {
        const Spec& o = listeners_[i]->spec;
        if (o.listen == s.listen && o.port == s.port && o.secret == s.secret &&
            o.max_skew_ms == s.max_skew_ms)
            return i;
    }
    return std::nullopt;
}

std::vector<std::string> FeedbackHub::configure(const std::vector<Spec>& specs) {
    std::vector<std::string> errors;
    std::vector<std::unique_ptr<Listener>> next;
    for (const Spec& s : specs) {
        if (std::any_of(next.begin(), next.end(), [&](const auto& l) {
                return l->spec.listen == s.listen && l->spec.port == s.port;
            }))
            continue;  // config_check refuses two keys on one port; first one wins here
        if (auto i = find(s)) {
            next.push_back(std::move(listeners_[*i]));
            listeners_.erase(listeners_.begin() + static_cast<long>(*i));
            continue;
        }
        auto l = std::make_unique<Listener>();
        l->spec = s;
        l->key = net::feedback_key(s.secret);
        next.push_back(std::move(l));
    }
    // Close the old ones before binding the new (a changed key on the same port).
    for (auto& l : listeners_) {
        if (l->fd < 0) continue;
        loop_.unwatch(l->fd);
        ::close(l->fd);
    }
    listeners_ = std::move(next);
    for (auto& lp : listeners_) {
        Listener& l = *lp;
        if (l.fd >= 0) continue;
        const std::string where = (l.spec.listen ? net::to_string(*l.spec.listen) : "*") + ":" +
                                  std::to_string(l.spec.port);
        // A v6 socket takes both families unless it listens on one IPv4 address.
        const bool v4 = l.spec.listen && l.spec.listen->is_v4();
        int fd = ::socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            l.error = std::string("socket: ") + std::strerror(errno);
            errors.push_back("feedback listener " + where + ": " + l.error);
            continue;
        }
        const int off = 0;
        const int on = 1;
        if (!v4) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        sockaddr_storage ss{};
        socklen_t len = 0;
        if (l.spec.listen) {
            len = sockaddr_of(net::InetEndpoint{*l.spec.listen, l.spec.port}, ss);
        } else {
            sockaddr_in6 sin6{};
            sin6.sin6_family = AF_INET6;
            sin6.sin6_port = htons(l.spec.port);
            sin6.sin6_addr = in6addr_any;
            std::memcpy(&ss, &sin6, sizeof sin6);
            len = sizeof sin6;
        }
        if (::bind(fd, reinterpret_cast<const sockaddr*>(&ss), len) != 0) {
            l.error = std::string("bind: ") + std::strerror(errno);
            errors.push_back("feedback listener " + where + ": " + l.error);
            ::close(fd);
            continue;
        }
        l.fd = fd;
        l.error.clear();
        auto w = loop_.watch(fd, EPOLLIN, [this, &l](uint32_t) { on_readable(l); });
        if (!w) errors.push_back("feedback listener " + where + ": " + w.error());
    }
    return errors;
}

void FeedbackHub::on_readable(Listener& l) {
    const size_t idx =
        static_cast<size_t>(std::find_if(listeners_.begin(), listeners_.end(),
                                         [&](const auto& p) { return p.get() == &l; }) -
                            listeners_.begin());
    uint8_t buf[512];
    for (int n = 0; n < 256; ++n) {  // bounded: other work of the loop gets its turn
        sockaddr_storage from{};
        socklen_t flen = sizeof from;
        const ssize_t len =
            ::recvfrom(l.fd, buf, sizeof buf, MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &flen);
        if (len < 0) break;
        // MSG_TRUNC: len is the datagram's real size; an oversized one is passed empty, so it
        // counts as bad_size like any other wrong size.
        const size_t got = static_cast<size_t>(len) > sizeof buf ? 0 : static_cast<size_t>(len);
        on_datagram(idx, endpoint_of(from).addr, std::span<const uint8_t>(buf, got));
    }
}

void FeedbackHub::on_datagram(size_t idx, const net::InetAddr& src, std::span<const uint8_t> data) {
    Listener& l = *listeners_[idx];
    ++l.c.received;
    net::FeedbackReport r;
    switch (net::feedback_decode(data, l.key, r)) {
        case net::FeedbackError::none:
            break;
        case net::FeedbackError::bad_size:
            ++l.c.bad_size;
            return;
        case net::FeedbackError::bad_magic:
            ++l.c.bad_magic;
            return;
        case net::FeedbackError::bad_version:
            ++l.c.bad_version;
            return;
        case net::FeedbackError::bad_mac:
            ++l.c.bad_mac;
            return;
    }
    uint64_t& last = l.last_sent[{src.word(0), src.word(1)}];
    switch (feedback_admit(last, r.sent_ms, wall_(), l.spec.max_skew_ms)) {
        case FeedbackAdmit::accepted:
            break;
        case FeedbackAdmit::replayed:
            ++l.c.replayed;
            return;
        case FeedbackAdmit::stale:
            ++l.c.stale;
            return;
    }
    if (on_report_ && on_report_(l.spec, src, r)) {
        ++l.c.accepted;
    } else {
        ++l.c.unknown_source;
    }
}

nlohmann::json FeedbackHub::show() const {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& l : listeners_) {
        nlohmann::json j;
        j["listen"] = (l->spec.listen ? net::to_string(*l->spec.listen) : "*");
        j["port"] = l->spec.port;
        if (!l->error.empty()) j["error"] = l->error;
        j["received"] = l->c.received;
        j["accepted"] = l->c.accepted;
        j["rejected"] = l->c.rejected();
        j["bad_size"] = l->c.bad_size;
        j["bad_magic"] = l->c.bad_magic;
        j["bad_version"] = l->c.bad_version;
        j["bad_mac"] = l->c.bad_mac;
        j["replayed"] = l->c.replayed;
        j["stale"] = l->c.stale;
        j["unknown_source"] = l->c.unknown_source;
        list.push_back(std::move(j));
    }
    return list;
}

}  // namespace xvs::ctl::health
