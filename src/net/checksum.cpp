// RFC 1071 checksum over byte spans; 64-bit accumulation of 32-bit loads, folded at the end.
#include "net/checksum.h"

#include <cstring>

namespace xvs::net {

uint32_t csum_partial(const void* data, size_t len, uint32_t sum) {
    const auto* p = static_cast<const uint8_t*>(data);
    uint64_t acc = sum;
    while (len >= 8) {
        uint32_t a, b;
        std::memcpy(&a, p, 4);
        std::memcpy(&b, p + 4, 4);
        acc += a;
        acc += b;
        p += 8;
        len -= 8;
    }
    while (len >= 2) {
        uint16_t w;
        std::memcpy(&w, p, 2);
        acc += w;
        p += 2;
        len -= 2;
    }
    if (len) {
        uint16_t w = 0;
        std::memcpy(&w, p, 1);  // trailing byte is the high-order byte in wire order
        acc += w;
    }
    // Fold 64 -> 32 bits keeping carries (one's complement addition).
    acc = (acc & 0xffffffff) + (acc >> 32);
    acc = (acc & 0xffffffff) + (acc >> 32);
    acc = (acc & 0xffff) + (acc >> 16) ;
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
