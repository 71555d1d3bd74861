// FNAT64 translation, see net/nat64.h.
#include "net/nat64.h"

#include <cstring>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/headers.h"
#include "net/nat_rewrite.h"

namespace xvs::net {

namespace {

// A 32-bit one's complement accumulator folded to 16 bits, not complemented.
uint16_t fold16(uint32_t sum) {
    return static_cast<uint16_t>(~csum_fold(sum));
}

// The L4 part shared by both directions: ports replaced, and the checksum moved from the old
// pseudo-header sum to the new one. l4 holds l4_len bytes.
void rewrite_l4(uint8_t* l4, uint16_t l4_len, uint8_t proto, uint32_t old_pseudo,
                uint32_t new_pseudo, uint16_t sport, uint16_t dport, bool v6_out) {
    const size_t csum_off = proto == kIpProtoTcp ? kTcpChecksumOffset : kUdpChecksumOffset;
    if (proto == kIpProtoUdp && load_wire16(l4 + csum_off) == 0) {
        store_wire16(l4, sport);
        store_wire16(l4 + 2, dport);
        if (!v6_out) return;  // IPv4 keeps "no checksum"
        // IPv6 needs one: compute it whole.
        uint16_t c = csum_fold(csum_partial(l4, l4_len, new_pseudo));
        store_wire16(l4 + csum_off, c == 0 ? 0xffff : c);
        return;
    }
    const uint32_t delta = csum_delta16(fold16(old_pseudo), fold16(new_pseudo)) +
                           csum_delta16(load_wire16(l4), sport) +
                           csum_delta16(load_wire16(l4 + 2), dport);
    store_wire16(l4, sport);
    store_wire16(l4 + 2, dport);
    nat_detail::l4_csum_apply(l4, proto, delta);
}

}  // namespace

void nat64_to_v4(uint8_t* out, const IpCarried& in, uint16_t l4_len, const InetAddr& saddr,
                 const InetAddr& daddr, uint16_t sport, uint16_t dport, uint16_t id_be) {
    out[0] = 0x45;
    out[1] = in.tclass;
    store_be16(out + 2, static_cast<uint16_t>(20 + l4_len));
    store_wire16(out + 4, id_be);
    store_be16(out + 6, kIpv4DontFragment);
    out[8] = in.hop_limit;
    out[9] = in.proto;
    store_wire16(out + 10, 0);
    store_wire32(out + 12, saddr.v4_be());
    store_wire32(out + 16, daddr.v4_be());
    store_wire16(out + 10, csum_fold(csum_partial(out, 20, 0)));
    rewrite_l4(
        out + 20, l4_len, in.proto, ipv6_pseudo_sum(in.saddr.b, in.daddr.b, in.proto, l4_len),
        ipv4_pseudo_sum(saddr.v4_be(), daddr.v4_be(), in.proto, l4_len), sport, dport, false);
}

void nat46_to_v6(uint8_t* out, const IpCarried& in, uint16_t l4_len, const InetAddr& saddr,
                 const InetAddr& daddr, uint16_t sport, uint16_t dport) {
    store_be32(out, 6u << 28 | uint32_t(in.tclass) << 20);
    store_be16(out + 4, l4_len);
    out[6] = in.proto;
    out[7] = in.hop_limit;
    std::memcpy(out + 8, saddr.b, 16);
    std::memcpy(out + 24, daddr.b, 16);
    rewrite_l4(out + 40, l4_len, in.proto,
               ipv4_pseudo_sum(in.saddr.v4_be(), in.daddr.v4_be(), in.proto, l4_len),
               ipv6_pseudo_sum(saddr.b, daddr.b, in.proto, l4_len), sport, dport, true);
}

}  // namespace xvs::net
