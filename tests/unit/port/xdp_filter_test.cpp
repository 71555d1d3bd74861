// xvsd's XDP program (port/bpf/xvs_xdp.bpf.c) run by the kernel on frames (BPF_PROG_TEST_RUN),
// with its address map filled by XdpAddrMap::sync: which frames go to xvs and which to the
// kernel. The test sets the program's no-socket verdict to XDP_TX before loading, so "to xvs"
// reads XDP_TX with the empty xsks_map and "to the kernel" XDP_PASS. Needs root (CAP_BPF).
#include "port/xdp_filter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "xdp_test_program.h"

namespace {

using xvs::net::InetAddr;
using xvs::port::XdpOwner;
using Bytes = std::vector<uint8_t>;

InetAddr v4(const char* s) {
    return *xvs::net::parse_inet(s);
}

constexpr uint32_t kToXvs = XDP_TX;  // see the file comment
constexpr uint32_t kToKernel = XDP_PASS;

Bytes eth(uint16_t type, bool multicast = false) {
    return {uint8_t(multicast ? 0x33 : 0x02),
            0,
            0,
            0,
            0,
            0x01,
            0x02,
            0,
            0,
            0,
            0,
            0x02,
            uint8_t(type >> 8),
            uint8_t(type)};
}
void append(Bytes& b, const uint8_t* p, size_t n) {
    b.insert(b.end(), p, p + n);
}
void append_addr4(Bytes& b, const char* s) {
    append(b, v4(s).b + 12, 4);
}
void append_addr6(Bytes& b, const char* s) {
    append(b, v4(s).b, 16);
}

Bytes arp(uint16_t op, const char* spa, const char* tpa) {
    Bytes f = eth(0x0806);
    const uint8_t head[] = {0, 1, 8, 0, 6, 4, 0, uint8_t(op)};
    append(f, head, sizeof head);
    const uint8_t mac[6] = {2, 0, 0, 0, 0, 2};
    append(f, mac, 6);
    append_addr4(f, spa);
    append(f, mac, 6);
    append_addr4(f, tpa);
    return f;
}

Bytes ipv4(const char* src, const char* dst, uint8_t proto = 6) {
    Bytes f = eth(0x0800);
    const uint8_t head[] = {0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, proto, 0, 0};
    append(f, head, sizeof head);
    append_addr4(f, src);
    append_addr4(f, dst);
    f.resize(f.size() + 20);  // a TCP header's worth
    return f;
}

Bytes ipv6(const char* src, const char* dst, uint8_t next = 6, Bytes l4 = Bytes(20)) {
    Bytes f = eth(0x86dd, dst[0] == 'f' && dst[1] == 'f');
    const uint8_t head[] = {0x60, 0, 0, 0, 0, uint8_t(l4.size()), next, 255};
    append(f, head, sizeof head);
    append_addr6(f, src);
    append_addr6(f, dst);
    f.insert(f.end(), l4.begin(), l4.end());
    return f;
}

Bytes nd(uint8_t type, const char* src, const char* dst, const char* target) {
    Bytes l4 = {type, 0, 0, 0, 0, 0, 0, 0};
    append_addr6(l4, target);
    return ipv6(src, dst, 58, l4);
}

class XdpFilterTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root to load a BPF program";
        std::string why;
        obj_ = xvs::test::load_xvs_xdp(XDP_TX, &why);
        ASSERT_NE(obj_, nullptr) << why;
        bpf_program* prog = bpf_object__find_program_by_name(obj_, "xvs_xdp");
        ASSERT_NE(prog, nullptr);
        prog_fd_ = bpf_program__fd(prog);
        bpf_map* addrs = bpf_object__find_map_by_name(obj_, "xvs_xdp_addrs");
        ASSERT_NE(addrs, nullptr);
        map_.emplace(xvs::port::XdpAddrMap::adopt("test", dup(bpf_map__fd(addrs))));
        sync({{v4("10.10.2.1"), XdpOwner::Xvs},
              {v4("10.10.1.100"), XdpOwner::Xvs},
              {v4("2001:db8:2::1"), XdpOwner::Xvs},
              {v4("10.10.2.9"), XdpOwner::Kernel},
              {v4("2001:db8:2::9"), XdpOwner::Kernel}});
    }
    void TearDown() override {
        map_.reset();
        if (obj_) bpf_object__close(obj_);
    }
    void sync(const std::vector<std::pair<InetAddr, XdpOwner>>& want) {
        auto r = map_->sync(want);
        ASSERT_TRUE(r.ok()) << r.error();
        last_changed_ = *r;
    }
    uint32_t run(const Bytes& in) {
        Bytes out(4096);
        bpf_test_run_opts opts{};
        opts.sz = sizeof(opts);
        opts.data_in = in.data();
        opts.data_size_in = uint32_t(in.size());
        opts.data_out = out.data();
        opts.data_size_out = uint32_t(out.size());
        opts.repeat = 1;
        int err = bpf_prog_test_run_opts(prog_fd_, &opts);
        EXPECT_EQ(err, 0) << "bpf_prog_test_run_opts: " << std::strerror(-err);
        out.resize(opts.data_size_out);
        EXPECT_EQ(out, in) << "frames pass unchanged";
        return opts.retval;
    }

    bpf_object* obj_ = nullptr;
    int prog_fd_ = -1;
    std::optional<xvs::port::XdpAddrMap> map_;
    unsigned last_changed_ = 0;
};

