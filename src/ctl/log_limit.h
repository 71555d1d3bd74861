// Log rate limiting: a token bucket per message kind. A kind may write `burst` lines at once,
// then one per `refill`; the lines held back are counted and reported once, as "N similar
// messages suppressed", when the kind may write again. So a flood (bad control requests, a
// flapping real server) costs at most burst + 1 line per refill period on disk, and no kind
// can silence another. Time is passed in, so tests drive it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace xvs::ctl {

class LogRateLimit {
  public:
    using Clock = std::chrono::steady_clock;

    struct Params {
        unsigned burst = 10;                    // lines at once (the bucket's size), >= 1
        std::chrono::milliseconds refill{1000};  // one more line per period
        size_t max_kinds = 1024;  // buckets kept; full idle ones are forgotten past this
    };

    // What to do with one line of a kind.
    struct Verdict {
        bool write = false;       // false: count it and drop it
        uint64_t suppressed = 0;  // write: lines of the kind held back before this one
    };

    // Held-back lines of a kind that may be reported now.
    struct Resumed {
        std::string kind;
        uint64_t suppressed = 0;
    };

    LogRateLimit() : LogRateLimit(Params{}) {}
    explicit LogRateLimit(Params params);

    Verdict admit(std::string_view kind, Clock::time_point now);
    // Kinds with held-back lines whose bucket has a token again: each spends one on its
    // summary line and starts counting from zero. The control loop calls this every tick, so
    // a flood that simply stops is still reported.
    std::vector<Resumed> take_resumed(Clock::time_point now);

    uint64_t suppressed_total() const { return suppressed_total_; }
    const Params& params() const { return params_; }
    size_t kinds() const { return buckets_.size(); }

  private:
    struct Bucket {
        unsigned tokens = 0;
        Clock::time_point last_refill{};
        uint64_t suppressed = 0;
    };
    void refill(Bucket& b, Clock::time_point now) const;
    void forget_idle(Clock::time_point now);

    Params params_;
    std::map<std::string, Bucket, std::less<>> buckets_;
    uint64_t suppressed_total_ = 0;
};

// "N similar messages suppressed (at most B at once, then 1 per P ms)": the summary line.
std::string log_suppressed_text(uint64_t n, const LogRateLimit::Params& params);

}  // namespace xvs::ctl
