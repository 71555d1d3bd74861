// Prometheus text format and the HTTP exchange of the metrics endpoint (ctl/metrics.h).
#include "ctl/metrics.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace xvs::ctl {

namespace {

void append_escaped(std::string& out, std::string_view text, bool quotes) {
    for (char ch : text) {
        if (ch == '\\')
            out += "\\\\";
        else if (ch == '\n')
            out += "\\n";
        else if (ch == '"' && quotes)
            out += "\\\"";
        else
            out += ch;
    }
}

}  // namespace

void PromText::family(std::string_view name, std::string_view type, std::string_view help) {
    name_ = name;
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    append_escaped(out_, help, false);
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
}

void PromText::labels(std::span<const Label> labels) {
    out_ += name_;
    if (labels.empty()) return;
    out_ += '{';
    bool first = true;
    for (const auto& [k, v] : labels) {
        if (!first) out_ += ',';
        first = false;
        out_ += k;
        out_ += "=\"";
        append_escaped(out_, v, true);
        out_ += '"';
    }
    out_ += '}';
}

void PromText::sample(std::span<const Label> ls, uint64_t value) {
    labels(ls);
    out_ += ' ';
    out_ += std::to_string(value);
    out_ += '\n';
}

void PromText::sample(std::span<const Label> ls, double value) {
    labels(ls);
    char buf[40];
    if (std::isnan(value))
        std::snprintf(buf, sizeof buf, " NaN\n");
    else
        std::snprintf(buf, sizeof buf, " %.17g\n", value);
    out_ += buf;
}

std::string http_response(int status, std::string_view reason, std::string_view content_type,
                          const std::string& body, bool head_only, std::string_view extra) {
    std::string r = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
    r += "Content-Type: ";
    r += content_type;
    r += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    r += extra;
    r += "Connection: close\r\n\r\n";
    if (!head_only) r += body;
    return r;
}

std::optional<HttpRequestLine> http_request_line(std::string_view head) {
    const std::string_view line = head.substr(0, head.find("\r\n"));
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    const std::string_view target =
        sp2 == std::string_view::npos ? std::string_view{} : line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string_view version =
        sp2 == std::string_view::npos ? std::string_view{} : line.substr(sp2 + 1);
    if (target.empty() || !target.starts_with('/') || !version.starts_with("HTTP/1."))
        return std::nullopt;
    return HttpRequestLine{line.substr(0, sp1), target.substr(0, target.find('?'))};
}

ControlServer::Reply metrics_http_reply(std::string_view head,
                                        const std::function<std::string()>& body) {
    constexpr std::string_view kText = "text/plain; charset=utf-8";
    const auto req = http_request_line(head);
    if (!req) {
        return {http_response(400, "Bad Request", kText, "not an HTTP/1.x request\n", false),
                "metrics: not an HTTP/1.x request line"};
    }
    const bool head_only = req->method == "HEAD";
    if (req->method != "GET" && !head_only)
        return {http_response(405, "Method Not Allowed", kText, "only GET and HEAD\n", false,
                              "Allow: GET, HEAD\r\n"),
                ""};
    if (req->path != "/metrics")
        return {http_response(404, "Not Found", kText, "metrics are at /metrics\n", head_only), ""};
    return {http_response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", body(),
                          head_only),
            ""};
}

}  // namespace xvs::ctl
