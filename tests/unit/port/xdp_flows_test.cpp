// The flow fast path of xvsd's XDP program (port/bpf/xvs_xdp.bpf.c, port/xdp_abi.h), run by
// the kernel on frames (BPF_PROG_TEST_RUN) with flows installed through port::XdpFlows: the
// rewritten frame byte for byte (checksums against a full recomputation), the verdict, the
// slot's counters read through the mapping, and every packet the fast path must leave to xvs.
// The program's no-socket verdict is set to XDP_DROP before loading, so "to xvs" reads
// XDP_DROP here, the fast path XDP_REDIRECT (or XDP_TX back out of the ingress interface).
// Needs root (CAP_BPF).
#include "port/xdp_flows.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "net/byteorder.h"
#include "xdp_test_program.h"

namespace {

using xvs::UniqueFd;
using xvs::net::InetAddr;
using xvs::port::XdpFlows;
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kToXvs = XDP_DROP;  // see the file comment
constexpr uint32_t kFast = XDP_REDIRECT;
constexpr uint8_t kTcp = 6;
constexpr uint8_t kUdp = 17;
constexpr uint8_t kAck = 0x10;
constexpr uint8_t kPsh = 0x08;

InetAddr addr(const char* s) {
    return *xvs::net::parse_inet(s);
}

uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// One's complement sum of big-endian 16-bit words, unfolded.
uint32_t sum16(const uint8_t* p, size_t n, uint32_t sum = 0) {
    for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(p[i] << 8 | p[i + 1]);
    if (n & 1) sum += uint32_t(p[n - 1] << 8);
    return sum;
}
uint16_t fold(uint32_t sum) {
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return uint16_t(sum);
}
void put16(uint8_t* p, uint16_t v) {
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}
uint16_t get16(const uint8_t* p) {
    return uint16_t(p[0] << 8 | p[1]);
}

// What a packet of the tests is made of; frame() gives it with every checksum computed in
// full (or, udp_no_checksum, a UDP checksum of 0 over IPv4).
struct Pkt {
    InetAddr src, dst;
    uint16_t sport = 0, dport = 0;  // host order
    uint8_t proto = kTcp;
    uint8_t ttl = 64;
    uint8_t tcp_flags = kAck;
    uint16_t frag_off = 0x4000;  // DF
    bool ip_options = false;
    bool udp_no_checksum = false;
    uint8_t dmac[6] = {2, 0, 0, 0, 0, 1};
    uint8_t smac[6] = {2, 0, 0, 0, 0, 2};
    Bytes payload;

    bool v6() const { return !src.is_v4(); }
    size_t l4_len() const { return (proto == kTcp ? 20 : 8) + payload.size(); }
    size_t ip_len() const { return (v6() ? 40 : ip_options ? 24 : 20) + l4_len(); }

