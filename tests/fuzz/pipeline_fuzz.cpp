// libFuzzer target: arbitrary frames, and sequences of frames with an advancing manual clock,
// through the real worker pipeline (the packet-test fixture's Director + Worker over in-memory
// ring ports), with FULLNAT TCP services using SYN proxy, TOA, PROXY v1/v2 and UDP services
// using UOA (opp, ipo) and PROXY v2, two real servers and two local addresses. After every
// poll it proves: conservation (frames in + frames the worker built = frames out + frames
// counted under a drop reason + frames consumed + frames held), no mbuf leaked (the pool's
// in-use count equals the frames held), and every conn's dest/service/LIP reference counts
// match the conns that point at them (a freed dest is an ASan use-after-free). At the end of
// an input the clock runs on until everything expired: no conn and no mbuf may be left.
//
// Input: [config byte] then records [op][dt][len lo][len hi][len bytes] (tests/fuzz/README.md).
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <vector>

#include "fixture/pipeline.h"
#include "lb/conn.h"
#include "lb/service.h"
#include "net/checksum.h"
#include "net/syncookie.h"

namespace {

using namespace xvs;
using stack::Counter;
using test::Bytes;
using test::DpdkEnvironment;

[[noreturn]] void fail(const char* what, uint64_t a = 0, uint64_t b = 0) {
    std::fprintf(stderr, "pipeline_fuzz invariant violated: %s (%llu vs %llu)\n", what,
                 static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
    std::fflush(stderr);
    __builtin_trap();
}
#define CHECK(cond)               \
    do {                          \
        if (!(cond)) fail(#cond); \
    } while (0)
#define CHECK_EQ(a, b)                                \
    do {                                              \
        const uint64_t va_ = (a), vb_ = (b);          \
        if (va_ != vb_) fail(#a " == " #b, va_, vb_); \
    } while (0)

// ---- byte helpers (no type punning: every multi-byte field through memcpy) ----
uint16_t get16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] << 8 | p[1]);
}
uint32_t get32(const uint8_t* p) {
    return uint32_t(get16(p)) << 16 | get16(p + 2);
}
void put16(uint8_t* p, uint16_t v) {
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}
void put32(uint8_t* p, uint32_t v) {
    put16(p, uint16_t(v >> 16));
    put16(p + 2, uint16_t(v));
}
uint32_t be32_of(const uint8_t* p) {  // raw wire bytes as a network-order uint32_t
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

constexpr size_t kEth = 14;
constexpr size_t kMaxFrame = 1600;  // above the 1514-byte MTU frame: too-big drops are reachable
constexpr unsigned kMaxRecords = 96;

const uint32_t kAddrs[16] = {
    test::ip("10.10.1.2"),   test::ip("10.10.1.3"),       test::ip("10.10.1.100"),
    test::ip("10.10.1.1"),   test::ip("10.10.2.1"),       test::ip("10.10.2.100"),
    test::ip("10.10.2.101"), test::ip("10.10.2.2"),       test::ip("10.10.2.3"),
    test::ip("192.0.2.7"),   test::ip("0.0.0.0"),         test::ip("127.0.0.1"),
    test::ip("224.0.0.5"),   test::ip("255.255.255.255"), test::ip("10.10.1.66"),
    test::ip("10.10.2.4")};
const uint16_t kPorts[16] = {80, 81, 82,   83,   84,    85,    53, 54,
                             55, 56, 8080, 5353, 40000, 40001, 0,  22};

net::MacAddr peer_mac(uint32_t addr_be) {
    if (addr_be == test::ip("10.10.1.2")) return test::kClientMac;
    if (addr_be == test::ip("10.10.2.2")) return test::kRs1Mac;
    if (addr_be == test::ip("10.10.2.3")) return test::kRs2Mac;
    net::MacAddr m{{0x02, 0, 0, 0, 0x09, uint8_t(addr_be >> 24)}};
    return m;
}

// memcpy that accepts an empty (possibly null) source.
void copy_bytes(uint8_t* dst, const uint8_t* src, size_t n) {
    if (n) std::memcpy(dst, src, n);
}
void put_mac(uint8_t* p, const net::MacAddr& m) {
    std::memcpy(p, m.b, 6);
}

// Recomputes the IPv4 header checksum and the TCP/UDP/ICMP checksum of an Ethernet frame where
// the lengths allow it (used by "fix" records and templated frames).
void fix_checksums(Bytes& f, bool l4) {
    if (f.size() < kEth + 20 || get16(&f[12]) != net::kEtherTypeIpv4) return;
    uint8_t* ip = &f[kEth];
    const size_t ihl = size_t(ip[0] & 0x0f) * 4;
    if (ihl < 20 || kEth + ihl > f.size()) return;
    put16(ip + 10, 0);
    const uint16_t csum = net::csum_fold(net::csum_partial(ip, ihl, 0));
    std::memcpy(ip + 10, &csum, 2);
    if (!l4) return;
    const size_t total = get16(ip + 2);
    if (total < ihl || kEth + total > f.size()) return;
    uint8_t* l4p = ip + ihl;
    const size_t l4_len = total - ihl;
    size_t off;
    switch (ip[9]) {
        case net::kIpProtoTcp:
            off = 16;
            break;
        case net::kIpProtoUdp:
            off = 6;
            break;
        case net::kIpProtoIcmp:
            off = 2;
            break;
        default:
            return;
    }
    if (l4_len < off + 2) return;
    put16(l4p + off, 0);
    uint16_t c;
    if (ip[9] == net::kIpProtoIcmp)
        c = net::csum_fold(net::csum_partial(l4p, l4_len, 0));
    else
        c = net::ipv4_l4_checksum(be32_of(ip + 12), be32_of(ip + 16), ip[9], l4p, l4_len);
    if (ip[9] == net::kIpProtoUdp && c == 0) c = 0xffff;
    std::memcpy(l4p + off, &c, 2);
}

// XVS_FUZZ_DEBUG=2: one line per frame in and out (seed corpus review).
bool trace_on() {
    static const bool on = [] {
        const char* v = std::getenv("XVS_FUZZ_DEBUG");
        return v && std::atoi(v) >= 2;
    }();
    return on;
}
void trace(const char* dir, uint8_t port, const Bytes& f) {
    if (!trace_on()) return;
    std::fprintf(stderr, "%s %s len %zu", dir, port ? "lan" : "wan", f.size());
    if (f.size() >= kEth + 20 && get16(&f[12]) == net::kEtherTypeIpv4) {
        const uint8_t* ip = &f[kEth];
        const size_t ihl = size_t(ip[0] & 0x0f) * 4;
        std::fprintf(stderr, " %u.%u.%u.%u > %u.%u.%u.%u proto %u", ip[12], ip[13], ip[14], ip[15],
                     ip[16], ip[17], ip[18], ip[19], ip[9]);
        if (f.size() >= kEth + ihl + 20 && ip[9] == net::kIpProtoTcp) {
            const uint8_t* t = ip + ihl;
            std::fprintf(stderr, " %u > %u flags %02x seq %08x ack %08x doff %u", get16(t),
                         get16(t + 2), t[13], get32(t + 4), get32(t + 8), t[12] >> 4);
        } else if (f.size() >= kEth + ihl + 8 && ip[9] == net::kIpProtoUdp) {
            std::fprintf(stderr, " %u > %u", get16(ip + ihl), get16(ip + ihl + 2));
        }
    } else if (f.size() >= kEth + 28 && get16(&f[12]) == net::kEtherTypeArp) {
        const uint8_t* a = &f[kEth];
        std::fprintf(stderr, " arp op %u %u.%u.%u.%u asks %u.%u.%u.%u", get16(a + 6), a[14], a[15],
                     a[16], a[17], a[24], a[25], a[26], a[27]);
    }
    std::fprintf(stderr, "\n");
}

struct Cursor {
    const uint8_t* p;
    size_t n;
    uint8_t byte(uint8_t dflt = 0) {
        if (!n) return dflt;
        --n;
        return *p++;
    }
};

class Harness : public test::PipelineTest {
  public:
    void TestBody() override {}
    void run(const uint8_t* data, size_t size);

  private:
    void configure(uint8_t cfg);
    void check_gtest(const char* where) {
        if (::testing::Test::HasFailure()) fail(where);
    }
    void send_frame(uint8_t port, const Bytes& f);
    void poll_all();
    void drain_tx();
    void check_invariants();
    void control(Cursor c);
    Bytes templated(uint8_t port, Cursor c);
    Bytes arp_templated(uint8_t port, Cursor c);
    Bytes templated6(uint8_t port, Cursor c);
    bool reply(uint8_t port, unsigned which, Cursor c, Bytes& out);

    uint64_t sent_ = 0;
    uint64_t received_ = 0;
    unsigned pending_rx_ = 0;
    bool defer_ = false;
    std::array<std::deque<Bytes>, 2> history_;  // last frames the worker sent on each port
    std::vector<lb::ServiceKey> keys_;
};

void Harness::configure(uint8_t cfg) {
    auto ok = [&](const Result<void>& r) {
        if (!r) {
            std::fprintf(stderr, "config: %s\n", r.error().c_str());
            fail("harness configuration refused");
        }
    };
    ok(director->address_add(*net::parse_ipv4("10.10.1.1"), 24, "wan"));
    ok(director->address_add(*net::parse_ipv4("10.10.2.1"), 24, "lan"));
    ok(director->route_add(*net::parse_ipv4_prefix("0.0.0.0/0"), *net::parse_ipv4("10.10.1.254"),
                           "wan"));
    const auto vip = *net::parse_ipv4("10.10.1.100");
    const auto rs1 = *net::parse_ipv4("10.10.2.2");
    const auto rs2 = *net::parse_ipv4("10.10.2.3");
    const auto lip1 = *net::parse_ipv4("10.10.2.100");
    const auto lip2 = *net::parse_ipv4("10.10.2.101");
    struct Svc {
        uint8_t proto;
        uint16_t port;
        const char* sched;
        uint32_t flags;
        lb::FwdMode fwd = lb::FwdMode::FullNat;
        lb::TunType tun = lb::TunType::Ipip;
    };
    const Svc svcs[] = {
        {6, 80, "rr", lb::kSvcFlagSynProxy | lb::kSvcFlagToa},
        {6, 81, "wrr", lb::kSvcFlagSynProxy | lb::kSvcFlagPpV1},
        {6, 82, "wlc", lb::kSvcFlagPpV2},
        {6, 83, "rr", 0},
        {6, 84, "wrr", lb::kSvcFlagToa},
        {6, 85, "rr", lb::kSvcFlagSynProxy | lb::kSvcFlagPpV2},
        {17, 53, "rr", lb::kSvcFlagUoaOpp},
        {17, 54, "wrr", lb::kSvcFlagUoaIpo},
        {17, 55, "rr", lb::kSvcFlagPpV2},
        {17, 56, "rr", 0},
        // The other modes: NAT maps the port, DR and TUN keep it (and have no local address).
        {6, 86, "rr", 0, lb::FwdMode::Nat},
        {17, 57, "wrr", 0, lb::FwdMode::Nat},
        {6, 87, "rr", 0, lb::FwdMode::Dr},
        {6, 88, "rr", 0, lb::FwdMode::Tun},
        {17, 58, "rr", 0, lb::FwdMode::Tun, lb::TunType::Gue},
    };
    for (const Svc& s : svcs) {
        lb::ServiceSpec spec{s.proto, vip, s.port, s.sched};
        spec.flags = s.flags;
        if ((cfg & 0x08) && s.port == 83) spec.conn_rate = 2;
        ok(director->service_add(spec));
        auto key = lb::make_service_key(s.proto, vip, s.port);
        keys_.push_back(key);
        const bool same_port = s.fwd == lb::FwdMode::Dr || s.fwd == lb::FwdMode::Tun;
        const uint16_t rport = same_port ? s.port : s.proto == 6 ? 8080 : 5353;
        // TCP 84: one conn per dest at most (-x 1), so admission's overload path is reachable.
        const uint32_t upper = s.port == 84 ? 1 : 0;
        const uint16_t gue_port = s.tun == lb::TunType::Gue ? 6080 : 0;
        ok(director->dest_add(key, lb::DestSpec{rs1, rport, 1, s.fwd, upper, 0, s.tun, gue_port}));
        ok(director->dest_add(key, lb::DestSpec{rs2, rport, 2, s.fwd, upper, 0, s.tun, gue_port}));
        if (s.fwd != lb::FwdMode::FullNat) continue;
        ok(director->laddr_add(key, lip1, "lan"));
        if (s.port == 82 || s.port == 53) ok(director->laddr_add(key, lip2, "lan"));
    }
    // IPv6 (issue 11): FNAT66 (TOA), NAT66, DR, TUN, GUE over IPv6 and FNAT64 services on
    // their own VIPs, reached by IPv6 frames (ND, extension headers and fragments included).
    ok(director->address_add(*net::parse_inet("2001:db8:1::1"), 64, "wan"));
    ok(director->address_add(*net::parse_inet("2001:db8:2::1"), 64, "lan"));
    const auto vip6 = *net::parse_inet("2001:db8:1::100");
    const auto vip64 = *net::parse_inet("2001:db8:1::164");
    const net::InetAddr rs6[] = {*net::parse_inet("2001:db8:2::2"),
                                 *net::parse_inet("2001:db8:2::3")};
    const Svc svcs6[] = {
        {6, 80, "rr", lb::kSvcFlagToa},     {17, 53, "wrr", 0},
        {6, 86, "rr", 0, lb::FwdMode::Nat}, {6, 87, "rr", 0, lb::FwdMode::Dr},
        {6, 88, "rr", 0, lb::FwdMode::Tun}, {17, 58, "rr", 0, lb::FwdMode::Tun, lb::TunType::Gue},
    };
    for (const Svc& s : svcs6) {
        lb::ServiceSpec spec{s.proto, vip6, s.port, s.sched};
        spec.flags = s.flags;
        ok(director->service_add(spec));
        const auto key = lb::make_service_key(s.proto, vip6, s.port);
        keys_.push_back(key);
        const bool same_port = s.fwd == lb::FwdMode::Dr || s.fwd == lb::FwdMode::Tun;
        const uint16_t rport = same_port ? s.port : s.proto == 6 ? 8080 : 5353;
        const uint16_t gue_port = s.tun == lb::TunType::Gue ? 6080 : 0;
        for (const auto& r : rs6)
            ok(director->dest_add(key, lb::DestSpec{r, rport, 1, s.fwd, 0, 0, s.tun, gue_port}));
        if (s.fwd == lb::FwdMode::FullNat)
            ok(director->laddr_add(key, *net::parse_inet("2001:db8:2::100"), "lan"));
    }
    for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
        lb::ServiceSpec spec{proto, vip64, 80, "rr"};
        spec.flags = proto == 6 ? lb::kSvcFlagToa : 0;
        ok(director->service_add(spec));
        const auto key = lb::make_service_key(proto, vip64, 80);
        keys_.push_back(key);
        ok(director->dest_add(key, lb::DestSpec{rs1, 8080, 1}));
        ok(director->dest_add(key, lb::DestSpec{rs2, 8080, 1}));
        ok(director->laddr_add(key, lip2, "lan"));
    }
    ok(director->acl_add(lb::make_service_key(6, vip, 80), lb::AclKind::Black,
                         *net::parse_ipv4_prefix("10.10.1.66/32")));
    ok(director->acl_add(lb::make_service_key(6, vip, 84), lb::AclKind::White,
                         *net::parse_ipv4_prefix("10.10.1.0/28")));
    lb::SynProxyConf sp;
    defer_ = cfg & 0x02;
    sp.defer_rs_syn = defer_;
    if (cfg & 0x10) {
        sp.timestamp = false;
        sp.sack = false;
        sp.wscale = lb::kSynProxyNoWscale;
    }
    if (cfg & 0x20) {
        sp.max_ack_saved = 1;
        sp.ack_storm_thresh = 1;
        sp.rs_syn_max_retry = 0;
    }
    director->synproxy_set(sp);
    if (cfg & 0x40) director->uoa_max_trail_set(1);
    director->commit();

    lb::WorkerConfig wc;
    wc.max_conns = (cfg & 0x04) ? 8 : 256;
    wc.synproxy_pending = (cfg & 0x04) ? 2 : 32;
    wc.rx_burst = (cfg & 0x80) ? 4 : 32;
    start_worker(wc);
    check_gtest("start_worker");
    if (!(cfg & 0x01)) learn_neighbours();  // else resolved by ARP (reply records answer it)
}

void Harness::send_frame(uint8_t port, const Bytes& f) {
    if (f.empty() || f.size() > kMaxFrame) return;
    trace("in ", port, f);
    send(port, f);
    check_gtest("send");
    ++sent_;
    ++pending_rx_;
}

void Harness::poll_all() {
    // Every queued frame is taken by the worker (rx_burst may be smaller than what is queued).
    do {
        poll();
        drain_tx();
    } while (rte_ring_count(DpdkEnvironment::rx_ring(test::kWan)) ||
             rte_ring_count(DpdkEnvironment::rx_ring(test::kLan)));
    pending_rx_ = 0;
    director->reclaim();
    check_invariants();
}

void Harness::drain_tx() {
    for (uint8_t p = 0; p < 2; ++p) {
        for (Bytes& f : recv(p)) {
            trace("out", p, f);
            ++received_;
            auto& h = history_[p];
            h.push_front(std::move(f));
            if (h.size() > 8) h.pop_back();
        }
    }
}

void Harness::check_invariants() {
    const auto& cn = worker->counters();
    uint64_t drops = 0;
    for (size_t i = 0; i < stack::kCounterCount; ++i)
        if (stack::kCounterInfo[i].is_drop) drops += cn.v[i];
    // Frames the worker built in fresh mbufs (the pool never runs dry here: see kMaxRecords).
    const uint64_t built =
        cn.get(Counter::arp_requests_sent) + cn.get(Counter::pp_header_segment_sent) +
        cn.get(Counter::pp_header_retransmitted) + cn.get(Counter::uoa_empty_sent) +
        cn.get(Counter::synproxy_rs_syn_sent) + cn.get(Counter::synproxy_rs_timeout) +
        cn.get(Counter::frag_reassembled) + cn.get(Counter::frag_created) +
        cn.get(Counter::nd_solicits_sent) + cn.get(Counter::icmp_frag_needed_sent) +
        cn.get(Counter::icmp_time_exceeded_sent) + cn.get(Counter::drop_icmp_not_sent) +
        cn.get(Counter::icmp_nat64_translated);
    // Frames taken without a drop: received ARP replies and neighbour advertisements, bare
    // ACKs absorbed and RS SYN-ACKs absorbed by the deferring SYN proxy, FNAT64 ICMP errors
    // sent on rebuilt in the other family (the rebuilt one is built above).
    const uint64_t consumed = cn.get(Counter::arp_replies_received) +
                              cn.get(Counter::synproxy_ack_deferred) +
                              cn.get(Counter::synproxy_rs_synack_absorbed) +
                              cn.get(Counter::frag_merged) + cn.get(Counter::frag_split) +
                              cn.get(Counter::nd_adverts_received) +
                              cn.get(Counter::icmp_nat64_translated);
    const uint64_t held = worker->held_frames();
    CHECK_EQ(cn.get(Counter::rx_packets), sent_);
    CHECK_EQ(cn.get(Counter::tx_packets), received_);
    CHECK_EQ(cn.get(Counter::drop_mbuf_alloc), 0);
    if (sent_ + built != received_ + drops + consumed + held) {
        std::fprintf(stderr, "in %llu built %llu out %llu drops %llu consumed %llu held %llu\n",
                     (unsigned long long)sent_, (unsigned long long)built,
                     (unsigned long long)received_, (unsigned long long)drops,
                     (unsigned long long)consumed, (unsigned long long)held);
        for (size_t i = 0; i < stack::kCounterCount; ++i)
            if (cn.v[i])
                std::fprintf(stderr, "  %s %llu\n",
                             std::string(stack::kCounterInfo[i].name).c_str(),
                             (unsigned long long)cn.v[i]);
        fail("conservation: in + built == out + drops + consumed + held");
    }
    // No mbuf leaked: after TX was drained, exactly the held frames are out of the pool.
    CHECK_EQ(rte_mempool_in_use_count(DpdkEnvironment::pool()) +
                 rte_mempool_in_use_count(DpdkEnvironment::reasm_pool()),
             worker->held_mbufs());

    // Reference counts: every conn's dest, service and LIP count exactly the conns using them.
    std::unordered_map<const lb::Dest*, uint32_t> dests;
    std::unordered_map<const lb::Service*, uint32_t> svcs;
    std::unordered_map<const lb::LocalAddr*, uint32_t> laddrs;
    uint32_t nconns = 0;
    worker->conns().for_each([&](const lb::Conn& c) {
        ++nconns;
        ++dests[c.dest];
        ++svcs[c.svc()];
        ++laddrs[worker->conn_laddr(c)];
    });
    CHECK_EQ(nconns, worker->conns().in_use());
    for (const auto& [d, n] : dests) CHECK_EQ(d->stats[0].refs, n);  // ASan: freed dest
    for (const auto& [s, n] : svcs) CHECK_EQ(s->workers[0].refs.load(), n);
    for (const auto& [l, n] : laddrs) CHECK_EQ(l->workers[0].refs.load(), n);
    for (const auto& s : director->services()) {
        if (!svcs.count(s.get())) CHECK_EQ(s->workers[0].refs.load(), 0);
        for (const auto& d : s->dests)
            if (!dests.count(d.get())) CHECK_EQ(d->stats[0].refs, 0);
    }
}

// Control-plane change between packets: conns must keep (or lose, when reclaimed) their dest
// safely. bytes: [action][service index].
void Harness::control(Cursor c) {
    const uint8_t action = c.byte();
    const lb::ServiceKey key = keys_[c.byte() % keys_.size()];
    const auto rs = (action & 0x10) ? *net::parse_ipv4("10.10.2.3") : *net::parse_ipv4("10.10.2.2");
    const uint16_t rport = key.proto == 6 ? 8080 : 5353;
    const auto vip = *net::parse_ipv4("10.10.1.100");
    switch (action & 0x0f) {
        case 0:
            (void)director->dest_del(key, rs, rport);
            break;
        case 1:
            (void)director->dest_add(key, lb::DestSpec{rs, rport, 1});
            break;
        case 2:
            (void)director->dest_edit(key, lb::DestSpec{rs, rport, 0});
            break;
        case 3:
            (void)director->service_del(key);
            break;
        case 4: {
            lb::ServiceSpec spec{key.proto, vip, net::ntoh16(key.port), "rr"};
            spec.flags = key.proto == 6 ? lb::kSvcFlagSynProxy : lb::kSvcFlagUoaOpp;
            if (director->service_add(spec)) {
                (void)director->dest_add(key, lb::DestSpec{rs, rport, 1});
                (void)director->laddr_add(key, *net::parse_ipv4("10.10.2.100"), "lan");
            }
            break;
        }
        case 5:
            (void)director->laddr_del(key, *net::parse_ipv4("10.10.2.100"));
            break;
        case 6:
            (void)director->laddr_add(key, *net::parse_ipv4("10.10.2.101"), "lan");
            break;
        case 7:
            director->rotate_cookie_secrets(net::cookie_count(worker->now_ms()));
            break;
        default:
            return;
    }
    director->commit();
}

// A valid-checksum IPv4 frame from a compact description, so the fuzzer gets past the
// checksum checks. bytes: [src sel | dst sel << 4][proto][ip flags][sport sel | dport sel << 4]
// then the L4 header and payload (TCP/UDP ports replaced from the tables when selected).
Bytes Harness::templated(uint8_t port, Cursor c) {
    const uint8_t sel = c.byte(), proto_sel = c.byte(), ipf = c.byte(), psel = c.byte(0xff);
    const uint32_t saddr = kAddrs[sel & 0x0f], daddr = kAddrs[sel >> 4];
    const uint8_t proto = proto_sel == 0   ? net::kIpProtoTcp
                          : proto_sel == 1 ? net::kIpProtoUdp
                          : proto_sel == 2 ? net::kIpProtoIcmp
                                           : proto_sel;
    const size_t opt_len = (ipf & 0x20) ? 4 : 0;
    Bytes l4(c.p, c.p + c.n);
    const size_t min_l4 = proto == net::kIpProtoTcp ? 20 : proto == net::kIpProtoUdp ? 8 : 0;
    if (l4.size() < min_l4) l4.resize(min_l4, 0);
    if (proto == net::kIpProtoTcp && !(ipf & 0x80) &&
        ((l4[12] >> 4) < 5 || size_t(l4[12] >> 4) * 4 > l4.size()))
        l4[12] = uint8_t((l4[12] & 0x0f) | 0x50);  // a usable data offset unless asked not to
    if (proto == net::kIpProtoUdp && !(ipf & 0x80)) put16(&l4[4], static_cast<uint16_t>(l4.size()));
    if (min_l4) {
        if ((psel & 0x0f) != 0x0f) put16(&l4[0], kPorts[psel & 0x0f]);
        if ((psel >> 4) != 0x0f) put16(&l4[2], kPorts[psel >> 4]);
    }
    Bytes f(kEth + 20 + opt_len + l4.size());
    if (f.size() > kMaxFrame) f.resize(kMaxFrame);
    const net::MacAddr our = DpdkEnvironment::port_mac(port);
    put_mac(&f[0], (ipf & 0x08) ? net::kBroadcastMac : (ipf & 0x10) ? peer_mac(0) : our);
    put_mac(&f[6], peer_mac(saddr));
    put16(&f[12], net::kEtherTypeIpv4);
    uint8_t* ip = &f[kEth];
    ip[0] = uint8_t(0x40 | ((20 + opt_len) / 4));
    put16(ip + 2, static_cast<uint16_t>(std::min(f.size() - kEth, size_t(0xffff))));
    put16(ip + 4, 0x1234);
    put16(ip + 6, uint16_t(((ipf & 0x01) ? 0x2000 : 0x4000) | ((ipf & 0x02) ? 0x10 : 0)));
    ip[8] = (ipf & 0x04) ? 0 : 64;
    ip[9] = proto;
    std::memcpy(ip + 12, &saddr, 4);
    std::memcpy(ip + 16, &daddr, 4);
    if (opt_len) std::memset(ip + 20, 1, opt_len);  // NOPs
    copy_bytes(ip + 20 + opt_len, l4.data(), f.size() - kEth - 20 - opt_len);
    fix_checksums(f, !(ipf & 0x40));
    return f;
}

// IPv6 frames: [src sel | dst sel << 4][proto sel][flags][port sel] then the L4 bytes.
// proto sel 0 TCP, 1 UDP, 2 ICMPv6 (the body's first byte is its type: echo, ND, errors...),
// else that next header. flags: bit0 a fragment header (bit1: a later fragment, bit2: more
// fragments), bit3 a destination options header, bit4 hop limit 255 (ND), bit5 to the
// solicited-node multicast address of dst (its MAC too), bit6 checksum left as is.
const char* const kAddrs6[16] = {
    "2001:db8:1::2", "2001:db8:1::3",   "2001:db8:1::100", "2001:db8:1::164",  "2001:db8:1::1",
    "2001:db8:2::1", "2001:db8:2::100", "2001:db8:2::2",   "2001:db8:2::3",    "::",
    "::1",           "ff02::1",         "fe80::1",         "::ffff:10.10.1.2", "2001:db8:9::9",
    "2001:db8:1::2"};

Bytes Harness::templated6(uint8_t port, Cursor c) {
    const uint8_t sel = c.byte(), proto_sel = c.byte(), fl = c.byte(), psel = c.byte(0xff);
    const net::InetAddr src = *net::parse_inet(kAddrs6[sel & 0x0f]);
    net::InetAddr dst = *net::parse_inet(kAddrs6[sel >> 4]);
    const uint8_t proto = proto_sel == 0   ? net::kIpProtoTcp
                          : proto_sel == 1 ? net::kIpProtoUdp
                          : proto_sel == 2 ? net::kIpProtoIcmp6
                                           : proto_sel;
    Bytes l4(c.p, c.p + c.n);
    const size_t min_l4 = proto == net::kIpProtoTcp ? 20 : proto == net::kIpProtoUdp ? 8 : 0;
    if (l4.size() < min_l4) l4.resize(min_l4, 0);
    if (proto == net::kIpProtoTcp && ((l4[12] >> 4) < 5 || size_t(l4[12] >> 4) * 4 > l4.size()))
        l4[12] = uint8_t((l4[12] & 0x0f) | 0x50);
    if (proto == net::kIpProtoUdp) put16(&l4[4], static_cast<uint16_t>(l4.size()));
    if (min_l4) {
        if ((psel & 0x0f) != 0x0f) put16(&l4[0], kPorts[psel & 0x0f]);
        if ((psel >> 4) != 0x0f) put16(&l4[2], kPorts[psel >> 4]);
    }
    // The L4 checksum over the whole upper-layer packet (a later fragment keeps its bytes).
    const bool later = (fl & 0x01) && (fl & 0x02);
    const size_t coff = proto == net::kIpProtoTcp ? 16 : proto == net::kIpProtoUdp ? 6 : 2;
    const bool has_csum =
        proto == net::kIpProtoTcp || proto == net::kIpProtoUdp || proto == net::kIpProtoIcmp6;
    uint8_t mdst[6] = {0x33, 0x33, 0xff, dst.b[13], dst.b[14], dst.b[15]};
    if (fl & 0x20) {
        const net::InetAddr target = dst;
        dst = *net::parse_inet("ff02::1:ff00:0");
        std::memcpy(dst.b + 13, target.b + 13, 3);
    }
    if (has_csum && !later && !(fl & 0x40) && l4.size() >= coff + 2) {
        put16(&l4[coff], 0);
        const uint16_t csum = net::ipv6_l4_checksum(src.b, dst.b, proto, l4.data(), l4.size());
        std::memcpy(&l4[coff], &csum, 2);
    }
    Bytes ext;
    uint8_t first = proto;
    if (fl & 0x08) {  // destination options: PadN
        ext.insert(ext.end(), {first, 0, 1, 4, 0, 0, 0, 0});
        first = net::kIp6ExtDestOpts;
    }
    if (fl & 0x01) {
        const uint16_t off = later ? 8 : 0;
        const uint8_t nh = first;
        Bytes fh{nh,
                 0,
                 uint8_t((off | ((fl & 0x04) ? 1 : 0)) >> 8),
                 uint8_t((off | ((fl & 0x04) ? 1 : 0)) & 0xff),
                 0,
                 0,
                 0,
                 9};
        ext.insert(ext.begin(), fh.begin(), fh.end());
        first = net::kIp6ExtFragment;
    }
    Bytes f(kEth + 40 + ext.size() + l4.size());
    if (f.size() > kMaxFrame) f.resize(kMaxFrame);
    const net::MacAddr our = DpdkEnvironment::port_mac(port);
    if (fl & 0x20)
        std::memcpy(&f[0], mdst, 6);
    else
        put_mac(&f[0], our);
    put_mac(&f[6], peer_mac(0));
    put16(&f[12], net::kEtherTypeIpv6);
    uint8_t* ip = &f[kEth];
    ip[0] = 0x60;
    put16(ip + 4, static_cast<uint16_t>(f.size() - kEth - 40));
    ip[6] = first;
    ip[7] = (fl & 0x10) ? 255 : 64;
    std::memcpy(ip + 8, src.b, 16);
    std::memcpy(ip + 24, dst.b, 16);
    Bytes rest = ext;
    rest.insert(rest.end(), l4.begin(), l4.end());
    copy_bytes(ip + 40, rest.data(), f.size() - kEth - 40);
    return f;
}

// bytes: [op][spa sel | tpa sel << 4][flags: bit0 unicast to us, bit1 sha = peer of spa]
Bytes Harness::arp_templated(uint8_t port, Cursor c) {
    const uint8_t op = c.byte(), sel = c.byte(), fl = c.byte();
    const uint32_t spa = kAddrs[sel & 0x0f];
    Bytes f(kEth + 28, 0);
    const net::MacAddr sha = (fl & 0x02) ? peer_mac(spa) : peer_mac(0);
    put_mac(&f[0], (fl & 0x01) ? DpdkEnvironment::port_mac(port) : net::kBroadcastMac);
    put_mac(&f[6], sha);
    put16(&f[12], net::kEtherTypeArp);
    uint8_t* a = &f[kEth];
    put16(a, 1);
    put16(a + 2, net::kEtherTypeIpv4);
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, op <= 2 ? (op == 0 ? 1 : op) : op);
    put_mac(a + 8, sha);
    std::memcpy(a + 14, &spa, 4);
    const uint32_t tpa = kAddrs[sel >> 4];
    std::memcpy(a + 24, &tpa, 4);
    return f;
}

