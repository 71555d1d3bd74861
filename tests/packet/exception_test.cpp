// Packet tests for the exception path (stack/exception.h): on a port with an exception port
// (a TAP in xvsd, a ring port here), frames xvs has no use for — IP to the kernel's address,
// ARP and ND about it, replies to the kernel's own ARP — go to the kernel unchanged; what the
// kernel writes goes out on the port unchanged; xvs's own traffic is untouched; a full TAP
// queue drops and counts; a port without one drops as before. Multicast both need (an
// unsolicited neighbour advertisement) reaches both; IPv4 multicast goes to the kernel.
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstring>

#include "fixture/pipeline.h"
#include "port/ethdev.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr unsigned kExcRingSize = 16;  // holds 15: small, so the full-queue test is short

// The lan port's exception port: two rings, opened once per binary.
struct ExcPort {
    rte_ring* rx = nullptr;  // what "the kernel" writes
    rte_ring* tx = nullptr;  // what xvs hands the kernel
    uint16_t id = 0;
};
ExcPort& exc_port() {
    static ExcPort p = [] {
        ExcPort e;
        e.rx = rte_ring_create("pkt_exc_rx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        e.tx = rte_ring_create("pkt_exc_tx", kExcRingSize, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        auto info = port::port_open_rings("pkt_exc", e.rx, e.tx, port::PortParams{},
                                          DpdkEnvironment::pool());
        EXPECT_TRUE(info.ok()) << info.error();
        if (info) e.id = info->id;
        return e;
    }();
    return p;
}

std::vector<Bytes> drain_ring(rte_ring* r) {
    std::vector<Bytes> out;
    void* p;
    while (rte_ring_dequeue(r, &p) == 0) {
        auto* m = static_cast<rte_mbuf*>(p);
        const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
        out.emplace_back(d, d + rte_pktmbuf_data_len(m));
        rte_pktmbuf_free(m);
    }
    return out;
}

Bytes arp_request_for(net::MacAddr from, const char* from_ip, const char* target) {
    return arp_frame(from, net::kBroadcastMac, net::kArpOpRequest, from, from_ip, net::MacAddr{},
                     target);
}

class ExceptionTest : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        ExcPort& e = exc_port();
        drain_ring(e.rx);
        drain_ring(e.tx);
        extra_rings = {e.rx, e.tx};
        // The fixture's director again, its lan port now with the exception port.
        director = std::make_unique<lb::Director>(1);
        ASSERT_TRUE(
            director->port_add({"wan", DpdkEnvironment::port_id(kWan), wan_mac(), 1500}).ok());
        ASSERT_TRUE(director
                        ->port_add({"lan", DpdkEnvironment::port_id(kLan), lan_mac(), 1500,
                                    std::optional<uint16_t>(e.id)})
                        .ok());
        ASSERT_TRUE(director->address_add(ip6("2001:db8:2::1"), 64, "lan").ok());
        configure_default();
        start_worker();
        learn_neighbours();
    }
    void TearDown() override {
        PipelineTest::TearDown();
        drain_ring(exc_port().rx);
        drain_ring(exc_port().tx);
    }
    // Sends frame on lan and polls: what reached the kernel (lan and wan must stay silent).
    std::vector<Bytes> to_kernel(const Bytes& frame) {
        send(kLan, frame);
        poll();
        EXPECT_TRUE(recv(kLan).empty());
        EXPECT_TRUE(recv(kWan).empty());
        return drain_ring(exc_port().tx);
    }
    void from_kernel(const Bytes& frame) {
        rte_mbuf* m = rte_pktmbuf_alloc(DpdkEnvironment::pool());
        ASSERT_NE(m, nullptr);
        std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size())), frame.data(),
                    frame.size());
        ASSERT_EQ(rte_ring_enqueue(exc_port().rx, m), 0);
    }
};

TEST_F(ExceptionTest, PingToKernelAddressGoesToTheKernelUnchanged) {
    const Bytes ping = PacketBuilder()
                           .eth(kRs1Mac, lan_mac())
                           .ipv4("10.10.2.2", "10.10.2.9")
                           .icmp_echo(net::kIcmpEchoRequest, 7, 1)
                           .payload("kernel")
                           .build();
    auto out = to_kernel(ping);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(ping, out[0]));
    EXPECT_EQ(counter(Counter::exc_to_kernel), 1u);
    EXPECT_EQ(counter(Counter::drop_not_local), 0u);
}

