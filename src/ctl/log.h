// Control-plane logging to stderr with a level and a timestamp. Never used on the packet path.
#pragma once

#include <string_view>

#include "ctl/config.h"

namespace xvs::ctl {

void log_set_level(LogLevel level);
void log_write(LogLevel level, std::string_view msg);
inline void log_debug(std::string_view m) { log_write(LogLevel::Debug, m); }
inline void log_info(std::string_view m) { log_write(LogLevel::Info, m); }
inline void log_warning(std::string_view m) { log_write(LogLevel::Warning, m); }
inline void log_error(std::string_view m) { log_write(LogLevel::Error, m); }

}  // namespace xvs::ctl