TEST_F(XdpFilterTest, ArpAboutKernelAddressesGoesToTheKernelTheRestToXvs) {
    EXPECT_EQ(run(arp(1, "10.10.2.2", "10.10.2.1")), kToXvs);     // request for xvs
    EXPECT_EQ(run(arp(2, "10.10.2.2", "10.10.2.1")), kToXvs);     // reply to xvs's request
    EXPECT_EQ(run(arp(1, "10.10.2.2", "10.10.2.9")), kToKernel);  // request for the kernel
    EXPECT_EQ(run(arp(2, "10.10.2.2", "10.10.2.9")), kToKernel);  // reply to the kernel's
    EXPECT_EQ(run(arp(1, "10.10.2.2", "10.10.2.77")), kToXvs);    // counted by xvs
    // Gratuitous ARP of a neighbour: xvs updates its entry.
    EXPECT_EQ(run(arp(2, "10.10.2.2", "10.10.2.2")), kToXvs);
}

TEST_F(XdpFilterTest, Ipv4ByDestination) {
    EXPECT_EQ(run(ipv4("10.10.1.2", "10.10.1.100")), kToXvs);   // VIP
    EXPECT_EQ(run(ipv4("10.10.2.2", "10.10.2.1")), kToXvs);     // director address
    EXPECT_EQ(run(ipv4("10.10.2.2", "10.10.2.9")), kToKernel);  // the kernel's
    EXPECT_EQ(run(ipv4("10.10.2.2", "10.10.1.2")), kToXvs);     // transit: a NAT reply
    EXPECT_EQ(run(ipv4("10.10.2.2", "224.0.0.5", 89)), kToKernel);
    EXPECT_EQ(run(ipv4("10.10.2.2", "255.255.255.255", 17)), kToKernel);
}

TEST_F(XdpFilterTest, Ipv6AndNeighbourDiscovery) {
    EXPECT_EQ(run(nd(135, "2001:db8:2::2", "ff02::1:ff00:1", "2001:db8:2::1")), kToXvs);
    EXPECT_EQ(run(nd(135, "2001:db8:2::2", "ff02::1:ff00:9", "2001:db8:2::9")), kToKernel);
    EXPECT_EQ(run(nd(136, "2001:db8:2::2", "2001:db8:2::1", "2001:db8:2::2")), kToXvs);
    EXPECT_EQ(run(nd(136, "2001:db8:2::2", "2001:db8:2::9", "2001:db8:2::2")), kToKernel);
    // Unsolicited advertisement of a neighbour, solicitation for someone else: xvs's.
    EXPECT_EQ(run(nd(136, "2001:db8:2::2", "ff02::1", "2001:db8:2::2")), kToXvs);
    EXPECT_EQ(run(nd(135, "2001:db8:2::2", "ff02::1:ff00:77", "2001:db8:2::77")), kToXvs);
    EXPECT_EQ(run(ipv6("2001:db8:2::2", "2001:db8:2::1")), kToXvs);
    EXPECT_EQ(run(ipv6("2001:db8:2::2", "2001:db8:2::9")), kToKernel);
    EXPECT_EQ(run(ipv6("fe80::2", "fe80::1")), kToKernel);
    EXPECT_EQ(run(ipv6("fe80::2", "ff02::1", 58, Bytes(8))), kToKernel);
    EXPECT_EQ(run(ipv6("2001:db8:2::2", "2001:db8:1::2")), kToXvs);  // transit
}

TEST_F(XdpFilterTest, OtherEthertypesAndRuntsGoToTheKernel) {
    Bytes lldp = eth(0x88cc);
    lldp.resize(60);
    EXPECT_EQ(run(lldp), kToKernel);
    Bytes runt = ipv4("10.10.1.2", "10.10.1.100");
    runt.resize(20);
    EXPECT_EQ(run(runt), kToKernel);
}

TEST_F(XdpFilterTest, SyncFollowsAddressChanges) {
    EXPECT_EQ(last_changed_, 5u);
    EXPECT_EQ(run(arp(1, "10.10.2.2", "10.10.2.9")), kToKernel);
    // 10.10.2.9 moves from the kernel to xvs, the VIP goes, the kernel gains 10.10.2.50.
    const std::vector<std::pair<InetAddr, XdpOwner>> next = {
        {v4("10.10.2.1"), XdpOwner::Xvs},
        {v4("2001:db8:2::1"), XdpOwner::Xvs},
        {v4("10.10.2.9"), XdpOwner::Xvs},
        {v4("10.10.2.50"), XdpOwner::Kernel},
        {v4("2001:db8:2::9"), XdpOwner::Kernel}};
    sync(next);
    EXPECT_EQ(last_changed_, 3u);
    EXPECT_EQ(run(arp(1, "10.10.2.2", "10.10.2.9")), kToXvs);
    EXPECT_EQ(run(ipv4("10.10.2.2", "10.10.2.9")), kToXvs);
    EXPECT_EQ(run(arp(1, "10.10.2.2", "10.10.2.50")), kToKernel);
    EXPECT_EQ(run(ipv4("10.10.2.2", "10.10.2.50")), kToKernel);
    sync(next);
    EXPECT_EQ(last_changed_, 0u) << "nothing changed: nothing written";
}

}  // namespace
