// IPv4 input checks and ICMP echo. Echo replies go back out of the receiving port to the
// requester's MAC (no route lookup): a director answers pings the way they arrived.
#include "stack/ipv4.h"

#include <rte_mbuf.h>

#include "net/af.h"
#include "net/byteorder.h"
#include "net/checksum.h"
#include "stack/fragment.h"
#include "stack/output.h"

namespace xvs::stack {

bool ipv4_source_martian(uint32_t saddr_be) {
    const uint32_t first = net::ntoh32(saddr_be) >> 24;
    return first == 0 || first == 127 || first >= 224;  // 0/8, loopback, 224/4, 240/4
}

bool source_own(const StackView& view, const net::InetAddr& saddr) {
    return view.own(saddr) != nullptr;
}

bool ipv4_validate(StackContext& ctx, rte_mbuf*& pkt, Ipv4View& out) {
    const uint32_t frame = rte_pktmbuf_data_len(pkt);
    if (frame < sizeof(net::EtherHdr) + sizeof(net::Ipv4Hdr)) {
        drop(ctx, pkt, Counter::drop_frame_truncated);
        pkt = nullptr;
        return false;
    }
    auto* ip = rte_pktmbuf_mtod_offset(pkt, net::Ipv4Hdr*, sizeof(net::EtherHdr));
    uint32_t avail = frame - sizeof(net::EtherHdr);
    if (ip->version() != 4) {
        drop(ctx, pkt, Counter::drop_ip_version);
        pkt = nullptr;
        return false;
    }
    uint32_t hlen = ip->header_len();
    if (hlen < sizeof(net::Ipv4Hdr) || hlen > avail) {
        drop(ctx, pkt, Counter::drop_ip_header_len);
        pkt = nullptr;
        return false;
    }
    uint32_t total = net::ntoh16(ip->total_length);
    if (total < hlen || total > avail) {
        drop(ctx, pkt, Counter::drop_ip_total_len);
        pkt = nullptr;
        return false;
    }
    if (!(pkt->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_GOOD) &&
        net::csum_fold(hlen == sizeof(net::Ipv4Hdr) ? net::csum_partial20(ip)
                                                    : net::csum_partial(ip, hlen, 0)) != 0) {
        drop(ctx, pkt, Counter::drop_ip_checksum);
        pkt = nullptr;
        return false;
    }
    if (ip->ttl == 0) {
        drop(ctx, pkt, Counter::drop_ip_ttl);
        pkt = nullptr;
        return false;
    }
    // RFC 1122 3.3.6: a datagram for a unicast address that came in a link-layer broadcast
    // is discarded (all of ours are unicast; we have no broadcast or multicast listeners).
    if (rte_pktmbuf_mtod(pkt, const net::EtherHdr*)->dst.is_broadcast()) {
        drop(ctx, pkt, Counter::drop_l2_broadcast_ip);
        pkt = nullptr;
        return false;
    }
    // RFC 1812 5.3.7 martian sources, dropped before any state. (Our own addresses as a
    // source are refused where state would start, lb's no-conn path and ICMP: a hash lookup
    // per packet here cost the established path ~4 ns, and no conn can match such a source.)
    if (ipv4_source_martian(ip->saddr)) {
        drop(ctx, pkt, Counter::drop_martian_source);
        pkt = nullptr;
        return false;
    }
    if (ip->is_fragment()) {
        // Reassembled here (stack/fragment.h); the whole datagram goes on as one packet.
        pkt = ipv4_reassemble(ctx, pkt, ip, hlen, total);
        if (!pkt) return false;
        ip = rte_pktmbuf_mtod_offset(pkt, net::Ipv4Hdr*, sizeof(net::EtherHdr));
        hlen = ip->header_len();  // the first fragment's: later ones may carry fewer options
        avail = total = net::ntoh16(ip->total_length);
    }
    if (total < avail) rte_pktmbuf_trim(pkt, static_cast<uint16_t>(avail - total));  // padding
    out.ip = ip;
    out.l4 = reinterpret_cast<uint8_t*>(ip) + hlen;
    out.l4_len = static_cast<uint16_t>(total - hlen);
    return true;
}

void icmp_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt, const Ipv4View& v) {
    if (v.l4_len < sizeof(net::IcmpHdr) || net::csum_fold(net::csum_partial(v.l4, v.l4_len, 0))) {
        drop(ctx, pkt, Counter::drop_icmp_malformed);
        return;
    }
    if (source_own(*ctx.view, net::Af4::src(*v.ip))) {
        drop(ctx, pkt, Counter::drop_martian_source);
        return;
    }
    auto* icmp = reinterpret_cast<net::IcmpHdr*>(v.l4);
    if (icmp->type != net::kIcmpEchoRequest || icmp->code != 0) {
        drop(ctx, pkt, Counter::drop_icmp_unhandled);
        return;
    }
    // type/code share one 16-bit word: 0x0800 -> 0x0000.
    net::csum_replace2(&icmp->checksum, net::hton16(net::kIcmpEchoRequest << 8),
                       net::hton16(net::kIcmpEchoReply << 8));
    icmp->type = net::kIcmpEchoReply;

    net::Ipv4Hdr* ip = v.ip;
    const uint32_t saddr = ip->saddr;  // swapping is order-independent for the checksum
    ip->saddr = ip->daddr;
    ip->daddr = saddr;
    // TTL and protocol share one 16-bit checksum word.
    const uint16_t old_ttl_word = net::load_wire16(&ip->ttl);
    ip->ttl = 64;
    net::csum_replace2(&ip->checksum, old_ttl_word, net::load_wire16(&ip->ttl));

    const net::MacAddr requester = rte_pktmbuf_mtod(pkt, net::EtherHdr*)->src;
    ctx.counters.inc(Counter::icmp_echo_replies);
    ether_send(ctx, pkt, port, requester);  // a reassembled echo goes back in fragments
}

}  // namespace xvs::stack
