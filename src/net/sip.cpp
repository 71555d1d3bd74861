// SIP Call-ID extraction for persistence; see sip.h.
#include "net/sip.h"

#include <cstring>

namespace xvs::net {

namespace {

bool blank(uint8_t c) {
    return c == ' ' || c == '\t';
}

uint8_t lower(uint8_t c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<uint8_t>(c - 'A' + 'a') : c;
}

bool name_is(const uint8_t* p, size_t n, std::string_view want) {
    if (n != want.size()) return false;
    for (size_t i = 0; i < n; ++i)
        if (lower(p[i]) != static_cast<uint8_t>(want[i])) return false;
    return true;
}

// FNV-1a 64 with a seed folded in first, then a 64-bit finaliser (splitmix64).
uint64_t hash64(std::string_view s, uint64_t seed) {
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (char c : s) {
        h ^= static_cast<uint8_t>(c);
        h *= 0x100000001b3ull;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

}  // namespace

std::optional<std::string_view> sip_call_id(const uint8_t* data, size_t len) {
    size_t pos = 0;
    bool first = true;
    while (pos < len) {
        size_t end = pos;
        while (end < len && data[end] != '\n') ++end;
        size_t line_end = end;  // without CR LF
        if (line_end > pos && data[line_end - 1] == '\r') --line_end;
        if (line_end == pos) {
            if (!first) return std::nullopt;  // the blank line: headers are over
        } else if (!first) {
            // "name *(SP/HTAB) : value"
            size_t n = pos;
            while (n < line_end && data[n] != ':' && !blank(data[n])) ++n;
            size_t colon = n;
            while (colon < line_end && blank(data[colon])) ++colon;
            if (colon < line_end && data[colon] == ':' &&
                (name_is(data + pos, n - pos, "call-id") || name_is(data + pos, n - pos, "i"))) {
                size_t v = colon + 1;
                size_t ve = line_end;
                while (v < ve && blank(data[v])) ++v;
                while (ve > v && blank(data[ve - 1])) --ve;
                if (ve == v) return std::nullopt;
                return std::string_view(reinterpret_cast<const char*>(data + v), ve - v);
            }
        }
        if (line_end != pos) first = false;  // leading CRLFs (keep-alives) are skipped
        pos = end + 1;
    }
    return std::nullopt;
}

InetAddr sip_call_key(std::string_view call_id) {
    const uint64_t a = hash64(call_id, 0x5349505f43414c4cull);  // "SIP_CALL"
    const uint64_t b = hash64(call_id, 0x5f49445f4b455931ull);
    uint8_t bytes[16];
    bytes[0] = 0xff;
    bytes[1] = 0x5e;
    std::memcpy(bytes + 2, &a, 8);
    std::memcpy(bytes + 10, &b, 6);
    return InetAddr::v6(bytes);
}

}  // namespace xvs::net
