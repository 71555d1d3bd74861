// SYN proxy header work: option blocks for the cookie SYN-ACK and the RS SYN, and the
// per-packet seq/SACK/timestamp/window translation (see synproxy.h for the invariant).
#include "lb/synproxy/synproxy.h"

#include <algorithm>
#include <cstring>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/tcp_options.h"

namespace xvs::lb {

namespace {

// Common layout of both option blocks (the order Linux uses, so middleboxes see nothing odd):
// MSS; SACK-perm+TS, or NOP NOP TS, or NOP NOP SACK-perm; NOP wscale. Every piece is a whole
// 32-bit word, so each is one big-endian store (this runs for every cookie SYN-ACK and RS SYN).
size_t write_options(uint8_t* out, uint16_t mss, bool sack, bool ts, uint32_t tsval, uint32_t tsecr,
                     uint8_t wscale, bool has_wscale) {
    auto word = [](uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
        return uint32_t(a) << 24 | uint32_t(b) << 16 | uint32_t(c) << 8 | d;
    };
    net::store_be32(out, word(net::kTcpOptMss, net::kTcpOptLenMss, static_cast<uint8_t>(mss >> 8),
                              static_cast<uint8_t>(mss)));
    size_t n = 4;
    if (ts) {
        const uint32_t lead = sack ? word(net::kTcpOptSackPerm, net::kTcpOptLenSackPerm,
                                          net::kTcpOptTimestamp, net::kTcpOptLenTimestamp)
                                   : word(net::kTcpOptNop, net::kTcpOptNop, net::kTcpOptTimestamp,
                                          net::kTcpOptLenTimestamp);
        net::store_be32(out + n, lead);
        net::store_be32(out + n + 4, tsval);
        net::store_be32(out + n + 8, tsecr);
        n += 12;
    } else if (sack) {
        net::store_be32(out + n, word(net::kTcpOptNop, net::kTcpOptNop, net::kTcpOptSackPerm,
                                      net::kTcpOptLenSackPerm));
        n += 4;
    }
    if (has_wscale) {
        net::store_be32(out + n,
                        word(net::kTcpOptNop, net::kTcpOptWscale, net::kTcpOptLenWscale, wscale));
        n += 4;
    }
    return n;
}

// Rewrites n bytes at `off` of an area that starts at an even offset of the checksummed data
// and updates *csum over the 16-bit words they touch, so odd offsets are handled too.
void patch(std::span<uint8_t> area, size_t off, const uint8_t* src, size_t n, uint16_t* csum) {
    const size_t start = off & ~size_t(1);
    const size_t end = std::min(area.size(), (off + n + 1) & ~size_t(1));
    const uint32_t old_sum = net::csum_partial(area.data() + start, end - start, 0);
    std::memcpy(area.data() + off, src, n);
    if (!csum) return;
    const uint32_t new_sum = net::csum_partial(area.data() + start, end - start, 0);
    uint32_t sum = static_cast<uint16_t>(~*csum);
    sum += static_cast<uint16_t>(net::csum_fold(old_sum));  // = ~fold(old): subtracts old
    sum += static_cast<uint16_t>(~net::csum_fold(new_sum));
    *csum = net::csum_fold(sum);
}

}  // namespace

uint16_t synproxy_synack_window(const SynProxyConf& conf, uint16_t mss) {
    if (!conf.defer_rs_syn) return 0;
    return static_cast<uint16_t>(std::min<uint32_t>(0xFFFF, uint32_t(conf.max_ack_saved) * mss));
}

SynAckPlan synproxy_plan_synack(std::span<const uint8_t> syn_opts, const SynProxyConf& conf,
                                uint16_t mss_reserve) {
    const net::ParsedTcpOptions p = net::parse_tcp_options(syn_opts);
    SynAckPlan plan;
    const uint16_t client_mss = p.mss.value_or(536);  // RFC 9293: 536 when absent
    plan.cookie.mss_index = net::cookie_mss_index(client_mss);
    uint16_t mss = std::min(client_mss, conf.mss);
    if (mss > mss_reserve + 64) mss = static_cast<uint16_t>(mss - mss_reserve);
    plan.mss = mss;
    plan.sack = p.sack_perm && conf.sack;
    plan.timestamps = p.timestamp.has_value() && conf.timestamp;
    if (plan.timestamps) plan.client_tsval = p.timestamp->first;
    if (p.wscale && conf.wscale != kSynProxyNoWscale) {
        plan.cookie.wscale = std::min<uint8_t>(*p.wscale, 14);  // RFC 7323 §2.3
        plan.our_wscale = conf.wscale;
    }
    plan.cookie.sack_permitted = plan.sack;
    plan.cookie.timestamps = plan.timestamps;
    return plan;
}

size_t synproxy_write_synack_options(uint8_t* out, const SynAckPlan& plan, uint32_t our_tsval) {
    return write_options(out, plan.mss, plan.sack, plan.timestamps, our_tsval, plan.client_tsval,
                         plan.our_wscale, plan.our_wscale != kSynProxyNoWscale);
}

size_t synproxy_write_rs_syn_options(uint8_t* out, const net::CookieOptions& o,
                                     uint32_t client_tsval, uint16_t mss_less) {
    const uint16_t mss = static_cast<uint16_t>(net::kCookieMssTable[o.mss_index & 3] - mss_less);
    return write_options(out, mss, o.sack_permitted, o.timestamps, client_tsval, 0, o.wscale,
                         o.wscale != net::kCookieWscaleNone);
}

bool tcp_ts_adjust(std::span<uint8_t> opts, int which, uint32_t delta, uint16_t* csum) {
    net::TcpOptionWalker walker(opts);
    net::TcpOption o;
    while (walker.next(o)) {
        if (o.kind != net::kTcpOptTimestamp || o.len != net::kTcpOptLenTimestamp) continue;
        const size_t off = o.offset + 2 + (which ? 4 : 0);
        uint8_t v[4];
        net::store_be32(v, net::load_be32(opts.data() + off) + delta);
        patch(opts, off, v, 4, csum);
        return true;
    }
    return false;
}

void synproxy_translate_in(net::TcpHdr* tcp, size_t avail, const SynProxySeq& s) {
    if (tcp->flags & net::kTcpAck) {
        const uint32_t be = net::hton32(net::ntoh32(tcp->ack) - s.seq_delta);
        net::csum_replace4(&tcp->checksum, tcp->ack, be);
        tcp->ack = be;
    }
    auto opts = net::tcp_options_span(tcp, avail);
    if (opts.empty()) return;
    net::tcp_sack_blocks_adjust(opts, -static_cast<int32_t>(s.seq_delta), &tcp->checksum);
    if (s.ts_delta) tcp_ts_adjust(opts, 1, 0u - s.ts_delta, &tcp->checksum);
}

void synproxy_translate_out(net::TcpHdr* tcp, size_t avail, const SynProxySeq& s) {
    const uint32_t seq_be = net::hton32(net::ntoh32(tcp->seq) + s.seq_delta);
    net::csum_replace4(&tcp->checksum, tcp->seq, seq_be);
    tcp->seq = seq_be;
    if (s.rs_wscale != s.our_wscale && !(tcp->flags & net::kTcpSyn)) {
        const uint64_t bytes = uint64_t(net::ntoh16(tcp->window)) << s.rs_wscale;
        const uint16_t win =
            static_cast<uint16_t>(std::min<uint64_t>(0xFFFF, bytes >> s.our_wscale));
        const uint16_t be = net::hton16(win);
        net::csum_replace2(&tcp->checksum, tcp->window, be);
        tcp->window = be;
    }
    auto opts = net::tcp_options_span(tcp, avail);
    if (opts.empty()) return;
    if (s.ts_delta) tcp_ts_adjust(opts, 0, s.ts_delta, &tcp->checksum);
}

}  // namespace xvs::lb
