// Parser and validator for xvs.conf (keepalived syntax, DESIGN.md "Configuration").
// Every problem is reported as "file:line: message" and all of them are collected in one run;
// a Config is returned only when there is no error. Warnings (accepted but not acted on yet,
// e.g. health checkers) are returned either way and are also copied into Config::warnings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "ctl/config.h"

namespace xvs::ctl {

struct ParseOutcome {
    std::optional<Config> config;       // set iff errors is empty
    std::vector<std::string> errors;    // "file:line: message"
    std::vector<std::string> warnings;  // "file:line: message"
};

// `name` is used in messages and as the base directory for relative includes.
ParseOutcome parse_config(std::string_view text, const std::string& name);
ParseOutcome parse_config_path(const std::string& path);

// Result forms: the error text is every error line joined by '\n'.
Result<Config> parse_config_string(std::string_view text, std::string name);
Result<Config> parse_config_file(const std::string& path);

// Schedulers the parser accepts: supported ones, and IPVS names that are recognised but
// rejected with "scheduler 'X' not supported yet".
bool sched_name_supported(std::string_view name);
bool sched_name_known(std::string_view name);

}  // namespace xvs::ctl
