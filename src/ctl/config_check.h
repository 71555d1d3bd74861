// The configuration verdict of xvsd, one function for every path that reads xvs.conf:
// `xvsd -t`, start and reload all call config_load, so -t refuses exactly what start refuses
// at config level, and start never brings the EAL up with a configuration -t would refuse.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "ctl/config.h"
#include "ctl/config_parser.h"

namespace xvs::ctl {

// Everything in a parsed cfg that xvsd cannot run, as "file:line: message" lines (empty: ok):
// the data-plane rules (config_supported), a port to run on, and a dry run of config_apply on
// a scratch Director with the config's ports, so that no refusal is left for after the EAL.
std::vector<std::string> config_check(const Config& cfg);

// Parses `path` and, when it parses cleanly, runs config_check; its errors join the outcome's
// (and the config is dropped), so ParseOutcome::config is set iff xvsd would run it.
ParseOutcome config_load(const std::string& path);
// The same for a text (tests, fuzzing); `name` as for parse_config.
ParseOutcome config_load_text(std::string_view text, const std::string& name);

// `xvsd -t -f FILE`: runs config_load. On errors: prints every "file:line: message" line to
// `err`, returns 1. Otherwise prints each warning as "warning: file:line: message" to `err`,
// then "configuration file PATH is ok" to `out`, and returns 0.
int config_check_main(const std::string& path, std::ostream& out, std::ostream& err);

}  // namespace xvs::ctl
