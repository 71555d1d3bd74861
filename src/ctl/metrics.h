// The metrics endpoint's two halves that know nothing of the director: the Prometheus text
// exposition format (version 0.0.4: "# HELP", "# TYPE", then `name{label="value"} number`
// lines) and the HTTP exchange around it. The series themselves are the Controller's
// (Controller::metrics, ctl/controller_metrics.cpp); the listener is a ControlServer in
// Protocol::Http (ctl/control_server.h), polled by the control loop.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "ctl/control_server.h"

namespace xvs::ctl {

class PromText {
  public:
    using Label = std::pair<std::string_view, std::string_view>;

    // Starts a metric family: its HELP and TYPE lines ("counter" or "gauge"). Samples that
    // follow belong to it; each family is started once.
    void family(std::string_view name, std::string_view type, std::string_view help);
    // One sample of the current family. Label values are escaped (\, ", newline) as the format
    // requires, so names from the configuration cannot break a line.
    void sample(std::span<const Label> labels, uint64_t value);
    void sample(std::span<const Label> labels, double value);
    void sample(std::initializer_list<Label> labels, uint64_t value) {
        sample(std::span<const Label>(labels.begin(), labels.size()), value);
    }
    void sample(std::initializer_list<Label> labels, double value) {
        sample(std::span<const Label>(labels.begin(), labels.size()), value);
    }

    const std::string& text() const { return out_; }
    std::string take() { return std::move(out_); }

  private:
    void labels(std::span<const Label> labels);
    std::string out_;
    std::string name_;
};

// The HTTP reply to one request head (request line and headers, without the blank line):
// GET or HEAD of /metrics (a query string is ignored) -> 200 with body() as
// "text/plain; version=0.0.4"; another path -> 404; another method -> 405; a request line
// that is not HTTP/1.x -> 400. Always "Connection: close" (one request per connection).
// `problem` is set for 400s (logged, rate-limited, by the server).
ControlServer::Reply metrics_http_reply(std::string_view head,
                                        const std::function<std::string()>& body);

// The parts of an HTTP/1.x request line ("GET /path?q HTTP/1.1"); nullopt when the head does
// not start with one.
struct HttpRequestLine {
    std::string_view method;
    std::string_view path;  // the target without its query string
};
std::optional<HttpRequestLine> http_request_line(std::string_view head);
// A whole response: status line, Content-Type, Content-Length, `extra` header lines (each
// ending in "\r\n"), "Connection: close", then the body unless `head_only`.
std::string http_response(int status, std::string_view reason, std::string_view content_type,
                          const std::string& body, bool head_only, std::string_view extra = {});

}  // namespace xvs::ctl
