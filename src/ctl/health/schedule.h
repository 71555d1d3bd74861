// keepalived's retry rules for one checker, as a pure function of its state and one attempt's
// result, so the arithmetic is testable without sockets or clocks:
//   - a success marks the checker up (if it was down) and the next attempt is delay_loop away;
//   - a failure of an up checker is retried `retry` times, delay_before_retry apart; the
//     (retry + 1)-th failure in a row marks it down and the next attempt is delay_loop away;
//   - a failure of a down checker changes nothing: the next attempt is delay_loop away.
// So a dead server is down at most delay_loop + retry x (connect_timeout + delay_before_retry)
// + connect_timeout after it died.
#pragma once

#include <cstdint>

#include "ctl/health/check_config.h"
#include "ctl/health/loop.h"

namespace xvs::ctl::health {

struct CheckState {
    bool up = true;
    uint32_t failures = 0;  // failed attempts in a row while up
};

struct CheckStep {
    bool changed = false;  // up <-> down
    Ms next_in = 0;        // ms until the next attempt
};

inline CheckStep check_step(CheckState& s, const CheckerConf& c, bool ok) {
    CheckStep step;
    if (ok) {
        step.changed = !s.up;
        s.up = true;
        s.failures = 0;
        step.next_in = c.delay_loop_ms;
        return step;
    }
    if (!s.up) {
        step.next_in = c.delay_loop_ms;
        return step;
    }
    if (++s.failures <= c.retry) {
        step.next_in = c.delay_before_retry_ms;
        return step;
    }
    s.up = false;
    s.failures = 0;
    step.changed = true;
    step.next_in = c.delay_loop_ms;
    return step;
}

// keepalived's quorum with hysteresis: gained at live >= quorum + hysteresis, lost below
// quorum - hysteresis (or with no live weight left at all, quorum > 0). Returns the new state.
inline bool quorum_next(bool up, uint64_t live, uint32_t quorum, uint32_t hysteresis) {
    if (up) {
        const bool lost = (live == 0 && quorum > 0) || live + hysteresis < quorum;
        return !lost;
    }
    return live >= uint64_t{quorum} + hysteresis && !(live == 0 && quorum > 0);
}

}  // namespace xvs::ctl::health
