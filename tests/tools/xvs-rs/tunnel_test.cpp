// The xvs-rs NatTun tc programs run by the kernel on exact frames (BPF_PROG_TEST_RUN, issue 20):
// ingress strips IPIP / GUE from a configured director and records the session (checked in the
// map); egress wraps the server's reply to that client toward the director, outer header byte
// for byte; unrelated packets either way come out unchanged, each under its counter; an idle
// session is forgotten. Needs root (CAP_BPF).
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <linux/pkt_cls.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tc_tunnel.h"

namespace {

using xvs::rs::TunnelConfig;
using xvs::rs::TunnelProgram;
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kDirector = 0x0a020064;  // 10.2.2.100: the director's local address
constexpr uint32_t kStranger = 0x0a020065;  // 10.2.2.101: not a director
constexpr uint32_t kRs = 0x0a030002;        // 10.3.0.2
constexpr uint32_t kClient = 0x0a010102;    // 10.1.1.2
constexpr uint16_t kCport = 40000, kRport = 8080, kGuePort = 6080;

Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}
Bytes eth() {
    return {0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x08, 0x00};
}
void put16(Bytes& b, size_t at, uint16_t v) {
    b[at] = uint8_t(v >> 8);
    b[at + 1] = uint8_t(v);
}
void put32(Bytes& b, size_t at, uint32_t v) {
    put16(b, at, uint16_t(v >> 16));
    put16(b, at + 2, uint16_t(v));
}
Bytes ipv4(uint32_t src, uint32_t dst, uint8_t proto, const Bytes& payload, uint16_t id = 7,
           uint8_t tos = 0) {
    Bytes h(20, 0);
    h[0] = 0x45;
    h[1] = tos;
    put16(h, 2, uint16_t(20 + payload.size()));
    put16(h, 4, id);
    put16(h, 6, 0x4000);
    h[8] = 64;
    h[9] = proto;
    put32(h, 12, src);
    put32(h, 16, dst);
    uint32_t sum = 0;
    for (size_t i = 0; i < 20; i += 2) sum += uint32_t(h[i] << 8 | h[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    put16(h, 10, uint16_t(~sum));
    return cat(h, payload);
}
Bytes udp(uint16_t sport, uint16_t dport, const Bytes& payload) {
    Bytes h(8, 0);
    put16(h, 0, sport);
    put16(h, 2, dport);
    put16(h, 4, uint16_t(8 + payload.size()));
    return cat(h, payload);
}
Bytes text(const std::string& s) {
    return Bytes(s.begin(), s.end());
}
// What the director sends in: the client's datagram DNATed to the RS (source: the client).
Bytes client_dgram() {
    return ipv4(kClient, kRs, 17, udp(kCport, kRport, text("query")), 42, 0x10);
}
// The server's answer to it, as its stack sends it.
Bytes reply_dgram(uint16_t to_port = kCport) {
    return ipv4(kRs, kClient, 17, udp(kRport, to_port, text("answer")), 99, 0x10);
}
Bytes gue_hdr() {
    return {0, 4, 0, 0};
}

class TunnelTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root to load a BPF program";
        auto loaded = TunnelProgram::load(1024);
        ASSERT_TRUE(loaded.ok()) << loaded.error();
        prog_ = std::make_unique<TunnelProgram>(std::move(*loaded));
        TunnelConfig cfg;
        cfg.directors_be = {htonl(kDirector)};
        cfg.gue_port = kGuePort;
        cfg.mtu = 1500;
        auto ok = xvs::rs::tunnel_configure(prog_->map_fd("xvs_rt_dirs"),
                                            prog_->map_fd("xvs_rt_config"), cfg);
        ASSERT_TRUE(ok.ok()) << ok.error();
    }
    struct Out {
        int verdict = 0;
        Bytes frame;
    };
    Out run(int fd, const Bytes& in) {
        Out out;
        out.frame.resize(4096);
        bpf_test_run_opts opts{};
        opts.sz = sizeof(opts);
        opts.data_in = in.data();
        opts.data_size_in = uint32_t(in.size());
        opts.data_out = out.frame.data();
        opts.data_size_out = uint32_t(out.frame.size());
        opts.repeat = 1;
        int err = bpf_prog_test_run_opts(fd, &opts);
        EXPECT_EQ(err, 0) << "bpf_prog_test_run_opts: " << std::strerror(-err);
        out.verdict = int(opts.retval);
        out.frame.resize(opts.data_size_out);
        return out;
    }
    Out in(const Bytes& f) { return run(prog_->ingress_fd(), f); }
    Out out(const Bytes& f) { return run(prog_->egress_fd(), f); }
    uint64_t counter(int which) {
        auto c = xvs::rs::tunnel_counters_read(prog_->map_fd("xvs_rt_stats"));
        EXPECT_TRUE(c.ok()) << c.error();
        return c ? (*c)[size_t(which)] : ~0ull;
    }
    bool session(uint32_t client, uint16_t cport, uint16_t lport, xvs_rt_session& s) {
        xvs_rt_key k{};
        k.client = htonl(client);
        k.client_port = htons(cport);
        k.local_port = htons(lport);
        k.proto = 17;
        return bpf_map_lookup_elem(prog_->map_fd("xvs_rt_sessions"), &k, &s) == 0;
    }
    std::unique_ptr<TunnelProgram> prog_;
};

