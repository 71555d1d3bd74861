// Fragment reassembly glue and IPv4 fragmentation on output (stack/fragment.h).
#include "stack/fragment.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "net/af.h"
#include "net/checksum.h"
#include "net/ipv4_frag.h"
#include "stack/context.h"
#include "stack/output.h"

namespace xvs::stack {

namespace {

constexpr uint16_t kIpv4MoreFragments = 0x2000;
constexpr uint16_t kIpv4OffsetMask = 0x1fff;

void ipv4_header_checksum(net::Ipv4Hdr* ip) {
    ip->checksum = 0;
    ip->checksum = net::csum_fold(net::csum_partial(ip, ip->header_len(), 0));
}

// The counter for the fragments a non-stored status drops.
Counter drop_reason(net::ReasmStatus s) {
    switch (s) {
        case net::ReasmStatus::Duplicate:
            return Counter::drop_frag_duplicate;
        case net::ReasmStatus::TableFull:
            return Counter::drop_frag_table_full;
        case net::ReasmStatus::NoBuffer:
            return Counter::drop_frag_no_buffer;
        case net::ReasmStatus::BadLength:
            return Counter::drop_frag_bad_length;
        case net::ReasmStatus::TooBig:
            return Counter::drop_frag_too_big;
        case net::ReasmStatus::TooManyFragments:
            return Counter::drop_frag_too_many;
        case net::ReasmStatus::Overlap:
            return Counter::drop_frag_overlap;
        default:
            return Counter::drop_ip_fragment;
    }
}

}  // namespace

uint32_t reasm_data_room(uint32_t max_datagram_size) {
    const uint32_t want =
        RTE_PKTMBUF_HEADROOM + kReasmHeaderRoom + max_datagram_size + kReasmTailRoom;
    return std::min<uint32_t>(want, UINT16_MAX);
}

uint32_t reasm_pool_size(const net::ReasmLimits& limits) {
    return limits.max_datagrams + std::max<uint32_t>(limits.max_datagrams, 64);
}

void fragments_init(Fragments& f, const FragConfig& cfg, rte_mempool* pool) {
    f.table = net::Reassembler(cfg.limits);
    f.pool = pool;
    f.max_datagram_size = cfg.max_datagram_size;
}

rte_mbuf* reassemble(StackContext& ctx, rte_mbuf* frag, const net::ReasmKey& key, uint32_t offset,
                     bool more, const uint8_t* payload, uint32_t len, const uint8_t* hdr,
                     uint32_t hdr_len, uint32_t max_payload, uint32_t& first_hdr_len) {
    Fragments& f = ctx.frag;
    if (!f.pool) {
        drop(ctx, frag, Counter::drop_ip_fragment);
        return nullptr;
    }
    if (hdr_len > kReasmHeaderRoom) {  // more extension headers than we keep room for
        drop(ctx, frag, Counter::drop_frag_too_big);
        return nullptr;
    }
    fragments_expire(ctx);
    auto alloc = [&]() -> net::ReasmBuffer {
        rte_mbuf* m = rte_pktmbuf_alloc(f.pool);
        if (!m) return {};
        auto* buf = rte_pktmbuf_mtod_offset(m, uint8_t*, kReasmHeaderRoom);
        const uint32_t room = m->buf_len - m->data_off;
        const uint32_t cap =
            room > kReasmHeaderRoom + kReasmTailRoom ? room - kReasmHeaderRoom - kReasmTailRoom : 0;
        return {buf, cap, m};
    };
    const net::ReasmResult r =
        f.table.add(key, offset, len, more, payload, max_payload, ctx.now_ms, alloc);
    if (r.status != net::ReasmStatus::Held && r.status != net::ReasmStatus::Complete) {
        ctx.counters.inc(drop_reason(r.status), 1 + r.freed_frags);
        if (r.freed_user) rte_pktmbuf_free(static_cast<rte_mbuf*>(r.freed_user));
        rte_pktmbuf_free(frag);
        return nullptr;
    }
    net::Reassembler::Datagram& d = f.table.datagram(r.slot);
    if (r.first) {  // its headers go right in front of the payload
        std::memcpy(d.buf - hdr_len, hdr, hdr_len);
        d.aux = static_cast<uint16_t>(hdr_len);
    }
    rte_pktmbuf_free(frag);
    if (r.status == net::ReasmStatus::Held) return nullptr;

    first_hdr_len = d.aux;
    const uint32_t frame_len = first_hdr_len + d.total;
    uint8_t* start = d.buf - first_hdr_len;
    ctx.counters.inc(Counter::frag_merged, d.nfrags);
    ctx.counters.inc(Counter::frag_reassembled);
    ctx.counters.inc(Counter::frames_generated);
    auto* m = static_cast<rte_mbuf*>(f.table.take(r.slot));
    m->data_off = static_cast<uint16_t>(start - static_cast<uint8_t*>(m->buf_addr));
    m->data_len = static_cast<uint16_t>(frame_len);
    m->pkt_len = frame_len;
    return m;
}

rte_mbuf* ipv4_reassemble(StackContext& ctx, rte_mbuf* frag, const net::Ipv4Hdr* ip, uint32_t hlen,
                          uint32_t total_len) {
    const uint16_t fo = net::ntoh16(ip->frag_off);
    net::ReasmKey key;
    key.src = net::Af4::src(*ip);
    key.dst = net::Af4::dst(*ip);
    key.id = ip->id;
    key.proto = ip->protocol;
    const uint32_t offset = static_cast<uint32_t>(fo & kIpv4OffsetMask) * 8;
    // RFC 791: total length counts the header; a datagram is at most 65535 bytes (and our
    // large mbufs may hold less: max_datagram_size).
    const uint32_t max_payload = std::min<uint32_t>(ctx.frag.max_datagram_size, UINT16_MAX) - hlen;
    uint32_t first_hdr = 0;
    rte_mbuf* m = reassemble(ctx, frag, key, offset, fo & kIpv4MoreFragments,
                             reinterpret_cast<const uint8_t*>(ip) + hlen, total_len - hlen,
                             rte_pktmbuf_mtod(frag, const uint8_t*), sizeof(net::EtherHdr) + hlen,
                             max_payload, first_hdr);
    if (!m) return nullptr;
    auto* whole = rte_pktmbuf_mtod_offset(m, net::Ipv4Hdr*, sizeof(net::EtherHdr));
    whole->total_length =
        net::hton16(static_cast<uint16_t>(rte_pktmbuf_data_len(m) - sizeof(net::EtherHdr)));
    whole->frag_off &= net::hton16(static_cast<uint16_t>(~(kIpv4MoreFragments | kIpv4OffsetMask)));
    ipv4_header_checksum(whole);
    return m;
}

void fragments_expire(StackContext& ctx) {
    ctx.frag.table.expire(ctx.now_ms, [&](void* user, uint32_t nfrags) {
        ctx.counters.inc(Counter::drop_frag_timeout, nfrags);
        rte_pktmbuf_free(static_cast<rte_mbuf*>(user));
    });
}

void fragments_release(StackContext& ctx) {
    ctx.frag.table.release_all([&](void* user, uint32_t nfrags) {
        ctx.counters.inc(Counter::drop_frag_timeout, nfrags);
        rte_pktmbuf_free(static_cast<rte_mbuf*>(user));
    });
}

uint64_t fragments_held(const StackContext& ctx) {
    return ctx.frag.table.held_fragments();
}

uint32_t fragments_buffers(const StackContext& ctx) {
    return ctx.frag.table.in_flight();
}

namespace {

// The n mbufs for the pieces of pkt, counted (frames_generated, frag_split, frag_created); on
// failure pkt is freed under drop_frame_too_big (!ok: it cannot be cut) or drop_mbuf_alloc.
bool pieces_alloc(StackContext& ctx, rte_mbuf* pkt, bool ok, rte_mbuf** frags, uint32_t n) {
    if (!ok) {
        drop(ctx, pkt, Counter::drop_frame_too_big);
        return false;
    }
    if (rte_pktmbuf_alloc_bulk(ctx.pool, frags, n) != 0) {
        drop(ctx, pkt, Counter::drop_mbuf_alloc);
        return false;
    }
    ctx.counters.inc(Counter::frames_generated, n);
    ctx.counters.inc(Counter::frag_split);
    ctx.counters.inc(Counter::frag_created, n);
    return true;
}

}  // namespace

void ipv4_fragment_send(StackContext& ctx, rte_mbuf* pkt, uint8_t port, const net::MacAddr& dst,
                        uint32_t mtu) {
    const auto* frame = rte_pktmbuf_mtod(pkt, const uint8_t*);
    const auto* ip = reinterpret_cast<const net::Ipv4Hdr*>(frame + sizeof(net::EtherHdr));
    const uint32_t hlen = ip->header_len();
    const uint32_t total = net::ntoh16(ip->total_length);
    const uint16_t fo = net::ntoh16(ip->frag_off);
    // Later fragments carry only the copied options (RFC 791 3.2).
    uint8_t later_hdr[60];
    std::memcpy(later_hdr, ip, sizeof(net::Ipv4Hdr));
    const uint32_t later_hlen = static_cast<uint32_t>(
        sizeof(net::Ipv4Hdr) +
        net::ipv4_copied_options(reinterpret_cast<const uint8_t*>(ip) + sizeof(net::Ipv4Hdr),
                                 hlen - sizeof(net::Ipv4Hdr), later_hdr + sizeof(net::Ipv4Hdr)));
    later_hdr[0] = static_cast<uint8_t>(0x40 | later_hlen / 4);
    const uint32_t first_chunk = net::ipv4_fragment_payload(mtu, hlen);
    const uint32_t chunk = net::ipv4_fragment_payload(mtu, later_hlen);
    const uint32_t payload = total - hlen;
    constexpr uint32_t kMaxPieces = 64;  // 64 KB at MTU 1280; an MTU below ~1100 may not do
    const uint32_t n =
        first_chunk == 0 || chunk == 0
            ? kMaxPieces + 1
            : (payload <= first_chunk ? 1 : 1 + (payload - first_chunk + chunk - 1) / chunk);
    rte_mbuf* frags[kMaxPieces];
    if (!pieces_alloc(ctx, pkt,
                      n <= kMaxPieces && total + sizeof(net::EtherHdr) <= rte_pktmbuf_data_len(pkt),
                      frags, n))
        return;
    const net::MacAddr src = ctx.view->ports[port].mac;
    uint32_t off = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const bool first = i == 0;
        const uint32_t h = first ? hlen : later_hlen;
        const uint32_t len = std::min(payload - off, first ? first_chunk : chunk);
        const bool last = off + len == payload;
        rte_mbuf* m = frags[i];
        auto* out = reinterpret_cast<uint8_t*>(
            rte_pktmbuf_append(m, static_cast<uint16_t>(sizeof(net::EtherHdr) + h + len)));
        auto* eth = reinterpret_cast<net::EtherHdr*>(out);
        eth->dst = dst;
        eth->src = src;
        eth->ether_type = net::hton16(net::kEtherTypeIpv4);
        auto* fip = reinterpret_cast<net::Ipv4Hdr*>(out + sizeof(net::EtherHdr));
        std::memcpy(fip, first ? reinterpret_cast<const uint8_t*>(ip) : later_hdr, h);
        std::memcpy(out + sizeof(net::EtherHdr) + h,
                    reinterpret_cast<const uint8_t*>(ip) + hlen + off, len);
        fip->total_length = net::hton16(static_cast<uint16_t>(h + len));
        // Offsets add to the packet's own (it may itself be a fragment); MF on all but the
        // last piece, and on that too when the packet had it.
        const uint16_t foff = static_cast<uint16_t>((fo & kIpv4OffsetMask) + off / 8);
        const uint16_t mf = (!last || (fo & kIpv4MoreFragments)) ? kIpv4MoreFragments : 0;
        fip->frag_off = net::hton16(static_cast<uint16_t>((fo & 0x8000) | mf | foff));
        ipv4_header_checksum(fip);
        ctx.tx.enqueue(port, m, ctx.counters);
        off += len;
    }
    rte_pktmbuf_free(pkt);
}

