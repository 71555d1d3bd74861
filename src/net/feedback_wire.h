// Load-feedback reports (seed 002, issue 14 item 4): what xvs-agent on a real server sends the
// director over UDP every interval, and how the director checks it. One datagram, big-endian,
// authenticated with a key both sides share (libsodium crypto_auth, HMAC-SHA-512-256):
//
//   off size field
//     0    4 magic "XVSF"
//     4    1 version (1)
//     5    1 flags: bit 0 = `custom` is valid (the agent's --load-cmd / --load-file value)
//     6    2 reserved, 0
//     8    8 sent_ms: the agent's wall clock, unix ms; also the sequence number (replay check)
//    16    4 interval_ms: how often the agent reports
//    20    2 cpu_permille: CPU busy over the last interval, 0..1000 (all CPUs, or a cgroup's)
//    22    2 mem_permille: memory in use (MemTotal - MemAvailable), 0..1000
//    24    4 loadavg_x100: 1-minute load average x 100
//    28    2 running: runnable tasks but the agent (/proc/loadavg's 4th field's numerator,
//              or the tasks in state R of the agent's --cgroup)
//    30    2 ncpu: online CPUs
//    32    4 established: TCP connections in ESTABLISHED (IPv4 + IPv6)
//    36    4 custom_permille: 0..1000 (a load percentage x 10)
//    40   32 MAC over bytes 0..39
//
// The MAC makes a forged report (no key) fail; sent_ms, which must grow from one report of a
// source to the next and lie within a window of the director's clock, makes a captured report
// useless when sent again. The key is any secret text: both sides hash it (BLAKE2b-256) into
// the 32-byte crypto_auth key, so a key file may hold a passphrase or hex.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace xvs::net {

inline constexpr size_t kFeedbackBodySize = 40;
inline constexpr size_t kFeedbackMacSize = 32;
inline constexpr size_t kFeedbackReportSize = kFeedbackBodySize + kFeedbackMacSize;
inline constexpr uint8_t kFeedbackVersion = 1;

using FeedbackKey = std::array<uint8_t, 32>;
using FeedbackDatagram = std::array<uint8_t, kFeedbackReportSize>;

struct FeedbackReport {
    uint64_t sent_ms = 0;
    uint32_t interval_ms = 1000;
    uint16_t cpu_permille = 0;
    uint16_t mem_permille = 0;
    uint32_t loadavg_x100 = 0;
    uint16_t running = 0;
    uint16_t ncpu = 1;
    uint32_t established = 0;
    bool has_custom = false;
    uint32_t custom_permille = 0;
    bool operator==(const FeedbackReport&) const = default;
};

// The crypto_auth key of a shared secret text (leading/trailing blanks and newlines removed,
// so `echo secret > keyfile` and `key secret` agree).
FeedbackKey feedback_key(std::string_view secret);

FeedbackDatagram feedback_encode(const FeedbackReport& r, const FeedbackKey& key);

// Why a datagram was refused; each is a counter of its own on the director.
enum class FeedbackError : uint8_t { none, bad_size, bad_magic, bad_version, bad_mac };
std::string_view to_string(FeedbackError e);

// Checks size, magic, version and MAC; fills `out` only when the answer is `none`.
FeedbackError feedback_decode(std::span<const uint8_t> dgram, const FeedbackKey& key,
                              FeedbackReport& out);

}  // namespace xvs::net
