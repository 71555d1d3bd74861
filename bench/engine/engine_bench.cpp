// bench/engine: the real worker pipeline (Worker::process_burst -> FULLNAT -> TX to net_null
// ports) fed in-memory bursts on one pinned core, next to a MAC-swap baseline measured in the
// same run. Both sides pay the same per-packet harness cost (mbuf alloc, 64-byte template copy,
// address patch, TX burst), so the ratio isolates xvs's work.
//
//   bench_engine [--quick] [--huge]
//     --quick  smaller tables and fewer packets, for smoke runs
//     --huge   EAL on hugepages (--in-memory); bench/engine/run.sh reserves them
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lb/director.h"
#include "lb/match.h"
#include "lb/service.h"
#include "lb/worker.h"
#include "net/checksum.h"
#include "net/syncookie.h"
#include "port/eal.h"
#include "port/ethdev.h"
#include "reference.h"
#include "stack/fragment.h"

using namespace xvs;

namespace {

constexpr unsigned kBurst = 32;

struct Env {
    rte_mempool* pool = nullptr;
    rte_mempool* reasm_pool = nullptr;  // large mbufs for reassembled datagrams
    port::PortInfo wan, lan;
};

struct Template {
    uint8_t bytes[96];
    uint16_t len;
};

// A 64-byte frame (60 + pad) with the given addresses; TCP ACK or UDP.
Template make_frame(const net::MacAddr& src, const net::MacAddr& dst, uint32_t saddr,
                    uint32_t daddr, uint16_t sport, uint16_t dport, uint8_t proto, uint8_t flags) {
    Template t{};
    auto* eth = reinterpret_cast<net::EtherHdr*>(t.bytes);
    eth->src = src;
    eth->dst = dst;
    eth->ether_type = net::hton16(net::kEtherTypeIpv4);
    auto* ip = reinterpret_cast<net::Ipv4Hdr*>(eth + 1);
    uint16_t l4len = proto == net::kIpProtoTcp ? 20 + 6 : 8 + 18;
    ip->version_ihl = 0x45;
    ip->total_length = net::hton16(20 + l4len);
    ip->ttl = 64;
    ip->protocol = proto;
    ip->saddr = saddr;
    ip->daddr = daddr;
    ip->checksum = net::csum_fold(net::csum_partial(ip, 20, 0));
    uint8_t* l4 = reinterpret_cast<uint8_t*>(ip + 1);
    if (proto == net::kIpProtoTcp) {
        auto* tcp = reinterpret_cast<net::TcpHdr*>(l4);
        tcp->sport = net::hton16(sport);
        tcp->dport = net::hton16(dport);
        tcp->seq = net::hton32(1);
        tcp->ack = net::hton32(1);
        tcp->data_off = 5 << 4;
        tcp->flags = flags;
        tcp->window = net::hton16(1000);
        tcp->checksum = net::ipv4_l4_checksum(saddr, daddr, proto, l4, l4len);
    } else {
        auto* udp = reinterpret_cast<net::UdpHdr*>(l4);
        udp->sport = net::hton16(sport);
        udp->dport = net::hton16(dport);
        udp->length = net::hton16(l4len);
        udp->checksum = net::ipv4_l4_checksum(saddr, daddr, proto, l4, l4len);
    }
    t.len = static_cast<uint16_t>(14 + 20 + l4len);
    return t;
}

// Writes saddr/sport into a frame copy, fixing both checksums incrementally (same cost in
// every scenario, including the baseline).
inline void patch_source(uint8_t* f, uint32_t saddr, uint16_t sport_be) {
    auto* ip = reinterpret_cast<net::Ipv4Hdr*>(f + 14);
    uint8_t* l4 = f + 34;
    uint16_t* l4csum = ip->protocol == net::kIpProtoTcp
                           ? &reinterpret_cast<net::TcpHdr*>(l4)->checksum
                           : &reinterpret_cast<net::UdpHdr*>(l4)->checksum;
    net::csum_replace4(&ip->checksum, ip->saddr, saddr);
    net::csum_replace4(l4csum, ip->saddr, saddr);
    net::csum_replace2(l4csum, net::load_wire16(l4), sport_be);  // sport leads TCP and UDP
    ip->saddr = saddr;
    net::store_wire16(l4, sport_be);
}

struct FlowSrc {
    uint32_t saddr;     // network order
    uint16_t sport;     // network order
};

struct Figures {
    double ns_per_pkt;
    double mpps;
};

// Runs `packets` packets in bursts. fill(i, frame) prepares frame i; process(burst) consumes.
template <typename Fill, typename Process>
Figures run(Env& env, uint64_t packets, const Template& tpl, Fill&& fill, Process&& process) {
    rte_mbuf* burst[kBurst];
    uint64_t start = rte_rdtsc_precise();
    for (uint64_t done = 0; done < packets; done += kBurst) {
        if (rte_pktmbuf_alloc_bulk(env.pool, burst, kBurst) != 0) {
            std::fprintf(stderr, "mbuf pool empty\n");
            std::exit(1);
        }
        for (unsigned i = 0; i < kBurst; ++i) {
            uint8_t* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(burst[i], tpl.len));
            if (tpl.len <= 64)
                std::memcpy(d, tpl.bytes, 64);
            else
                std::memcpy(d, tpl.bytes, 96);
            fill(done + i, d);
        }
        process(burst);
    }
    uint64_t cycles = rte_rdtsc_precise() - start;
    double ns = double(cycles) * 1e9 / double(rte_get_tsc_hz()) / double(packets);
    return Figures{ns, 1e3 / ns};
}

void print_row(const char* name, uint64_t conns, const Figures& r, const Figures& base,
               double bytes_per_conn) {
    std::printf("%-34s %9llu %8.2f %8.1f %8.1f %7.2fx", name, (unsigned long long)conns, r.mpps,
                r.ns_per_pkt, r.ns_per_pkt - base.ns_per_pkt, r.ns_per_pkt / base.ns_per_pkt);
    if (bytes_per_conn > 0) std::printf(" %8.0f", bytes_per_conn);
    std::printf("\n");
    std::fflush(stdout);
}

// The baseline's work on a burst: swap each frame's MACs, send the burst by lan.
void macswap_tx(Env& env, rte_mbuf** b) {
    for (unsigned i = 0; i < kBurst; ++i) {
        auto* eth = rte_pktmbuf_mtod(b[i], net::EtherHdr*);
        net::MacAddr tmp = eth->src;
        eth->src = eth->dst;
        eth->dst = tmp;
    }
    uint16_t sent = rte_eth_tx_burst(env.lan.id, 0, b, kBurst);
    if (sent < kBurst) rte_pktmbuf_free_bulk(b + sent, kBurst - sent);
}

