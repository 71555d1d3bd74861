// BIRD's control-socket protocol (bird_client.h).
#include "ctl/bgp/bird_client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/fd.h"

namespace xvs::ctl::bgp {

std::string BirdReply::text() const {
    std::string out;
    for (const std::string& l : lines) out += (out.empty() ? "" : "; ") + l;
    return out;
}

Result<void> BirdReplyReader::feed(std::string_view bytes) {
    partial_.append(bytes);
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
        if (auto r = line(std::string_view(partial_).substr(start, nl - start)); !r) {
            partial_.clear();
            return r;
        }
    }
    partial_.erase(0, start);
    // BIRD's replies are short (a `configure` answers in two lines); a runaway line is not one.
    if (partial_.size() > 65536) return make_error("BIRD sent a line longer than 64 KiB");
    return {};
}

Result<void> BirdReplyReader::line(std::string_view text) {
    if (text.starts_with('+')) return {};  // asynchronous note
    if (text.starts_with(' ')) {           // continues the previous code
        current_.lines.emplace_back(text.substr(1));
        return {};
    }
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (text.size() < 5 || !digit(text[0]) || !digit(text[1]) || !digit(text[2]) ||
        !digit(text[3]) || (text[4] != '-' && text[4] != ' '))
        return make_error("BIRD sent a line that is not NNNN-text or NNNN text: '" +
                          std::string(text.substr(0, 80)) + "'");
    current_.code = static_cast<unsigned>((text[0] - '0') * 1000 + (text[1] - '0') * 100 +
                                          (text[2] - '0') * 10 + (text[3] - '0'));
    current_.lines.emplace_back(text.substr(5));
    if (text[4] == ' ') {
        done_.push_back(std::move(current_));
        current_ = BirdReply{};
    }
    return {};
}

std::optional<BirdReply> BirdReplyReader::next() {
    if (done_.empty()) return std::nullopt;
    BirdReply r = std::move(done_.front());
    done_.erase(done_.begin());
    return r;
}

namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits for `events` on fd until the deadline: false when it passed.
bool wait_for(int fd, short events, Clock::time_point deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        int n = ::poll(&p, 1, ms_left(deadline));
        if (n > 0) return true;
        if (n == 0) return false;
        if (errno != EINTR) return false;
    }
}

// Reads until a whole reply is there.
Result<BirdReply> read_reply(int fd, BirdReplyReader& reader, Clock::time_point deadline,
                             const std::string& path) {
    for (;;) {
        if (auto r = reader.next()) return std::move(*r);
        if (!wait_for(fd, POLLIN, deadline))
            return make_error("BIRD on " + path + " did not answer in time");
        char buf[4096];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n < 0) return make_error("reading from BIRD on " + path + ": " + std::strerror(errno));
        if (n == 0) return make_error("BIRD on " + path + " closed the connection mid-reply");
        if (auto r = reader.feed(std::string_view(buf, static_cast<size_t>(n))); !r)
            return make_error(r.error());
    }
}

}  // namespace

Result<BirdReply> bird_command(const std::string& socket_path, std::string_view command,
                               std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    sockaddr_un addr{};
    if (socket_path.size() >= sizeof addr.sun_path)
        return make_error("bird_socket " + socket_path + ": path too long for a unix socket");
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (fd.get() < 0) return make_error(std::string("socket: ") + std::strerror(errno));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 &&
        errno != EINPROGRESS && errno != EAGAIN)
        return make_error("cannot connect to BIRD on " + socket_path + ": " +
                          std::strerror(errno) + " (is bird running with -s " + socket_path +
                          "?)");
    BirdReplyReader reader;
    auto hello = read_reply(fd.get(), reader, deadline, socket_path);
    if (!hello) return make_error(hello.error());
    if (hello->code != 1)
        return make_error("BIRD on " + socket_path + " greeted with " +
                          std::to_string(hello->code) + " " + hello->text() + ", not 0001");
    std::string line(command);
    line += '\n';
    size_t sent = 0;
    while (sent < line.size()) {
        if (!wait_for(fd.get(), POLLOUT, deadline))
            return make_error("BIRD on " + socket_path + " did not take the command in time");
        ssize_t n = ::send(fd.get(), line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n < 0)
            return make_error("writing to BIRD on " + socket_path + ": " + std::strerror(errno));
        sent += static_cast<size_t>(n);
    }
    return read_reply(fd.get(), reader, deadline, socket_path);
}

}  // namespace xvs::ctl::bgp
