// Tests for src/ctl/status_page.cpp: HTML escaping, the page rendered from a small status
// document (tables, charts, every configured name escaped, nothing fetched from elsewhere),
// and the metrics listener's routes: status_allow (403, counted, with a problem to log),
// /status.json, /metrics open to everyone, 404, 405, 400, HEAD.
#include "ctl/status_page.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

namespace xvs::ctl {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

net::InetEndpoint peer(const char* addr) {
    return net::InetEndpoint{*net::parse_inet(addr), 40000};
}

std::vector<net::InetPrefix> prefixes(std::initializer_list<const char*> texts) {
    std::vector<net::InetPrefix> out;
    for (const char* t : texts) out.push_back(*net::parse_inet_prefix(t));
    return out;
}

// A service whose name and check result carry markup, rs1 down and out of the service,
// one drop reason, one worker, a history of three points.
json sample_status() {
    json rs1 = {{"name", "10.0.0.2:80"},
                {"in_service", false},
                {"weight", 0},
                {"fwd", "FNAT"},
                {"health", "down"},
                {"checked", true},
                {"check", "HTTP_GET: status 500 <b>\"bad\"</b> & 'worse'"},
                {"check_time", 1764790000},
                {"active", 0},
                {"inactive", 0},
                {"conns", 0},
                {"cps", 0},
                {"inpps", 0},
                {"outpps", 0},
                {"inbytes", 0},
                {"outbytes", 0}};
    json rs2 = {
        {"name", "10.0.0.3:80"}, {"in_service", true}, {"weight", 3},     {"fwd", "FNAT"},
        {"health", "up"},        {"checked", false},   {"check", ""},     {"check_time", 0},
        {"active", 2},           {"inactive", 5},      {"conns", 12345},  {"cps", 4.5},
        {"inpps", 30},           {"outpps", 28},       {"inbytes", 2048}, {"outbytes", 5 << 20}};
    json svc = {
        {"name", "SNAT <script>alert(1)</script>"},
        {"kind", "SNAT"},
        {"mode", "FNAT"},
        {"sched", "rr"},
        {"flags", {"syn_proxy", "toa"}},
        {"conns", 12345},
        {"active", 2},
        {"inactive", 5},
        {"cps", 4.5},
        {"inpps", 30},
        {"outpps", 28},
        {"inbytes", 2048},
        {"outbytes", 5 << 20},
        {"dests", {rs1, rs2}},
        {"history", {{"cps", {1, 2, 4.5}}, {"inpps", {10, 20, 30}}, {"outpps", {9, 19, 28}}}}};
    return {{"time", 1764790003},
            {"period_s", 2},
            {"services", {svc}},
            {"drops",
             {{"total", 7},
              {"rate", 2.5},
              {"reasons",
               {{{"reason", "drop_tcp_no_conn"},
                 {"total", 7},
                 {"rate", 2.5},
                 {"help", "TCP non-SYN <without> a conn"}}}}}},
            {"workers",
             {{{"id", 0},
               {"rx_pps", 100},
               {"tx_pps", 90},
               {"forwarded_pps", 80},
               {"drops_pps", 2.5},
               {"conns", 50},
               {"conn_capacity", 1000}}}},
            {"pools",
             {{"conns", {{"used", 50}, {"capacity", 1000}}},
              {"laddrs",
               {{{"addr", "10.0.0.100"},
                 {"port", "lan0"},
                 {"conns", 7},
                 {"free_ports", 60000},
                 {"ports", 64511}}}},
              {"mbufs", {{{"port", "wan0"}, {"in_use", 300}, {"size", 8191}}}}}},
            {"history", {{"t", {1764789999, 1764790001, 1764790003}}, {"drops", {0, 1, 2.5}}}}};
}

TEST(StatusPage, HtmlEscapeCoversMarkupAndQuotes) {
    EXPECT_EQ(html_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
    EXPECT_EQ(html_escape("plain 10.0.0.1:80"), "plain 10.0.0.1:80");
    EXPECT_EQ(html_escape(""), "");
}

TEST(StatusPage, RendersTablesAndChartsFromTheDocument) {
    const std::string page = status_page_html(sample_status());
    EXPECT_THAT(page, StartsWith("<!DOCTYPE html>"));
    EXPECT_THAT(page, HasSubstr("<meta name=\"viewport\""));
    EXPECT_THAT(page, HasSubstr("<body data-rendered=\"server\">"));
    EXPECT_THAT(page, HasSubstr("2025-12-03 19:26:43 UTC"));  // time, in the header
    // Real servers: state, last check, conns (exact in the attribute, scaled in the cell).
    EXPECT_THAT(page, HasSubstr("<tr class=\"dest down\" data-dest=\"10.0.0.2:80\" "
                                "data-health=\"down\" data-conns=\"0\">"));
    EXPECT_THAT(page, HasSubstr("<span class=\"state down\">down, out of service</span>"));
    EXPECT_THAT(page,
                HasSubstr("data-dest=\"10.0.0.3:80\" data-health=\"up\" data-conns=\"12345\""));
    EXPECT_THAT(page, HasSubstr("<span class=\"state up\">up (no check)</span>"));
    EXPECT_THAT(page, HasSubstr("<td class=\"num\">12.3k</td>"));
    EXPECT_THAT(page, HasSubstr("<td class=\"num\">5.0 MiB</td>"));
    EXPECT_THAT(page, HasSubstr("<span class=\"badge flag\">syn_proxy</span>"));
    EXPECT_THAT(page, HasSubstr("data-reason=\"drop_tcp_no_conn\" data-total=\"7\""));
    // Pools: local ports in use = ports - free; mbufs.
    EXPECT_THAT(page,
                HasSubstr("local ports 10.0.0.100 (7 conns)</td><td class=\"num\">4511</td>"));
    EXPECT_THAT(page,
                HasSubstr("mbufs wan0</td><td class=\"num\">300</td><td class=\"num\">8191</td>"));
    // Charts: three points right-aligned over three slots (x 0, 1500, 3000 of a 3000 x 600
    // box); the max at the top margin (10), y = 600 - 10 - v / max x 580.
    EXPECT_THAT(page, HasSubstr("<polyline class=\"l1\" points=\"0,461 1500,332 3000,10 \"/>"));
    EXPECT_THAT(page, HasSubstr("<polyline class=\"l3\" points="));
    // The inline script and style are there; nothing is loaded from elsewhere.
    EXPECT_THAT(page, HasSubstr("fetch('status.json'"));
    EXPECT_THAT(page, Not(HasSubstr("http://")));
    EXPECT_THAT(page, Not(HasSubstr("https://")));
    EXPECT_FALSE(std::regex_search(page, std::regex(R"((src|href)=["']?(//|[a-z]+:))")));
}

TEST(StatusPage, EveryConfiguredNameIsEscaped) {
    const std::string page = status_page_html(sample_status());
    EXPECT_THAT(page, Not(HasSubstr("<script>alert")));
    EXPECT_THAT(page, Not(HasSubstr("<b>\"bad\"")));
    EXPECT_THAT(page, Not(HasSubstr("<without>")));
    EXPECT_THAT(page, HasSubstr("<h2>SNAT &lt;script&gt;alert(1)&lt;/script&gt; "));
    EXPECT_THAT(page, HasSubstr("data-service=\"SNAT &lt;script&gt;alert(1)&lt;/script&gt;\""));
    EXPECT_THAT(
        page,
        HasSubstr("HTTP_GET: status 500 &lt;b&gt;&quot;bad&quot;&lt;/b&gt; &amp; &#39;worse&#39;"));
    // One <script> element: the page's own.
    size_t scripts = 0;
    for (size_t at = page.find("<script"); at != std::string::npos;
         at = page.find("<script", at + 1))
        ++scripts;
    EXPECT_EQ(scripts, 1u);
}

TEST(StatusPage, EmptyDocumentStillRenders) {
    const std::string page = status_page_html(json::object());
    EXPECT_THAT(page, HasSubstr("No virtual service is configured."));
    EXPECT_THAT(page, HasSubstr("no drop so far"));
    EXPECT_THAT(page, HasSubstr("</html>"));
}

class StatusHttp : public ::testing::Test {
  protected:
    ControlServer::Reply get(std::string_view head, const char* from) {
        return status_http_reply(
            head, peer(from), access_, [] { return std::string("xvs_workers 1\n"); },
            [] { return sample_status(); });
    }
    static std::string body(const ControlServer::Reply& r) {
        const size_t at = r.text.find("\r\n\r\n");
        return at == std::string::npos ? "" : r.text.substr(at + 4);
    }
    StatusAccess access_{prefixes({"127.0.0.0/8", "::1"})};
};

TEST_F(StatusHttp, PageAndJsonForAllowedClients) {
    auto page = get("GET / HTTP/1.1\r\nHost: x", "127.0.0.1");
    EXPECT_THAT(page.text,
                StartsWith("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"));
    EXPECT_THAT(page.text, HasSubstr("\r\nContent-Security-Policy: default-src 'none'; "));
    EXPECT_THAT(page.text, HasSubstr("\r\nCache-Control: no-store\r\n"));
    EXPECT_THAT(body(page), StartsWith("<!DOCTYPE html>"));
    EXPECT_TRUE(page.problem.empty());
    EXPECT_THAT(get("GET /index.html?x=1 HTTP/1.0", "::1").text, StartsWith("HTTP/1.1 200 OK\r\n"));

    auto js = get("GET /status.json HTTP/1.1", "127.9.9.9");
    EXPECT_THAT(js.text, StartsWith("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"));
    json doc = json::parse(body(js));
    EXPECT_EQ(doc["services"][0]["dests"][0]["health"], "down");
    EXPECT_EQ(doc["status_refused"], 0);
    // The Content-Length is the body's.
    const size_t at = js.text.find("Content-Length: ");
    EXPECT_EQ(std::stoul(js.text.substr(at + 16)), body(js).size());
}

TEST_F(StatusHttp, OthersAreRefusedCountedAndLogged) {
    for (const char* target : {"/", "/status.json"}) {
        auto r = get(std::string("GET ") + target + " HTTP/1.1", "10.0.0.9");
        EXPECT_THAT(r.text, StartsWith("HTTP/1.1 403 Forbidden\r\n")) << target;
        EXPECT_THAT(body(r), HasSubstr("not in status_allow"));
        EXPECT_THAT(body(r), Not(HasSubstr("10.0.0.2:80")));  // no data leaks into a refusal
        EXPECT_EQ(r.problem, "status page refused: 10.0.0.9 is not in status_allow");
    }
    EXPECT_THAT(get("GET / HTTP/1.1", "2001:db8::1").text, StartsWith("HTTP/1.1 403 "));
    EXPECT_EQ(access_.refused(), 3u);
    // /metrics is for everyone, and counts the refusals.
    auto m = get("GET /metrics HTTP/1.1", "10.0.0.9");
    EXPECT_THAT(m.text, StartsWith("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4"));
    EXPECT_THAT(body(m),
                AllOf(StartsWith("xvs_workers 1\n"), HasSubstr("\nxvs_status_refused_total 3\n")));
    // A reload that widens the list lets the address in.
    access_.set_allow(prefixes({"127.0.0.0/8", "10.0.0.0/24"}));
    EXPECT_THAT(get("GET / HTTP/1.1", "10.0.0.9").text, StartsWith("HTTP/1.1 200 OK\r\n"));
    EXPECT_EQ(json::parse(body(get("GET /status.json HTTP/1.1", "10.0.0.9")))["status_refused"], 3);
    // An empty list refuses everyone, loopback too.
    access_.set_allow({});
    EXPECT_THAT(get("GET / HTTP/1.1", "127.0.0.1").text, StartsWith("HTTP/1.1 403 "));
}

TEST_F(StatusHttp, OtherPathsMethodsAndGarbage) {
    auto missing = get("GET /favicon.ico HTTP/1.1", "127.0.0.1");
    EXPECT_THAT(missing.text, StartsWith("HTTP/1.1 404 Not Found\r\n"));
    EXPECT_TRUE(missing.problem.empty());
    // 404 before the allow list: a stranger learns nothing more than it would otherwise.
    EXPECT_THAT(get("GET /x HTTP/1.1", "10.0.0.9").text, StartsWith("HTTP/1.1 404 "));
    auto post = get("POST / HTTP/1.1", "127.0.0.1");
    EXPECT_THAT(post.text, StartsWith("HTTP/1.1 405 Method Not Allowed\r\n"));
    EXPECT_THAT(post.text, HasSubstr("\r\nAllow: GET, HEAD\r\n"));
    auto bad = get("HELLO", "127.0.0.1");
    EXPECT_THAT(bad.text, StartsWith("HTTP/1.1 400 Bad Request\r\n"));
    EXPECT_FALSE(bad.problem.empty());
    auto head = get("HEAD / HTTP/1.1", "127.0.0.1");
    EXPECT_THAT(head.text, StartsWith("HTTP/1.1 200 OK\r\n"));
    EXPECT_EQ(body(head), "");
    EXPECT_THAT(head.text, Not(HasSubstr("Content-Length: 0\r\n")));
}

TEST(StatusPage, AllowListText) {
    EXPECT_EQ(status_allow_text(prefixes({"127.0.0.0/8", "::1"})), "127.0.0.0/8 ::1/128");
    EXPECT_EQ(status_allow_text({}), "no address (status_allow is empty)");
}

}  // namespace
}  // namespace xvs::ctl