void ipv6_fragment_send(StackContext& ctx, rte_mbuf* pkt, uint8_t port, const net::MacAddr& dst,
                        uint32_t mtu) {
    const auto* frame = rte_pktmbuf_mtod(pkt, const uint8_t*);
    const auto* ip = reinterpret_cast<const net::Ipv6Hdr*>(frame + sizeof(net::EtherHdr));
    const uint32_t payload = net::ntoh16(ip->payload_len);
    constexpr uint32_t kHdr = sizeof(net::Ipv6Hdr), kFh = sizeof(net::Ipv6FragHdr);
    const uint32_t chunk = mtu > kHdr + kFh ? (mtu - kHdr - kFh) & ~7u : 0;
    constexpr uint32_t kMaxPieces = 64;
    const uint32_t n = chunk == 0 ? kMaxPieces + 1 : (payload + chunk - 1) / chunk;
    const bool fragmentable = ip->next_header != net::kIp6ExtHopByHop &&
                              ip->next_header != net::kIp6ExtRouting &&
                              ip->next_header != net::kIp6ExtFragment;
    rte_mbuf* frags[kMaxPieces];
    if (!pieces_alloc(ctx, pkt,
                      n <= kMaxPieces && fragmentable &&
                          kHdr + payload + sizeof(net::EtherHdr) <= rte_pktmbuf_data_len(pkt),
                      frags, n))
        return;
    const net::MacAddr src = ctx.view->ports[port].mac;
    const uint32_t id = net::hton32(++ctx.frag.next_id6);
    const auto* body = reinterpret_cast<const uint8_t*>(ip) + kHdr;
    uint32_t off = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t len = std::min(payload - off, chunk);
        const bool last = off + len == payload;
        rte_mbuf* m = frags[i];
        auto* out = reinterpret_cast<uint8_t*>(
            rte_pktmbuf_append(m, static_cast<uint16_t>(sizeof(net::EtherHdr) + kHdr + kFh + len)));
        auto* eth = reinterpret_cast<net::EtherHdr*>(out);
        eth->dst = dst;
        eth->src = src;
        eth->ether_type = net::hton16(net::kEtherTypeIpv6);
        auto* fip = reinterpret_cast<net::Ipv6Hdr*>(out + sizeof(net::EtherHdr));
        std::memcpy(fip, ip, kHdr);
        fip->payload_len = net::hton16(static_cast<uint16_t>(kFh + len));
        fip->next_header = net::kIp6ExtFragment;
        uint8_t* fh = out + sizeof(net::EtherHdr) + kHdr;
        fh[0] = ip->next_header;
        fh[1] = 0;
        net::store_be16(fh + 2, static_cast<uint16_t>(off | (last ? 0 : 1)));
        std::memcpy(fh + 4, &id, 4);
        std::memcpy(fh + kFh, body + off, len);
        ctx.tx.enqueue(port, m, ctx.counters);
        off += len;
    }
    rte_pktmbuf_free(pkt);
}

}  // namespace xvs::stack
