// HTTP_GET / SSL_GET wire work without sockets: the request keepalived sends, and the checks
// of a response (status line, body after de-chunking, MD5 digest of the body).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ctl/health/check_config.h"

namespace xvs::ctl::health {

// "GET path HTTP/1.x" with Host (virtualhost, else the target host[:port]), Connection: close.
std::string http_request(const HttpUrl& url, bool http11, const std::string& host_header);

// MD5 of data (OpenSSL EVP).
std::array<uint8_t, 16> md5(std::string_view data);
std::string hex(const uint8_t* p, size_t n);

// The verdict on a whole response (the server closed, or Content-Length bytes came): "" when
// the url passes, else why not ("HTTP status 503", "digest ... differs", ...).
std::string http_verdict(const HttpUrl& url, std::string_view response);

// True once `response` holds a complete message by its Content-Length (else read to EOF).
bool http_complete(std::string_view response);

}  // namespace xvs::ctl::health
