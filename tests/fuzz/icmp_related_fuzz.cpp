// libFuzzer target for net/icmp_related: arbitrary bytes as an ICMP message (parse_icmp_error,
// then translate_icmp_error with addresses/ports taken from the input) in an exactly sized
// buffer, so ASan flags any read past len; and as an original packet for build_frag_needed.
// Half of the runs repair the ICMP checksum first, so the quote validation is reached.
// After a translation the message must parse again with the new tuple and valid checksums.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/icmp_related.h"

namespace {

using namespace xvs::net;

// Not assert(): fuzz builds may define NDEBUG, and a silent pass is worse than no fuzzer.
#define FUZZ_CHECK(cond)  \
    do {                  \
        if (!(cond)) {    \
            std::abort(); \
        }                 \
    } while (0)

// Sums to 0xffff over IHL * 4 bytes; accepts either zero (0x0000/0xffff) as the checksum.
bool header_valid(const uint8_t* ip) {
    return csum_fold(csum_partial(ip, size_t(ip[0] & 0x0f) * 4, 0)) == 0;
}

// Input: [ctl][12 bytes of new tuple][ICMP message].
void fuzz_translate(const uint8_t* data, size_t size) {
    if (size < 13) return;
    const uint8_t ctl = data[0];
    IcmpTranslation t;
    uint32_t inner_s, inner_d;
    std::memcpy(&inner_s, data + 1, 4);
    std::memcpy(&inner_d, data + 5, 4);
    std::memcpy(&t.inner_sport, data + 9, 2);
    std::memcpy(&t.inner_dport, data + 11, 2);
    t.inner_saddr = InetAddr::v4(inner_s);
    t.inner_daddr = InetAddr::v4(inner_d);
    t.outer_saddr = InetAddr::v4(inner_d ^ 0x01010101);
    t.outer_daddr = InetAddr::v4(inner_s ^ 0x02020202);

    const size_t len = size - 13;
    std::vector<uint8_t> pkt(20 + len);  // outer IPv4 header + the message, exactly sized
    pkt[0] = 0x45;
    pkt[8] = 64;
    pkt[9] = kIpProtoIcmp;
    store_be16(pkt.data() + 2, static_cast<uint16_t>(pkt.size() > 0xffff ? 0xffff : pkt.size()));
    store_wire16(pkt.data() + 10, csum_fold(csum_partial(pkt.data(), 20, 0)));
    uint8_t* icmp = pkt.data() + 20;
    if (len) std::memcpy(icmp, data + 13, len);
    if ((ctl & 1) && len >= 4) {
        store_wire16(icmp + 2, 0);
        store_wire16(icmp + 2, csum_fold(csum_partial(icmp, len, 0)));
    }

    IcmpQuote q;
    if (!parse_icmp_error(icmp, len, q)) return;
    FUZZ_CHECK(q.inner_ip_off == 8 && q.inner_ip_len >= 20 && q.inner_ip_len <= 60);
    FUZZ_CHECK(q.inner_l4_off == 8 + q.inner_ip_len);
    FUZZ_CHECK(q.inner_l4_len >= 8 && q.inner_l4_off + q.inner_l4_len <= len);
    FUZZ_CHECK(q.inner_proto == kIpProtoTcp || q.inner_proto == kIpProtoUdp ||
               q.inner_proto == kIpProtoIcmp);
    const bool quoted_hdr_valid = header_valid(icmp + 8);

    auto* outer = reinterpret_cast<Ipv4Hdr*>(pkt.data());
    FUZZ_CHECK(translate_icmp_error(outer, icmp, len, q, t));
    FUZZ_CHECK(header_valid(pkt.data()));
    FUZZ_CHECK(outer->saddr == t.outer_saddr.v4_be() && outer->daddr == t.outer_daddr.v4_be());
    if (quoted_hdr_valid) FUZZ_CHECK(header_valid(icmp + 8));

    IcmpQuote again;
    FUZZ_CHECK(parse_icmp_error(icmp, len, again));  // ICMP checksum recomputed, quote intact
    FUZZ_CHECK(again.inner_saddr == t.inner_saddr && again.inner_daddr == t.inner_daddr);
    FUZZ_CHECK(again.inner_proto == q.inner_proto && again.inner_l4_len == q.inner_l4_len);
    if (q.inner_proto == kIpProtoIcmp) {
        FUZZ_CHECK(again.inner_sport == t.inner_sport && again.inner_dport == t.inner_sport);
    } else {
        FUZZ_CHECK(again.inner_sport == t.inner_sport && again.inner_dport == t.inner_dport);
    }
}

// The same bytes as an original packet: any frag-needed built quotes a prefix of it, fits the
// buffer and 576 bytes, and carries valid checksums.
void fuzz_build(const uint8_t* data, size_t size) {
    std::vector<uint8_t> orig(data, data + size);
    // Capacity from the last byte (the first is an IPv4 version/IHL): odd means the full 576.
    const uint8_t last = size ? data[size - 1] : 1;
    const size_t cap = (last & 1) ? kIcmpErrorMaxLen : 28 + last * 2u;
    std::vector<uint8_t> out(cap);
    const size_t n =
        build_frag_needed(out.data(), out.size(), orig.data(), orig.size(), InetAddr::v4(0x0100000a), 1400,
                          7);
    if (n == 0) return;
    FUZZ_CHECK(n <= cap && n <= kIcmpErrorMaxLen && n >= 48 && n - 28 <= size);
    FUZZ_CHECK(std::memcmp(out.data() + 28, orig.data(), n - 28) == 0);
    FUZZ_CHECK(csum_fold(csum_partial(out.data(), 20, 0)) == 0);
    FUZZ_CHECK(csum_fold(csum_partial(out.data() + 20, n - 20, 0)) == 0);
    FUZZ_CHECK(load_be16(out.data() + 2) == n && out[20] == 3 && out[21] == 4);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz_translate(data, size);
    fuzz_build(data, size);
    return 0;
}