TEST_F(TunnelTest, IpipInStripsAndRecordsReplyGoesBackInIpip) {
    Out r = in(cat(eth(), ipv4(kDirector, kRs, 4, client_dgram())));
    EXPECT_EQ(r.verdict, TC_ACT_OK);
    EXPECT_EQ(r.frame, cat(eth(), client_dgram())) << "Ethernet kept, inner packet as sent";
    EXPECT_EQ(counter(XVS_RT_in_decap), 1u);
    xvs_rt_session s{};
    ASSERT_TRUE(session(kClient, kCport, kRport, s));
    EXPECT_EQ(s.director, htonl(kDirector));
    EXPECT_EQ(s.gue, 0);
    EXPECT_NE(s.last_ns, 0u);

    r = out(cat(eth(), reply_dgram()));
    EXPECT_EQ(r.verdict, TC_ACT_OK);
    // Outer RS -> director, IPIP, TOS, id and DF of the reply, TTL 64, its own checksum.
    EXPECT_EQ(r.frame, cat(eth(), ipv4(kRs, kDirector, 4, reply_dgram(), 99, 0x10)));
    EXPECT_EQ(counter(XVS_RT_out_encap), 1u);
}

TEST_F(TunnelTest, GueInStripsAndReplyGoesBackInGue) {
    Out r = in(
        cat(eth(), ipv4(kDirector, kRs, 17, udp(50000, kGuePort, cat(gue_hdr(), client_dgram())))));
    EXPECT_EQ(r.frame, cat(eth(), client_dgram()));
    xvs_rt_session s{};
    ASSERT_TRUE(session(kClient, kCport, kRport, s));
    EXPECT_EQ(s.gue, 1);
    r = out(cat(eth(), reply_dgram()));
    ASSERT_EQ(r.frame.size(), 14u + 32u + reply_dgram().size());
    const uint16_t sport = uint16_t(r.frame[34] << 8 | r.frame[35]);
    EXPECT_GE(sport, 0xc000);  // flow entropy in 49152..65535
    EXPECT_EQ(r.frame,
              cat(eth(), ipv4(kRs, kDirector, 17,
                              udp(sport, kGuePort, cat(gue_hdr(), reply_dgram())), 99, 0x10)));
    EXPECT_EQ(counter(XVS_RT_out_encap), 1u);
}

// The server's own ICMP error about the client's datagram (port unreachable, quoting it) goes
// back through the tunnel like a reply; one about a packet of no session leaves as it is.
TEST_F(TunnelTest, IcmpErrorAboutASessionsPacketGoesBackInTheTunnel) {
    in(cat(eth(), ipv4(kDirector, kRs, 4, client_dgram())));
    auto icmp_err = [](const Bytes& quoted) {
        Bytes m{3, 3, 0, 0, 0, 0, 0, 0};
        m = cat(m, quoted);
        uint32_t sum = 0;
        for (size_t i = 0; i + 1 < m.size(); i += 2) sum += uint32_t(m[i] << 8 | m[i + 1]);
        if (m.size() & 1) sum += uint32_t(m.back() << 8);
        while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
        put16(m, 2, uint16_t(~sum));
        return ipv4(kRs, kClient, 1, m, 55, 0xc0);
    };
    const Bytes err = icmp_err(client_dgram());
    Out r = out(cat(eth(), err));
    EXPECT_EQ(r.verdict, TC_ACT_OK);
    EXPECT_EQ(r.frame, cat(eth(), ipv4(kRs, kDirector, 4, err, 55, 0xc0)));
    EXPECT_EQ(counter(XVS_RT_out_encap), 1u);
    // About another client port (no session): untouched.
    const Bytes stray =
        cat(eth(), icmp_err(ipv4(kClient, kRs, 17, udp(kCport + 1, kRport, text("q")), 42)));
    EXPECT_EQ(out(stray).frame, stray);
    EXPECT_EQ(counter(XVS_RT_out_other), 1u);
}

