// Client side of xvsd's control socket (docs/control-protocol.md): one JSON request per
// connection, one JSON reply. Used by xvsadm; errors are texts ready to print.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace xvs::ctl {

inline constexpr const char* kDefaultControlSocket = "/run/xvs/xvs.sock";

// --socket PATH if given, else $XVS_SOCKET if set and non-empty, else the default.
std::string control_socket_path(const std::string& from_command_line);

// Connects to `socket_path`, sends `request` + '\n', reads one reply line and parses it.
// A failed connect gives "Can't connect to xvsd: PATH: <strerror>". The reply is returned
// whatever its "ok" says; `timeout_ms` bounds the wait for it.
Result<nlohmann::json> control_request(const std::string& socket_path,
                                       const nlohmann::json& request, int timeout_ms = 30000);

}  // namespace xvs::ctl
