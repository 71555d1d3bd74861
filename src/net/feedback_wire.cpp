// Load-feedback report encoding and authentication; the layout is in feedback_wire.h.
#include "net/feedback_wire.h"

#include <sodium/core.h>
#include <sodium/crypto_auth.h>
#include <sodium/crypto_generichash.h>

#include <cstring>

namespace xvs::net {

namespace {

static_assert(crypto_auth_BYTES == kFeedbackMacSize);
static_assert(crypto_auth_KEYBYTES == std::tuple_size_v<FeedbackKey>);

constexpr std::array<uint8_t, 4> kMagic = {'X', 'V', 'S', 'F'};

void put16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t* p, uint32_t v) {
    put16(p, static_cast<uint16_t>(v >> 16));
    put16(p + 2, static_cast<uint16_t>(v));
}
void put64(uint8_t* p, uint64_t v) {
    put32(p, static_cast<uint32_t>(v >> 32));
    put32(p + 4, static_cast<uint32_t>(v));
}
uint16_t get16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] << 8 | p[1]);
}
uint32_t get32(const uint8_t* p) {
    return uint32_t{get16(p)} << 16 | get16(p + 2);
}
uint64_t get64(const uint8_t* p) {
    return uint64_t{get32(p)} << 32 | get32(p + 4);
}

bool blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

FeedbackKey feedback_key(std::string_view secret) {
    while (!secret.empty() && blank(secret.front())) secret.remove_prefix(1);
    while (!secret.empty() && blank(secret.back())) secret.remove_suffix(1);
    FeedbackKey key{};
    crypto_generichash(key.data(), key.size(),
                       reinterpret_cast<const unsigned char*>(secret.data()), secret.size(),
                       nullptr, 0);
    return key;
}

FeedbackDatagram feedback_encode(const FeedbackReport& r, const FeedbackKey& key) {
    FeedbackDatagram d{};
    std::memcpy(d.data(), kMagic.data(), kMagic.size());
    d[4] = kFeedbackVersion;
    d[5] = r.has_custom ? 1 : 0;
    put64(&d[8], r.sent_ms);
    put32(&d[16], r.interval_ms);
    put16(&d[20], r.cpu_permille);
    put16(&d[22], r.mem_permille);
    put32(&d[24], r.loadavg_x100);
    put16(&d[28], r.running);
    put16(&d[30], r.ncpu);
    put32(&d[32], r.established);
    put32(&d[36], r.has_custom ? r.custom_permille : 0);
    crypto_auth(&d[kFeedbackBodySize], d.data(), kFeedbackBodySize, key.data());
    return d;
}

std::string_view to_string(FeedbackError e) {
    switch (e) {
        case FeedbackError::none:
            return "ok";
        case FeedbackError::bad_size:
            return "bad_size";
        case FeedbackError::bad_magic:
            return "bad_magic";
        case FeedbackError::bad_version:
            return "bad_version";
        case FeedbackError::bad_mac:
            return "bad_mac";
    }
    return "?";
}

FeedbackError feedback_decode(std::span<const uint8_t> dgram, const FeedbackKey& key,
                              FeedbackReport& out) {
    if (dgram.size() != kFeedbackReportSize) return FeedbackError::bad_size;
    const uint8_t* d = dgram.data();
    if (std::memcmp(d, kMagic.data(), kMagic.size()) != 0) return FeedbackError::bad_magic;
    if (d[4] != kFeedbackVersion) return FeedbackError::bad_version;
    // Constant-time comparison inside crypto_auth_verify.
    if (crypto_auth_verify(d + kFeedbackBodySize, d, kFeedbackBodySize, key.data()) != 0)
        return FeedbackError::bad_mac;
    FeedbackReport r;
    r.has_custom = (d[5] & 1) != 0;
    r.sent_ms = get64(d + 8);
    r.interval_ms = get32(d + 16);
    r.cpu_permille = get16(d + 20);
    r.mem_permille = get16(d + 22);
    r.loadavg_x100 = get32(d + 24);
    r.running = get16(d + 28);
    r.ncpu = get16(d + 30);
    r.established = get32(d + 32);
    r.custom_permille = r.has_custom ? get32(d + 36) : 0;
    out = r;
    return FeedbackError::none;
}

}  // namespace xvs::net
