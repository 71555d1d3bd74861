// The BIRD 2 configuration xvsd writes for its VIPs (bgp_defs/ospf_defs, routing_conf.h): a
// device protocol, one static protocol per family whose routes are the announced VIPs through
// the liveness interface (a VIP not announced has no route at all), the export filters that
// add MED and communities, and a bgp protocol per neighbor or an ospf protocol. The operator's
// bird.conf includes the file; xvsd replaces it whole (write + rename) and asks BIRD to
// `configure`. Text only, no I/O: tests compare it byte for byte.
#pragma once

#include <span>
#include <string>

#include "common/result.h"
#include "ctl/bgp/routing_conf.h"
#include "net/addr.h"

namespace xvs::ctl::bgp {

// The names of the protocols xvsd writes (BIRD's `show protocols` shows them).
inline constexpr const char* kStatic4 = "xvs_vips4";
inline constexpr const char* kStatic6 = "xvs_vips6";

// The file's text for `vips` (announced now, in any order: the text lists them sorted).
std::string bird_config_text(const RoutingDefs& conf, std::span<const net::InetAddr> vips);

// Writes `text` to `path` as a whole: a temporary file in the same directory, fsync'ed, then
// renamed over `path`, so BIRD never reads half a file.
Result<void> file_write_atomic(const std::string& path, const std::string& text);

}  // namespace xvs::ctl::bgp
