// Applies a parsed configuration to the Director as a difference against what it has:
// addresses, routes, services, dests (added, removed, reweighted), local addresses and
// timeouts. Connections survive: removed dests and services drain, nothing is rebuilt.
// Ports must already be registered under the config's port names (they need a restart).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "ctl/config.h"
#include "lb/director.h"

namespace xvs::ctl {

struct ApplyReport {
    std::vector<std::string> changes;  // one line per change, for the log
};

// Everything in cfg that the data plane cannot do yet is refused here with file:line.
Result<void> config_supported(const Config& cfg);
// The director's key of a configured virtual server (a fwmark one's: its mark and family) and
// its form of a configured real server (config_apply and the health checkers).
lb::ServiceKey vs_key(const VirtualServer& vs);
lb::DestSpec dest_spec(const VirtualServer& vs, const RealServer& rs);

// Applies and commits. On error the Director may be partly changed; the message says what
// failed (file:line when it comes from the config).
Result<ApplyReport> config_apply(lb::Director& director, const Config& cfg);

}  // namespace xvs::ctl