    Bytes frame() const {
        Bytes f(14 + ip_len());
        uint8_t* p = f.data();
        std::memcpy(p, dmac, 6);
        std::memcpy(p + 6, smac, 6);
        put16(p + 12, v6() ? 0x86dd : 0x0800);
        uint8_t* ip = p + 14;
        uint8_t* l4;
        uint32_t pseudo;
        if (!v6()) {
            const size_t hl = ip_options ? 24 : 20;
            ip[0] = uint8_t(0x40 | hl / 4);
            put16(ip + 2, uint16_t(ip_len()));
            put16(ip + 4, 0x1234);
            put16(ip + 6, frag_off);
            ip[8] = ttl;
            ip[9] = proto;
            std::memcpy(ip + 12, src.b + 12, 4);
            std::memcpy(ip + 16, dst.b + 12, 4);
            if (ip_options) ip[20] = 1;  // NOPs and an end of list
            put16(ip + 10, uint16_t(~fold(sum16(ip, hl))));
            l4 = ip + hl;
            pseudo = sum16(ip + 12, 8) + proto + uint32_t(l4_len());
        } else {
            ip[0] = 0x60;
            put16(ip + 4, uint16_t(l4_len()));
            ip[6] = proto;
            ip[7] = ttl;
            std::memcpy(ip + 8, src.b, 16);
            std::memcpy(ip + 24, dst.b, 16);
            l4 = ip + 40;
            pseudo = sum16(ip + 8, 32) + proto + uint32_t(l4_len());
        }
        put16(l4, sport);
        put16(l4 + 2, dport);
        uint8_t* check;
        if (proto == kTcp) {
            put16(l4 + 4, 0x0102);  // seq
            put16(l4 + 8, 0x0304);  // ack
            l4[12] = 0x50;
            l4[13] = tcp_flags;
            put16(l4 + 14, 502);
            check = l4 + 16;
            std::copy(payload.begin(), payload.end(), l4 + 20);
        } else {
            put16(l4 + 4, uint16_t(l4_len()));
            check = l4 + 6;
            std::copy(payload.begin(), payload.end(), l4 + 8);
        }
        if (proto == kUdp && udp_no_checksum) return f;
        uint16_t c = uint16_t(~fold(sum16(l4, l4_len(), pseudo)));
        if (proto == kUdp && c == 0) c = 0xffff;
        put16(check, c);
        return f;
    }
};

class XdpFlowsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root to load a BPF program";
        std::string why;
        obj_ = xvs::test::load_xvs_xdp(XDP_DROP, &why);
        ASSERT_NE(obj_, nullptr) << why;
        prog_fd_ = bpf_program__fd(bpf_object__find_program_by_name(obj_, "xvs_xdp"));
        ASSERT_GE(prog_fd_, 0);
        auto fd_of = [&](const char* name) {
            bpf_map* map = bpf_object__find_map_by_name(obj_, name);
            return UniqueFd(map ? dup(bpf_map__fd(map)) : -1);
        };
        auto flows = XdpFlows::adopt("test", fd_of("xvs_xdp_flows"), fd_of("xvs_xdp_seen"),
                                     fd_of("xvs_xdp_conf"));
        ASSERT_TRUE(flows.ok()) << flows.error();
        flows_.emplace(std::move(*flows));
        ASSERT_TRUE(flows_->enable(true).ok());
    }
    void TearDown() override {
        flows_.reset();
        if (obj_) bpf_object__close(obj_);
    }

    // Runs one frame; *out is what the program left of it.
    uint32_t run(const Bytes& in, Bytes* out, uint32_t ingress_ifindex = 0) {
        out->assign(in.size() + 256, 0);
        xdp_md ctx{};
        ctx.data_end = uint32_t(in.size());
        ctx.ingress_ifindex = ingress_ifindex;
        bpf_test_run_opts opts{};
        opts.sz = sizeof(opts);
        opts.data_in = in.data();
        opts.data_size_in = uint32_t(in.size());
        opts.data_out = out->data();
        opts.data_size_out = uint32_t(out->size());
        if (ingress_ifindex) {
            opts.ctx_in = &ctx;
            opts.ctx_size_in = sizeof ctx;
        }
        opts.repeat = 1;
        const int err = bpf_prog_test_run_opts(prog_fd_, &opts);
        EXPECT_EQ(err, 0) << "bpf_prog_test_run_opts: " << std::strerror(-err);
        out->resize(opts.data_size_out);
        return opts.retval;
    }
    // Runs a frame the fast path must leave alone: it reaches xvs unchanged.
    void expect_to_xvs(const Pkt& p, const std::string& why) {
        SCOPED_TRACE(why);
        Bytes out;
        const Bytes in = p.frame();
        EXPECT_EQ(run(in, &out), kToXvs);
        EXPECT_EQ(out, in) << "left unchanged";
    }

    static xvs_xdp_flow_key key_of(const Pkt& p) {
        return xvs::port::xdp_flow_key(p.src, p.dst, xvs::net::hton16(p.sport),
                                       xvs::net::hton16(p.dport), p.proto);
    }
    // The flow rewriting p's tuple to `to`'s, out of interface 7 to to's MACs, slot `slot`.
    static xvs_xdp_flow flow_to(const Pkt& to, uint32_t slot, uint16_t flags = 0) {
        xvs_xdp_flow f{};
        std::memcpy(f.saddr, to.src.b, 16);
        std::memcpy(f.daddr, to.dst.b, 16);
        f.sport = xvs::net::hton16(to.sport);
        f.dport = xvs::net::hton16(to.dport);
        std::memcpy(f.dmac, to.dmac, 6);
        std::memcpy(f.smac, to.smac, 6);
        f.ifindex = 7;
        f.slot = slot;
        f.mtu = 1500;
        f.flags = uint16_t(flags | (to.v6() ? XVS_XDP_FLOW_V6 : 0));
        return f;
    }
    void install(const Pkt& from, const xvs_xdp_flow& f) {
        auto r = flows_->install(key_of(from), f);
        ASSERT_TRUE(r.ok()) << r.error();
    }

    bpf_object* obj_ = nullptr;
    int prog_fd_ = -1;
    std::optional<XdpFlows> flows_;
};

