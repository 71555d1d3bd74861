// RFC 1071 checksum over byte spans; 64-bit words with end-around carries, folded at the end.
#include "net/checksum.h"

#include <cstring>

namespace xvs::net {

namespace {
// acc + w with the carry out counted in carries: one add and one add-with-carry.
[[gnu::always_inline]] inline void add64(uint64_t& acc, uint64_t& carries, uint64_t w) {
    carries += __builtin_add_overflow(acc, w, &acc);
}
}  // namespace

// 64-bit words with their carries counted apart (the one's complement sum is the same in any
// word width, RFC 1071 2(B)), 32 bytes a loop: a SYN-ACK's 40-byte TCP header is one round
// and one word, where 32-bit words cost five rounds of two.
uint32_t csum_partial(const void* data, size_t len, uint32_t sum) {
    const auto* p = static_cast<const uint8_t*>(data);
    uint64_t acc = sum;
    uint64_t carries = 0;
    auto word = [](const uint8_t* at) {
        uint64_t w;
        std::memcpy(&w, at, 8);
        return w;
    };
    for (; len >= 32; p += 32, len -= 32) {
        add64(acc, carries, word(p));
        add64(acc, carries, word(p + 8));
        add64(acc, carries, word(p + 16));
        add64(acc, carries, word(p + 24));
    }
    for (; len >= 8; p += 8, len -= 8) add64(acc, carries, word(p));
    // The tail from an even offset: 16-bit words keep their place in the sum.
    uint64_t tail = 0;
    if (len & 4) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        tail += v;
        p += 4;
    }
    if (len & 2) {
        uint16_t v;
        std::memcpy(&v, p, 2);
        tail += v;
        p += 2;
    }
    if (len & 1) tail += *p;  // the high-order byte of its word on the wire: the low one here
    add64(acc, carries, tail);
    // The carries back in; a wrap leaves acc below carries, so its own carry fits.
    const bool wrapped = __builtin_add_overflow(acc, carries, &acc);
    acc += wrapped;
    // Fold 64 -> 16 bits keeping carries (one's complement addition).
    acc = (acc & 0xffffffff) + (acc >> 32);
    acc = (acc & 0xffffffff) + (acc >> 32);
    acc = (acc & 0xffff) + (acc >> 16);
    acc = (acc & 0xffff) + (acc >> 16);
    return static_cast<uint32_t>(acc);
}

uint16_t ipv4_header_checksum(const Ipv4Hdr* ip) {
    const size_t len = ip->header_len();
    uint32_t sum = len == sizeof(Ipv4Hdr) ? csum_partial20(ip) : csum_partial(ip, len, 0);
    sum = (sum & 0xffff) + (sum >> 16);  // room for the addition below (csum_partial20: 32 bits)
    // Remove the stored checksum so the result does not depend on it.
    sum += static_cast<uint16_t>(~ip->checksum);
    return csum_fold(sum);
}

uint16_t ipv4_l4_checksum(uint32_t saddr, uint32_t daddr, uint8_t proto, const void* l4,
                          size_t len) {
    uint32_t sum = ipv4_pseudo_sum(saddr, daddr, proto, static_cast<uint16_t>(len));
    return csum_fold(csum_partial(l4, len, sum));
}

uint16_t ipv6_l4_checksum(const uint8_t* saddr, const uint8_t* daddr, uint8_t proto, const void* l4,
                          size_t len) {
    const uint32_t sum = ipv6_pseudo_sum(saddr, daddr, proto, static_cast<uint32_t>(len));
    return csum_fold(csum_partial(l4, len, sum));
}

}  // namespace xvs::net
