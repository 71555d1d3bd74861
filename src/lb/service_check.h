// Which service options combine: one rule set, called by the configuration parser, `xvsd -t`
// and reload (config_supported), the control protocol (add/edit service and dest) and the
// Director itself, so every way in refuses the same thing with the same words.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "lb/fwd_mode.h"

namespace xvs::lb {

// Is `mode` forwarded by the data path of this build? (Modes arrive one by one; the control
// plane refuses the rest instead of accepting a setting without effect.)
bool fwd_mode_implemented(FwdMode mode);

// A service of protocol `proto` (6/17) with service flags `flags` (kSvcFlag*) whose real
// servers are reached by `mode`. An error names the option to change.
// lb_kind SNAT is refused here: it belongs to match services only (match_service_check).
Result<void> service_check(uint8_t proto, FwdMode mode, uint32_t flags);

// A SNAT match service (lb/match.h) of protocol `proto` (6/17/1) whose dests (WAN addresses)
// use `mode`: only SNAT, and none of the service flags (they are about real servers).
Result<void> match_service_check(uint8_t proto, FwdMode mode, uint32_t flags);

}  // namespace xvs::lb
