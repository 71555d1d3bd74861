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

uint8_t opt_len(const InetAddr& client) {
    return client.is_v4() ? kUoaOptLenV4 : kUoaOptLenV6;
}

void put_uoa_option(uint8_t* p, const InetAddr& client, uint16_t cport_be) {
    p[0] = kUoaOptCode;
    p[1] = opt_len(client);
    std::memcpy(p + 2, &cport_be, 2);
    if (client.is_v4()) {
        const uint32_t client_be = client.v4_be();
        std::memcpy(p + 4, &client_be, 4);
    } else {
        std::memcpy(p + 4, client.b, 16);
    }
}

// The opp header and the option at `at` (opp_len bytes).
void put_opp(uint8_t* at, const InetAddr& client, uint16_t cport_be) {
    const size_t opp_len = kUoaOppHdrLen + opt_len(client);
    at[0] = static_cast<uint8_t>((client.is_v4() ? kUoaOppVersionV4 : kUoaOppVersionV6) << 4);
    at[1] = kIpProtoUdp;
    store_be16(at + 2, static_cast<uint16_t>(opp_len));
    put_uoa_option(at + kUoaOppHdrLen, client, cport_be);
}

constexpr size_t kIpv6HdrLen = 40;
constexpr size_t kIpv6PayloadLenOff = 4;
constexpr size_t kIpv6NextHeaderOff = 6;

// RFC 8200 8.1: the UDP checksum of an IPv6 datagram (src/dst at ip6_hdr + 8 / + 24).
uint16_t udp6_checksum(const uint8_t* ip6_hdr, const void* udp, size_t len) {
    uint32_t sum = csum_partial(ip6_hdr + 8, 32, 0);
    sum += hton16(static_cast<uint16_t>(len >> 16));
    sum += hton16(static_cast<uint16_t>(len & 0xffff));
    sum += hton16(kIpProtoUdp);
    return csum_fold(csum_partial(udp, len, sum));
}

void finish_header(Ipv4Hdr* ip, size_t total) {
    ip->total_length = hton16(static_cast<uint16_t>(total));
    ip->checksum = 0;
    ip->checksum = ipv4_header_checksum(ip);
}

}  // namespace

size_t uoa_ipo_insert(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, const InetAddr& client,
                      uint16_t cport_be) noexcept {
    auto* ip = reinterpret_cast<Ipv4Hdr*>(ip_hdr);
    const size_t len = opt_len(client);
    const size_t total = udp_datagram_len(ip, pkt_len, capacity, len);
    if (total == 0) return 0;
    const unsigned ihl = ip->version_ihl & 0x0f;
    if (ihl + len / 4 > kIpv4MaxIhl) return 0;

    uint8_t* at = ip_hdr + sizeof(Ipv4Hdr);
    std::memmove(at + len, at, total - sizeof(Ipv4Hdr));
    put_uoa_option(at, client, cport_be);
    ip->version_ihl = static_cast<uint8_t>(0x40 | (ihl + len / 4));
    finish_header(ip, total + len);
    return total + len;
}

size_t uoa_ipo_insert(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, uint32_t client_be,
                      uint16_t cport_be) noexcept {
    return uoa_ipo_insert(ip_hdr, pkt_len, capacity, InetAddr::v4(client_be), cport_be);
}

size_t uoa_opp_insert(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, const InetAddr& client,
                      uint16_t cport_be) noexcept {
    auto* ip = reinterpret_cast<Ipv4Hdr*>(ip_hdr);
    const size_t opp_len = kUoaOppHdrLen + opt_len(client);
    const size_t total = udp_datagram_len(ip, pkt_len, capacity, opp_len);
    if (total == 0) return 0;
    const size_t hlen = ip->header_len();

    uint8_t* at = ip_hdr + hlen;
    std::memmove(at + opp_len, at, total - hlen);
    put_opp(at, client, cport_be);
    ip->protocol = kIpProtoUoaOpp;
    finish_header(ip, total + opp_len);
    return total + opp_len;
}

size_t uoa_opp_insert(uint8_t* ip_hdr, size_t pkt_len, size_t capacity, uint32_t client_be,
                      uint16_t cport_be) noexcept {
    return uoa_opp_insert(ip_hdr, pkt_len, capacity, InetAddr::v4(client_be), cport_be);
}

size_t uoa_opp_insert_ipv6(uint8_t* ip6_hdr, size_t pkt_len, size_t capacity,
                           const InetAddr& client, uint16_t cport_be) noexcept {
    if (pkt_len < kIpv6HdrLen + sizeof(UdpHdr) || ip6_hdr[0] >> 4 != 6 ||
        ip6_hdr[kIpv6NextHeaderOff] != kIpProtoUdp)
        return 0;
    const size_t payload = load_be16(ip6_hdr + kIpv6PayloadLenOff);
    const size_t opp_len = kUoaOppHdrLen + opt_len(client);
    if (payload < sizeof(UdpHdr) || kIpv6HdrLen + payload > pkt_len ||
        kIpv6HdrLen + payload + opp_len > capacity || payload + opp_len > 0xffff)
        return 0;
    uint8_t* at = ip6_hdr + kIpv6HdrLen;
    std::memmove(at + opp_len, at, payload);
    put_opp(at, client, cport_be);
    ip6_hdr[kIpv6NextHeaderOff] = kIpProtoUoaOpp;
    store_be16(ip6_hdr + kIpv6PayloadLenOff, static_cast<uint16_t>(payload + opp_len));
    return kIpv6HdrLen + payload + opp_len;
}

