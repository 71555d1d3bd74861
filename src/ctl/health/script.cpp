// Non-blocking script runs for the checkers; see script.h.
#include "ctl/health/script.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace xvs::ctl::health {

Script::Script(Loop& loop, std::vector<std::string> argv, Ms timeout_ms,
               std::function<void(ScriptExit)> done)
    : loop_(loop), done_(std::move(done)) {
    auto fail_later = [&](std::string why) {
        timer_ = loop_.timer_in(0, [this, why] {
            timer_ = {};
            end(ScriptExit{false, false, -1, why});
        });
    };
    if (argv.empty()) {
        fail_later("empty command");
        return;
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    for (int fd = 0; fd < 3; ++fd)
        posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // The daemon ignores SIGPIPE; a script gets the defaults back.
    sigset_t all;
    sigfillset(&all);
    posix_spawnattr_setsigdefault(&attr, &all);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    const bool has_slash = argv[0].find('/') != std::string::npos;
    int rc = has_slash ? posix_spawn(&pid_, args[0], &fa, &attr, args.data(), environ)
                       : posix_spawnp(&pid_, args[0], &fa, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        pid_ = -1;
        fail_later(argv[0] + ": " + strerror(rc));
        return;
    }
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd_ < 0 || !loop_.watch(pidfd_, EPOLLIN, [this](uint32_t) { on_exit(); })) {
        // No pidfd: wait for it here (scripts are short; this is not expected on Linux 5.3+).
        int status = 0;
        waitpid(pid_, &status, 0);
        pid_ = -1;
        if (pidfd_ >= 0) close(pidfd_);
        pidfd_ = -1;
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        timer_ = loop_.timer_in(0, [this, code] {
            timer_ = {};
            end(ScriptExit{false, true, code, "exit " + std::to_string(code)});
        });
        return;
    }
    timer_ = loop_.timer_in(timeout_ms, [this] {
        timer_ = {};
        killed_ = true;
        kill(pid_, SIGKILL);  // reaped when the pidfd says it is gone
    });
}

Script::~Script() {
    loop_.timer_cancel(timer_);
    if (pidfd_ >= 0) {
        loop_.unwatch(pidfd_);
        close(pidfd_);
    }
    if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
}

void Script::on_exit() {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) <= 0) return;
    pid_ = -1;
    loop_.unwatch(pidfd_);
    close(pidfd_);
    pidfd_ = -1;
    loop_.timer_cancel(timer_);
    ScriptExit e;
    if (killed_) {
        e.timed_out = true;
        e.text = "timed out (killed)";
    } else if (WIFEXITED(status)) {
        e.code = WEXITSTATUS(status);
        e.text = "exit " + std::to_string(e.code);
    } else {
        e.text = std::string("killed by signal ") + std::to_string(WTERMSIG(status));
    }
    end(std::move(e));
}

void Script::end(ScriptExit e) {
    auto done = std::move(done_);
    done_ = nullptr;
    if (done) done(std::move(e));
}

}  // namespace xvs::ctl::health
