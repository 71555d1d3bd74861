// UOA inserts (ipo option / opp header) and the empty-datagram fallback. Everything is checked
// before the first byte moves, so a refused insert leaves the datagram exactly as it was.
#include "net/uoa.h"

#include <cstring>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/headers.h"

namespace xvs::net {

namespace {

// The datagram's total length if it is a whole IPv4/UDP datagram that fits in pkt_len and can
// grow by `grow` bytes within capacity; 0 otherwise.
size_t udp_datagram_len(const Ipv4Hdr* ip, size_t pkt_len, size_t capacity, size_t grow) {
    if (pkt_len < sizeof(Ipv4Hdr) || ip->version() != 4) return 0;
    const size_t hlen = ip->header_len();
    const size_t total = ntoh16(ip->total_length);
    if (hlen < sizeof(Ipv4Hdr) || total > pkt_len || total < hlen + sizeof(UdpHdr)) return 0;
    if (ip->protocol != kIpProtoUdp || ip->is_fragment()) return 0;
    if (total + grow > capacity || total + grow > 0xffff) return 0;
    return total;
}

void put_uoa_option(uint8_t* p, uint32_t client_be, uint16_t cport_be) {
    p[0] = kUoaOptCode;
    p[1] = kUoaOptLenV4;
    std::memcpy(p + 2, &cport_be, 2);
    std::memcpy(p + 4, &client_be, 4);
}

void finish_header(Ipv4Hdr* ip, size_t total) {
    ip->total_length = hton16(static_cast<uint16_t>(total));
    ip->checksum = 0;
    ip->checksum = ipv4_header_checksum(ip);
}

}  // namespace

size_t uoa_ipo_insert(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, uint32_t client_be,
                      uint16_t cport_be) noexcept {
    auto* ip = reinterpret_cast<Ipv4Hdr*>(ip_hdr);
    const size_t total = udp_datagram_len(ip, pkt_len, capacity, kUoaOptLenV4);
    if (total == 0) return 0;
    const unsigned ihl = ip->version_ihl & 0x0f;
    if (ihl + kUoaOptLenV4 / 4 > kIpv4MaxIhl) return 0;

    uint8_t* at = ip_hdr + sizeof(Ipv4Hdr);
    std::memmove(at + kUoaOptLenV4, at, total - sizeof(Ipv4Hdr));
    put_uoa_option(at, client_be, cport_be);
    ip->version_ihl = static_cast<uint8_t>(0x40 | (ihl + kUoaOptLenV4 / 4));
    finish_header(ip, total + kUoaOptLenV4);
    return total + kUoaOptLenV4;
}

size_t uoa_opp_insert(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, uint32_t client_be,
                      uint16_t cport_be) noexcept {
    auto* ip = reinterpret_cast<Ipv4Hdr*>(ip_hdr);
    const size_t total = udp_datagram_len(ip, pkt_len, capacity, kUoaOppLenV4);
    if (total == 0) return 0;
    const size_t hlen = ip->header_len();

    uint8_t* at = ip_hdr + hlen;
    std::memmove(at + kUoaOppLenV4, at, total - hlen);
    at[0] = kUoaOppVersionV4 << 4;
    at[1] = kIpProtoUdp;
    store_be16(at + 2, kUoaOppLenV4);
    put_uoa_option(at + kUoaOppHdrLen, client_be, cport_be);
    ip->protocol = kIpProtoUoaOpp;
    finish_header(ip, total + kUoaOppLenV4);
    return total + kUoaOppLenV4;
}

size_t uoa_insert(UoaMode mode, uint8_t* ip_hdr, size_t pkt_len, size_t capacity,
                  uint32_t client_be, uint16_t cport_be) noexcept {
    return mode == UoaMode::Ipo ? uoa_ipo_insert(ip_hdr, pkt_len, capacity, client_be, cport_be)
                                : uoa_opp_insert(ip_hdr, pkt_len, capacity, client_be, cport_be);
}

size_t uoa_empty_datagram_build(uint8_t* out, size_t cap, UoaMode mode,
                                const UoaFlow& flow) noexcept {
    constexpr size_t kBase = sizeof(Ipv4Hdr) + sizeof(UdpHdr);
    if (cap < kBase + uoa_insert_len(mode)) return 0;

    auto* ip = reinterpret_cast<Ipv4Hdr*>(out);
    *ip = Ipv4Hdr{};
    ip->version_ihl = 0x45;
    ip->total_length = hton16(kBase);
    ip->id = flow.ip_id_be;
    ip->ttl = flow.ttl;
    ip->protocol = kIpProtoUdp;
    ip->saddr = flow.saddr_be;
    ip->daddr = flow.daddr_be;

    auto* udp = reinterpret_cast<UdpHdr*>(out + sizeof(Ipv4Hdr));
    udp->sport = flow.sport_be;
    udp->dport = flow.dport_be;
    udp->length = hton16(sizeof(UdpHdr));
    udp->checksum = 0;
    uint16_t csum =
        ipv4_l4_checksum(flow.saddr_be, flow.daddr_be, kIpProtoUdp, udp, sizeof(UdpHdr));
    udp->checksum = csum == 0 ? 0xffff : csum;

    return uoa_insert(mode, out, kBase, cap, flow.client_be, flow.cport_be);
}

}  // namespace xvs::net
