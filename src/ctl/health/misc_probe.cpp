// MISC_CHECK: the script's exit decides (keepalived.conf(5)): 0 up, 1 down; with misc_dynamic
// 2..255 up with weight code - 2 (0 restores the configured weight); anything else, a
// timeout or a signal: down.
#include "ctl/health/probe.h"
#include "ctl/health/script.h"

namespace xvs::ctl::health {

namespace {

class MiscProbe final : public Probe {
  public:
    MiscProbe(const CheckerConf& conf, ProbeEnv& env) : conf_(conf), env_(env) {}

    void start(ProbeDone done) override {
        done_ = std::move(done);
        script_ = std::make_unique<Script>(env_.loop, conf_.misc_argv, conf_.misc_timeout_ms,
                                           [this](ScriptExit e) { on_exit(std::move(e)); });
    }

  private:
    void on_exit(ScriptExit e) {
        ProbeResult r;
        r.text = e.text;
        if (e.spawned && !e.timed_out && e.code == 0) {
            r.ok = true;
        } else if (e.spawned && !e.timed_out && e.code >= 2 && e.code <= 255) {
            r.ok = true;
            if (conf_.misc_dynamic) {
                r.weight = static_cast<uint32_t>(e.code - 2);
                r.text += ": weight " + std::to_string(*r.weight);
            }
        }
        auto done = std::move(done_);
        done_ = nullptr;
        // script_ stays until the next start or destruction: we run inside its callback.
        if (done) done(std::move(r));
    }

    const CheckerConf& conf_;
    ProbeEnv& env_;
    ProbeDone done_;
    std::unique_ptr<Script> script_;
};

}  // namespace

std::unique_ptr<Probe> misc_probe_create(const CheckerConf& conf, ProbeEnv& env) {
    return std::make_unique<MiscProbe>(conf, env);
}

}  // namespace xvs::ctl::health
