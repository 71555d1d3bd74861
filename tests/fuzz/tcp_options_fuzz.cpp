// libFuzzer target for net/tcp_options: arbitrary bytes walked as an options area and as an
// IPv4+TCP packet. ASan catches any read outside the input; the asserts check that rewrites keep
// the option layout and that incremental checksums equal a full recompute.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "net/checksum.h"
#include "net/tcp_options.h"

namespace {

using namespace xvs::net;

// Not assert(): fuzz builds may define NDEBUG, and a silent pass is worse than no fuzzer.
#define FUZZ_CHECK(cond)  \
    do {                  \
        if (!(cond)) {    \
            std::abort(); \
        }                 \
    } while (0)

struct Layout {
    uint8_t kind;
    uint8_t len;
    size_t offset;
    bool operator==(const Layout&) const = default;
};

// Walks opts, checks every reported option lies inside it, returns the layout.
std::vector<Layout> walk_checked(std::span<const uint8_t> opts, bool* malformed) {
    std::vector<Layout> layout;
    TcpOptionWalker walker(opts);
    TcpOption opt;
    size_t next_offset = 0;
    while (walker.next(opt)) {
        FUZZ_CHECK(opt.offset == next_offset);  // contiguous, strictly advancing
        FUZZ_CHECK(opt.len >= 1 && opt.offset + opt.len <= opts.size());
        if (opt.kind == kTcpOptNop) {
            FUZZ_CHECK(opt.len == 1 && opt.data == nullptr);
        } else {
            FUZZ_CHECK(opt.len >= 2 && opt.data == opts.data() + opt.offset + 2);
        }
        layout.push_back({opt.kind, opt.len, opt.offset});
        next_offset = opt.offset + opt.len;
    }
    FUZZ_CHECK(!walker.next(opt));
    *malformed = walker.malformed();
    return layout;
}

void fuzz_options_area(const uint8_t* data, size_t size) {
    // An exactly sized copy, so ASan flags even a one-byte overread.
    std::vector<uint8_t> opts(data, data + size);
    bool malformed = false;
    const auto layout = walk_checked(opts, &malformed);
    const ParsedTcpOptions parsed = parse_tcp_options(opts);
    FUZZ_CHECK(parsed.malformed == malformed);
    FUZZ_CHECK(tcp_find_mss(opts) == parsed.mss);
    FUZZ_CHECK(parsed.sack_blocks <= size / kTcpSackBlockLen);
}

// Options that fit a real header: rewrite them inside a segment and check the checksum.
void fuzz_rewrites_in_segment(const uint8_t* data, size_t size) {
    const size_t opt_len = (size + 3) / 4 * 4;
    if (opt_len > kTcpOptionsMaxLen) return;
    const size_t payload_len = size % 7;  // odd and even segment lengths
    std::vector<uint8_t> seg(sizeof(TcpHdr) + opt_len + payload_len, 0xa5);
    std::memcpy(seg.data() + sizeof(TcpHdr), data, size);
    std::memset(seg.data() + sizeof(TcpHdr) + size, kTcpOptEol, opt_len - size);
    auto* tcp = reinterpret_cast<TcpHdr*>(seg.data());
    tcp->data_off = uint8_t((sizeof(TcpHdr) + opt_len) / 4 << 4);
    tcp->checksum = 0;
    const uint32_t saddr = 0x0100000a, daddr = 0x0200000a;
    tcp->checksum = ipv4_l4_checksum(saddr, daddr, kIpProtoTcp, seg.data(), seg.size());

    const auto opts = tcp_options_span(tcp, seg.size());
    FUZZ_CHECK(opts.size() == opt_len);
    bool malformed = false;
    const auto before = walk_checked(opts, &malformed);
    const auto mss_before = tcp_find_mss(opts);

    uint16_t csum = tcp->checksum;
    const uint16_t new_mss = uint16_t(size * 40503u);
    FUZZ_CHECK(tcp_set_mss(opts, new_mss, &csum) == mss_before.has_value());
    const size_t blocks = tcp_sack_blocks_adjust(opts, int32_t(size * 2654435761u), &csum);
    FUZZ_CHECK(blocks == parse_tcp_options(opts).sack_blocks);
    tcp->checksum = 0;
    FUZZ_CHECK(csum == ipv4_l4_checksum(saddr, daddr, kIpProtoTcp, seg.data(), seg.size()));

    // Only payloads changed: the walk sees the same options in the same places.
    bool malformed_after = false;
    FUZZ_CHECK(walk_checked(opts, &malformed_after) == before);
    FUZZ_CHECK(malformed_after == malformed);
    if (mss_before) FUZZ_CHECK(tcp_find_mss(opts) == new_mss);
}

// The input as a packet starting at the IPv4 header, located the way the data plane would.
void fuzz_packet_view(const uint8_t* data, size_t size) {
    std::vector<uint8_t> pkt(data, data + size);
    if (pkt.size() < sizeof(Ipv4Hdr)) return;
    const auto* ip = reinterpret_cast<const Ipv4Hdr*>(pkt.data());
    const size_t ihl = ip->header_len();
    if (ihl < sizeof(Ipv4Hdr) || ihl > pkt.size()) return;
    (void)ipv4_header_checksum(ip);
    size_t end = pkt.size();
    const size_t total = ntoh16(ip->total_length);
    if (total >= ihl && total < end) end = total;
    const auto* tcp = reinterpret_cast<const TcpHdr*>(pkt.data() + ihl);
    const auto opts = tcp_options_span(tcp, end - ihl);
    if (opts.empty()) return;
    FUZZ_CHECK(opts.data() == pkt.data() + ihl + sizeof(TcpHdr));
    FUZZ_CHECK(opts.data() + opts.size() <= pkt.data() + end);
    bool malformed = false;
    walk_checked(opts, &malformed);
    (void)parse_tcp_options(opts);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz_options_area(data, size);
    fuzz_rewrites_in_segment(data, size);
    fuzz_packet_view(data, size);
    return 0;
}
