// The xvs-rs client-address readers (issue 16). The uoa tc ingress program run by the kernel on
// exact frames (BPF_PROG_TEST_RUN; needs root): an ipo datagram passes byte for byte and its
// flow is recorded both ways; an opp datagram (IPv4, IPv4 with options, IPv6) comes out as the
// plain UDP datagram it carried, checksum and lengths right, flow recorded; datagrams without
// UOA or with a bad opp header pass untouched under their counters. Also the loader's pieces
// that need no kernel: the cgroup2 mount lookup in /proc/self/mountinfo, and that both
// objects pass the verifier (the sockops and sock_addr programs have no test run).
#include "readers.h"

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

namespace {

using xvs::rs::ReaderKind;
using xvs::rs::ReaderObject;
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kLip = 0x0a020064;     // 10.2.2.100: the director's local address
constexpr uint32_t kRs = 0x0a020002;      // 10.2.2.2
constexpr uint32_t kClient = 0x0a010102;  // 10.1.1.2
constexpr uint16_t kLport = 5001, kRport = 5353, kCport = 40000;

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
// IPv4 with the given options (a multiple of 4 bytes) and a right header checksum.
Bytes ipv4(uint8_t proto, const Bytes& payload, const Bytes& options = {}) {
    Bytes h(20, 0);
    h[0] = uint8_t(0x40 | (5 + options.size() / 4));
    put16(h, 2, uint16_t(20 + options.size() + payload.size()));
    put16(h, 4, 7);
    put16(h, 6, 0x4000);
    h[8] = 64;
    h[9] = proto;
    put32(h, 12, kLip);
    put32(h, 16, kRs);
    h = cat(h, options);
    uint32_t sum = 0;
    for (size_t i = 0; i < h.size(); i += 2) sum += uint32_t(h[i] << 8 | h[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    put16(h, 10, uint16_t(~sum));
    return cat(h, payload);
}
Bytes v6addr(uint8_t last) {
    Bytes a(16, 0);
    a[0] = 0x20;
    a[1] = 0x01;
    a[2] = 0x0d;
    a[3] = 0xb8;
    a[15] = last;
    return a;
}
Bytes ipv6(uint8_t next, const Bytes& payload) {
    Bytes h(8, 0);
    h[0] = 0x60;
    put16(h, 4, uint16_t(payload.size()));
    h[6] = next;
    h[7] = 64;
    return cat(cat(cat(h, v6addr(0x64)), v6addr(2)), payload);
}
// The datagram xvs sends to the RS: LIP:lport -> RS:rport, a fixed UDP checksum (the readers
// never touch it; the pseudo-header does not see the UOA).
Bytes udp() {
    Bytes u(8, 0);
    put16(u, 0, kLport);
    put16(u, 2, kRport);
    const std::string text = "query";
    put16(u, 4, uint16_t(8 + text.size()));
    put16(u, 6, 0x1234);
    return cat(u, Bytes(text.begin(), text.end()));
}
Bytes uoa_opt_v4() {
    Bytes o{31, 8, 0, 0, 0, 0, 0, 0};
    put16(o, 2, kCport);
    put32(o, 4, kClient);
    return o;
}
Bytes uoa_opt_v6() {
    Bytes o{31, 20, 0, 0};
    put16(o, 2, kCport);
    return cat(o, v6addr(0x99));
}
Bytes opp(const Bytes& opt, uint8_t version) {
    Bytes h{uint8_t(version << 4), 17, 0, 0};
    put16(h, 2, uint16_t(4 + opt.size()));
    return cat(h, opt);
}

class UoaIngressTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root to load a BPF program";
        auto loaded = ReaderObject::load(ReaderKind::uoa, 1024);
        ASSERT_TRUE(loaded.ok()) << loaded.error();
        obj_ = std::make_unique<ReaderObject>(std::move(*loaded));
    }
    struct Out {
        int verdict = 0;
        Bytes frame;
    };
    Out in(const Bytes& frame) {
        Out out;
        out.frame.resize(4096);
        bpf_test_run_opts opts{};
        opts.sz = sizeof(opts);
        opts.data_in = frame.data();
        opts.data_size_in = uint32_t(frame.size());
        opts.data_out = out.frame.data();
        opts.data_size_out = uint32_t(out.frame.size());
        opts.repeat = 1;
        int err = bpf_prog_test_run_opts(obj_->prog_fd("xvs_uoa_ingress"), &opts);
        EXPECT_EQ(err, 0) << "bpf_prog_test_run_opts: " << std::strerror(-err);
        out.verdict = int(opts.retval);
        out.frame.resize(opts.data_size_out);
        return out;
    }
    uint64_t counter(int which) {
        auto c = xvs::rs::reader_counters_read(ReaderKind::uoa, obj_->map_fd("xvs_uoa_stats"));
        EXPECT_TRUE(c.ok()) << c.error();
        return c ? (*c)[size_t(which)].second : ~0ull;
    }
    static void mapped(unsigned int out[4], uint32_t v4) {
        out[0] = 0;
        out[1] = 0;
        out[2] = htonl(0xffff);
        out[3] = htonl(v4);
    }
    // The IPv4 flow LIP:lport at rport -> kClient:kCport was recorded both ways.
    void expect_v4_flow() {
        xvs_uoa_key fk{};
        mapped(fk.peer, kLip);
        fk.peer_port = htons(kLport);
        fk.local_port = htons(kRport);
        xvs_uoa_addr client{};
        ASSERT_EQ(bpf_map_lookup_elem(obj_->map_fd("xvs_uoa_fwd"), &fk, &client), 0)
            << "no forward entry";
        unsigned int want[4];
        mapped(want, kClient);
        EXPECT_EQ(std::memcmp(client.addr, want, 16), 0);
        EXPECT_EQ(client.port, htons(kCport));
        EXPECT_EQ(client.family, 4);
        xvs_uoa_key rk{};
        std::memcpy(rk.peer, want, 16);
        rk.peer_port = htons(kCport);
        rk.local_port = htons(kRport);
        xvs_uoa_addr director{};
        ASSERT_EQ(bpf_map_lookup_elem(obj_->map_fd("xvs_uoa_rev"), &rk, &director), 0)
            << "no reverse entry";
        std::memcpy(want, fk.peer, 16);
        EXPECT_EQ(std::memcmp(director.addr, want, 16), 0);
        EXPECT_EQ(director.port, htons(kLport));
        EXPECT_EQ(director.family, 4);
    }
    size_t flows() {
        xvs_uoa_key k{}, nk{};
        size_t n = 0;
        const int fd = obj_->map_fd("xvs_uoa_fwd");
        for (int rc = bpf_map_get_next_key(fd, nullptr, &nk); rc == 0;
             rc = bpf_map_get_next_key(fd, &k, &nk)) {
            ++n;
            k = nk;
        }
        return n;
    }
    std::unique_ptr<ReaderObject> obj_;
};

TEST_F(UoaIngressTest, IpoPassesUnchangedAndRecordsTheFlow) {
    const Bytes frame = cat(eth(), ipv4(17, udp(), uoa_opt_v4()));
    Out r = in(frame);
    EXPECT_EQ(r.verdict, TC_ACT_OK);
    EXPECT_EQ(r.frame, frame) << "the kernel accepts the option: left in place";
    EXPECT_EQ(counter(XVS_UOA_ipo_seen), 1u);
    expect_v4_flow();
}

TEST_F(UoaIngressTest, IpoAfterOtherOptionsIsFound) {
    // NOP, then a 4-byte unknown option (code 30), the UOA option, padded with NOPs.
    const Bytes opts = cat(cat(Bytes{1, 30, 4, 0xaa, 0xbb}, uoa_opt_v4()), Bytes{1, 1, 1});
    ASSERT_EQ(opts.size() % 4, 0u);
    const Bytes frame = cat(eth(), ipv4(17, udp(), opts));
    EXPECT_EQ(in(frame).frame, frame);
    EXPECT_EQ(counter(XVS_UOA_ipo_seen), 1u);
    expect_v4_flow();
}

TEST_F(UoaIngressTest, OppIsStrippedToThePlainDatagram) {
    Out r = in(cat(eth(), ipv4(248, cat(opp(uoa_opt_v4(), 1), udp()))));
    EXPECT_EQ(r.verdict, TC_ACT_OK);
    EXPECT_EQ(r.frame, cat(eth(), ipv4(17, udp())))
        << "protocol 17, total length - 12, header checksum recomputed, UDP as sent";
    EXPECT_EQ(counter(XVS_UOA_opp_stripped), 1u);
    expect_v4_flow();
}

TEST_F(UoaIngressTest, OppBehindIpOptionsKeepsThem) {
    const Bytes opts{1, 1, 1, 0};  // NOP NOP NOP EOL: IHL 6
    Out r = in(cat(eth(), ipv4(248, cat(opp(uoa_opt_v4(), 1), udp()), opts)));
    EXPECT_EQ(r.frame, cat(eth(), ipv4(17, udp(), opts)));
    EXPECT_EQ(counter(XVS_UOA_opp_stripped), 1u);
    expect_v4_flow();
}

TEST_F(UoaIngressTest, Ipv6OppIsStripped) {
    Out r = in(cat(eth(0x86dd), ipv6(248, cat(opp(uoa_opt_v6(), 2), udp()))));
    EXPECT_EQ(r.frame, cat(eth(0x86dd), ipv6(17, udp())));
    EXPECT_EQ(counter(XVS_UOA_opp_stripped), 1u);
    xvs_uoa_key fk{};
    const Bytes lip = v6addr(0x64);
    std::memcpy(fk.peer, lip.data(), 16);
    fk.peer_port = htons(kLport);
    fk.local_port = htons(kRport);
    xvs_uoa_addr client{};
    ASSERT_EQ(bpf_map_lookup_elem(obj_->map_fd("xvs_uoa_fwd"), &fk, &client), 0);
    EXPECT_EQ(std::memcmp(client.addr, v6addr(0x99).data(), 16), 0);
    EXPECT_EQ(client.port, htons(kCport));
    EXPECT_EQ(client.family, 6);
}

TEST_F(UoaIngressTest, DatagramsWithoutUoaOrWithABadOneAreUntouched) {
    const Bytes plain = cat(eth(), ipv4(17, udp()));
    EXPECT_EQ(in(plain).frame, plain);
    const Bytes other_opt = cat(eth(), ipv4(17, udp(), Bytes{1, 30, 4, 0xaa, 0xbb, 0, 0, 0}));
    EXPECT_EQ(in(other_opt).frame, other_opt);
    EXPECT_EQ(counter(XVS_UOA_other), 2u);
    // opp with a length that disagrees with its option, and with protocol 6 inside.
    Bytes bad_len = opp(uoa_opt_v4(), 1);
    put16(bad_len, 2, 24);
    const Bytes f1 = cat(eth(), ipv4(248, cat(bad_len, udp())));
    EXPECT_EQ(in(f1).frame, f1);
    Bytes tcp_inside = opp(uoa_opt_v4(), 1);
    tcp_inside[1] = 6;
    const Bytes f2 = cat(eth(), ipv4(248, cat(tcp_inside, udp())));
    EXPECT_EQ(in(f2).frame, f2);
    // ipo whose option says length 9.
    Bytes bad_opt = uoa_opt_v4();
    bad_opt[1] = 9;
    const Bytes f3 = cat(eth(), ipv4(17, udp(), cat(bad_opt, Bytes{0, 0, 0, 0})));
    EXPECT_EQ(in(f3).frame, f3);
    EXPECT_EQ(counter(XVS_UOA_malformed), 3u);
    EXPECT_EQ(flows(), 0u) << "nothing recorded";
}

TEST(ReadersLoad, TheToaProgramsPassTheVerifier) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to load a BPF program";
    auto loaded = ReaderObject::load(ReaderKind::toa);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    for (const char* p : {"xvs_toa_sockops", "xvs_toa_peer4", "xvs_toa_peer6"})
        EXPECT_GE(loaded->prog_fd(p), 0) << p;
}