// Packet i's flow in the random rows: (i * 7919) % n, a new line of the flow array for every
// packet (the other rows take flow i % n).
size_t random_index(uint64_t i, size_t n) {
    return (i * 7919) % n;
}

// The MAC-swap baseline over `flows`, read in order or in the random rows' order: the harness
// pays for each packet's read of its flow, so a row's baseline reads them as the row does.
Figures baseline(Env& env, uint64_t packets, const Template& tpl, const std::vector<FlowSrc>& flows,
                 bool random = false) {
    return run(
        env, packets, tpl,
        [&](uint64_t i, uint8_t* f) {
            const FlowSrc& s = flows[random ? random_index(i, flows.size()) : i % flows.size()];
            patch_source(f, s.saddr, s.sport);
        },
        [&](rte_mbuf** b) { macswap_tx(env, b); });
}

struct Lb {
    std::unique_ptr<lb::Director> director;
    std::unique_ptr<lb::Worker> worker;
};

void start_worker(Env& env, Lb& lb, uint32_t max_conns);

void must(const xvs::Result<void>& r) {
    if (!r) {
        std::fprintf(stderr, "config: %s\n", r.error().c_str());
        std::exit(1);
    }
}

// What every bench director has: the wan and lan ports, an address on each, a default route.
Lb base_lb(Env& env) {
    Lb lb;
    lb.director = std::make_unique<lb::Director>(1);
    auto& d = *lb.director;
    must(d.port_add({"wan", env.wan.id, env.wan.mac, 1500}));
    must(d.port_add({"lan", env.lan.id, env.lan.mac, 1500}));
    must(d.address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
    must(d.address_add(*net::parse_ipv4("10.10.0.1"), 16, "lan"));
    must(d.route_add(*net::parse_ipv4_prefix("default"), *net::parse_ipv4("10.10.1.254"), "wan"));
    return lb;
}

// tcp_flags: kSvcFlag* for the TCP service (TOA, PROXY protocol); the UDP service has none.
// fwd: every dest's forwarding mode (local addresses only for FULLNAT and NatTun; DR/TUN keep
// the port).
// sched: both services' scheduler.
Lb make_lb(Env& env, uint32_t max_conns, unsigned nlips, uint32_t tcp_flags = 0,
           lb::FwdMode fwd = lb::FwdMode::FullNat, lb::TunType tun = lb::TunType::Ipip,
           const char* sched = "wrr", uint32_t persistence_s = 0) {
    Lb lb = base_lb(env);
    auto& d = *lb.director;
    const auto vip = *net::parse_ipv4("10.10.1.100");
    for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
        uint16_t port = proto == 6 ? 80 : 53;
        lb::ServiceSpec spec{proto, vip, port, sched, fwd, proto == 6 ? tcp_flags : 0};
        spec.persistence_s = persistence_s;
        must(d.service_add(spec));
        auto key = lb::make_service_key(proto, vip, port);
        const bool same_port = fwd == lb::FwdMode::Dr || fwd == lb::FwdMode::Tun;
        for (int r = 0; r < 8; ++r) {
            lb::DestSpec ds{net::Ipv4::from_host(net::parse_ipv4("10.10.2.10")->host() + r),
                            uint16_t(same_port ? port : 8080), 1 + r % 3};
            ds.fwd = fwd;
            ds.tun_type = tun;
            ds.tun_port = tun == lb::TunType::Gue ? 6080 : 0;
            must(d.dest_add(key, ds));
        }
        const bool laddrs = fwd == lb::FwdMode::FullNat || fwd == lb::FwdMode::NatTun;
        for (unsigned l = 0; l < nlips && laddrs; ++l) {
            must(d.laddr_add(key, net::Ipv4::from_host(net::parse_ipv4("10.10.3.1")->host() + l), "lan"));
        }
    }
    d.commit();
    start_worker(env, lb, max_conns);
    return lb;
}

// The worker on the committed config, with the 8 RS and the default gateway as static
// neighbours.
void start_worker(Env& env, Lb& lb, uint32_t max_conns) {
    auto& d = *lb.director;
    lb::WorkerConfig cfg;
    cfg.pool = env.pool;
    cfg.reasm_pool = env.reasm_pool;
    cfg.max_conns = max_conns;
    cfg.manual_clock = true;
    auto w = lb::Worker::create(d, cfg);
    if (!w) {
        std::fprintf(stderr, "worker: %s\n", w.error().c_str());
        std::exit(1);
    }
    lb.worker = std::move(*w);
    net::MacAddr m{{0x02, 0, 0, 0, 0x0a, 0}};
    for (int r = 0; r < 8; ++r) {
        m.b[5] = uint8_t(r);
        lb.worker->neighbours().add_static(
            net::InetAddr::v4(net::hton32(net::parse_ipv4("10.10.2.10")->host() + r)), m, 1);
    }
    lb.worker->neighbours().add_static(*net::parse_ipv4("10.10.1.254"),
                                       net::MacAddr{{2, 0, 0, 0, 1, 0xfe}}, 0);
    lb.worker->refresh_snapshot();
}

// SNAT (masquerading): a TCP match service for the inside hosts 172.16.0.0/12 (the bench's
// flow sources) leaving by wan from the director's WAN address 10.10.1.1 (one port pool).
Lb make_snat_lb(Env& env, uint32_t max_conns) {
    Lb lb = base_lb(env);
    auto& d = *lb.director;
    lb::MatchKey k;
    k.proto = 6;
    k.src = *lb::parse_addr_range("172.16.0.0-172.31.255.255");
    k.oif = "wan";
    must(d.match_add({k, "", "rr"}));
    lb::DestSpec wan;
    wan.addr = *net::parse_ipv4("10.10.1.1");
    wan.port = 0;
    wan.fwd = lb::FwdMode::Snat;
    must(d.match_dest_add(k, wan));
    d.commit();
    start_worker(env, lb, max_conns);
    return lb;
}

std::vector<FlowSrc> make_flows(size_t n, uint64_t seed) {
    std::vector<FlowSrc> flows(n);
    for (size_t i = 0; i < n; ++i) {
        // Clients 172.16.0.0/12: distinct (address, port) pairs.
        uint32_t host = 0xac100000u + uint32_t(i / 50000);
        flows[i] = FlowSrc{net::hton32(host), net::hton16(uint16_t(10000 + i % 50000))};
    }
    std::shuffle(flows.begin(), flows.end(), std::mt19937_64(seed));
    return flows;
}

