// bench/engine's yardsticks (reference.h).
#include "reference.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "net/byteorder.h"
#include "net/checksum.h"

namespace xvs::bench {

namespace {

constexpr unsigned kMaxBurst = 32;
constexpr size_t kEther = sizeof(net::EtherHdr);

}  // namespace

BareFullnat::BareFullnat(const char* name, size_t flows) {
    rte_hash_parameters p{};
    p.name = name;
    p.entries = static_cast<uint32_t>(std::max<size_t>(flows + flows / 4, 1024));
    p.key_len = sizeof(Key);
    p.hash_func = rte_hash_crc;
    p.socket_id = SOCKET_ID_ANY;
    hash_ = rte_hash_create(&p);
    if (!hash_) {
        std::fprintf(stderr, "rte_hash_create(%s, %u entries): %s\n", name, p.entries,
                     rte_strerror(rte_errno));
        std::exit(1);
    }
}

BareFullnat::~BareFullnat() {
    rte_hash_free(hash_);
}

void BareFullnat::add(uint8_t proto, uint32_t client, uint16_t cport, uint32_t vip, uint16_t vport,
                      uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport) {
    size_t rs = 0;
    while (rs < rs_.size() && !(rs_[rs].addr == rip && rs_[rs].port == rport)) ++rs;
    if (rs == rs_.size()) rs_.push_back(Rs{rip, rport});
    const Key k{client, vip, cport, vport, proto};
    const uint64_t word = uint64_t(lip) | uint64_t(lport) << 32 | uint64_t(rs) << 48;
    void* data = nullptr;
    std::memcpy(&data, &word, sizeof data);
    if (rs > 0xFFFF || rte_hash_add_key_data(hash_, &k, data) != 0) {
        std::fprintf(stderr, "BareFullnat: cannot add flow (%zu real servers)\n", rs_.size());
        std::exit(1);
    }
}

[[gnu::noinline]] void BareFullnat::process(rte_mbuf** pkts, unsigned n, uint16_t port) {
    n = std::min(n, kMaxBurst);
    Key keys[kMaxBurst];
    const void* key_ptrs[kMaxBurst];
    void* data[kMaxBurst];
    for (unsigned i = 0; i < n; ++i) {
        const auto* f = rte_pktmbuf_mtod(pkts[i], const uint8_t*);
        const auto* ip = reinterpret_cast<const net::Ipv4Hdr*>(f + kEther);
        const uint8_t* l4 = f + kEther + ip->header_len();
        keys[i] =
            Key{ip->saddr, ip->daddr, net::load_wire16(l4), net::load_wire16(l4 + 2), ip->protocol};
        key_ptrs[i] = &keys[i];
    }
    uint64_t hits = 0;
    rte_hash_lookup_bulk_data(hash_, key_ptrs, n, &hits, data);
    rte_mbuf* out[kMaxBurst];
    unsigned nout = 0;
    for (unsigned i = 0; i < n; ++i) {
        if (!(hits >> i & 1)) {
            ++missed_;
            rte_pktmbuf_free(pkts[i]);
            continue;
        }
        uint64_t word = 0;
        std::memcpy(&word, &data[i], sizeof word);
        const auto lip = static_cast<uint32_t>(word);
        const auto lport = static_cast<uint16_t>(word >> 32);
        const Rs& rs = rs_[word >> 48];
        auto* f = rte_pktmbuf_mtod(pkts[i], uint8_t*);
        auto* eth = reinterpret_cast<net::EtherHdr*>(f);
        auto* ip = reinterpret_cast<net::Ipv4Hdr*>(f + kEther);
        uint8_t* l4 = f + kEther + ip->header_len();
        // The ports lead TCP's and UDP's headers; the checksum is at 16 (TCP) or 6 (UDP, where
        // 0 means none and stays 0).
        const bool tcp = ip->protocol == net::kIpProtoTcp;
        auto* l4sum = reinterpret_cast<uint16_t*>(l4 + (tcp ? 16 : 6));
        // One delta for the addresses (IP and L4 pseudo-header), one more for the ports.
        const uint32_t addrs =
            net::csum_delta32(ip->saddr, lip) + net::csum_delta32(ip->daddr, rs.addr);
        ip->checksum = net::csum_fold(uint32_t(uint16_t(~ip->checksum)) + addrs);
        if (tcp || *l4sum != 0) {
            const uint32_t ports = net::csum_delta16(net::load_wire16(l4), lport) +
                                   net::csum_delta16(net::load_wire16(l4 + 2), rs.port);
            *l4sum = net::csum_fold(uint32_t(uint16_t(~*l4sum)) + addrs + ports);
            if (!tcp && *l4sum == 0) *l4sum = 0xFFFF;
        }
        ip->saddr = lip;
        ip->daddr = rs.addr;
        net::store_wire16(l4, lport);
        net::store_wire16(l4 + 2, rs.port);
        const net::MacAddr mac = eth->src;
        eth->src = eth->dst;
        eth->dst = mac;
        out[nout++] = pkts[i];
    }
    const uint16_t sent = rte_eth_tx_burst(port, 0, out, static_cast<uint16_t>(nout));
    if (sent < nout) rte_pktmbuf_free_bulk(out + sent, nout - sent);
}

[[gnu::noinline]] void BareSynCookie::process(rte_mbuf** pkts, unsigned n, uint16_t port,
                                              uint32_t count) {
    constexpr size_t kOpts = 20;
    n = std::min(n, kMaxBurst);
    rte_mbuf* out[kMaxBurst];
    unsigned nout = 0;
    for (unsigned i = 0; i < n; ++i) {
        auto* f = rte_pktmbuf_mtod(pkts[i], uint8_t*);
        auto* eth = reinterpret_cast<net::EtherHdr*>(f);
        auto* ip = reinterpret_cast<net::Ipv4Hdr*>(f + kEther);
        auto* tcp = reinterpret_cast<net::TcpHdr*>(f + kEther + sizeof(net::Ipv4Hdr));
        if (ip->protocol != net::kIpProtoTcp || tcp->flags != net::kTcpSyn ||
            tcp->header_len() != sizeof(net::TcpHdr) + kOpts) {
            ++missed_;
            rte_pktmbuf_free(pkts[i]);
            continue;
        }
        // The SYN proxy's own plan and option writer (lb/synproxy/synproxy.h), default settings:
        // for bench/engine's Linux SYN the SYN-ACK's options fill the SYN's 20 bytes again.
        uint8_t* opts = reinterpret_cast<uint8_t*>(tcp + 1);
        const lb::SynAckPlan plan = lb::synproxy_plan_synack({opts, kOpts}, conf_, 0);
        const uint32_t isn = net::ntoh32(tcp->seq);
        const uint32_t cookie = net::syncookie_make(
            secrets_, net::CookieTuple{ip->saddr, ip->daddr, tcp->sport, tcp->dport}, isn, count,
            plan.cookie);
        if (lb::synproxy_write_synack_options(opts, plan, count) != kOpts) {
            ++missed_;
            rte_pktmbuf_free(pkts[i]);
            continue;
        }
        const net::MacAddr mac = eth->src;
        eth->src = eth->dst;
        eth->dst = mac;
        const uint32_t client = ip->saddr;
        ip->saddr = ip->daddr;
        ip->daddr = client;
        ip->ttl = conf_.ttl;
        ip->id = 0;
        ip->checksum = 0;
        ip->checksum = net::csum_fold(net::csum_partial20(ip));
        const uint16_t cport = tcp->sport;
        tcp->sport = tcp->dport;
        tcp->dport = cport;
        tcp->seq = net::hton32(cookie);
        tcp->ack = net::hton32(isn + 1);
        tcp->flags = net::kTcpSyn | net::kTcpAck;
        tcp->window = net::hton16(lb::synproxy_synack_window(conf_, plan.mss));
        tcp->urg_ptr = 0;
        tcp->checksum = 0;
        tcp->checksum = net::ipv4_l4_checksum(ip->saddr, ip->daddr, net::kIpProtoTcp, tcp,
                                              sizeof(net::TcpHdr) + kOpts);
        out[nout++] = pkts[i];
    }
    const uint16_t sent = rte_eth_tx_burst(port, 0, out, static_cast<uint16_t>(nout));
    if (sent < nout) rte_pktmbuf_free_bulk(out + sent, nout - sent);
}

double random_line_floor(size_t lines, uint64_t packets) {
    struct alignas(64) Line {
        uint64_t w[8];
    };
    auto* buckets = static_cast<Line*>(rte_zmalloc("floor_buckets", lines * sizeof(Line), 64));
    auto* conns = static_cast<Line*>(rte_zmalloc("floor_conns", lines * sizeof(Line), 64));
    if (!buckets || !conns) {
        std::fprintf(stderr, "random_line_floor: no memory for 2 x %zu lines\n", lines);
        std::exit(1);
    }
    // Each bucket names an entry; a multiplicative hash spreads both levels over the tables.
    auto spread = [lines](uint64_t x) {
        return static_cast<uint32_t>((x * 0x9e3779b97f4a7c15ULL >> 17) % lines);
    };
    for (size_t i = 0; i < lines; ++i) buckets[i].w[0] = spread(i ^ 0x5bd1e995);
    uint32_t b[kMaxBurst];
    uint32_t c[kMaxBurst];
    uint64_t sum = 0;
    const uint64_t start = rte_rdtsc_precise();
    for (uint64_t done = 0; done < packets; done += kMaxBurst) {
        for (unsigned i = 0; i < kMaxBurst; ++i) {
            b[i] = spread(done + i);
            rte_prefetch0(&buckets[b[i]]);
        }
        for (unsigned i = 0; i < kMaxBurst; ++i) {
            c[i] = static_cast<uint32_t>(buckets[b[i]].w[0]);
            rte_prefetch0(&conns[c[i]]);
        }
        for (unsigned i = 0; i < kMaxBurst; ++i) {
            sum += conns[c[i]].w[1];
            ++conns[c[i]].w[2];
        }
    }
    const uint64_t cycles = rte_rdtsc_precise() - start;
    // Keeps the loads: their sum is stored where the compiler must leave it.
    volatile uint64_t sink = sum;
    (void)sink;
    rte_free(buckets);
    rte_free(conns);
    return double(cycles) * 1e9 / double(rte_get_tsc_hz()) / double(packets);
}

}  // namespace xvs::bench
