// UDP_CHECK, DNS_CHECK and PING_CHECK: one datagram per attempt through the shared sockets
// (mux.h), a reply or an ICMP error within connect_timeout decides. Results reach `done` from
// a zero-delay timer: the mux is still walking its waiters when a reply arrives.
#include <random>

#include "ctl/health/dns.h"
#include "ctl/health/mux.h"
#include "ctl/health/probe.h"

namespace xvs::ctl::health {

namespace {

enum class Kind : uint8_t { Udp, Dns, Ping };

class DgramProbe final : public Probe {
  public:
    DgramProbe(Kind kind, const CheckerConf& conf, const ProbeTarget& target, ProbeEnv& env)
        : kind_(kind), conf_(conf), target_(target), env_(env) {
        waiter_.on_reply = [this](std::string_view data) { return on_reply(data); };
        waiter_.on_error = [this](std::string why) {
            // Without require_reply an ICMP error is the only way a UDP check fails.
            finish_later(false, std::move(why));
        };
    }
    ~DgramProbe() override { reset(); }

    void start(ProbeDone done) override {
        done_ = std::move(done);
        Result<void> sent;
        if (kind_ == Kind::Ping) {
            sent = env_.icmp.send(&waiter_, target_);
        } else if (kind_ == Kind::Dns) {
            id_ = static_cast<uint16_t>(rng()());
            const std::string q = dns_query(id_, conf_.dns_name, conf_.dns_type);
            sent = env_.udp.send(&waiter_, target_, q);
        } else {
            sent = env_.udp.send(&waiter_, target_, conf_.payload);
        }
        if (!sent) return finish_later(false, sent.error());
        timer_ = env_.loop.timer_in(conf_.connect_timeout_ms, [this] {
            timer_ = {};
            if (kind_ == Kind::Udp && !conf_.require_reply)
                finish(true, "no ICMP error");
            else
                finish(false, "no reply");
        });
    }

  private:
    static std::mt19937& rng() {
        static std::mt19937 r{std::random_device{}()};
        return r;
    }

    void reset() {
        env_.loop.timer_cancel(timer_);
        if (kind_ == Kind::Ping)
            env_.icmp.forget(&waiter_);
        else
            env_.udp.forget(&waiter_);
    }
    void finish(bool ok, std::string text) {
        reset();
        auto done = std::move(done_);
        done_ = nullptr;
        if (done) done(ProbeResult{ok, std::move(text), std::nullopt});
    }
    void finish_later(bool ok, std::string text) {
        env_.loop.timer_cancel(timer_);
        timer_ = env_.loop.timer_in(0, [this, ok, text] {
            timer_ = {};
            finish(ok, text);
        });
    }

    bool on_reply(std::string_view data) {
        if (kind_ == Kind::Ping) {
            finish_later(true, "echo reply");
            return true;
        }
        if (kind_ == Kind::Dns) {
            if (dns_reply_id(data) != id_) return false;  // another check's query
            std::string why = dns_verdict(id_, data);
            finish_later(why.empty(), why.empty() ? "DNS answer" : why);
            return true;
        }
        if (!conf_.require_reply) {
            finish_later(true, "reply");
            return true;
        }
        if (data.size() < conf_.min_reply_length ||
            (conf_.max_reply_length && data.size() > conf_.max_reply_length)) {
            finish_later(false, "reply of " + std::to_string(data.size()) + " bytes");
            return true;
        }
        if (!data.starts_with(conf_.reply)) {
            finish_later(false, "reply differs from require_reply");
            return true;
        }
        finish_later(true, "reply");
        return true;
    }

    Kind kind_;
    const CheckerConf& conf_;
    ProbeTarget target_;
    ProbeEnv& env_;
    ProbeDone done_;
    MuxWaiter waiter_;
    Loop::TimerId timer_;
    uint16_t id_ = 0;
};

}  // namespace

std::unique_ptr<Probe> dgram_probe_create(const CheckerConf& conf, const ProbeTarget& target,
                                          ProbeEnv& env) {
    const Kind kind = conf.type == CheckType::Ping  ? Kind::Ping
                      : conf.type == CheckType::Dns ? Kind::Dns
                                                    : Kind::Udp;
    return std::make_unique<DgramProbe>(kind, conf, target, env);
}

}  // namespace xvs::ctl::health
