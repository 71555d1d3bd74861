// xvsctl: the director's network and diagnostics CLI (links, addresses, routes, neighbours,
// counters, connections), iproute2 style, as a client of xvsd's control socket. The whole
// program is this function so tests drive it with string streams and a fake daemon.
#pragma once

#include <istream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "ctl/xvsctl_args.h"

namespace xvs::ctl {

inline constexpr const char* kXvsctlVersion = "0.1.0";

// Exit codes: 0 ok; 2 command-line error; 1 xvsd unreachable or its reply malformed; 255 xvsd
// refused the request (its error text is printed).
int xvsctl_main(int argc, char** argv, std::istream& in, std::ostream& out, std::ostream& err);

// The control-protocol request for a parsed command (not for Help or Version).
nlohmann::json build_xvsctl_request(const CtlCommand& cmd);

}  // namespace xvs::ctl
