// The status page: HTML from a status_json() document, and the metrics listener's routes;
// see status_page.h. The script in status_page_assets.cpp renders the same markup from
// /status.json: a change to one renderer is a change to the other (the e2e test reads both).
#include "ctl/status_page.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "ctl/metrics.h"

namespace xvs::ctl {

using nlohmann::json;

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char ch : text) {
        switch (ch) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += ch;
        }
    }
    return out;
}

namespace {

// ---- numbers as the page shows them (the script's fmt* do the same) ----

std::string printf_text(const char* format, double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string scaled(double v, const char* small_format) {
    if (v >= 1e9) return printf_text("%.1fG", v / 1e9);
    if (v >= 1e6) return printf_text("%.1fM", v / 1e6);
    if (v >= 1e4) return printf_text("%.1fk", v / 1e3);
    return printf_text(small_format, v);
}

// Counts: exact below 10000.
std::string fmt_count(double v) {
    return scaled(v, "%.0f");
}
// Rates per second: one decimal below 10.
std::string fmt_rate(double v) {
    return v < 10 ? printf_text("%.1f", v) : scaled(v, "%.0f");
}
std::string fmt_bytes(double v) {
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (v >= 1024 && u + 1 < std::size(kUnits)) {
        v /= 1024;
        ++u;
    }
    return (u == 0 ? printf_text("%.0f", v) : printf_text("%.1f", v)) + " " + kUnits[u];
}

double num(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}
std::string str(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
const json& arr(const json& j, const char* key) {
    static const json kEmpty = json::array();
    auto it = j.find(key);
    return it != j.end() && it->is_array() ? *it : kEmpty;
}

std::string utc_time(int64_t unix_s) {
    const auto t = static_cast<time_t>(unix_s);
    tm parts{};
    gmtime_r(&t, &parts);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &parts);
    return buf;
}

// ---- charts: inline SVG, the last `slots` points right-aligned ----

struct Line {
    const json* points;
    const char* cls;
};

// Coordinates are whole numbers in a 3000 x 600 box (a tenth of a pixel at the usual size):
// integer formatting keeps a page of many services cheap to render.
std::string chart(std::string_view title, std::initializer_list<Line> lines, size_t slots) {
    constexpr double kW = 3000, kH = 600;
    double max = 1;
    for (const Line& l : lines)
        for (const json& p : *l.points)
            if (p.is_number()) max = std::max(max, p.get<double>());
    const size_t n = std::max<size_t>(slots, 2);
    std::string svg = "<figure class=\"chart\"><figcaption>" + html_escape(title);
    for (const Line& l : lines) {
        const double last = l.points->empty() || !l.points->back().is_number()
                                ? 0.0
                                : l.points->back().get<double>();
        svg += " <span class=\"" + std::string(l.cls) + "\">" + fmt_rate(last) + "</span>";
    }
    svg += " <span class=\"max\">max " + fmt_rate(max) + "</span></figcaption>";
    svg += "<svg viewBox=\"0 0 3000 600\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"" +
           html_escape(title) + "\">";
    for (const Line& l : lines) {
        const size_t count = l.points->size();
        if (count == 0) continue;
        svg += "<polyline class=\"" + std::string(l.cls) + "\" points=\"";
        svg.reserve(svg.size() + count * 12 + 64);
        for (size_t i = 0; i < count; ++i) {
            const json& p = (*l.points)[i];
            const double v = p.is_number() ? p.get<double>() : 0.0;
            const double x = static_cast<double>(n - count + i) * kW / static_cast<double>(n - 1);
            const double y = kH - v / max * (kH - 20) - 10;
            char point[32];
            char* end = std::to_chars(point, point + 12, std::lround(x)).ptr;
            *end++ = ',';
            end = std::to_chars(end, point + 30, std::lround(y)).ptr;
            *end++ = ' ';
            svg.append(point, end);
        }
        svg += "\"/>";
    }
    svg += "</svg></figure>";
    return svg;
}

std::string badge(std::string_view text, std::string_view cls = "badge") {
    return "<span class=\"" + std::string(cls) + "\">" + html_escape(text) + "</span>";
}

std::string cell(const std::string& text, std::string_view cls = "num") {
    return "<td class=\"" + std::string(cls) + "\">" + text + "</td>";
}

std::string service_html(const json& s, size_t index, size_t slots) {
    const std::string name = str(s, "name");
    std::string h = "<article class=\"svc\" id=\"svc-" + std::to_string(index) +
                    "\" data-service=\"" + html_escape(name) + "\">";
    h += "<h2>" + html_escape(name) + " " + badge(str(s, "mode")) + badge(str(s, "sched"));
    for (const json& f : arr(s, "flags"))
        if (f.is_string()) h += badge(f.get<std::string>(), "badge flag");
    h += "</h2>";
    h += "<p class=\"kpis\">" + fmt_count(num(s, "conns")) + " conns · " +
         fmt_count(num(s, "active")) + " active · " + fmt_count(num(s, "inactive")) +
         " inactive · " + fmt_rate(num(s, "cps")) + " conn/s · " + fmt_rate(num(s, "inpps")) + "/" +
         fmt_rate(num(s, "outpps")) + " pps in/out · " + fmt_bytes(num(s, "inbytes")) + "/" +
         fmt_bytes(num(s, "outbytes")) + " in/out</p>";
    const json& hist = s.contains("history") ? s["history"] : json::object();
    h += "<div class=\"charts\">" + chart("conn/s", {{&arr(hist, "cps"), "l1"}}, slots) +
         chart("pps in / out", {{&arr(hist, "inpps"), "l1"}, {&arr(hist, "outpps"), "l2"}}, slots) +
         "</div>";
    h += "<div class=\"scroll\"><table class=\"dests\"><thead><tr><th>Real server</th>"
         "<th>Health</th><th>Last check</th><th>Weight</th><th>Active</th><th>Inactive</th>"
         "<th>Conns</th><th>Conn/s</th><th>pps in</th><th>pps out</th><th>Bytes in</th>"
         "<th>Bytes out</th></tr></thead><tbody>";
    const json& dests = arr(s, "dests");
    if (dests.empty()) h += "<tr><td colspan=\"12\" class=\"none\">no real servers</td></tr>";
    for (const json& d : dests) {
        const std::string health = str(d, "health");
        const bool in_service = d.value("in_service", true);
        std::string shown = health;
        if (!d.value("checked", false)) shown += " (no check)";
        if (!in_service) shown += ", out of service";
        h += "<tr class=\"dest " + html_escape(health) + "\" data-dest=\"" +
             html_escape(str(d, "name")) + "\" data-health=\"" + html_escape(health) +
             "\" data-conns=\"" + printf_text("%.0f", num(d, "conns")) + "\">";
        h += "<td class=\"addr\">" + html_escape(str(d, "name")) + "</td>";
        h += "<td><span class=\"state " + html_escape(health) + "\">" + html_escape(shown) +
             "</span></td>";
        std::string check = html_escape(str(d, "check"));
        if (num(d, "check_time") > 0)
            check +=
                " <span class=\"age\">" +
                html_escape(utc_time(static_cast<int64_t>(num(d, "check_time"))).substr(11, 8)) +
                "</span>";
        h += cell(check, "check");
        h += cell(fmt_count(num(d, "weight")));
        h += cell(fmt_count(num(d, "active")));
        h += cell(fmt_count(num(d, "inactive")));
        h += cell(fmt_count(num(d, "conns")));
        h += cell(fmt_rate(num(d, "cps")));
        h += cell(fmt_rate(num(d, "inpps")));
        h += cell(fmt_rate(num(d, "outpps")));
        h += cell(fmt_bytes(num(d, "inbytes")));
        h += cell(fmt_bytes(num(d, "outbytes")));
        h += "</tr>";
    }
    h += "</tbody></table></div></article>";
    return h;
}

// The document's content (what the script replaces on each refresh).
std::string main_html(const json& st) {
    const json& hist = st.contains("history") ? st["history"] : json::object();
    const size_t slots = std::max<size_t>(arr(hist, "t").size(), 2);
    const json& services = arr(st, "services");
    const json& drops = st.contains("drops") ? st["drops"] : json::object();
    size_t dests = 0, up = 0;
    double cps = 0;
    for (const json& s : services) {
        cps += num(s, "cps");
        for (const json& d : arr(s, "dests")) {
            ++dests;
            if (str(d, "health") == "up") ++up;
        }
    }
    std::string h = "<section class=\"summary\">";
    auto card = [&](const std::string& value, std::string_view label, std::string_view cls = "") {
        h += "<div class=\"card " + std::string(cls) + "\"><b>" + value + "</b>" +
             std::string(label) + "</div>";
    };
    card(std::to_string(services.size()), "services");
    card(std::to_string(up) + "/" + std::to_string(dests), "real servers up",
         up < dests ? "warn" : "");
    card(fmt_rate(cps), "conn/s");
    card(fmt_rate(num(drops, "rate")), "drops/s", num(drops, "rate") > 0 ? "warn" : "");
    const json& pools = st.contains("pools") ? st["pools"] : json::object();
    const json& conns = pools.contains("conns") ? pools["conns"] : json::object();
    card(fmt_count(num(conns, "used")) + "/" + fmt_count(num(conns, "capacity")), "conn entries");
    h += "</section>";

    h += "<section id=\"services\">";
    if (services.empty()) h += "<p class=\"none\">No virtual service is configured.</p>";
    for (size_t i = 0; i < services.size(); ++i) h += service_html(services[i], i, slots);
    h += "</section>";

    h += "<section class=\"grid\"><article id=\"drops\"><h2>Drops</h2>";
    h += chart("drops/s, all reasons", {{&arr(hist, "drops"), "l3"}}, slots);
    h += "<div class=\"scroll\"><table><thead><tr><th>Reason</th><th>Total</th><th>per s</th>"
         "<th>Meaning</th></tr></thead><tbody>";
    const json& reasons = arr(drops, "reasons");
    if (reasons.empty()) h += "<tr><td colspan=\"4\" class=\"none\">no drop so far</td></tr>";
    for (const json& r : reasons) {
        h += "<tr data-reason=\"" + html_escape(str(r, "reason")) + "\" data-total=\"" +
             printf_text("%.0f", num(r, "total")) + "\"><td class=\"addr\">" +
             html_escape(str(r, "reason")) + "</td>" + cell(fmt_count(num(r, "total"))) +
             cell(fmt_rate(num(r, "rate"))) + cell(html_escape(str(r, "help")), "help") + "</tr>";
    }
    h += "</tbody></table></div></article>";

    h += "<article id=\"workers\"><h2>Workers</h2><div class=\"scroll\"><table><thead><tr>"
         "<th>Worker</th><th>rx pps</th><th>tx pps</th><th>forwarded pps</th><th>drops/s</th>"
         "<th>Conn entries</th></tr></thead><tbody>";
    for (const json& w : arr(st, "workers")) {
        const double cap = std::max(num(w, "conn_capacity"), 1.0);
        h += "<tr><td>" + fmt_count(num(w, "id")) + "</td>" + cell(fmt_rate(num(w, "rx_pps"))) +
             cell(fmt_rate(num(w, "tx_pps"))) + cell(fmt_rate(num(w, "forwarded_pps"))) +
             cell(fmt_rate(num(w, "drops_pps"))) +
             cell(fmt_count(num(w, "conns")) + "/" + fmt_count(num(w, "conn_capacity")) +
                  " <meter max=\"1\" value=\"" + printf_text("%.4f", num(w, "conns") / cap) +
                  "\"></meter>") +
             "</tr>";
    }
    h += "</tbody></table></div></article>";

    h += "<article id=\"pools\"><h2>Pools</h2><div class=\"scroll\"><table><thead><tr><th>Pool</th>"
         "<th>In use</th><th>Size</th><th>Use</th></tr></thead><tbody>";
    auto pool_row = [&](const std::string& name, double used, double size) {
        h += "<tr><td class=\"addr\">" + html_escape(name) + "</td>" + cell(fmt_count(used)) +
             cell(fmt_count(size)) + "<td><meter max=\"1\" value=\"" +
             printf_text("%.4f", size > 0 ? used / size : 0.0) + "\"></meter></td></tr>";
    };
    pool_row("conn entries", num(conns, "used"), num(conns, "capacity"));
    for (const json& l : arr(pools, "laddrs"))
        pool_row("local ports " + str(l, "addr") + " (" + fmt_count(num(l, "conns")) + " conns)",
                 num(l, "ports") - num(l, "free_ports"), num(l, "ports"));
    for (const json& m : arr(pools, "mbufs"))
        pool_row("mbufs " + str(m, "port"), num(m, "in_use"), num(m, "size"));
    h += "</tbody></table></div></article></section>";
    return h;
}

}  // namespace

std::string status_page_html(const json& status) {
    std::string h =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<title>xvs status</title><style>";
    h += kStatusPageCss;
    h += "</style></head><body data-rendered=\"server\"><header><h1>xvs</h1><span id=\"updated\">" +
         html_escape(utc_time(static_cast<int64_t>(num(status, "time")))) +
         "</span><span class=\"note\">read-only · refreshes every " +
         printf_text("%.0f", num(status, "period_s")) +
         " s with JavaScript · <a href=\"status.json\">status.json</a> · "
         "<a href=\"metrics\">metrics</a></span></header><main id=\"main\">";
    h += main_html(status);
    h += "</main><script>";
    h += kStatusPageScript;
    h += "</script></body></html>\n";
    return h;
}

std::string status_allow_text(std::span<const net::InetPrefix> allow) {
    if (allow.empty()) return "no address (status_allow is empty)";
    std::string out;
    for (const auto& p : allow) out += (out.empty() ? "" : " ") + net::to_string(p);
    return out;
}

ControlServer::Reply status_http_reply(std::string_view head, const net::InetEndpoint& peer,
                                       StatusAccess& access,
                                       const std::function<std::string()>& metrics,
                                       const std::function<json()>& status) {
    constexpr std::string_view kText = "text/plain; charset=utf-8";
    const auto req = http_request_line(head);
    if (!req)
        return {http_response(400, "Bad Request", kText, "not an HTTP/1.x request\n", false),
                "metrics: not an HTTP/1.x request line"};
    const bool head_only = req->method == "HEAD";
    if (req->method != "GET" && !head_only)
        return {http_response(405, "Method Not Allowed", kText, "only GET and HEAD\n", false,
                              "Allow: GET, HEAD\r\n"),
                ""};
    if (req->path == "/metrics") {
        PromText p;
        p.family("xvs_status_refused_total", "counter",
                 "Requests for the status page refused: the client is not in status_allow.");
        p.sample({}, access.refused());
        return {http_response(200, "OK", "text/plain; version=0.0.4; charset=utf-8",
                              metrics() + p.text(), head_only),
                ""};
    }
    const bool page = req->path == "/" || req->path == "/index.html";
    if (!page && req->path != "/status.json")
        return {http_response(404, "Not Found", kText,
                              "the status page is at /, its data at /status.json, metrics at "
                              "/metrics\n",
                              head_only),
                ""};
    if (!access.allowed(peer.addr)) {
        access.count_refused();
        return {http_response(403, "Forbidden", kText,
                              "this address is not in status_allow (xvs.conf global_defs)\n",
                              head_only),
                "status page refused: " + net::to_string(peer.addr) + " is not in status_allow"};
    }
    // Nothing but this response's own inline style and script, and the JSON from here.
    constexpr std::string_view kHeaders =
        "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
        "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'\r\n";
    json st = status();
    st["status_refused"] = access.refused();
    if (page)
        return {http_response(200, "OK", "text/html; charset=utf-8", status_page_html(st),
                              head_only, kHeaders),
                ""};
    return {http_response(200, "OK", "application/json",
                          st.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", head_only,
                          kHeaders),
            ""};
}

}  // namespace xvs::ctl
