// xvsd's pid file: written atomically (a temporary file renamed over it) and held with
// flock(2) for the daemon's whole life, so a second xvsd with the same file refuses to start,
// and a file nobody holds (a crashed xvsd's) is simply taken over. Removed by the destructor
// (a clean exit) if it is still ours.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "common/result.h"

namespace xvs::ctl {

class PidFile {
  public:
    // Writes `pid` into `path` and locks it. Refuses with "xvsd already running (pid N,
    // PATH)" while another process holds it. `taken_over`: the pid a stale file named.
    static Result<PidFile> acquire(const std::string& path, pid_t pid,
                                   std::optional<pid_t>* taken_over = nullptr);

    PidFile(PidFile&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_) { o.fd_ = -1; }
    PidFile& operator=(PidFile&&) = delete;
    PidFile(const PidFile&) = delete;
    PidFile& operator=(const PidFile&) = delete;
    ~PidFile();

    const std::string& path() const { return path_; }

    // The pid a pid file names (first line), if it names one.
    static std::optional<pid_t> read(const std::string& path);

  private:
    PidFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
    std::string path_;
    int fd_ = -1;  // the locked file, open for our whole life
};

}  // namespace xvs::ctl
