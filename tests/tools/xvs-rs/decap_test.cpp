// The xvs-rs XDP decapsulator run by the kernel on exact frames (BPF_PROG_TEST_RUN): IPIP and
// GUE v0/v1 to our address come out as Ethernet + the inner IPv4 packet byte for byte;
// everything else comes out unchanged, each under its counter. Needs root (CAP_BPF).
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "xdp_decap.h"

namespace {

using xvs::rs::DecapConfig;
using xvs::rs::DecapProgram;
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kDirector = 0x0a010101;  // 10.1.1.1
constexpr uint32_t kRs = 0x0a020202;        // 10.2.2.2: in the map
constexpr uint32_t kOtherRs = 0x0a020203;   // 10.2.2.3: not in the map
constexpr uint32_t kClient = 0x0a000001;    // 10.0.0.1
constexpr uint32_t kVip = 0x0a090909;       // 10.9.9.9

Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

Bytes eth(uint16_t type = 0x0800) {
    return {0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, uint8_t(type >> 8), uint8_t(type)};
}

void put16(Bytes& b, size_t at, uint16_t v) {
    b[at] = uint8_t(v >> 8);
    b[at + 1] = uint8_t(v);
}
void put32(Bytes& b, size_t at, uint32_t v) {
    put16(b, at, uint16_t(v >> 16));
    put16(b, at + 2, uint16_t(v));
}

Bytes ipv4(uint32_t src, uint32_t dst, uint8_t proto, const Bytes& payload, uint16_t frag = 0x4000,
           uint8_t id = 7) {
    Bytes h(20, 0);
    h[0] = 0x45;
    put16(h, 2, uint16_t(20 + payload.size()));
    h[5] = id;
    put16(h, 6, frag);
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

// The packet a client sent to the VIP, as the director tunnels it.
Bytes inner() {
    const std::string text = "hello through the tunnel";
    return ipv4(kClient, kVip, 17, udp(40001, 53, Bytes(text.begin(), text.end())), 0x4000, 42);
}

Bytes ipip(uint32_t dst, const Bytes& in, uint16_t frag = 0x4000) {
    return cat(eth(), ipv4(kDirector, dst, 4, in, frag));
}

Bytes gue(uint32_t dst, uint16_t port, const Bytes& gue_and_inner) {
    return cat(eth(), ipv4(kDirector, dst, 17, udp(45000, port, gue_and_inner)));
}

class DecapTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root to load a BPF program";
        auto loaded = DecapProgram::load();
        ASSERT_TRUE(loaded.ok()) << loaded.error();
        prog_ = std::make_unique<DecapProgram>(std::move(*loaded));
        configure(6080);
    }

    void configure(uint16_t port) {
        DecapConfig cfg;
        cfg.gue_port = port;
        cfg.addrs_be = {htonl(kRs), htonl(0x0a020299)};
        auto ok = xvs::rs::decap_configure(prog_->addrs_fd(), prog_->config_fd(), cfg);
        ASSERT_TRUE(ok.ok()) << ok.error();
    }

    struct Out {
        uint32_t verdict = 0;
        Bytes frame;
    };
    Out run(const Bytes& in) {
        Out out;
        out.frame.resize(4096);
        bpf_test_run_opts opts{};
        opts.sz = sizeof(opts);
        opts.data_in = in.data();
        opts.data_size_in = uint32_t(in.size());
        opts.data_out = out.frame.data();
        opts.data_size_out = uint32_t(out.frame.size());
        opts.repeat = 1;
        int err = bpf_prog_test_run_opts(prog_->prog_fd(), &opts);
        EXPECT_EQ(err, 0) << "bpf_prog_test_run_opts: " << std::strerror(-err);
        out.verdict = opts.retval;
        out.frame.resize(opts.data_size_out);
        return out;
    }

    // Every counter is 0 except `which`, which is `n`.
    void expect_only(int which, uint64_t n = 1) {
        auto c = xvs::rs::decap_counters_read(prog_->stats_fd());
        ASSERT_TRUE(c.ok()) << c.error();
        for (int i = 0; i < XVS_RS_COUNTER_MAX; ++i)
            EXPECT_EQ((*c)[size_t(i)], i == which ? n : 0) << xvs::rs::decap_counter_name(i);
    }

    void expect_decap(const Bytes& in, int counter) {
        Out out = run(in);
        EXPECT_EQ(out.verdict, uint32_t(XDP_PASS));
        EXPECT_EQ(out.frame, cat(eth(), inner())) << "Ethernet header kept, inner IPv4 as sent";
        expect_only(counter);
    }

    void expect_untouched(const Bytes& in, int counter) {
        Out out = run(in);
        EXPECT_EQ(out.verdict, uint32_t(XDP_PASS));
        EXPECT_EQ(out.frame, in);
        expect_only(counter);
    }

    std::unique_ptr<DecapProgram> prog_;
};

TEST_F(DecapTest, IpipToOurAddressLeavesEthernetAndInner) {
    expect_decap(ipip(kRs, inner()), XVS_RS_ipip_decap);
}

