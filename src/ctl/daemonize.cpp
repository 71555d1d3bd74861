// daemonize(), see ctl/daemonize.h. The pipe's protocol: "R" (ready), or "F", one status
// byte and the message; end of file without either means the child died.
#include "ctl/daemonize.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace xvs::ctl {

namespace {

[[noreturn]] void parent_wait(int fd, pid_t child) {
    std::string got;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            got.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    if (!got.empty() && got[0] == 'R') std::_Exit(0);
    int ws = 0;
    // Ready: the daemon runs on. Failed or dead: it is reaped first, so that when `xvsd -d`
    // returns its cleanup (pid file, control socket) is done.
    while (::waitpid(child, &ws, 0) < 0 && errno == EINTR) {
    }
    if (got.size() >= 2 && got[0] == 'F') {
        const int status = static_cast<unsigned char>(got[1]);
        std::fprintf(stderr, "xvsd: %s\n", got.c_str() + 2);
        std::_Exit(status ? status : 1);
    }
    if (WIFEXITED(ws)) {
        std::fprintf(stderr, "xvsd: the daemon (pid %d) exited with status %d before it was ready\n",
                     int(child), WEXITSTATUS(ws));
        std::_Exit(WEXITSTATUS(ws) ? WEXITSTATUS(ws) : 1);
    }
    std::fprintf(stderr, "xvsd: the daemon (pid %d) was killed by signal %d before it was ready\n",
                 int(child), WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    std::_Exit(1);
}

Result<void> stdio_to_null() {
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) return make_error(std::string("/dev/null: ") + std::strerror(errno));
    for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);  // dup2 clears O_CLOEXEC on 0..2
    if (null > 2) ::close(null);
    return {};
}

}  // namespace

Readiness::~Readiness() {
    if (fd_ >= 0) ::close(fd_);
}

Readiness& Readiness::operator=(Readiness&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
}

void Readiness::send(std::string_view bytes) {
    if (fd_ < 0) return;
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the parent is gone: nobody to tell
        bytes.remove_prefix(static_cast<size_t>(n));
    }
    ::close(fd_);
    fd_ = -1;
}

void Readiness::ready() { send("R"); }

void Readiness::failed(std::string_view message, int status) {
    std::string bytes = "F";
    bytes += static_cast<char>(status & 0xff);
    bytes += message;
    send(bytes);
}

Result<Readiness> daemonize() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return make_error(std::string("daemon mode: pipe: ") + std::strerror(errno));
    std::fflush(nullptr);  // nothing buffered is written twice
    const pid_t child = ::fork();
    if (child < 0) {
        const std::string why = std::strerror(errno);
        ::close(fds[0]);
        ::close(fds[1]);
        return make_error("daemon mode: fork: " + why);
    }
    if (child > 0) {
        ::close(fds[1]);
        parent_wait(fds[0], child);
    }
    ::close(fds[0]);
    Readiness readiness(fds[1]);
    ::signal(SIGPIPE, SIG_IGN);  // a parent killed meanwhile must not take the daemon along
    if (::setsid() < 0) {
        readiness.failed(std::string("daemon mode: setsid: ") + std::strerror(errno), 1);
        std::_Exit(1);
    }
    if (::chdir("/") != 0) {
        readiness.failed(std::string("daemon mode: chdir /: ") + std::strerror(errno), 1);
        std::_Exit(1);
    }
    if (auto r = stdio_to_null(); !r) {
        readiness.failed("daemon mode: " + r.error(), 1);
        std::_Exit(1);
    }
    return readiness;
}

}  // namespace xvs::ctl