TEST(Cgroup2MountPoint, FindsTheFirstCgroup2Mount) {
    const std::string text =
        "24 30 0:22 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
        "33 24 0:28 / /sys/fs/cgroup/cpu rw,relatime shared:10 - cgroup cgroup rw,cpu\n"
        "40 24 0:35 / /sys/fs/cgroup/unified rw,relatime shared:17 - cgroup2 cgroup2 rw\n"
        "41 24 0:36 / /run/other rw - cgroup2 none rw\n";
    auto p = xvs::rs::cgroup2_mount_point(text);
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(*p, "/sys/fs/cgroup/unified");
}

TEST(Cgroup2MountPoint, NoneWhenOnlyV1AndEscapesDecoded) {
    EXPECT_FALSE(xvs::rs::cgroup2_mount_point(
                     "33 24 0:28 / /sys/fs/cgroup/cpu rw shared:10 - cgroup cgroup rw,cpu\n"
                     "34 24 0:29 / /mnt/cgroup2\\040like rw - tmpfs cgroup2 rw\n")
                     .has_value())
        << "a v1 mount, and a tmpfs whose source is named cgroup2";
    auto p = xvs::rs::cgroup2_mount_point("50 1 0:40 / /run/my\\040cg rw - cgroup2 none rw\n");
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(*p, "/run/my cg");
}

}  // namespace
