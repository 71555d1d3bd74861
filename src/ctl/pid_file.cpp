// PidFile, see ctl/pid_file.h. The lock is on the file's inode: taking over a stale file
// locks it first, then renames the new file (locked too) over it, and whoever locked an
// inode checks that the path still names it, so two starting daemons never both win.
#include "ctl/pid_file.h"

#include "common/fd.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

namespace xvs::ctl {

namespace {

std::string errno_text() { return std::strerror(errno); }

// The open file is the one `path` names now (not replaced or removed since it was opened).
bool names(const std::string& path, int fd) {
    struct stat by_path {};
    struct stat by_fd {};
    return ::stat(path.c_str(), &by_path) == 0 && ::fstat(fd, &by_fd) == 0 &&
           by_path.st_dev == by_fd.st_dev && by_path.st_ino == by_fd.st_ino;
}

using Fd = UniqueFd;  // common/fd.h

}  // namespace

std::optional<pid_t> PidFile::read(const std::string& path) {
    std::ifstream in(path);
    long pid = 0;
    if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
    return std::nullopt;
}

Result<PidFile> PidFile::acquire(const std::string& path, pid_t pid,
                                 std::optional<pid_t>* taken_over) {
    const std::string where = "pid file " + path + ": ";
    for (int attempt = 0; attempt < 8; ++attempt) {
        Fd old(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
        if (old.get() < 0)
            return make_error(where + errno_text() + " (is its directory there and writable?)");
        if (::flock(old.get(), LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK) return make_error(where + "flock: " + errno_text());
            const auto holder = read(path);
            return make_error("xvsd already running (pid " +
                              (holder ? std::to_string(*holder) : std::string("unknown")) + ", " +
                              path + ")");
        }
        if (!names(path, old.get())) continue;  // replaced while we locked it: look again
        if (taken_over) *taken_over = read(path);
        // The new content in a file of its own, locked before it takes the name: a reader
        // never sees a half-written pid, a starter never an unlocked one.
        std::string tmp = path + ".XXXXXX";
        Fd fresh(::mkostemp(tmp.data(), O_CLOEXEC));
        if (fresh.get() < 0) return make_error(where + "mkostemp: " + errno_text());
        const std::string text = std::to_string(pid) + "\n";
        const bool written =
            ::write(fresh.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fchmod(fresh.get(), 0644) == 0 && ::flock(fresh.get(), LOCK_EX | LOCK_NB) == 0;
        if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
            std::string why = where + "cannot write it: ";
            why += errno_text();
            ::unlink(tmp.c_str());
            return make_error(why);
        }
        return PidFile(path, fresh.release());
    }
    return make_error(where + "replaced again and again while xvsd tried to lock it");
}

PidFile::~PidFile() {
    if (fd_ < 0) return;
    if (names(path_, fd_)) ::unlink(path_.c_str());
    ::close(fd_);
}

}  // namespace xvs::ctl