TEST_F(TunnelTest, UnrelatedPacketsAreUntouched) {
    // Not from a director: an IPIP packet from a stranger, and plain traffic to the server.
    const Bytes stranger = cat(eth(), ipv4(kStranger, kRs, 4, client_dgram()));
    EXPECT_EQ(in(stranger).frame, stranger);
    const Bytes plain = cat(eth(), client_dgram());
    EXPECT_EQ(in(plain).frame, plain);
    // GUE from the director on another port.
    const Bytes other_port =
        cat(eth(), ipv4(kDirector, kRs, 17, udp(50000, 9999, cat(gue_hdr(), client_dgram()))));
    EXPECT_EQ(in(other_port).frame, other_port);
    EXPECT_EQ(counter(XVS_RT_in_other), 3u);
    EXPECT_EQ(counter(XVS_RT_in_decap), 0u);
    xvs_rt_session s{};
    EXPECT_FALSE(session(kClient, kCport, kRport, s));
    // The server's other replies (no session) leave as they are, also after one is recorded.
    const Bytes reply = cat(eth(), reply_dgram());
    EXPECT_EQ(out(reply).frame, reply);
    in(cat(eth(), ipv4(kDirector, kRs, 4, client_dgram())));
    const Bytes other_client = cat(eth(), reply_dgram(kCport + 1));
    EXPECT_EQ(out(other_client).frame, other_client);
    EXPECT_EQ(counter(XVS_RT_out_other), 2u);
    EXPECT_EQ(counter(XVS_RT_out_encap), 0u);
}

TEST_F(TunnelTest, IdleSessionIsForgotten) {
    in(cat(eth(), ipv4(kDirector, kRs, 4, client_dgram())));
    xvs_rt_config c{};
    uint32_t zero = 0;
    ASSERT_EQ(bpf_map_lookup_elem(prog_->map_fd("xvs_rt_config"), &zero, &c), 0);
    c.idle_ns = 1;  // anything older than 1 ns
    ASSERT_EQ(bpf_map_update_elem(prog_->map_fd("xvs_rt_config"), &zero, &c, BPF_ANY), 0);
    usleep(1000);
    const Bytes reply = cat(eth(), reply_dgram());
    EXPECT_EQ(out(reply).frame, reply);
    EXPECT_EQ(counter(XVS_RT_out_expired), 1u);
    xvs_rt_session s{};
    EXPECT_FALSE(session(kClient, kCport, kRport, s));
}

TEST_F(TunnelTest, ReplyTooBigForTheMtuOnceWrappedGoesAsIs) {
    in(cat(eth(), ipv4(kDirector, kRs, 4, client_dgram())));
    const Bytes big =
        cat(eth(), ipv4(kRs, kClient, 17, udp(kRport, kCport, Bytes(1500 - 28, 'x'))));
    EXPECT_EQ(out(big).frame, big);
    EXPECT_EQ(counter(XVS_RT_out_too_big), 1u);
}

// The session map is an LRU of the configured size: bounded whatever the number of clients.
TEST_F(TunnelTest, SessionMapIsBounded) {
    for (uint16_t p = 0; p < 1500; ++p)
        in(cat(eth(), ipv4(kDirector, kRs, 4,
                           ipv4(kClient, kRs, 17, udp(uint16_t(20000 + p), kRport, text("q"))))));
    EXPECT_EQ(counter(XVS_RT_in_decap), 1500u);
    xvs_rt_key k{}, nk{};
    unsigned n = 0;
    const int fd = prog_->map_fd("xvs_rt_sessions");
    for (int rc = bpf_map_get_next_key(fd, nullptr, &nk); rc == 0;
         rc = bpf_map_get_next_key(fd, &k, &nk)) {
        ++n;
        k = nk;
    }
    EXPECT_LE(n, 1024u);
    EXPECT_GT(n, 0u);
}

}  // namespace