TEST_F(ExceptionTest, TcpAndUdpToKernelAddressGoToTheKernel) {
    const Bytes syn = PacketBuilder()
                          .eth(kRs1Mac, lan_mac())
                          .ipv4("10.10.2.2", "10.10.2.9")
                          .tcp(8080, 22)
                          .flags(net::kTcpSyn)
                          .build();
    const Bytes ack = PacketBuilder()
                          .eth(kRs1Mac, lan_mac())
                          .ipv4("10.10.2.2", "10.10.2.9")
                          .tcp(8080, 40000)
                          .flags(net::kTcpAck)
                          .build();
    const Bytes udp = PacketBuilder()
                          .eth(kRs1Mac, lan_mac())
                          .ipv4("10.10.2.2", "10.10.2.9")
                          .udp(53, 40000)
                          .payload("answer")
                          .build();
    for (const Bytes& f : {syn, ack, udp}) {
        auto out = to_kernel(f);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(f, out[0]));
    }
    EXPECT_EQ(counter(Counter::exc_to_kernel), 3u);
}

TEST_F(ExceptionTest, ArpForTheKernelGoesToItAndXvsStillAnswersItsOwn) {
    // A request for the kernel's address, and the reply to the kernel's own request.
    const Bytes req = arp_request_for(kRs1Mac, "10.10.2.2", "10.10.2.9");
    const Bytes reply = arp_frame(kRs1Mac, lan_mac(), net::kArpOpReply, kRs1Mac, "10.10.2.2",
                                  lan_mac(), "10.10.2.9");
    for (const Bytes& f : {req, reply}) {
        auto out = to_kernel(f);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(f, out[0]));
    }
    // xvs's own address: answered by xvs, nothing for the kernel.
    auto out = roundtrip(kLan, arp_request_for(kRs1Mac, "10.10.2.2", "10.10.2.100"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(arp_frame(lan_mac(), kRs1Mac, net::kArpOpReply, lan_mac(),
                                      "10.10.2.100", kRs1Mac, "10.10.2.2"),
                            out[0]));
    EXPECT_TRUE(drain_ring(exc_port().tx).empty());
    EXPECT_EQ(counter(Counter::exc_to_kernel), 2u);
    EXPECT_EQ(counter(Counter::arp_replies_sent), 1u);
}

TEST_F(ExceptionTest, NeighbourSolicitationForTheKernelGoesToIt) {
    const net::InetAddr t = ip6("2001:db8:2::9");
    Bytes body(4 + 16);
    std::memcpy(body.data() + 4, t.b, 16);
    body.push_back(net::kNdOptSourceLla);
    body.push_back(1);
    body.insert(body.end(), kRs1Mac.b, kRs1Mac.b + 6);
    const Bytes ns = PacketBuilder()
                         .eth(kRs1Mac, net::MacAddr{{0x33, 0x33, 0xff, 0, 0, 0x09}})
                         .ipv6("2001:db8:2::2", "ff02::1:ff00:9")
                         .ttl(255)
                         .icmp6(net::kNdNeighSolicit, 0, body)
                         .build();
    auto out = to_kernel(ns);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(ns, out[0]));
    EXPECT_EQ(counter(Counter::drop_nd_not_ours), 0u);
}

TEST_F(ExceptionTest, KernelFramesGoOutOnThePortUnchanged) {
    const Bytes syn = PacketBuilder()
                          .eth(lan_mac(), kRs1Mac)
                          .ipv4("10.10.2.9", "10.10.2.2")
                          .tcp(40000, 22)
                          .flags(net::kTcpSyn)
                          .build();
    const Bytes arp = arp_request_for(lan_mac(), "10.10.2.9", "10.10.2.2");
    from_kernel(syn);
    from_kernel(arp);
    poll();
    auto out = recv(kLan);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(FramesEqual(syn, out[0]));
    EXPECT_TRUE(FramesEqual(arp, out[1]));
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_EQ(counter(Counter::exc_from_kernel), 2u);
    EXPECT_EQ(counter(Counter::tx_packets), 2u);
}

TEST_F(ExceptionTest, VipTrafficStillForwarded) {
    const Bytes syn = PacketBuilder()
                          .eth(kClientMac, wan_mac())
                          .ipv4("10.10.1.2", "10.10.1.100")
                          .tcp(40000, 80)
                          .flags(net::kTcpSyn)
                          .build();
    auto out = roundtrip(kWan, syn, kLan);
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(counter(Counter::lb_forwarded), 1u);
    EXPECT_TRUE(drain_ring(exc_port().tx).empty());
}

