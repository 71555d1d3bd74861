// The operators' status page on the metrics listener (README "Status page"): GET / is an HTML
// page rendered here from Controller::status_json() (tables, usable without JavaScript, with
// inline SVG charts), whose small inline script re-renders it every 2 s from GET /status.json
// (the same document as JSON). Self-contained: CSS and script are inline and a
// Content-Security-Policy forbids any other fetch. Both are limited to the `status_allow`
// prefixes (403 otherwise, counted and logged rate-limited by the server); /metrics is not.
// Every text that comes from the configuration or a check result is HTML-escaped.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "ctl/control_server.h"
#include "net/addr.h"
#include "net/prefix_set.h"

namespace xvs::ctl {

// Text for HTML content and attribute values: & < > " ' escaped.
std::string html_escape(std::string_view text);

// The whole page for a status_json() document.
std::string status_page_html(const nlohmann::json& status);

// "127.0.0.0/8 ::1/128" for the log; "no address (status_allow is empty)" for none.
std::string status_allow_text(std::span<const net::InetPrefix> allow);

// Who may read the status page (status_allow), and how many were refused.
class StatusAccess {
  public:
    StatusAccess() = default;
    explicit StatusAccess(std::span<const net::InetPrefix> allow) { set_allow(allow); }
    // At start and at each reload.
    void set_allow(std::span<const net::InetPrefix> allow) { allow_ = net::PrefixSet(allow); }
    bool allowed(const net::InetAddr& addr) const { return allow_.contains(addr); }
    uint64_t refused() const { return refused_; }
    void count_refused() { ++refused_; }

  private:
    net::PrefixSet allow_;
    uint64_t refused_ = 0;
};

// The metrics listener's reply to one request head from `peer`: GET/HEAD /metrics -> 200 with
// metrics() (everyone, as before the page existed) plus xvs_status_refused_total; / (or
// /index.html) -> 200 with the page, /status.json -> 200 with status() as JSON, each 403 when
// the peer is not in `access` (the problem text says so, for the rate-limited log); another
// path 404, another method 405, a request line that is not HTTP/1.x 400.
ControlServer::Reply status_http_reply(std::string_view head, const net::InetEndpoint& peer,
                                       StatusAccess& access,
                                       const std::function<std::string()>& metrics,
                                       const std::function<nlohmann::json()>& status);

// The page's inline CSS and script (ctl/status_page_assets.cpp).
extern const std::string_view kStatusPageCss;
extern const std::string_view kStatusPageScript;

}  // namespace xvs::ctl