TEST_F(DecapTest, IpipWithOuterOptionsStripsTheWholeOuterHeader) {
    Bytes f = ipip(kRs, inner());
    f.insert(f.begin() + 14 + 20, {0x01, 0x01, 0x01, 0x01});  // four NOP options: ihl 6
    f[14] = 0x46;
    put16(f, 14 + 2, uint16_t(f.size() - 14));
    expect_decap(f, XVS_RS_ipip_decap);
}

TEST_F(DecapTest, IpipToAnotherAddressPassesUnchanged) {
    expect_untouched(ipip(kOtherRs, inner()), XVS_RS_ipip_pass);
}

TEST_F(DecapTest, IpipOuterFragmentPassesUnchanged) {
    expect_untouched(ipip(kRs, inner(), 0x2000), XVS_RS_ipip_pass);  // MF set
}

TEST_F(DecapTest, IpipWithTruncatedInnerIsMalformed) {
    Bytes in = inner();
    in.resize(12);
    expect_untouched(ipip(kRs, in), XVS_RS_ipip_malformed);
}

TEST_F(DecapTest, IpipWithInnerNotIpv4IsMalformed) {
    Bytes in = inner();
    in[0] = 0x65;
    expect_untouched(ipip(kRs, in), XVS_RS_ipip_malformed);
}

TEST_F(DecapTest, GueV0WithInnerIpv4) {
    expect_decap(gue(kRs, 6080, cat({0x00, 0x04, 0x00, 0x00}, inner())), XVS_RS_gue_decap);
}

TEST_F(DecapTest, GueV0SkipsOptionWords) {
    // hlen 2: eight option bytes after the 4-byte header.
    Bytes hdr = {0x02, 0x04, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 7, 8};
    expect_decap(gue(kRs, 6080, cat(hdr, inner())), XVS_RS_gue_decap);
}

TEST_F(DecapTest, GueV1DirectIpv4) {
    expect_decap(gue(kRs, 6080, inner()), XVS_RS_gue_decap);
}

TEST_F(DecapTest, GueOnAConfiguredPort) {
    configure(7777);
    expect_decap(gue(kRs, 7777, inner()), XVS_RS_gue_decap);
}

TEST_F(DecapTest, UdpToAnotherPortPassesUnchanged) {
    expect_untouched(gue(kRs, 53, cat({0x00, 0x04, 0x00, 0x00}, inner())), XVS_RS_other);
}

TEST_F(DecapTest, GueToTheOldPortAfterReconfigurePassesUnchanged) {
    configure(7777);
    expect_untouched(gue(kRs, 6080, inner()), XVS_RS_other);
}

TEST_F(DecapTest, GueToAnotherAddressPassesUnchanged) {
    expect_untouched(gue(kOtherRs, 6080, inner()), XVS_RS_gue_pass);
}

TEST_F(DecapTest, GueControlMessagePassesUnchanged) {
    expect_untouched(gue(kRs, 6080, cat({0x20, 0x00, 0x00, 0x00}, inner())), XVS_RS_gue_pass);
}

TEST_F(DecapTest, GueV0InnerIpv6PassesUnchanged) {
    expect_untouched(gue(kRs, 6080, cat({0x00, 41, 0x00, 0x00}, inner())), XVS_RS_gue_pass);
}

TEST_F(DecapTest, GueVersion2IsMalformed) {
    expect_untouched(gue(kRs, 6080, cat({0x80, 0x04, 0x00, 0x00}, inner())), XVS_RS_gue_malformed);
}

TEST_F(DecapTest, GueV0TruncatedHeaderIsMalformed) {
    expect_untouched(gue(kRs, 6080, {0x00, 0x04}), XVS_RS_gue_malformed);
}

TEST_F(DecapTest, GueV0OptionsPastTheFrameAreMalformed) {
    expect_untouched(gue(kRs, 6080, {0x1f, 0x04, 0x00, 0x00, 0x45, 0, 0, 20}),
                     XVS_RS_gue_malformed);
}

TEST_F(DecapTest, TruncatedOuterIpv4IsMalformed) {
    Bytes f = ipip(kRs, inner());
    f.resize(14 + 10);
    expect_untouched(f, XVS_RS_outer_malformed);
}

TEST_F(DecapTest, OuterIhlBelowFiveIsMalformed) {
    Bytes f = ipip(kRs, inner());
    f[14] = 0x44;
    expect_untouched(f, XVS_RS_outer_malformed);
}

TEST_F(DecapTest, OuterIhlPastTheFrameIsMalformed) {
    Bytes f = cat(eth(), ipv4(kDirector, kRs, 4, {}));
    f[14] = 0x4f;  // 60-byte header in a 20-byte packet
    expect_untouched(f, XVS_RS_outer_malformed);
}

TEST_F(DecapTest, NotIpv4PassesUnchanged) {
    Bytes arp = cat(eth(0x0806), Bytes(28, 0x11));
    expect_untouched(arp, XVS_RS_other);
}

TEST_F(DecapTest, PlainTcpToOurAddressPassesUnchanged) {
    expect_untouched(cat(eth(), ipv4(kClient, kRs, 6, Bytes(20, 0))), XVS_RS_other);
}

TEST_F(DecapTest, CountsAccumulate) {
    for (int i = 0; i < 3; ++i) run(ipip(kRs, inner()));
    expect_only(XVS_RS_ipip_decap, 3);
}

}  // namespace