TEST_F(ExceptionTest, FullKernelQueueDropsAndCounts) {
    const Bytes ping = PacketBuilder()
                           .eth(kRs1Mac, lan_mac())
                           .ipv4("10.10.2.2", "10.10.2.9")
                           .icmp_echo(net::kIcmpEchoRequest, 7, 1)
                           .build();
    for (int i = 0; i < 20; ++i) send(kLan, ping);
    poll();
    EXPECT_EQ(drain_ring(exc_port().tx).size(), kExcRingSize - 1);
    EXPECT_EQ(counter(Counter::exc_to_kernel), kExcRingSize - 1);
    EXPECT_EQ(counter(Counter::drop_exc_full), 20 - (kExcRingSize - 1));
}

TEST_F(ExceptionTest, PortWithoutExceptionPathDropsAsBefore) {
    const Bytes ping = PacketBuilder()
                           .eth(kClientMac, wan_mac())
                           .ipv4("10.10.1.2", "10.10.1.9")
                           .icmp_echo(net::kIcmpEchoRequest, 7, 1)
                           .build();
    EXPECT_TRUE(roundtrip(kWan, ping, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_not_local), 1u);
    EXPECT_EQ(counter(Counter::exc_to_kernel), 0u);
    EXPECT_TRUE(drain_ring(exc_port().tx).empty());
}

// An unsolicited advertisement to all-nodes (RFC 4861 7.2.6: a neighbour announcing its new
// MAC) is for every node on the link: xvs updates its entry and the kernel gets the frame.
TEST_F(ExceptionTest, UnsolicitedAdvertisementReachesBothKernelAndXvs) {
    const net::InetAddr rs = ip6("2001:db8:2::2");
    worker->neighbours().learn(rs, kRs1Mac, kLan, 0, true);
    const net::MacAddr moved{{0x02, 0, 0, 0, 0x2a, 0x2a}};
    Bytes body(4 + 16);
    body[0] = net::kNaOverride;  // not solicited: multicast
    std::memcpy(body.data() + 4, rs.b, 16);
    body.push_back(net::kNdOptTargetLla);
    body.push_back(1);
    body.insert(body.end(), moved.b, moved.b + 6);
    const Bytes na = PacketBuilder()
                         .eth(moved, net::MacAddr{{0x33, 0x33, 0, 0, 0, 0x01}})
                         .ipv6("2001:db8:2::2", "ff02::1")
                         .ttl(255)
                         .icmp6(net::kNdNeighAdvert, 0, body)
                         .build();
    auto out = to_kernel(na);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(na, out[0]));
    EXPECT_EQ(counter(Counter::exc_to_kernel), 1u);
    const stack::NeighEntry* e = worker->neighbours().find(rs);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->mac, moved) << "xvs learned the announced MAC too";

    // One claiming an address of xvs's is a conflict: neither learned nor passed on.
    const net::InetAddr ours = ip6("2001:db8:2::1");
    std::memcpy(body.data() + 4, ours.b, 16);
    const Bytes claim = PacketBuilder()
                            .eth(moved, net::MacAddr{{0x33, 0x33, 0, 0, 0, 0x01}})
                            .ipv6("2001:db8:2::2", "ff02::1")
                            .ttl(255)
                            .icmp6(net::kNdNeighAdvert, 0, body)
                            .build();
    EXPECT_TRUE(to_kernel(claim).empty());
    EXPECT_EQ(counter(Counter::drop_nd_own_address), 1u);
    EXPECT_EQ(counter(Counter::exc_to_kernel), 1u);
}

// A gratuitous ARP (a neighbour announcing its new MAC to the broadcast address) is the
// IPv4 twin: xvs updates its entry, the kernel gets the frame.
TEST_F(ExceptionTest, GratuitousArpReachesBothKernelAndXvs) {
    const net::MacAddr moved{{0x02, 0, 0, 0, 0x2a, 0x2b}};
    const Bytes garp = arp_frame(moved, net::kBroadcastMac, net::kArpOpRequest, moved, "10.10.2.4",
                                 net::MacAddr{}, "10.10.2.4");
    // A learned entry (the fixture's RS entries are static, which nothing moves).
    worker->neighbours().learn(ip("10.10.2.4"), kRs2Mac, kLan, 0, true);
    auto out = to_kernel(garp);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(garp, out[0]));
    EXPECT_EQ(counter(Counter::exc_to_kernel), 1u);
    const stack::NeighEntry* e = worker->neighbours().find(ip("10.10.2.4"));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->mac, moved) << "xvs learned the announced MAC too";
}

