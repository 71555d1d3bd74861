// One request/reply exchange over a unix stream socket. Blocking I/O with a poll() deadline:
// the client is a short-lived CLI, never on the packet path.
#include "ctl/control_client.h"

#include "common/fd.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace xvs::ctl {

namespace {

using Fd = UniqueFd;  // common/fd.h

std::string errno_text(int e) { return std::strerror(e); }

}  // namespace

std::string control_socket_path(const std::string& from_command_line) {
    if (!from_command_line.empty()) return from_command_line;
    const char* env = std::getenv("XVS_SOCKET");
    if (env && *env) return env;
    return kDefaultControlSocket;
}

Result<nlohmann::json> control_request(const std::string& socket_path,
                                       const nlohmann::json& request, int timeout_ms) {
    auto cant_connect = [&](int e) {
        return make_error("Can't connect to xvsd: " + socket_path + ": " + errno_text(e));
    };
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof addr.sun_path) return cant_connect(ENAMETOOLONG);
    std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());

    Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) return cant_connect(errno);
    int rc;
    do {
        rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) return cant_connect(errno);

    // dump() cannot throw here: the request is built from valid UTF-8 by us, but guard anyway.
    std::string text;
    try {
        text = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    } catch (const nlohmann::json::exception& e) {
        return make_error(std::string("Cannot encode request: ") + e.what());
    }
    size_t sent = 0;
    int send_errno = 0;
    while (sent < text.size()) {
        ssize_t n = ::send(fd.get(), text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            // xvsd may have answered and closed before taking it all (request too large,
            // too many clients): its reply, if any, is still there to read.
            send_errno = errno;
            break;
        }
        sent += static_cast<size_t>(n);
    }
    if (send_errno == 0) ::shutdown(fd.get(), SHUT_WR);

    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::string reply;
    char buf[65536];
    while (reply.find('\n') == std::string::npos) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0) return make_error("Timed out waiting for xvsd on " + socket_path);
        pollfd p{fd.get(), POLLIN, 0};
        int pr = ::poll(&p, 1, static_cast<int>(left));
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) return make_error("Lost connection to xvsd: " + errno_text(errno));
        if (pr == 0) continue;
        ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && !reply.empty()) break;  // reset after a reply: keep what came
        if (n < 0)
            return make_error("Lost connection to xvsd: " +
                              errno_text(send_errno ? send_errno : errno));
        if (n == 0) break;
        reply.append(buf, static_cast<size_t>(n));
    }
    if (reply.empty() && send_errno != 0)
        return make_error("Lost connection to xvsd: " + errno_text(send_errno));
    if (reply.empty()) return make_error("No reply from xvsd");
    size_t nl = reply.find('\n');
    if (nl != std::string::npos) reply.resize(nl);
    auto parsed = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("ok") ||
        !parsed["ok"].is_boolean())
        return make_error("Malformed reply from xvsd");
    return parsed;
}

}  // namespace xvs::ctl