void process_into(Lb& lb, rte_mbuf** b) {
    lb.worker->process_burst(0, b, kBurst);
    lb.worker->flush();
}

// The yardsticks' bursts (reference.h) under the same name, out of line, so that profile.sh
// finds and measures their rows as it does xvs's.
[[gnu::noinline]] void process_into(bench::BareFullnat& bare, const Env& env, rte_mbuf** b) {
    bare.process(b, kBurst, env.lan.id);
}
[[gnu::noinline]] void process_into(bench::BareSynCookie& bare, const Env& env, uint32_t count,
                                    rte_mbuf** b) {
    bare.process(b, kBurst, env.wan.id, count);
}

// Opens one connection per flow with a SYN; returns how many were created.
uint64_t open_flows(Env& env, Lb& lb, const std::vector<FlowSrc>& flows, uint8_t proto) {
    Template syn = make_frame(env.lan.mac /*client*/, env.wan.mac, 0, net::parse_ipv4("10.10.1.100")->be,
                              0, proto == 6 ? 80 : 53, proto, net::kTcpSyn);
    uint64_t n = (flows.size() + kBurst - 1) / kBurst * kBurst;
    run(env, n, syn,
        [&](uint64_t i, uint8_t* f) {
            const FlowSrc& s = flows[i % flows.size()];
            patch_source(f, s.saddr, s.sport);
        },
        [&](rte_mbuf** b) { process_into(lb, b); });
    return lb.worker->counters().get(stack::Counter::conns_created);
}

// IPv6 rows (issue 11): a 74-byte TCP frame client -> VIP 2001:db8:1::100:80; the flow's
// source goes into the last four bytes of the client address 2001:db8:ac10::/96.
Template make_frame6(const net::MacAddr& src, const net::MacAddr& dst, uint8_t flags) {
    Template t{};
    auto* eth = reinterpret_cast<net::EtherHdr*>(t.bytes);
    eth->src = src;
    eth->dst = dst;
    eth->ether_type = net::hton16(net::kEtherTypeIpv6);
    auto* ip = reinterpret_cast<net::Ipv6Hdr*>(eth + 1);
    const net::InetAddr c = *net::parse_inet("2001:db8:ac10::");
    const net::InetAddr v = *net::parse_inet("2001:db8:1::100");
    ip->vtc_flow = net::hton32(6u << 28);
    ip->payload_len = net::hton16(20);
    ip->next_header = net::kIpProtoTcp;
    ip->hop_limit = 64;
    std::memcpy(ip->saddr, c.b, 16);
    std::memcpy(ip->daddr, v.b, 16);
    auto* tcp = reinterpret_cast<net::TcpHdr*>(ip + 1);
    tcp->dport = net::hton16(80);
    tcp->seq = net::hton32(1);
    tcp->ack = net::hton32(1);
    tcp->data_off = 5 << 4;
    tcp->flags = flags;
    tcp->window = net::hton16(1000);
    tcp->checksum = net::ipv6_l4_checksum(ip->saddr, ip->daddr, net::kIpProtoTcp, tcp, 20);
    t.len = 14 + 40 + 20;
    return t;
}

inline void patch_source6(uint8_t* f, uint32_t saddr, uint16_t sport_be) {
    uint8_t* low = f + 14 + 8 + 12;  // last four bytes of the source address
    uint8_t* l4 = f + 14 + 40;
    auto* csum = &reinterpret_cast<net::TcpHdr*>(l4)->checksum;
    net::csum_replace4(csum, net::load_wire32(low), saddr);
    net::csum_replace2(csum, net::load_wire16(l4), sport_be);
    net::store_wire32(low, saddr);
    net::store_wire16(l4, sport_be);
}

// FNAT66 (IPv6 RS and local address) or FNAT64 (IPv4 ones) behind the IPv6 VIP, 8 RS.
Lb make_lb6(Env& env, uint32_t max_conns, bool to_v4) {
    Lb lb = base_lb(env);
    auto& d = *lb.director;
    must(d.address_add(*net::parse_inet("2001:db8:1::1"), 64, "wan"));
    must(d.address_add(*net::parse_inet("2001:db8:2::1"), 64, "lan"));
    const auto vip = *net::parse_inet("2001:db8:1::100");
    must(d.service_add({6, vip, 80, "wrr", lb::FwdMode::FullNat, 0}));
    const auto key = lb::make_service_key(6, vip, 80);
    for (int r = 0; r < 8; ++r) {
        net::InetAddr a = *net::parse_inet("2001:db8:2::10");
        a.b[15] = uint8_t(0x10 + r);
        if (to_v4) a = net::InetAddr::v4(net::hton32(net::parse_ipv4("10.10.2.10")->host() + r));
        must(d.dest_add(key, lb::DestSpec{a, 8080, 1 + r % 3}));
    }
    must(d.laddr_add(
        key,
        to_v4 ? net::InetAddr(*net::parse_ipv4("10.10.3.1")) : *net::parse_inet("2001:db8:3::1"),
        "lan"));
    d.commit();
    start_worker(env, lb, max_conns);
    net::MacAddr m{{0x02, 0, 0, 0, 0x0b, 0}};
    for (int r = 0; r < 8; ++r) {
        net::InetAddr a = *net::parse_inet("2001:db8:2::10");
        a.b[15] = uint8_t(0x10 + r);
        m.b[5] = uint8_t(r);
        lb.worker->neighbours().add_static(a, m, 1);
    }
    return lb;
}

// A TCP frame with explicit seq/ack and payload_len zero bytes (<= 6, so it fits the 64-byte
// template the harness copies).
Template make_tcp_frame(const net::MacAddr& src, const net::MacAddr& dst, uint32_t saddr, uint32_t daddr,
                        uint16_t sport, uint16_t dport, uint8_t flags, uint32_t seq, uint32_t ack,
                        uint16_t payload_len) {
    Template t = make_frame(src, dst, saddr, daddr, sport, dport, net::kIpProtoTcp, flags);
    auto* ip = reinterpret_cast<net::Ipv4Hdr*>(t.bytes + 14);
    auto* tcp = reinterpret_cast<net::TcpHdr*>(ip + 1);
    const uint16_t l4len = static_cast<uint16_t>(20 + payload_len);
    ip->total_length = net::hton16(20 + l4len);
    ip->checksum = 0;
    ip->checksum = net::csum_fold(net::csum_partial(ip, 20, 0));
    tcp->seq = net::hton32(seq);
    tcp->ack = net::hton32(ack);
    tcp->checksum = 0;
    tcp->checksum = net::ipv4_l4_checksum(saddr, daddr, net::kIpProtoTcp, tcp, l4len);
    t.len = static_cast<uint16_t>(14 + 20 + l4len);
    return t;
}