// A client's segment to a FULLNAT VIP leaves as LIP -> RS with new MACs, checksums right.
Pkt client_segment() {
    Pkt p;
    p.src = addr("10.0.0.2");
    p.dst = addr("10.10.1.100");
    p.sport = 40000;
    p.dport = 80;
    p.tcp_flags = kAck | kPsh;
    p.payload = Bytes(100, 0x5a);
    return p;
}
Pkt to_rs(const Pkt& in) {
    Pkt o = in;
    o.src = addr("10.10.2.1");
    o.dst = addr("10.10.2.10");
    o.sport = 5000;
    o.dport = 8080;
    const uint8_t d[6] = {2, 0, 0, 0, 0x0a, 0x10}, s[6] = {2, 0, 0, 0, 0x0a, 1};
    std::memcpy(o.dmac, d, 6);
    std::memcpy(o.smac, s, 6);
    return o;
}

TEST_F(XdpFlowsTest, FullnatSegmentIsRewrittenAndRedirectedAndCounted) {
    const Pkt in = client_segment();
    const Pkt want = to_rs(in);
    install(in, flow_to(want, 3));
    const uint64_t before = monotonic_ns();
    Bytes out;
    EXPECT_EQ(run(in.frame(), &out), kFast);
    EXPECT_EQ(out, want.frame()) << "addresses, ports, MACs and both checksums; TTL kept";
    const XdpFlows::Seen s = flows_->seen(3);
    EXPECT_EQ(s.packets, 1u);
    EXPECT_EQ(s.bytes, in.ip_len());
    EXPECT_GE(s.last_ns, before);
    EXPECT_LE(s.last_ns, monotonic_ns());
    EXPECT_EQ(flows_->seen(4).packets, 0u) << "other slots untouched";

    EXPECT_EQ(run(in.frame(), &out), kFast);
    EXPECT_EQ(flows_->seen(3).packets, 2u);
    EXPECT_EQ(flows_->seen(3).bytes, 2 * in.ip_len());
    install(in, flow_to(want, 3));
    EXPECT_EQ(flows_->seen(3).packets, 0u) << "an installed flow's slot counts from zero";
}

TEST_F(XdpFlowsTest, OutOfTheIngressInterfaceIsXdpTx) {
    const Pkt in = client_segment();
    xvs_xdp_flow f = flow_to(to_rs(in), 0);
    f.ifindex = 1;  // lo: the test run's ingress below
    install(in, f);
    Bytes out;
    EXPECT_EQ(run(in.frame(), &out, 1), uint32_t(XDP_TX));
    EXPECT_EQ(out, to_rs(in).frame());
}

