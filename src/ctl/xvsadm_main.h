// xvsadm: ipvsadm's command line as a client of xvsd's control socket. The whole program is
// this function so tests drive it with string streams and a fake daemon.
#pragma once

#include <istream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "ctl/ipvsadm_args.h"

namespace xvs::ctl {

inline constexpr const char* kXvsadmVersion = "0.1.0";

// Exit codes: 0 ok; 2 command-line error; 1 xvsd unreachable, malformed reply, or (as ipvsadm)
// a failed listing of one service; 255 xvsd refused the request (its error text is printed).
int xvsadm_main(int argc, char** argv, std::istream& in, std::ostream& out, std::ostream& err);

// The control-protocol request for a parsed command (not for Help, Version, Restore).
nlohmann::json build_request(const Command& cmd);

}  // namespace xvs::ctl
