// Daemon mode (xvsd -d): fork, the child in a session of its own, in /, with stdin, stdout
// and stderr on /dev/null. The parent waits on a pipe until the child is ready (then exits 0),
// or failed (then prints the child's message on its own stderr and exits with the child's
// status), or died first (its wait status). So `xvsd -d` returns once the control socket
// answers, and a script or init system sees a failure where it started xvsd.
#pragma once

#include <string_view>

#include "common/result.h"

namespace xvs::ctl {

// The child's end of the pipe; a default one (foreground) does nothing.
class Readiness {
  public:
    Readiness() = default;
    explicit Readiness(int fd) : fd_(fd) {}
    Readiness(Readiness&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    Readiness& operator=(Readiness&& o) noexcept;
    Readiness(const Readiness&) = delete;
    Readiness& operator=(const Readiness&) = delete;
    ~Readiness();

    void ready();
    // `status` 1..255: the parent's exit status; `message` goes to the parent's stderr.
    void failed(std::string_view message, int status);

  private:
    void send(std::string_view bytes);
    int fd_ = -1;
};

// Forks. Returns only in the child; the parent exits as described above. An error (no pipe,
// no fork) is returned before any fork.
Result<Readiness> daemonize();

}  // namespace xvs::ctl