// IPv4 multicast in its RFC 1112 frame goes to the kernel (its link protocols: OSPF, IGMP,
// VRRP); the kernel keeps the groups it joined.
TEST_F(ExceptionTest, Ipv4MulticastGoesToTheKernel) {
    const Bytes ospf = PacketBuilder()
                           .eth(kRs1Mac, net::MacAddr{{0x01, 0x00, 0x5e, 0, 0, 0x05}})
                           .ipv4("10.10.2.2", "224.0.0.5")
                           .ttl(1)
                           .ip_payload(89, Bytes(44, 0x11))  // OSPF hello, opaque here
                           .build();
    const Bytes igmp_query = PacketBuilder()
                                 .eth(kRs1Mac, net::MacAddr{{0x01, 0x00, 0x5e, 0, 0, 0x01}})
                                 .ipv4("10.10.2.2", "224.0.0.1")
                                 .ttl(1)
                                 .ip_payload(2, Bytes{0x11, 0x64, 0xee, 0x9b, 0, 0, 0, 0})
                                 .build();
    // A group beyond the link-local block: 239.1.130.7 -> 01:00:5e:01:82:07 (23 bits kept).
    const Bytes group = PacketBuilder()
                            .eth(kRs1Mac, net::MacAddr{{0x01, 0x00, 0x5e, 0x01, 0x82, 0x07}})
                            .ipv4("10.10.2.2", "239.129.130.7")
                            .udp(5000, 5000)
                            .payload("stream")
                            .build();
    for (const Bytes& f : {ospf, igmp_query, group}) {
        auto out = to_kernel(f);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(FramesEqual(f, out[0]));
    }
    EXPECT_EQ(counter(Counter::exc_to_kernel), 3u);
    EXPECT_EQ(counter(Counter::drop_not_for_us), 0u);
}

TEST_F(ExceptionTest, MulticastFrameNotCarryingItsGroupIsDropped) {
    // A unicast destination in a multicast frame, a group whose MAC does not match, and a
    // non-IP multicast MAC: none is a multicast datagram.
    const Bytes unicast_ip = PacketBuilder()
                                 .eth(kRs1Mac, net::MacAddr{{0x01, 0x00, 0x5e, 0, 0, 0x05}})
                                 .ipv4("10.10.2.2", "10.10.2.9")
                                 .udp(5000, 5000)
                                 .build();
    const Bytes wrong_group = PacketBuilder()
                                  .eth(kRs1Mac, net::MacAddr{{0x01, 0x00, 0x5e, 0, 0, 0x06}})
                                  .ipv4("10.10.2.2", "224.0.0.5")
                                  .udp(5000, 5000)
                                  .build();
    const Bytes other_mac = PacketBuilder()
                                .eth(kRs1Mac, net::MacAddr{{0x01, 0x80, 0xc2, 0, 0, 0x0e}})
                                .ipv4("10.10.2.2", "224.0.0.5")
                                .udp(5000, 5000)
                                .build();
    for (const Bytes& f : {unicast_ip, wrong_group, other_mac}) EXPECT_TRUE(to_kernel(f).empty());
    EXPECT_EQ(counter(Counter::drop_not_for_us), 3u);
    EXPECT_EQ(counter(Counter::exc_to_kernel), 0u);
}

TEST_F(ExceptionTest, Ipv4MulticastOnAPortWithoutExceptionPathIsCounted) {
    const Bytes ospf = PacketBuilder()
                           .eth(kClientMac, net::MacAddr{{0x01, 0x00, 0x5e, 0, 0, 0x05}})
                           .ipv4("10.10.1.2", "224.0.0.5")
                           .ttl(1)
                           .ip_payload(89, Bytes(44, 0x11))
                           .build();
    EXPECT_TRUE(roundtrip(kWan, ospf, kWan).empty());
    EXPECT_EQ(counter(Counter::drop_ip4_multicast), 1u);
    EXPECT_EQ(counter(Counter::exc_to_kernel), 0u);
    EXPECT_TRUE(drain_ring(exc_port().tx).empty());
}

}  // namespace
}  // namespace xvs::test