size_t uoa_insert(UoaMode mode, uint8_t* ip_hdr, size_t pkt_len, size_t capacity,
                  const InetAddr& client, uint16_t cport_be) noexcept {
    if (pkt_len >= 1 && ip_hdr[0] >> 4 == 6)
        return mode == UoaMode::Opp
                   ? uoa_opp_insert_ipv6(ip_hdr, pkt_len, capacity, client, cport_be)
                   : 0;
    return mode == UoaMode::Ipo ? uoa_ipo_insert(ip_hdr, pkt_len, capacity, client, cport_be)
                                : uoa_opp_insert(ip_hdr, pkt_len, capacity, client, cport_be);
}

size_t uoa_insert(UoaMode mode, uint8_t* ip_hdr, size_t pkt_len, size_t capacity,
                  uint32_t client_be, uint16_t cport_be) noexcept {
    return mode == UoaMode::Ipo ? uoa_ipo_insert(ip_hdr, pkt_len, capacity, client_be, cport_be)
                                : uoa_opp_insert(ip_hdr, pkt_len, capacity, client_be, cport_be);
}

namespace {

// The IPv4/UDP datagram without payload, before any UOA: kEmptyV4 bytes at out.
constexpr size_t kEmptyV4 = sizeof(Ipv4Hdr) + sizeof(UdpHdr);
void empty_v4_build(uint8_t* out, uint32_t saddr_be, uint32_t daddr_be, uint16_t sport_be,
                    uint16_t dport_be, uint16_t ip_id_be, uint8_t ttl) {
    auto* ip = reinterpret_cast<Ipv4Hdr*>(out);
    *ip = Ipv4Hdr{};
    ip->version_ihl = 0x45;
    ip->total_length = hton16(kEmptyV4);
    ip->id = ip_id_be;
    ip->ttl = ttl;
    ip->protocol = kIpProtoUdp;
    ip->saddr = saddr_be;
    ip->daddr = daddr_be;

    auto* udp = reinterpret_cast<UdpHdr*>(out + sizeof(Ipv4Hdr));
    udp->sport = sport_be;
    udp->dport = dport_be;
    udp->length = hton16(sizeof(UdpHdr));
    udp->checksum = 0;
    uint16_t csum = ipv4_l4_checksum(saddr_be, daddr_be, kIpProtoUdp, udp, sizeof(UdpHdr));
    udp->checksum = csum == 0 ? 0xffff : csum;
}

}  // namespace

size_t uoa_empty_datagram_build(uint8_t* out, size_t cap, UoaMode mode,
                                const UoaFlow& flow) noexcept {
    if (cap < kEmptyV4 + uoa_insert_len(mode)) return 0;
    empty_v4_build(out, flow.saddr_be, flow.daddr_be, flow.sport_be, flow.dport_be, flow.ip_id_be,
                   flow.ttl);
    return uoa_insert(mode, out, kEmptyV4, cap, flow.client_be, flow.cport_be);
}

size_t uoa_empty_datagram_build(uint8_t* out, size_t cap, UoaMode mode,
                                const UoaFlowInet& flow) noexcept {
    if (flow.saddr.is_v4() != flow.daddr.is_v4()) return 0;
    if (flow.saddr.is_v4()) {
        if (cap < kEmptyV4 + uoa_insert_len(mode, flow.client)) return 0;
        empty_v4_build(out, flow.saddr.v4_be(), flow.daddr.v4_be(), flow.sport_be, flow.dport_be,
                       flow.ip_id_be, flow.ttl);
        return uoa_insert(mode, out, kEmptyV4, cap, flow.client, flow.cport_be);
    }
    constexpr size_t kBase6 = kIpv6HdrLen + sizeof(UdpHdr);
    if (mode != UoaMode::Opp || cap < kBase6 + uoa_insert_len(mode, flow.client)) return 0;
    std::memset(out, 0, kBase6);
    out[0] = 0x60;
    store_be16(out + kIpv6PayloadLenOff, sizeof(UdpHdr));
    out[kIpv6NextHeaderOff] = kIpProtoUdp;
    out[7] = flow.ttl;
    std::memcpy(out + 8, flow.saddr.b, 16);
    std::memcpy(out + 24, flow.daddr.b, 16);
    uint8_t* udp = out + kIpv6HdrLen;
    std::memcpy(udp, &flow.sport_be, 2);
    std::memcpy(udp + 2, &flow.dport_be, 2);
    store_be16(udp + 4, sizeof(UdpHdr));
    const uint16_t csum = udp6_checksum(out, udp, sizeof(UdpHdr));
    const uint16_t stored = csum == 0 ? 0xffff : csum;
    std::memcpy(udp + 6, &stored, 2);
    return uoa_opp_insert_ipv6(out, kBase6, cap, flow.client, flow.cport_be);
}

}  // namespace xvs::net