// Client-address conservation rows: 1k connections taken through SYN (client ISN 0) and the
// RS SYN-ACK (RS ISN 0), then timed client segments (6 data bytes) on a plain, TOA or PROXY
// service; the reference is plain FULLNAT with the very same handshake and packets. The
// scenarios' timed passes are interleaved and each keeps its best (the machine may be shared,
// and load that comes and goes then hits every row alike).
class ConservationBench {
public:
    struct Scenario {
        const char* name;
        uint32_t svc_flags;
        uint32_t seq, ack;           // of the timed client segments
        bool warm;                   // one segment at client ISN + 1 per flow first (header on the wire)
        stack::Counter expect;       // the event every timed packet must cause
        Lb lb{};
        Template seg{};
        uint64_t before = 0;
        Figures best{1e30, 0};
    };

    ConservationBench(Env& env, uint64_t packets, const std::vector<FlowSrc>& flows)
        : env_(env), packets_((packets + kBurst - 1) / kBurst * kBurst), flows_(flows) {}

    void prepare(Scenario& s) {
        s.lb = make_lb(env_, 4096, 1, s.svc_flags);
        handshake(s.lb);
        if (s.warm) client_pass(s.lb, client_segment(1, 1), flows_.size());
        s.seg = client_segment(s.seq, s.ack);
        s.before = s.lb.worker->counters().get(s.expect);
    }
    void time_pass(Scenario& s) {
        const Figures f = client_pass(s.lb, s.seg, packets_);
        if (f.ns_per_pkt < s.best.ns_per_pkt) s.best = f;
    }
    // Exits when a packet was dropped or the row's event did not happen for every timed packet.
    void check(const Scenario& s, int passes) const {
        const auto& counters = s.lb.worker->counters();
        uint64_t dropped = 0;
        for (size_t i = 0; i < stack::kCounterCount; ++i)
            if (stack::kCounterInfo[i].is_drop) dropped += counters.v[i];
        const uint64_t timed = uint64_t(passes) * packets_;
        const uint64_t seen = counters.get(s.expect) - s.before;
        if (dropped == 0 && seen >= timed) return;
        std::fprintf(stderr, "bench: row '%s' broken: %llu drops, %llu of %llu expected %s\n", s.name,
                     (unsigned long long)dropped, (unsigned long long)seen, (unsigned long long)timed,
                     std::string(stack::kCounterInfo[size_t(s.expect)].name).c_str());
        for (size_t i = 0; i < stack::kCounterCount; ++i)
            if (stack::kCounterInfo[i].is_drop && counters.v[i])
                std::fprintf(stderr, "  %s %llu\n", std::string(stack::kCounterInfo[i].name).c_str(),
                             (unsigned long long)counters.v[i]);
        std::exit(1);
    }

private:
    static uint32_t vip() { return net::parse_ipv4("10.10.1.100")->be; }
    Template client_segment(uint32_t seq, uint32_t ack) const {
        return make_tcp_frame(env_.lan.mac, env_.wan.mac, 0, vip(), 0, 80, net::kTcpAck | net::kTcpPsh, seq,
                              ack, 6);
    }
    Figures client_pass(Lb& lb, const Template& tpl, uint64_t n) {
        return run(
            env_, (n + kBurst - 1) / kBurst * kBurst, tpl,
            [&](uint64_t i, uint8_t* f) {
                const FlowSrc& s = flows_[i % flows_.size()];
                patch_source(f, s.saddr, s.sport);
            },
            [&](rte_mbuf** b) { process_into(lb, b); });
    }
    void handshake(Lb& lb) {
        Template syn = make_tcp_frame(env_.lan.mac, env_.wan.mac, 0, vip(), 0, 80, net::kTcpSyn, 0, 0, 0);
        client_pass(lb, syn, flows_.size());
        // The RS SYN-ACK of every conn, built from the conn itself (dest and local port).
        std::vector<Template> synacks;
        for (const FlowSrc& s : flows_) {
            const lb::ConnRef ref = lb.worker->conns().lookup(
                lb::conn_key(net::kIpProtoTcp, net::InetAddr::v4(s.saddr), net::InetAddr::v4(vip()),
                             s.sport, net::hton16(80)));
            if (!ref.conn) {
                std::fprintf(stderr, "bench: SYN did not create a connection\n");
                std::exit(1);
            }
            const lb::Conn& c = *ref.conn;
            synacks.push_back(make_tcp_frame(net::MacAddr{{2, 0, 0, 0, 0x0a, 0}}, env_.lan.mac,
                                             c.daddr().v4_be(), c.laddr_ip().v4_be(),
                                             net::ntoh16(c.dport), net::ntoh16(c.lport),
                                             net::kTcpSyn | net::kTcpAck, 0, 1, 0));
        }
        const uint64_t n = (flows_.size() + kBurst - 1) / kBurst * kBurst;
        run(env_, n, synacks[0],
            [&](uint64_t i, uint8_t* f) { std::memcpy(f, synacks[i % synacks.size()].bytes, 64); },
            [&](rte_mbuf** b) {
                lb.worker->process_burst(1, b, kBurst);
                lb.worker->flush();
            });
    }

    Env& env_;
    uint64_t packets_;
    const std::vector<FlowSrc>& flows_;
};

void conservation_rows(Env& env, uint64_t packets, const std::vector<FlowSrc>& flows) {
    using stack::Counter;
    // seq 1 = client ISN + 1 (where the PROXY header goes), ack 1 = RS ISN + 1 (what TOA needs);
    // seq 7: further on in the stream, only shifted by the header length.
    ConservationBench::Scenario rows[] = {
        {"fullnat tcp established (ref)", 0, 1, 1, false, Counter::tx_packets},
        {"toa insert (acks the SYN-ACK)", lb::kSvcFlagToa, 1, 1, false, Counter::toa_inserted},
        {"proxy v1 insert (seq isn+1)", lb::kSvcFlagPpV1, 1, 1, false, Counter::pp_inserted},
        {"proxy v2 insert (seq isn+1)", lb::kSvcFlagPpV2, 1, 1, false, Counter::pp_inserted},
        {"proxy v1 established (seq shift)", lb::kSvcFlagPpV1, 7, 1, true, Counter::tx_packets},
        {"proxy v2 established (seq shift)", lb::kSvcFlagPpV2, 7, 1, true, Counter::tx_packets},
    };
    constexpr int kPasses = 5;
    ConservationBench b(env, packets / kPasses, flows);
    for (auto& r : rows) b.prepare(r);
    for (int k = 0; k < kPasses; ++k)
        for (auto& r : rows) b.time_pass(r);
    std::printf("client-address conservation, %zu conns after SYN + RS SYN-ACK, best of %d interleaved "
                "passes; +ns and ratio against the first row (plain FULLNAT, same packets)\n",
                flows.size(), kPasses);
    for (auto& r : rows) {
        b.check(r, kPasses);
        print_row(r.name, flows.size(), r.best, rows[0].best, 0);
    }
}

