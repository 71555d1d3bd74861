// TCP option walking, parsing and in-place rewriting (RFC 9293 §3.2, RFC 7323, RFC 2018).
// Every function works on the options area only (TCP header bytes 20..doff*4) and never reads
// or writes outside the span it is given, whatever the bytes say; nothing allocates or throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "net/headers.h"

namespace xvs::net {

// Option kinds (IANA "TCP Option Kind Numbers") and the lengths we accept for them.
inline constexpr uint8_t kTcpOptEol = 0;
inline constexpr uint8_t kTcpOptNop = 1;
inline constexpr uint8_t kTcpOptMss = 2;        // len 4: 16-bit MSS
inline constexpr uint8_t kTcpOptWscale = 3;     // len 3: shift count
inline constexpr uint8_t kTcpOptSackPerm = 4;   // len 2
inline constexpr uint8_t kTcpOptSack = 5;       // len 2 + 8n: n (left, right) edge pairs
inline constexpr uint8_t kTcpOptTimestamp = 8;  // len 10: TSval, TSecr
// TOA ("TCP option address", used by FULLNAT balancers to pass the client address to the real
// server): kind 254 shared with RFC 6994 experiments, len 8 = port (2) + IPv4 address (4), or
// len 20 = port (2) + IPv6 address (16) for an IPv6 client.
inline constexpr uint8_t kTcpOptToa = 254;

inline constexpr uint8_t kTcpOptLenMss = 4;
inline constexpr uint8_t kTcpOptLenWscale = 3;
inline constexpr uint8_t kTcpOptLenSackPerm = 2;
inline constexpr uint8_t kTcpOptLenTimestamp = 10;
inline constexpr uint8_t kTcpOptLenToaV4 = 8;
inline constexpr uint8_t kTcpOptLenToaV6 = 20;  // port (2) + IPv6 address (16)
inline constexpr uint8_t kTcpSackBlockLen = 8;
// doff is 4 bits of 32-bit words: at most 60 header bytes, so at most 40 bytes of options.
inline constexpr size_t kTcpOptionsMaxLen = 40;

struct TcpOption {
    uint8_t kind = 0;
    uint8_t len = 0;                // whole option length; 1 for NOP
    const uint8_t* data = nullptr;  // len-2 payload bytes (nullptr for NOP)
    size_t offset = 0;              // of the kind byte, from the start of the walked span

    size_t payload_len() const noexcept { return len >= 2 ? size_t(len) - 2 : 0; }
    std::span<const uint8_t> payload() const noexcept { return {data, payload_len()}; }
};

// Walks an options area one option at a time. EOL ends the walk; NOP is reported as kind 1,
// len 1. Any other option needs a length byte, len >= 2 and len within the area; otherwise the
// walk stops and malformed() becomes true. Options reported before that point are intact.
class TcpOptionWalker {
  public:
    explicit TcpOptionWalker(std::span<const uint8_t> opts) noexcept : opts_(opts) {}

    // Fills `out` and returns true, or returns false at the end (EOL, end of area, malformed).
    bool next(TcpOption& out) noexcept;
    bool malformed() const noexcept { return malformed_; }

  private:
    std::span<const uint8_t> opts_;
    size_t pos_ = 0;
    bool done_ = false;
    bool malformed_ = false;
};

// The options area of a TCP header, from header_len(). The caller guarantees header_len()
// bytes are readable; returns an empty span when header_len() < 20 (doff < 5).
std::span<uint8_t> tcp_options_span(TcpHdr* tcp) noexcept;
std::span<const uint8_t> tcp_options_span(const TcpHdr* tcp) noexcept;
// Same, for a segment of which only `avail` bytes (from the TCP header on) are in the buffer:
// empty as well when header_len() > avail, so a lying doff cannot reach past the buffer.
std::span<uint8_t> tcp_options_span(TcpHdr* tcp, size_t avail) noexcept;
std::span<const uint8_t> tcp_options_span(const TcpHdr* tcp, size_t avail) noexcept;

// The first MSS option of the right length (4), in host order. Options of a known kind but the
// wrong length are skipped, as receivers ignore them.
std::optional<uint16_t> tcp_find_mss(std::span<const uint8_t> opts) noexcept;

// Rewrites every MSS option (len 4) to new_mss (host order) and returns false if there was none.
// Every copy is rewritten because receivers disagree on which duplicate wins, and a clamp must
// hold for all of them. *csum (the TCP checksum, wire order) is updated incrementally; pass
// nullptr when the checksum is recomputed later (e.g. by TX offload).
// The span must start at an even offset from the start of the TCP header, as byte 20 does:
// options are byte-aligned, and the checksum update accounts for odd option offsets.
bool tcp_set_mss(std::span<uint8_t> opts, uint16_t new_mss, uint16_t* csum) noexcept;

// What a SYN or data segment carries. Known options with the wrong length are ignored; the
// first well-formed occurrence of each kind wins. Fields hold host-order values.
struct ParsedTcpOptions {
    std::optional<uint16_t> mss;
    std::optional<uint8_t> wscale;  // raw shift count, not clamped to 14 (RFC 7323 §2.3)
    bool sack_perm = false;
    std::optional<std::pair<uint32_t, uint32_t>> timestamp;  // (TSval, TSecr)
    uint8_t sack_blocks = 0;  // blocks across all well-formed SACK options
    bool malformed = false;   // the walk stopped early; fields reflect options before that
};
ParsedTcpOptions parse_tcp_options(std::span<const uint8_t> opts) noexcept;

// Adds delta (mod 2^32) to the left and right edge of every block of every well-formed SACK
// option, as needed when the balancer shifts the sequence space of one direction. Updates *csum
// incrementally unless csum is nullptr; same alignment rule as tcp_set_mss. Returns the number
// of blocks adjusted.
size_t tcp_sack_blocks_adjust(std::span<uint8_t> opts, int32_t delta, uint16_t* csum) noexcept;

// The inverse of a shift that bytes were inserted at sequence `from` (`delta` bytes, e.g. a
// PROXY protocol header): every SACK edge at or after from + delta moves down by delta, an edge
// inside the inserted bytes [from, from + delta) maps to `from` (the peer never sent them, so
// they cannot be acknowledged beyond the insertion point), earlier edges are unchanged. All
// comparisons are modular (net/tcp_seq.h). Checksum and alignment as tcp_sack_blocks_adjust.
// Returns the number of blocks visited.
size_t tcp_sack_blocks_unshift(std::span<uint8_t> opts, uint32_t from, uint32_t delta,
                               uint16_t* csum) noexcept;

}  // namespace xvs::net
