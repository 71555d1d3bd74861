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

void icmp_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt, const Ipv4View& v) {
    if (v.l4_len < sizeof(net::IcmpHdr) || net::csum_fold(net::csum_partial(v.l4, v.l4_len, 0))) {
        drop(ctx, pkt, Counter::drop_icmp_malformed);
        return;
    }
    if (ctx.view->is_own(net::Af4::src(*v.ip))) {
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