// A Linux client SYN: MSS 1460, SACK-perm, TS, NOP, wscale 7 (74-byte frame).
Template make_linux_syn(const net::MacAddr& src, const net::MacAddr& dst, uint32_t daddr) {
    Template t{};
    auto* eth = reinterpret_cast<net::EtherHdr*>(t.bytes);
    eth->src = src;
    eth->dst = dst;
    eth->ether_type = net::hton16(net::kEtherTypeIpv4);
    auto* ip = reinterpret_cast<net::Ipv4Hdr*>(eth + 1);
    const uint16_t l4len = 40;
    ip->version_ihl = 0x45;
    ip->total_length = net::hton16(20 + l4len);
    ip->ttl = 64;
    ip->protocol = net::kIpProtoTcp;
    ip->daddr = daddr;
    ip->checksum = net::csum_fold(net::csum_partial(ip, 20, 0));
    auto* tcp = reinterpret_cast<net::TcpHdr*>(ip + 1);
    tcp->dport = net::hton16(80);
    tcp->seq = net::hton32(1);
    tcp->data_off = 10 << 4;
    tcp->flags = net::kTcpSyn;
    tcp->window = net::hton16(64240);
    const uint8_t opts[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 0, 1, 3, 3, 7};
    std::memcpy(tcp + 1, opts, sizeof opts);
    tcp->checksum = net::ipv4_l4_checksum(0, daddr, net::kIpProtoTcp, tcp, l4len);
    t.len = static_cast<uint16_t>(14 + 20 + l4len);
    return t;
}

void enable_synproxy(Lb& lb) {
    auto r = lb.director->service_edit(lb::ServiceSpec{6, *net::parse_ipv4("10.10.1.100"), 80, "wrr",
                                                       lb::FwdMode::FullNat, lb::kSvcFlagSynProxy});
    if (!r) {
        std::fprintf(stderr, "config: %s\n", r.error().c_str());
        std::exit(1);
    }
    lb.director->commit();
    lb.worker->refresh_snapshot();
}