TEST_F(XdpFlowsTest, NatDecrementsTheTtlAndLeavesTheLastHopToXvs) {
    Pkt in = client_segment();
    Pkt want = to_rs(in);
    want.src = in.src;  // NAT: the client's address stays
    want.sport = in.sport;
    want.ttl = 63;
    install(in, flow_to(want, 0, XVS_XDP_FLOW_TTL));
    Bytes out;
    EXPECT_EQ(run(in.frame(), &out), kFast);
    EXPECT_EQ(out, want.frame());
    in.ttl = 1;
    expect_to_xvs(in, "TTL 1 with a decrement: ICMP time exceeded is xvs's");
    in.ttl = 2;
    want.ttl = 1;
    EXPECT_EQ(run(in.frame(), &out), kFast);
    EXPECT_EQ(out, want.frame());
}

TEST_F(XdpFlowsTest, DrChangesOnlyTheMacs) {
    const Pkt in = client_segment();
    Pkt want = in;
    const uint8_t d[6] = {2, 0, 0, 0, 0x0a, 0x10};
    std::memcpy(want.dmac, d, 6);
    install(in, flow_to(want, 0));
    Bytes out;
    EXPECT_EQ(run(in.frame(), &out), kFast);
    EXPECT_EQ(out, want.frame());
}

TEST_F(XdpFlowsTest, UdpWithoutChecksumKeepsNone) {
    Pkt in = client_segment();
    in.proto = kUdp;
    in.udp_no_checksum = true;
    Pkt want = to_rs(in);
    install(in, flow_to(want, 0));
    Bytes out;
    EXPECT_EQ(run(in.frame(), &out), kFast);
    EXPECT_EQ(out, want.frame()) << "UDP checksum 0 (none) stays 0";
}

TEST_F(XdpFlowsTest, Ipv6FlowIsRewrittenWithHopLimit) {
    Pkt in = client_segment();
    in.src = addr("2001:db8:1::2");
    in.dst = addr("2001:db8:1::100");
    Pkt want = to_rs(in);
    want.src = addr("2001:db8:2::1");
    want.dst = addr("2001:db8:2::10");
    want.ttl = 63;
    install(in, flow_to(want, 9, XVS_XDP_FLOW_TTL));
    Bytes out;
    EXPECT_EQ(run(in.frame(), &out), kFast);
    EXPECT_EQ(out, want.frame());
    EXPECT_EQ(flows_->seen(9).bytes, in.ip_len());

    in.proto = kUdp;
    in.udp_no_checksum = true;  // invalid over IPv6: xvs drops it, counted
    install(in, flow_to(to_rs(in), 9, XVS_XDP_FLOW_V6));
    expect_to_xvs(in, "IPv6 UDP with checksum 0");
}

TEST_F(XdpFlowsTest, WhatTheFastPathLeavesToXvs) {
    const Pkt base = client_segment();
    install(base, flow_to(to_rs(base), 0));
    Pkt udp = base;
    udp.proto = kUdp;  // same addresses and ports, another protocol: another flow
    expect_to_xvs(udp, "no flow for UDP");
    for (const uint8_t flag : {uint8_t(0x02), uint8_t(0x01), uint8_t(0x04)}) {
        Pkt p = base;
        p.tcp_flags = uint8_t(kAck | flag);
        expect_to_xvs(p, "SYN, FIN or RST: a state change " + std::to_string(flag));
    }
    Pkt big = base;
    big.payload.resize(1500 - 40 + 1);
    expect_to_xvs(big, "longer than the egress MTU");
    Pkt frag = base;
    frag.frag_off = 0x2000;  // more fragments
    expect_to_xvs(frag, "a first fragment");
    frag.frag_off = 0x0010;
    expect_to_xvs(frag, "a later fragment");
    Pkt opts = base;
    opts.ip_options = true;
    expect_to_xvs(opts, "IPv4 options");
    Pkt truncated = base;
    Bytes f = truncated.frame();
    f.resize(14 + 20 + 10);  // half a TCP header
    Bytes out;
    EXPECT_EQ(run(f, &out), kToXvs) << "truncated TCP header";

    ASSERT_TRUE(flows_->enable(false).ok());
    expect_to_xvs(base, "fast path switched off");
    ASSERT_TRUE(flows_->enable(true).ok());
    EXPECT_EQ(run(base.frame(), &out), kFast);
    EXPECT_TRUE(flows_->remove(key_of(base)));
    EXPECT_FALSE(flows_->remove(key_of(base))) << "already gone";
    expect_to_xvs(base, "removed");

    Pkt v6flag = base;
    install(v6flag, flow_to(to_rs(v6flag), 0, XVS_XDP_FLOW_V6));
    expect_to_xvs(v6flag, "an IPv4 packet on a flow marked IPv6 (NAT64 is xvs's)");
}

