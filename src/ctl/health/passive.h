// Passive health checking, the control-plane half: the health manager reads a dest's
// connection counters (lb/passive.h: conn_ok / conn_fail summed over workers, wrapping 32-bit
// totals) every kPassivePollMs and feeds them to a PassiveWindow, which keeps the deltas of the
// last `window` and says when the real server is to be marked down:
//     failures in the window >= conf.failures, and more failures than successes since the
//     first of them (successes read in the same reading count: their order is unknown).
// The second condition keeps a busy server that refuses a few connections among many in
// service; counting successes only from the first failure on keeps those of a server that
// just died from masking its failures for a whole window. A pure class (no clock, no
// Director) so the decision is testable with chosen counter sequences. Times in ms.
#pragma once

#include <cstdint>
#include <deque>

#include "ctl/health/check_config.h"
#include "ctl/health/loop.h"

namespace xvs::ctl::health {

inline constexpr Ms kPassivePollMs = 100;

class PassiveWindow {
  public:
    // One reading at `now` of the dest's totals. The first reading (and the first after
    // reset()) is the baseline and counts nothing. Returns true when the window trips.
    bool observe(Ms now, uint32_t ok_total, uint32_t fail_total, const PassiveConf& conf) {
        if (!have_base_) {
            have_base_ = true;
            last_ok_ = ok_total;
            last_fail_ = fail_total;
            return false;
        }
        // Unsigned differences: right across a 32-bit wrap of the totals.
        const uint32_t d_ok = ok_total - last_ok_;
        const uint32_t d_fail = fail_total - last_fail_;
        last_ok_ = ok_total;
        last_fail_ = fail_total;
        if (d_ok || d_fail) {
            samples_.push_back({now, d_ok, d_fail});
            fails_ += d_fail;
        }
        while (!samples_.empty() && samples_.front().time + conf.window_ms <= now) {
            fails_ -= samples_.front().fail;
            samples_.pop_front();
        }
        oks_ = 0;
        bool failing = false;
        for (const Sample& x : samples_) {
            failing = failing || x.fail > 0;
            if (failing) oks_ += x.ok;
        }
        return conf.failures > 0 && fails_ >= conf.failures && fails_ > oks_;
    }
    // Forgets everything: the next observe() is a new baseline (the dest changed, or the real
    // server went down or came back).
    void reset() {
        samples_.clear();
        have_base_ = false;
        oks_ = fails_ = 0;
    }
    uint64_t failures() const { return fails_; }  // in the window
    uint64_t successes() const { return oks_; }   // since the first of those failures

  private:
    struct Sample {
        Ms time;
        uint32_t ok, fail;
    };
    std::deque<Sample> samples_;  // one per reading that saw a change, oldest first
    bool have_base_ = false;
    uint32_t last_ok_ = 0, last_fail_ = 0;
    uint64_t fails_ = 0;  // sum over samples_
    uint64_t oks_ = 0;    // over samples_ from the first with a failure (last observe)
};

}  // namespace xvs::ctl::health