// The peer's answer to a frame the worker sent: the client (wan) or a real server (lan)
// answering it the way a TCP stack would, so handshakes complete and cookies are echoed (the
// fuzzer cannot guess a SipHash cookie). ARP requests get the peer's reply. bytes:
// [flags or 0 = natural][options: bit0 MSS, bit1 TS, bit2 SACK-perm, bit3 wscale][seq tweak]
// then the payload.
bool Harness::reply(uint8_t port, unsigned which, Cursor c, Bytes& out) {
    const auto& h = history_[port];
    if (h.empty()) return false;
    const Bytes& in = h[which % h.size()];
    if (in.size() < kEth + 28) return false;
    const uint8_t fl = c.byte(), optsel = c.byte(), tweak = c.byte();
    if (get16(&in[12]) == net::kEtherTypeArp) {
        const uint8_t* a = &in[kEth];
        if (get16(a + 6) != net::kArpOpRequest) return false;
        uint32_t tpa;
        std::memcpy(&tpa, a + 24, 4);
        const net::MacAddr peer = (fl & 0x80) ? peer_mac(0) : peer_mac(tpa);
        out.assign(kEth + 28, 0);
        put_mac(&out[0], (fl & 0x40) ? net::kBroadcastMac : DpdkEnvironment::port_mac(port));
        put_mac(&out[6], peer);
        put16(&out[12], net::kEtherTypeArp);
        uint8_t* r = &out[kEth];
        std::memcpy(r, a, 6);
        put16(r + 6, net::kArpOpReply);
        put_mac(r + 8, peer);
        std::memcpy(r + 14, a + 24, 4);  // spa = the address asked for
        std::memcpy(r + 18, a + 8, 10);  // tha/tpa = the asker
        return true;
    }
    if (get16(&in[12]) != net::kEtherTypeIpv4) return false;
    const uint8_t* ip = &in[kEth];
    const size_t ihl = size_t(ip[0] & 0x0f) * 4;
    const size_t total = get16(ip + 2);
    if (ihl < 20 || total < ihl || kEth + total > in.size()) return false;
    const uint8_t* l4 = ip + ihl;
    const uint8_t proto = ip[9];
    Bytes payload(c.p, c.p + c.n);
    Bytes l4out;
    if (proto == net::kIpProtoTcp) {
        if (total < ihl + 20) return false;
        const size_t thl = size_t(l4[12] >> 4) * 4;
        if (thl < 20 || ihl + thl > total) return false;
        const uint8_t tf = l4[13];
        const uint32_t seg = uint32_t(total - ihl - thl) + ((tf & net::kTcpSyn) ? 1 : 0) +
                             ((tf & net::kTcpFin) ? 1 : 0);
        uint8_t flags = fl;
        if (flags == 0) {
            if ((tf & (net::kTcpSyn | net::kTcpAck)) == net::kTcpSyn)
                flags = net::kTcpSyn | net::kTcpAck;
            else
                flags = net::kTcpAck | (payload.empty() ? 0 : net::kTcpPsh);
        }
        Bytes opts;
        if (optsel & 0x01) opts.insert(opts.end(), {2, 4, 0x05, 0xb4});  // MSS 1460
        if (optsel & 0x04) opts.insert(opts.end(), {1, 1, 4, 2});        // SACK permitted
        if (optsel & 0x08) opts.insert(opts.end(), {1, 3, 3, 7});        // wscale 7
        if (optsel & 0x02) {                                             // TS echoing theirs
            uint32_t their_ts = 0;
            for (size_t i = 20; i + 1 < thl;) {
                const uint8_t k = l4[i];
                if (k == 0) break;
                if (k == 1) {
                    ++i;
                    continue;
                }
                const uint8_t len = l4[i + 1];
                if (len < 2 || i + len > thl) break;
                if (k == 8 && len == 10) their_ts = get32(&l4[i + 2]);
                i += len;
            }
            opts.insert(opts.end(), {1, 1, 8, 10});
            const size_t at = opts.size();
            opts.resize(at + 8);
            put32(&opts[at], 0x00abcdef + tweak);
            put32(&opts[at + 4], their_ts);
        }
        if (optsel & 0x10) opts.insert(opts.end(), {1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 9});  // SACK
        if (optsel & 0x20)
            opts.insert(opts.end(), {1, 1, 254, 8, 0, 80, 1, 2, 3, 4});  // forged TOA
        while (opts.size() % 4) opts.push_back(1);
        if (opts.size() > 40) opts.resize(40);
        l4out.assign(20 + opts.size(), 0);
        std::memcpy(&l4out[0], l4 + 2, 2);  // sport = their dport
        std::memcpy(&l4out[2], l4, 2);
        const uint32_t their_seq = get32(l4 + 4), their_ack = get32(l4 + 8);
        uint32_t seq = (tf & net::kTcpAck) ? their_ack : 0;
        if ((flags & net::kTcpSyn) && !(tf & net::kTcpAck)) seq = 0x10000000u;  // fresh ISN
        // Small signed nudges of seq (high nibble) and ack (low nibble): off-by-a-few segments.
        const int32_t dseq = int32_t(int8_t(tweak & 0xf0)) >> 4;
        const int32_t dack = int32_t(int8_t(uint8_t(tweak << 4))) >> 4;
        put32(&l4out[4], seq + uint32_t(dseq));
        put32(&l4out[8], their_seq + seg + uint32_t(dack));
        l4out[12] = uint8_t((l4out.size() / 4) << 4);
        l4out[13] = flags;
        put16(&l4out[14], (optsel & 0x40) ? 0 : 29200);
        copy_bytes(l4out.data() + 20, opts.data(), opts.size());
        l4out.insert(l4out.end(), payload.begin(), payload.end());
    } else if (proto == net::kIpProtoUdp) {
        if (total < ihl + 8) return false;
        l4out.assign(8, 0);
        std::memcpy(&l4out[0], l4 + 2, 2);
        std::memcpy(&l4out[2], l4, 2);
        l4out.insert(l4out.end(), payload.begin(), payload.end());
        put16(&l4out[4], static_cast<uint16_t>(l4out.size()));
        if (fl & 0x01) put16(&l4out[6], 0xffff);  // marker: no checksum fix below => zero csum
    } else {
        return false;
    }
    out.assign(kEth + 20 + l4out.size(), 0);
    if (out.size() > kMaxFrame) out.resize(kMaxFrame);
    std::memcpy(&out[0], &in[6], 6);  // to the MAC it came from
    std::memcpy(&out[6], &in[0], 6);
    put16(&out[12], net::kEtherTypeIpv4);
    uint8_t* o = &out[kEth];
    o[0] = 0x45;
    put16(o + 2, static_cast<uint16_t>(out.size() - kEth));
    put16(o + 6, 0x4000);
    o[8] = 64;
    o[9] = proto;
    std::memcpy(o + 12, ip + 16, 4);
    std::memcpy(o + 16, ip + 12, 4);
    copy_bytes(o + 20, l4out.data(), out.size() - kEth - 20);
    const bool udp_no_csum = proto == net::kIpProtoUdp && (fl & 0x01);
    if (udp_no_csum) put16(o + 26, 0);
    fix_checksums(out, !udp_no_csum);
    return true;
}

