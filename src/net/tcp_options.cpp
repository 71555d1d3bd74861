// TCP option walker and the MSS/SACK rewrites built on it. Bounds are checked against the span
// before every read; checksum updates are exact even for options at odd byte offsets.
#include "net/tcp_options.h"

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/tcp_seq.h"

namespace xvs::net {

namespace {

// Replaces the checksum contribution of n bytes that sit `offset` bytes past an even boundary
// of the checksummed data. Options are byte-aligned, so a value may straddle 16-bit words; a
// run starting at an odd offset contributes the byte-swapped sum of its bytes (RFC 1071 §2(B),
// byte order independence), so swapping both sums keeps the RFC 1624 update exact.
void csum_replace_run(uint16_t* csum, size_t offset, const uint8_t* old_bytes,
                      const uint8_t* new_bytes, size_t n) {
    auto old_sum = static_cast<uint16_t>(csum_partial(old_bytes, n, 0));
    auto new_sum = static_cast<uint16_t>(csum_partial(new_bytes, n, 0));
    if (offset & 1) {
        old_sum = bswap16(old_sum);
        new_sum = bswap16(new_sum);
    }
    csum_replace2(csum, old_sum, new_sum);
}

bool is_sack_len(uint8_t len) {
    return len >= 2 + kTcpSackBlockLen && (len - 2) % kTcpSackBlockLen == 0;
}

// Rewrites every edge of every well-formed SACK option to map(edge), keeping *csum in step
// (unless null). Returns the number of blocks visited.
template <typename Map>
size_t sack_edges_map(std::span<uint8_t> opts, uint16_t* csum, Map map) {
    size_t blocks = 0;
    TcpOptionWalker walker(opts);
    TcpOption opt;
    while (walker.next(opt)) {
        if (opt.kind != kTcpOptSack || !is_sack_len(opt.len)) continue;
        for (size_t at = opt.offset + 2; at < opt.offset + opt.len; at += 4) {
            uint8_t old_bytes[4] = {opts[at], opts[at + 1], opts[at + 2], opts[at + 3]};
            store_be32(&opts[at], map(load_be32(&opts[at])));
            if (csum) csum_replace_run(csum, at, old_bytes, &opts[at], 4);
        }
        blocks += (opt.len - 2) / kTcpSackBlockLen;
    }
    return blocks;
}

template <typename Byte>
std::span<Byte> options_of(Byte* header, unsigned header_len) {
    if (header_len < sizeof(TcpHdr)) return {};
    return {header + sizeof(TcpHdr), header_len - sizeof(TcpHdr)};
}

}  // namespace

bool TcpOptionWalker::next(TcpOption& out) noexcept {
    if (done_) return false;
    const size_t size = opts_.size();
    if (pos_ >= size) {
        done_ = true;
        return false;
    }
    const uint8_t kind = opts_[pos_];
    if (kind == kTcpOptEol) {
        done_ = true;
        return false;
    }
    if (kind == kTcpOptNop) {
        out = TcpOption{kTcpOptNop, 1, nullptr, pos_};
        pos_ += 1;
        return true;
    }
    // Everything else is kind, length, payload; the length counts the kind and length bytes.
    if (size - pos_ < 2) {
        malformed_ = done_ = true;
        return false;
    }
    const uint8_t len = opts_[pos_ + 1];
    if (len < 2 || len > size - pos_) {
        malformed_ = done_ = true;
        return false;
    }
    out = TcpOption{kind, len, opts_.data() + pos_ + 2, pos_};
    pos_ += len;
    return true;
}

std::span<uint8_t> tcp_options_span(TcpHdr* tcp) noexcept {
    return options_of(reinterpret_cast<uint8_t*>(tcp), tcp->header_len());
}

std::span<const uint8_t> tcp_options_span(const TcpHdr* tcp) noexcept {
    return options_of(reinterpret_cast<const uint8_t*>(tcp), tcp->header_len());
}

std::span<uint8_t> tcp_options_span(TcpHdr* tcp, size_t avail) noexcept {
    if (avail < sizeof(TcpHdr) || tcp->header_len() > avail) return {};
    return tcp_options_span(tcp);
}

std::span<const uint8_t> tcp_options_span(const TcpHdr* tcp, size_t avail) noexcept {
    if (avail < sizeof(TcpHdr) || tcp->header_len() > avail) return {};
    return tcp_options_span(tcp);
}

std::optional<uint16_t> tcp_find_mss(std::span<const uint8_t> opts) noexcept {
    TcpOptionWalker walker(opts);
    TcpOption opt;
    while (walker.next(opt)) {
        if (opt.kind == kTcpOptMss && opt.len == kTcpOptLenMss) return load_be16(opt.data);
    }
    return std::nullopt;
}

bool tcp_set_mss(std::span<uint8_t> opts, uint16_t new_mss, uint16_t* csum) noexcept {
    bool found = false;
    TcpOptionWalker walker(opts);
    TcpOption opt;
    while (walker.next(opt)) {
        if (opt.kind != kTcpOptMss || opt.len != kTcpOptLenMss) continue;
        found = true;
        const size_t at = opt.offset + 2;
        uint8_t old_bytes[2] = {opts[at], opts[at + 1]};
        store_be16(&opts[at], new_mss);
        if (csum) csum_replace_run(csum, at, old_bytes, &opts[at], 2);
    }
    return found;
}

// One pass over the bytes with a plain index, not the walker: this runs for every SYN the SYN
// proxy answers and every cookie ACK, and the walker's per-option struct costs about twice the
// instructions. The stop rules are TcpOptionWalker::next's (EOL, end of area, malformed), and
// tests/unit/net/tcp_options_test.cpp checks the two agree on arbitrary bytes.
ParsedTcpOptions parse_tcp_options(std::span<const uint8_t> opts) noexcept {
    ParsedTcpOptions parsed;
    const uint8_t* const p = opts.data();
    const size_t size = opts.size();
    // The two layouts Linux sends, read without the walk (a SYN flood's every packet is the
    // first; the walk cost ~150 instructions a SYN): a SYN or SYN-ACK's MSS, SACK-permitted,
    // timestamps, NOP, window scale; and a later segment's NOP, NOP, timestamps.
    if (size == 20 && load_be16(p) == 0x0204 && load_be32(p + 4) == 0x0402080a &&
        load_be32(p + 16) >> 8 == 0x010303) {
        parsed.mss = load_be16(p + 2);
        parsed.sack_perm = true;
        parsed.timestamp.emplace(load_be32(p + 8), load_be32(p + 12));
        parsed.wscale = p[19];
        return parsed;
    }
    if (size == 12 && load_be32(p) == 0x0101080a) {
        parsed.timestamp.emplace(load_be32(p + 4), load_be32(p + 8));
        return parsed;
    }
    size_t pos = 0;
    while (pos < size) {
        const uint8_t kind = p[pos];
        if (kind == kTcpOptEol) break;
        if (kind == kTcpOptNop) {
            ++pos;
            continue;
        }
        // kind, length (counting kind and length bytes), payload.
        if (size - pos < 2 || p[pos + 1] < 2 || p[pos + 1] > size - pos) {
            parsed.malformed = true;
            break;
        }
        const uint8_t len = p[pos + 1];
        const uint8_t* const data = p + pos + 2;
        switch (kind) {
            case kTcpOptMss:
                if (len == kTcpOptLenMss && !parsed.mss) parsed.mss = load_be16(data);
                break;
            case kTcpOptWscale:
                if (len == kTcpOptLenWscale && !parsed.wscale) parsed.wscale = data[0];
                break;
            case kTcpOptSackPerm:
                if (len == kTcpOptLenSackPerm) parsed.sack_perm = true;
                break;
            case kTcpOptSack:
                // At most 4 blocks fit in 40 bytes, so the sum cannot overflow uint8_t.
                if (is_sack_len(len)) parsed.sack_blocks += (len - 2) / kTcpSackBlockLen;
                break;
            case kTcpOptTimestamp:
                if (len == kTcpOptLenTimestamp && !parsed.timestamp)
                    parsed.timestamp.emplace(load_be32(data), load_be32(data + 4));
                break;
            default:
                break;
        }
        pos += len;
    }
    return parsed;
}

size_t tcp_sack_blocks_adjust(std::span<uint8_t> opts, int32_t delta, uint16_t* csum) noexcept {
    // Both edges of every block move by the same sequence offset.
    return sack_edges_map(opts, csum,
                          [delta](uint32_t edge) { return edge + static_cast<uint32_t>(delta); });
}

size_t tcp_sack_blocks_unshift(std::span<uint8_t> opts, uint32_t from, uint32_t delta,
                               uint16_t* csum) noexcept {
    return sack_edges_map(opts, csum, [from, delta](uint32_t edge) {
        if (seq_lt(edge, from)) return edge;
        if (seq_lt(edge, from + delta)) return from;
        return edge - delta;
    });
}

}  // namespace xvs::net