TEST_F(XdpFlowsTest, InstallRefusesASlotOutOfRange) {
    const Pkt in = client_segment();
    auto r = flows_->install(key_of(in), flow_to(to_rs(in), XVS_XDP_MAX_FLOWS));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("out of range"), std::string::npos) << r.error();
}

// Random tuples, payloads, TTLs and rewrites in both families: the incremental checksums the
// program writes equal a full recomputation (up to the two forms of zero, which a receiver
// takes alike), every other byte is the expected one.
TEST_F(XdpFlowsTest, RandomRewritesMatchAFullRecomputation) {
    std::mt19937_64 rng(20261204);  // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible
    auto rand_addr = [&](bool v6) {
        InetAddr a;
        if (v6) {
            for (auto& b : a.b) b = uint8_t(rng());
            a.b[0] = 0x20;  // not the IPv4-mapped prefix
        } else {
            const uint32_t x = uint32_t(rng());
            a = InetAddr::v4(x);
        }
        return a;
    };
    for (int i = 0; i < 2000; ++i) {
        SCOPED_TRACE("iteration " + std::to_string(i));
        const bool v6 = rng() & 1;
        Pkt in;
        in.src = rand_addr(v6);
        in.dst = rand_addr(v6);
        in.sport = uint16_t(rng());
        in.dport = uint16_t(rng());
        in.proto = (rng() & 1) ? kTcp : kUdp;
        in.ttl = uint8_t(2 + rng() % 254);
        in.tcp_flags = uint8_t(rng() & 0xe8) | kAck;  // never SYN, FIN or RST
        in.udp_no_checksum = !v6 && in.proto == kUdp && rng() % 4 == 0;
        in.payload.resize(rng() % 300);
        for (auto& b : in.payload) b = uint8_t(rng());
        Pkt want = in;
        want.src = rand_addr(v6);
        want.dst = rand_addr(v6);
        want.sport = uint16_t(rng());
        want.dport = uint16_t(rng());
        for (auto& b : want.dmac) b = uint8_t(rng() & 0xfe);
        const bool ttl = rng() & 1;
        if (ttl) want.ttl = uint8_t(in.ttl - 1);
        install(in, flow_to(want, uint32_t(i), ttl ? XVS_XDP_FLOW_TTL : 0));
        Bytes out;
        ASSERT_EQ(run(in.frame(), &out), kFast);
        Bytes expect = want.frame();
        ASSERT_EQ(out.size(), expect.size());
        // Checksum fields: equal, or the other zero of one's complement.
        const size_t l4 = 14 + (v6 ? 40 : 20);
        std::vector<size_t> checks = {l4 + (in.proto == kTcp ? 16 : 6)};
        if (!v6) checks.push_back(14 + 10);
        for (const size_t at : checks) {
            const uint16_t got = get16(&out[at]), exp = get16(&expect[at]);
            if (got != exp && uint16_t(got + exp) == 0xffff && (got == 0 || exp == 0) &&
                !(in.proto == kUdp && at != 14 + 10))
                put16(&out[at], exp);
        }
        ASSERT_EQ(out, expect);
        ASSERT_TRUE(flows_->remove(key_of(in)));
    }
}

}  // namespace
