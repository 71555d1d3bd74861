// Runs checker scripts (MISC_CHECK) and notifiers (notify_up/down, quorum_up/down) without
// blocking the loop: posix_spawn, no shell, stdio on /dev/null, the exit seen through a pidfd
// in the loop; a script still running at its timeout is killed (SIGKILL) and reaped.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "ctl/health/loop.h"

namespace xvs::ctl::health {

struct ScriptExit {
    bool timed_out = false;
    bool spawned = true;  // false: could not start (text says why)
    int code = -1;        // exit status, or -1 when killed by a signal
    std::string text;
};

class Script {
  public:
    // Starts argv; `done` runs from the loop when it ended (never from run()). Destroying the
    // Script kills a script still running and reaps it without calling done.
    Script(Loop& loop, std::vector<std::string> argv, Ms timeout_ms,
           std::function<void(ScriptExit)> done);
    ~Script();
    Script(const Script&) = delete;
    Script& operator=(const Script&) = delete;
    bool running() const { return pid_ > 0; }

  private:
    void on_exit();
    void end(ScriptExit e);

    Loop& loop_;
    std::function<void(ScriptExit)> done_;
    pid_t pid_ = -1;
    int pidfd_ = -1;
    bool killed_ = false;
    Loop::TimerId timer_;
};

}  // namespace xvs::ctl::health
