// `xvsd -t -f FILE`: check a configuration and exit, as `keepalived -t` / `nginx -t` do.
#pragma once

#include <ostream>
#include <string>

namespace xvs::ctl {

// Parses `path`. On errors: prints every "file:line: message" line to `err`, returns 1.
// Otherwise prints each warning as "warning: file:line: message" to `err`, then
// "configuration file PATH is ok" to `out`, and returns 0.
int config_check_main(const std::string& path, std::ostream& out, std::ostream& err);

}  // namespace xvs::ctl