void Harness::run(const uint8_t* data, size_t size) {
    SetUp();
    check_gtest("SetUp");
    Cursor in{data, size};
    configure(in.byte());
    const uint64_t baseline = rte_mempool_in_use_count(DpdkEnvironment::pool());
    CHECK_EQ(baseline, 0);
    for (unsigned rec = 0; rec < kMaxRecords && in.n >= 4; ++rec) {
        const uint8_t op = in.byte(), dt = in.byte();
        size_t len = in.byte();
        len |= size_t(in.byte()) << 8;
        len = std::min({len, in.n, kMaxFrame});
        Cursor body{in.p, len};
        in.p += len;
        in.n -= len;
        const uint8_t port = op & 1;
        Bytes f;
        switch ((op >> 1) & 7) {
            case 0:
                f.assign(body.p, body.p + body.n);
                break;
            case 1:
            case 6:
                f.assign(body.p, body.p + body.n);
                fix_checksums(f, true);
                break;
            case 7:
                f = templated6(port, body);
                break;
            case 2:
                f = templated(port, body);
                break;
            case 3:
                (void)reply(port, op >> 5, body, f);
                break;
            case 4:
                control(body);
                break;
            case 5:
                f = arp_templated(port, body);
                break;
        }
        send_frame(port, f);
        if (op & 0x10) continue;  // batch with the next record: one burst
        worker->advance_clock(dt < 200 ? dt * 10u : (dt - 199u) * 5000u);
        poll_all();
    }
    poll_all();
    // Quiet period: everything expires, every held frame is sent or dropped (counted).
    for (int i = 0; i < 60 && (worker->conns().in_use() || worker->held_frames()); ++i) {
        worker->advance_clock(30'000);
        poll_all();
    }
    if (std::getenv("XVS_FUZZ_DEBUG")) {  // what this input reached (seed corpus review)
        const auto& cn = worker->counters();
        for (size_t i = 0; i < stack::kCounterCount; ++i)
            if (cn.v[i])
                std::fprintf(stderr, " %s=%llu", std::string(stack::kCounterInfo[i].name).c_str(),
                             (unsigned long long)cn.v[i]);
        std::fprintf(stderr, "\n");
    }
    CHECK_EQ(worker->conns().in_use(), 0);
    CHECK_EQ(worker->held_frames(), 0);  // fragments too: the quiet period outlasts their timeout
    CHECK_EQ(rte_mempool_in_use_count(DpdkEnvironment::pool()), baseline);
    CHECK_EQ(rte_mempool_in_use_count(DpdkEnvironment::reasm_pool()), 0);
    for (const auto& s : director->services()) {
        CHECK_EQ(s->sum_refs(), 0);
        for (const auto& d : s->dests) CHECK_EQ(d->sum_refs(), 0);
    }
    TearDown();
    check_gtest("TearDown");
    CHECK_EQ(rte_mempool_in_use_count(DpdkEnvironment::pool()), baseline);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    static DpdkEnvironment env;
    env.SetUp();
    if (::testing::Test::HasFailure() || !DpdkEnvironment::pool()) fail("EAL setup");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Harness h;
    h.run(data, size);
    return 0;
}
