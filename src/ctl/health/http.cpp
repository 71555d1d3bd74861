// HTTP_GET / SSL_GET request and response checks; see http.h.
#include "ctl/health/http.h"

#include <openssl/evp.h>

#include <charconv>
#include <cstring>

namespace xvs::ctl::health {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// The value of header `name` (lower case) in the header block, if present.
std::optional<std::string> header(std::string_view head, std::string_view name) {
    size_t pos = head.find("\r\n");
    while (pos != std::string_view::npos && pos + 2 < head.size()) {
        const size_t start = pos + 2;
        const size_t end = head.find("\r\n", start);
        std::string_view line =
            head.substr(start, end == std::string_view::npos ? head.npos : end - start);
        const size_t colon = line.find(':');
        if (colon != std::string_view::npos && lower(line.substr(0, colon)) == name) {
            std::string_view v = line.substr(colon + 1);
            while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
            while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
            return std::string(v);
        }
        pos = end;
    }
    return std::nullopt;
}

// Body of a chunked message (RFC 9112 7.1), nullopt when malformed or incomplete.
std::optional<std::string> dechunk(std::string_view body) {
    std::string out;
    for (;;) {
        const size_t eol = body.find("\r\n");
        if (eol == std::string_view::npos) return std::nullopt;
        size_t len = 0;
        std::string_view size_text = body.substr(0, eol);
        const size_t semi = size_text.find(';');
        if (semi != std::string_view::npos) size_text = size_text.substr(0, semi);
        auto [p, ec] =
            std::from_chars(size_text.data(), size_text.data() + size_text.size(), len, 16);
        if (ec != std::errc() || size_text.empty()) return std::nullopt;
        body.remove_prefix(eol + 2);
        if (len == 0) return out;
        if (body.size() < len + 2) return std::nullopt;
        out.append(body.substr(0, len));
        body.remove_prefix(len + 2);
    }
}

}  // namespace

std::string http_request(const HttpUrl& url, bool http11, const std::string& host_header) {
    std::string req = "GET " + url.path + (http11 ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n");
    req += "User-Agent: xvs-health\r\nHost: " +
           (url.virtualhost.empty() ? host_header : url.virtualhost) + "\r\n";
    req += "Connection: close\r\n\r\n";
    return req;
}

std::array<uint8_t, 16> md5(std::string_view data) {
    std::array<uint8_t, 16> out{};
    unsigned len = 0;
    EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_md5(), nullptr);
    return out;
}

std::string hex(const uint8_t* p, size_t n) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        s += kDigits[p[i] >> 4];
        s += kDigits[p[i] & 15];
    }
    return s;
}

bool http_complete(std::string_view response) {
    const size_t end = response.find("\r\n\r\n");
    if (end == std::string_view::npos) return false;
    auto cl = header(response.substr(0, end + 2), "content-length");
    if (!cl) return false;
    size_t n = 0;
    auto [p, ec] = std::from_chars(cl->data(), cl->data() + cl->size(), n);
    return ec == std::errc() && response.size() - (end + 4) >= n;
}

std::string http_verdict(const HttpUrl& url, std::string_view response) {
    if (response.empty()) return "connection closed without a response";
    if (!response.starts_with("HTTP/1.")) return "not an HTTP response";
    const size_t end = response.find("\r\n\r\n");
    if (end == std::string_view::npos) return "response ends inside its headers";
    const size_t sp = response.find(' ');
    unsigned code = 0;
    if (sp == std::string_view::npos || sp + 4 > response.size() ||
        std::from_chars(response.data() + sp + 1, response.data() + sp + 4, code).ec != std::errc())
        return "bad HTTP status line";
    bool status_ok = false;
    if (url.status.empty()) status_ok = code >= 200 && code <= 299;
    for (const auto& [lo, hi] : url.status) status_ok |= code >= lo && code <= hi;
    if (!status_ok) return "HTTP status " + std::to_string(code);
    if (!url.digest) return "";
    const std::string_view head = response.substr(0, end + 2);
    std::string_view body = response.substr(end + 4);
    std::string decoded;
    if (auto te = header(head, "transfer-encoding");
        te && lower(*te).find("chunked") != std::string::npos) {
        auto d = dechunk(body);
        if (!d) return "bad chunked body";
        decoded = std::move(*d);
        body = decoded;
    } else if (auto cl = header(head, "content-length")) {
        size_t n = 0;
        if (std::from_chars(cl->data(), cl->data() + cl->size(), n).ec == std::errc() &&
            n < body.size())
            body = body.substr(0, n);
    }
    const auto got = md5(body);
    if (got != *url.digest)
        return "digest " + hex(got.data(), 16) + " differs from " + hex(url.digest->data(), 16);
    return "";
}

}  // namespace xvs::ctl::health
