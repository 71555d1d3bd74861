// Keyword tables of xvs.conf that are data rather than grammar: scheduler names, checker
// kinds, keepalived keywords accepted-but-ignored, and the "not yet supported" warnings (one
// place, so a warning goes away with one edit when its feature lands).
#pragma once

#include <algorithm>
#include <array>
#include <string_view>

namespace xvs::ctl::keywords {

using namespace std::string_view_literals;

inline constexpr std::array kSupportedScheds = {"rr"sv, "wrr"sv, "wlc"sv};
// IPVS (and DPVS) scheduler names that are recognised but not implemented yet.
inline constexpr std::array kKnownScheds = {"lc"sv,    "sed"sv, "nq"sv,  "sh"sv, "dh"sv,  "lblc"sv,
                                            "lblcr"sv, "fo"sv,  "ovf"sv, "mh"sv, "twos"sv};

inline constexpr std::array kCheckerKinds = {"HTTP_GET"sv,   "SSL_GET"sv,    "TCP_CHECK"sv,
                                             "UDP_CHECK"sv,  "MISC_CHECK"sv, "DNS_CHECK"sv,
                                             "SMTP_CHECK"sv, "BFD_CHECK"sv,  "FILE_CHECK"sv};

// keepalived keywords that mean nothing to xvs: accepted with a warning so that an existing
// keepalived.conf loads, but never silently.
inline constexpr std::array kIgnoredGlobal = {"router_id"sv,
                                              "notification_email"sv,
                                              "notification_email_from"sv,
                                              "smtp_server"sv,
                                              "smtp_connect_timeout"sv,
                                              "smtp_helo_name"sv,
                                              "enable_script_security"sv,
                                              "script_user"sv,
                                              "lvs_id"sv,
                                              "lvs_flush"sv,
                                              "lvs_flush_onstop"sv,
                                              "lvs_sync_daemon"sv,
                                              "max_auto_priority"sv,
                                              "dynamic_interfaces"sv};
inline constexpr std::array kIgnoredVs = {"ha_suspend"sv,
                                          "virtualhost"sv,
                                          "ops"sv,
                                          "retry"sv,
                                          "delay_before_retry"sv,
                                          "connect_timeout"sv,
                                          "warmup"sv,
                                          "smtp_alert"sv,
                                          "sorry_server_inhibit"sv,
                                          "sorry_server_lvs_method"sv,
                                          "sh-port"sv,
                                          "sh-fallback"sv,
                                          "mh-port"sv,
                                          "mh-fallback"sv};
inline constexpr std::array kIgnoredRs = {"delay_loop"sv,      "retry"sv,  "delay_before_retry"sv,
                                          "connect_timeout"sv, "warmup"sv, "smtp_alert"sv,
                                          "virtualhost"sv};
// Keys of raw (checker/synproxy) blocks that never take a value.
inline constexpr std::array kRawFlags = {"misc_dynamic"sv, "log_all_failures"sv, "fast_recovery"sv};

// Features parsed into the model that the data plane does not act on yet. One place, so that
// the warnings go away with one edit when a feature lands.
inline constexpr std::string_view kWarnChecker =
    "health checking is not yet supported; real server stays up";
inline constexpr std::string_view kWarnPersistence = "persistence is not yet supported; ignored";

template <size_t N>
bool contains(const std::array<std::string_view, N>& list, std::string_view name) {
    return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace xvs::ctl::keywords