// --only SUBSTR: the rows whose name contains SUBSTR (the baselines always run), for profiling
// one path with perf or callgrind.
std::string g_only;
// --only TEXT: the rows whose name contains TEXT; --only =NAME: the row named NAME exactly
// (bench/engine/profile.sh measures one row at a time that way).
bool want(std::string_view row) {
    if (g_only.empty()) return true;
    if (g_only.front() == '=') return row == std::string_view(g_only).substr(1);
    return row.find(g_only) != std::string_view::npos;
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, huge = false, tiny = false;  // --tiny: for callgrind instruction counts
    bool umem = false;  // --umem-pool: mbufs laid out as a net_af_xdp port's (4 KiB apart)
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quick") quick = true;
        else if (a == "--huge") huge = true;
        else if (a == "--tiny") tiny = true;
        else if (a == "--umem-pool") umem = true;
        else if (a == "--only" && i + 1 < argc) g_only = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_engine [--quick|--tiny] [--huge] [--umem-pool] [--only SUBSTR]\n");
            return 2;
        }
    }
    const uint64_t packets = tiny ? 64'000 : quick ? 2'000'000 : 20'000'000;
    const size_t big = tiny ? 20'000 : quick ? 100'000 : 1'000'000;

    std::vector<std::string> eal = {"-m", quick ? "1024" : "2560", "--no-pci", "-l", "1",
                                    "--file-prefix", "xvs-bench-" + std::to_string(getpid()),
                                    "--log-level", "lib.eal:error", "--no-telemetry"};
    if (huge) {
        eal.push_back("--in-memory");
    } else {
        eal.push_back("--no-huge");
        eal.push_back("--no-shconf");
    }
    auto r = port::eal_start(eal);
    if (!r) {
        std::fprintf(stderr, "%s\n", r.error().c_str());
        return 1;
    }
    Env env;
    auto pool = umem ? port::umem_pool_create("bench_pool", 16383, 256)
                     : port::mbuf_pool_create("bench_pool", 16383, 256);
    if (!pool) {
        std::fprintf(stderr, "%s\n", pool.error().c_str());
        return 1;
    }
    env.pool = *pool;
    stack::FragConfig frag;
    auto reasm = port::mbuf_pool_create(
        "bench_reasm", stack::reasm_pool_size(frag.limits), 0,
        static_cast<uint16_t>(stack::reasm_data_room(frag.max_datagram_size)));
    if (!reasm) {
        std::fprintf(stderr, "%s\n", reasm.error().c_str());
        return 1;
    }
    env.reasm_pool = *reasm;
    auto wan = port::port_open_vdev("net_null0", {}, env.pool);
    auto lan = port::port_open_vdev("net_null1", {}, env.pool);
    if (!wan || !lan) {
        std::fprintf(stderr, "ports: %s %s\n", wan ? "" : wan.error().c_str(), lan ? "" : lan.error().c_str());
        return 1;
    }
    env.wan = *wan;
    env.lan = *lan;

    std::printf("xvs bench/engine: one worker on lcore 1, bursts of %u, 64-byte frames, %llu packets per row, %s\n",
                kBurst, (unsigned long long)packets, huge ? "hugepages" : "4 KiB pages (--no-huge)");
    std::printf("%-34s %9s %8s %8s %8s %8s %8s\n", "scenario", "conns", "Mpps", "ns/pkt", "+ns",
                "ratio", "B/conn");

    const uint32_t vip = net::parse_ipv4("10.10.1.100")->be;
    std::vector<FlowSrc> small_flows = make_flows(1000, 1);
    std::vector<FlowSrc> big_flows = make_flows(big, 2);
    Template ack = make_frame(env.lan.mac, env.wan.mac, 0, vip, 0, 80, 6, net::kTcpAck);
    Template udp = make_frame(env.lan.mac, env.wan.mac, 0, vip, 0, 53, 17, 0);

    Figures base = baseline(env, packets, ack, small_flows);
    print_row("macswap baseline (1k flows)", 0, base, base, 0);
    Figures base_big = baseline(env, packets, ack, big_flows);
    print_row("macswap baseline (big flow set)", 0, base_big, base_big, 0);
    // The random row's order (random_index): ~3 ns a packet of the harness's own on the machine
    // of the issue 17 notes, paid by this baseline too so that it stays out of xvs's share.
    Figures base_random = baseline(env, packets, ack, big_flows, true);
    print_row("macswap baseline (random order)", 0, base_random, base_random, 0);

    if (want("fullnat tcp established")) {
        Lb lb = make_lb(env, 4096, 1);
        open_flows(env, lb, small_flows, 6);
        Figures res = run(env, packets, ack,
                         [&](uint64_t i, uint8_t* f) {
                             const FlowSrc& s = small_flows[i % small_flows.size()];
                             patch_source(f, s.saddr, s.sport);
                         },
                         [&](rte_mbuf** b) { process_into(lb, b); });
        print_row("fullnat tcp established", lb.worker->conns().in_use(), res, base,
                  double(lb.worker->conns().memory_bytes()) / lb.worker->conns().capacity());
    }
    // The same flows over IPv6: FNAT66 and FNAT64 (translated to IPv4 on the way to the RS).
    for (const bool to_v4 : {false, true}) {
        if (!want(to_v4 ? "fnat64 tcp established" : "fnat66 tcp established")) continue;
        Lb lb = make_lb6(env, 4096, to_v4);
        const Template syn6 = make_frame6(env.lan.mac, env.wan.mac, net::kTcpSyn);
        const Template ack6 = make_frame6(env.lan.mac, env.wan.mac, net::kTcpAck);
        auto fill = [&](uint64_t i, uint8_t* f) {
            const FlowSrc& s = small_flows[i % small_flows.size()];
            patch_source6(f, s.saddr, s.sport);
        };
        run(env, (small_flows.size() + kBurst - 1) / kBurst * kBurst, syn6, fill,
            [&](rte_mbuf** b) { process_into(lb, b); });
        const uint64_t before = lb.worker->counters().get(stack::Counter::lb_forwarded);
        Figures res = run(env, packets, ack6, fill, [&](rte_mbuf** b) { process_into(lb, b); });
        print_row(to_v4 ? "fnat64 tcp established" : "fnat66 tcp established",
                  lb.worker->conns().in_use(), res, base, 0);
        const uint64_t fwd = lb.worker->counters().get(stack::Counter::lb_forwarded) - before;
        if (lb.worker->conns().in_use() != small_flows.size() || fwd != packets)
            std::fprintf(stderr, "%s: %llu conns for %zu flows, %llu of %llu packets forwarded\n",
                         to_v4 ? "fnat64" : "fnat66",
                         (unsigned long long)lb.worker->conns().in_use(), small_flows.size(),
                         (unsigned long long)fwd, (unsigned long long)packets);
    }
    // The other forwarding modes, same flows and packets as the FULLNAT row above (client ->
    // RS direction: DR and TUN never see the other one).
    struct ModeRow {
        const char* name;
        lb::FwdMode fwd;
        lb::TunType tun;
        uint8_t proto;
    };
    for (const ModeRow& m : {ModeRow{"nat tcp established", lb::FwdMode::Nat, lb::TunType::Ipip, 6},
                             ModeRow{"dr tcp established", lb::FwdMode::Dr, lb::TunType::Ipip, 6},
                             ModeRow{"tun ipip tcp established", lb::FwdMode::Tun, lb::TunType::Ipip, 6},
                             ModeRow{"tun gue udp established", lb::FwdMode::Tun, lb::TunType::Gue, 17},
                             // NatTun (issue 20): DNAT + IPIP/GUE from the local address.
                             ModeRow{"nattun ipip tcp established", lb::FwdMode::NatTun, lb::TunType::Ipip, 6},
                             ModeRow{"nattun gue udp established", lb::FwdMode::NatTun, lb::TunType::Gue, 17}}) {
        if (!want(m.name)) continue;
        Lb lb = make_lb(env, 4096, 1, 0, m.fwd, m.tun);
        open_flows(env, lb, small_flows, m.proto);
        Figures res = run(env, packets, m.proto == 6 ? ack : udp,
                         [&](uint64_t i, uint8_t* f) {
                             const FlowSrc& s = small_flows[i % small_flows.size()];
                             patch_source(f, s.saddr, s.sport);
                         },
                         [&](rte_mbuf** b) { process_into(lb, b); });
        print_row(m.name, lb.worker->conns().in_use(), res, base, 0);
    }
    if (want("snat tcp established")) {
        // SNAT, inside host -> outside server (the direction the mode rows above measure): the
        // same flows and packets arrive on lan addressed to 198.51.100.10:80 and leave by wan
        // from 10.10.1.1:WPORT, TTL decremented.
        Lb lb = make_snat_lb(env, 4096);
        const uint32_t outside = net::parse_ipv4("198.51.100.10")->be;
        Template syn = make_frame(env.wan.mac, env.lan.mac, 0, outside, 0, 80, 6, net::kTcpSyn);
        Template out_ack = make_frame(env.wan.mac, env.lan.mac, 0, outside, 0, 80, 6, net::kTcpAck);
        auto fill = [&](uint64_t i, uint8_t* f) {
            const FlowSrc& s = small_flows[i % small_flows.size()];
            patch_source(f, s.saddr, s.sport);
        };
        auto from_lan = [&](rte_mbuf** b) {
            lb.worker->process_burst(1, b, kBurst);
            lb.worker->flush();
        };
        run(env, (small_flows.size() + kBurst - 1) / kBurst * kBurst, syn, fill, from_lan);
        const uint64_t before = lb.worker->counters().get(stack::Counter::lb_forwarded);
        Figures res = run(env, packets, out_ack, fill, from_lan);
        print_row("snat tcp established (inside->wan)", lb.worker->conns().in_use(), res, base, 0);
        const uint64_t fwd = lb.worker->counters().get(stack::Counter::lb_forwarded) - before;
        if (lb.worker->conns().in_use() != small_flows.size() || fwd != packets)
            std::fprintf(stderr, "snat: %llu conns for %zu flows, %llu of %llu packets forwarded\n",
                         (unsigned long long)lb.worker->conns().in_use(), small_flows.size(),
                         (unsigned long long)fwd, (unsigned long long)packets);
    }
    if (want("fullnat tcp established (random)")) {
        Lb lb = make_lb(env, uint32_t(big + 1024), unsigned(big / 60000 + 1));
        uint64_t created = open_flows(env, lb, big_flows, 6);
        Figures res = run(
            env, packets, ack,
            [&](uint64_t i, uint8_t* f) {
                const FlowSrc& s = big_flows[random_index(i, big_flows.size())];
                patch_source(f, s.saddr, s.sport);
            },
            [&](rte_mbuf** b) { process_into(lb, b); });
        print_row("fullnat tcp established (random)", created, res, base_random,
                  double(lb.worker->conns().memory_bytes()) / lb.worker->conns().capacity());
    }
    // Yardsticks (reference.h): the unavoidable work of an established FULLNAT packet written
    // plainly on rte_hash, over the same flows in the same orders as the two rows above, and
    // the memory system's price of the two random lines a lookup in a big table reads.
    struct BareRow {
        const char* name;
        const char* table;  // the rte_hash's name (DPDK allows 31 characters)
        const std::vector<FlowSrc>& flows;
        bool random;
        uint8_t proto;
        const Template& tpl;
        const Figures& base;
    };
    for (const BareRow& row :
         {BareRow{"bare fullnat on rte_hash", "bare_tcp", small_flows, false, 6, ack, base},
          BareRow{"bare fullnat on rte_hash (random)", "bare_random", big_flows, true, 6, ack,
                  base_random},
          BareRow{"bare fullnat on rte_hash, udp", "bare_udp", small_flows, false, 17, udp,
                  base}}) {
        if (!want(row.name)) continue;
        bench::BareFullnat bare(row.table, row.flows.size());
        const uint32_t lip = net::parse_ipv4("10.10.2.1")->host();
        const uint32_t rip = net::parse_ipv4("10.10.2.10")->host();
        const uint16_t vport = net::hton16(row.proto == 6 ? 80 : 53);
        for (size_t i = 0; i < row.flows.size(); ++i)
            bare.add(row.proto, row.flows[i].saddr, row.flows[i].sport, vip, vport,
                     net::hton32(lip + uint32_t(i / 60000)),
                     net::hton16(uint16_t(1024 + i % 60000)), net::hton32(rip + uint32_t(i % 8)),
                     net::hton16(8080));
        Figures res = run(
            env, packets, row.tpl,
            [&](uint64_t i, uint8_t* f) {
                const size_t n = row.flows.size();
                const FlowSrc& s = row.flows[row.random ? random_index(i, n) : i % n];
                patch_source(f, s.saddr, s.sport);
            },
            [&](rte_mbuf** b) { process_into(bare, env, b); });
        print_row(row.name, row.flows.size(), res, row.base, 0);
        if (bare.missed() != 0)
            std::fprintf(stderr, "%s: %llu packets of no flow\n", row.name,
                         (unsigned long long)bare.missed());
    }
    if (want("random-line floor")) {
        // Not a packet row: ns of memory stalls alone, shown in the +ns column.
        const double ns = bench::random_line_floor(big, packets);
        std::printf("%-34s %9zu %8s %8s %8.1f %8s\n", "random-line floor (2 lines/packet)", big,
                    "-", "-", ns, "-");
        std::fflush(stdout);
    }
    // New connections: every packet is a SYN of a new flow (table sized to hold them all),
    // scheduled by wrr (the row's historical name), then rr, wlc and mh (Maglev, 65537 slots)
    // over the same 8 dests of weights 1..3; last rr with persistence (-p 300): each client
    // address (20 of them, 50000 ports each) has its template after its first conn, so the
    // row is the template lookup path in place of the scheduler.
    for (const char* sched : {"wrr", "rr", "wlc", "mh", "persist"}) {
        const bool persist = std::string_view(sched) == "persist";
        const std::string name =
            std::string("new tcp connections (SYN)") + (std::string_view(sched) == "wrr" ? ""
                                                        : persist ? std::string(", rr persistent")
                                                                  : ", " + std::string(sched));
        if (!want(name)) continue;
        Lb lb =
            make_lb(env, uint32_t(big + 1024), unsigned(big / 60000 + 1), 0, lb::FwdMode::FullNat,
                    lb::TunType::Ipip, persist ? "rr" : sched, persist ? 300 : 0);
        Template syn = make_frame(env.lan.mac, env.wan.mac, 0, vip, 0, 80, 6, net::kTcpSyn);
        uint64_t n = big / kBurst * kBurst;
        Figures res = run(env, n, syn,
                         [&](uint64_t i, uint8_t* f) {
                             const FlowSrc& s = big_flows[i];
                             patch_source(f, s.saddr, s.sport);
                         },
                         [&](rte_mbuf** b) { process_into(lb, b); });
        print_row(name.c_str(), lb.worker->counters().get(stack::Counter::conns_created), res,
                  base_big, 0);
    }
    if (want("fullnat udp established")) {
        Lb lb = make_lb(env, 4096, 1);
        open_flows(env, lb, small_flows, 17);
        Figures res = run(env, packets, udp,
                         [&](uint64_t i, uint8_t* f) {
                             const FlowSrc& s = small_flows[i % small_flows.size()];
                             patch_source(f, s.saddr, s.sport);
                         },
                         [&](rte_mbuf** b) { process_into(lb, b); });
        print_row("fullnat udp established", lb.worker->conns().in_use(), res, base, 0);
    }
    if (want("fullnat udp 2-fragment")) {
        // The same UDP flows, each datagram in two fragments (24 + 8 bytes of UDP), one after
        // the other: reassembled, then forwarded as one. ns per fragment.
        Lb lb = make_lb(env, 4096, 1);
        open_flows(env, lb, small_flows, 17);
        Template frag[2] = {make_frame(env.lan.mac, env.wan.mac, 0, vip, 0, 53, 17, 0), {}};
        auto* ip = reinterpret_cast<net::Ipv4Hdr*>(frag[0].bytes + 14);
        ip->id = net::hton16(7);
        frag[1] = frag[0];
        auto fix = [](Template& t, uint16_t payload, uint16_t frag_off) {
            auto* h = reinterpret_cast<net::Ipv4Hdr*>(t.bytes + 14);
            h->total_length = net::hton16(uint16_t(20 + payload));
            h->frag_off = net::hton16(frag_off);
            h->checksum = 0;
            h->checksum = net::csum_fold(net::csum_partial(h, 20, 0));
        };
        std::memmove(frag[1].bytes + 34, frag[0].bytes + 34 + 24, 8);  // the last 8 UDP bytes
        fix(frag[0], 24, 0x2000);                                      // MF, offset 0
        fix(frag[1], 8, 3);                                            // offset 24
        Figures res = run(
            env, packets, frag[0],
            [&](uint64_t i, uint8_t* f) {
                const FlowSrc& s = small_flows[(i / 2) % small_flows.size()];
                std::memcpy(f, frag[i & 1].bytes, 64);
                auto* h = reinterpret_cast<net::Ipv4Hdr*>(f + 14);
                net::csum_replace4(&h->checksum, h->saddr, s.saddr);
                h->saddr = s.saddr;
                if (!(i & 1)) net::store_wire16(f + 34, s.sport);
            },
            [&](rte_mbuf** b) { process_into(lb, b); });
        print_row("fullnat udp 2-fragment datagrams", lb.worker->conns().in_use(), res, base, 0);
        const uint64_t whole = lb.worker->counters().get(stack::Counter::frag_reassembled);
        if (whole != packets / 2)
            std::fprintf(stderr, "reassembly: %llu datagrams for %llu fragments\n",
                         (unsigned long long)whole, (unsigned long long)packets);
    }
    if (want("synproxy cookie SYN-ACK")) {
        // SYN flood: every packet a SYN from a new source -> cookie SYN-ACK, no state.
        Lb lb = make_lb(env, 4096, 1);
        enable_synproxy(lb);
        Template syn = make_linux_syn(env.lan.mac, env.wan.mac, vip);
        uint64_t n = big / kBurst * kBurst;
        Figures res = run(env, n, syn,
                         [&](uint64_t i, uint8_t* f) {
                             const FlowSrc& s = big_flows[i];
                             patch_source(f, s.saddr, s.sport);
                         },
                         [&](rte_mbuf** b) { process_into(lb, b); });
        print_row("synproxy cookie SYN-ACK (SYN flood)", lb.worker->conns().in_use(), res, base_big, 0);
        if (lb.worker->counters().get(stack::Counter::synproxy_syn_cookie_sent) != n)
            std::fprintf(stderr, "synproxy: %llu SYN-ACKs for %llu SYNs\n",
                         (unsigned long long)lb.worker->counters().get(stack::Counter::synproxy_syn_cookie_sent),
                         (unsigned long long)n);
    }
    if (want("bare syn cookie responder")) {
        // Yardstick (reference.h): the same SYN flood answered by the least code that can.
        Lb lb = make_lb(env, 4096, 1);  // for its snapshot's cookie secrets only
        bench::BareSynCookie bare(lb.director->snapshot()->cookie);
        Template syn = make_linux_syn(env.lan.mac, env.wan.mac, vip);
        const uint32_t count = net::cookie_count(lb.worker->now_ms());
        uint64_t n = big / kBurst * kBurst;
        Figures res = run(
            env, n, syn,
            [&](uint64_t i, uint8_t* f) {
                const FlowSrc& s = big_flows[i];
                patch_source(f, s.saddr, s.sport);
            },
            [&](rte_mbuf** b) { process_into(bare, env, count, b); });
        print_row("bare syn cookie responder", 0, res, base_big, 0);
        if (bare.missed() != 0)
            std::fprintf(stderr, "bare syn cookie responder: %llu packets were no SYN\n",
                         (unsigned long long)bare.missed());
    }
    if (want("synproxy cookie ACK")) {
        // Valid cookie ACKs: check, conn (schedule + local port), side-pool entry, RS SYN.
        // Timed in chunks of 2048 handshakes; between chunks (untimed) cookies for the next
        // chunk are computed and the clock runs the RS SYN retries out so the chunk's conns,
        // saved ACKs and side-pool entries are released.
        Lb lb = make_lb(env, uint32_t(big + 1024), unsigned(big / 60000 + 1));
        enable_synproxy(lb);
        Template ack = make_frame(env.lan.mac, env.wan.mac, 0, vip, 0, 80, 6, net::kTcpAck);
        constexpr uint64_t kChunk = 2048;
        const uint64_t chunks = std::max<uint64_t>(1, std::min<uint64_t>(big, 200'000) / kChunk);
        std::vector<uint32_t> cookies(kChunk);
        double ns_total = 0;
        for (uint64_t c = 0; c < chunks; ++c) {
            const uint32_t count = net::cookie_count(lb.worker->now_ms());
            for (uint64_t i = 0; i < kChunk; ++i) {
                const FlowSrc& s = big_flows[(c * kChunk + i) % big_flows.size()];
                cookies[i] = net::syncookie_make(lb.director->snapshot()->cookie,
                                                 net::CookieTuple{s.saddr, vip, s.sport, net::hton16(80)},
                                                 0, count, net::CookieOptions{3, net::kCookieWscaleNone, false, false});
            }
            Figures res = run(env, kChunk, ack,
                             [&](uint64_t i, uint8_t* f) {
                                 const FlowSrc& s = big_flows[(c * kChunk + i) % big_flows.size()];
                                 patch_source(f, s.saddr, s.sport);
                                 auto* tcp = reinterpret_cast<net::TcpHdr*>(f + 34);
                                 const uint32_t ack_be = net::hton32(cookies[i] + 1);
                                 net::csum_replace4(&tcp->checksum, tcp->ack, ack_be);
                                 tcp->ack = ack_be;
                             },
                             [&](rte_mbuf** b) { process_into(lb, b); });
            ns_total += res.ns_per_pkt * kChunk;
            for (uint64_t step : {1100, 2100, 4100, 8100}) {
                lb.worker->advance_clock(step);
                lb.worker->poll_once();
            }
        }
        const double ns = ns_total / double(chunks * kChunk);
        // B/conn here includes the SYN proxy's per-slot translation array and side pool.
        print_row("synproxy cookie ACK -> conn + RS SYN", lb.worker->counters().get(stack::Counter::synproxy_rs_syn_sent) -
                      lb.worker->counters().get(stack::Counter::synproxy_rs_syn_retransmit),
                  Figures{ns, 1e3 / ns}, base_big,
                  double(lb.worker->conns().memory_bytes() + lb.worker->synproxy_memory_bytes()) /
                      lb.worker->conns().capacity());
        // (poll_once also receives net_null's recycled frames, which may add a few more.)
        if (lb.worker->counters().get(stack::Counter::synproxy_ack_valid) < chunks * kChunk)
            std::fprintf(stderr, "synproxy: %llu valid ACKs of %llu\n",
                         (unsigned long long)lb.worker->counters().get(stack::Counter::synproxy_ack_valid),
                         (unsigned long long)(chunks * kChunk));
    }
    std::printf("ratio = ns/pkt over the baseline's; +ns = xvs's own cost per packet; "
                "B/conn = conn pool + hash bytes / capacity\n");
    if (want("conservation")) conservation_rows(env, packets, small_flows);
    port::eal_stop();
    return 0;
}
