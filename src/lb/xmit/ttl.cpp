// TTL decrement of forwarded packets, see lb/xmit/ttl.h.
#include "lb/xmit/ttl.h"

#include <rte_mbuf.h>

#include "lb/worker_ctx.h"
#include "net/checksum.h"

namespace xvs::lb {

bool ttl_decrement(WorkerCtx& w, LbPacket& lp) {
    net::Ipv4Hdr* ip = lp.ip;
    if (ip->ttl <= 1) {
        w.stack.counters.inc(stack::Counter::drop_ttl_expired);
        rte_pktmbuf_free(lp.pkt);
        return false;
    }
    // TTL and protocol share a 16-bit word of the header checksum.
    const uint16_t old_word = net::hton16(uint16_t(ip->ttl << 8 | ip->protocol));
    --ip->ttl;
    net::csum_replace2(&ip->checksum, old_word, net::hton16(uint16_t(ip->ttl << 8 | ip->protocol)));
    return true;
}

}  // namespace xvs::lb
