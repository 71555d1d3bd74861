// Packet tests: what an attacker on one link can do to the neighbour table and the connection
// table. ARP is learned only from senders on the receiving port's link and never moves an
// entry to another port; the table is bounded with eviction; martian sources and unicast IP
// in broadcast frames are dropped before any state is made.
#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

const net::MacAddr kAttackerMac{{0x02, 0xba, 0xd0, 0x00, 0x00, 0x01}};

class NeighSecurityTest : public PipelineTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        start_worker();
    }
    static Bytes arp_request(net::MacAddr from, const char* from_ip, const char* target) {
        return arp_frame(from, net::kBroadcastMac, net::kArpOpRequest, from, from_ip, net::MacAddr{},
                         target);
    }
    static Bytes syn_from(const char* src, uint16_t cport, net::MacAddr dst_mac) {
        return PacketBuilder()
            .eth(kClientMac, dst_mac)
            .ipv4(src, "10.10.1.100")
            .tcp(cport, 80)
            .seq(7)
            .flags(net::kTcpSyn)
            .build();
    }
};

// The hijack: a request from the client side claiming RS1's LAN address must not touch RS1's
// entry (learned on lan), and traffic keeps going to RS1's MAC on lan.
TEST_F(NeighSecurityTest, ForgedArpFromWanForRsAddressChangesNothing) {
    send(kLan, arp_request(kRs1Mac, "10.10.2.2", "10.10.2.100"));  // RS1 asks for the LIP
    poll();
    ASSERT_EQ(recv(kLan).size(), 1u);
    const stack::NeighEntry* e = worker->neighbours().find(ip("10.10.2.2"));
    ASSERT_NE(e, nullptr);
    ASSERT_EQ(e->port, kLan);

    // Gratuitous-style and targeted forgeries from the WAN side.
    send(kWan, arp_request(kAttackerMac, "10.10.2.2", "10.10.1.100"));
    send(kWan, arp_frame(kAttackerMac, wan_mac(), net::kArpOpReply, kAttackerMac, "10.10.2.2", wan_mac(),
                         "10.10.1.1"));
    send(kWan, arp_request(kAttackerMac, "10.10.2.2", "10.10.2.2"));
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    e = worker->neighbours().find(ip("10.10.2.2"));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->port, kLan);
    EXPECT_EQ(e->mac, kRs1Mac);
    EXPECT_EQ(counter(Counter::drop_arp_off_link), 3u);

    // The next new connection scheduled to RS1 still leaves on lan toward RS1's MAC.
    worker->neighbours().add_static(ip("10.10.1.2"), kClientMac, kWan);
    auto out = roundtrip(kWan, syn_from("10.10.1.2", 40000, wan_mac()), kLan);
    ASSERT_EQ(out.size(), 1u);
    const auto* eth = reinterpret_cast<const net::EtherHdr*>(out[0].data());
    EXPECT_EQ(eth->dst, kRs1Mac);
}

// Even a sender on the link of the other port cannot move an entry: RS1's address claimed on
// wan where 10.10.2.0/24 is not connected is off-link; and an entry never changes port.
TEST_F(NeighSecurityTest, LearnNeverMovesAnEntryToAnotherPort) {
    stack::Neighbours table(64);
    ASSERT_NE(table.learn(ip("10.10.2.2"), kRs1Mac, kLan, 1, true), nullptr);
    EXPECT_EQ(table.learn(ip("10.10.2.2"), kAttackerMac, kWan, 2, true), nullptr);
    const stack::NeighEntry* e = table.find(ip("10.10.2.2"));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->port, kLan);
    EXPECT_EQ(e->mac, kRs1Mac);
}

TEST_F(NeighSecurityTest, OffLinkRequestersGetNoEntryAndNoAnswer) {
    const size_t before = worker->neighbours().size();
    for (unsigned i = 0; i < 3000; ++i) {
        char src[32];
        std::snprintf(src, sizeof src, "10.%u.%u.%u", 20 + i / 65536, (i / 256) % 256, 1 + i % 250);
        send(kWan, arp_request(kAttackerMac, src, "10.10.1.100"));
        if (i % 32 == 31) poll();
    }
    poll();
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_EQ(worker->neighbours().size(), before);
    EXPECT_EQ(counter(Counter::drop_arp_off_link), 3000u);
    // A real client on the link is still answered and learned.
    auto out = roundtrip(kWan, arp_request(kClientMac, "10.10.1.2", "10.10.1.100"), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_NE(worker->neighbours().find(ip("10.10.1.2")), nullptr);
}

TEST_F(NeighSecurityTest, SenderClaimingOurAddressIsNotLearned) {
    auto out = roundtrip(kWan, arp_request(kAttackerMac, "10.10.1.100", "10.10.1.1"), kWan);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(worker->neighbours().find(ip("10.10.1.100")), nullptr);
    EXPECT_EQ(counter(Counter::drop_arp_own_address), 1u);
}

TEST_F(NeighSecurityTest, ArpRepliesAreCounted) {
    send(kLan, arp_frame(kRs1Mac, lan_mac(), net::kArpOpReply, kRs1Mac, "10.10.2.9", lan_mac(), "10.10.2.1"));
    poll();
    EXPECT_EQ(counter(Counter::arp_replies_received), 1u);
}

// A full table makes room from learned-but-unused and stale entries; an entry with queued
// packets, a static one, or one in use is never the victim.
TEST_F(NeighSecurityTest, FullTableEvictsLeastRecentlyUsedIdleEntry) {
    stack::Neighbours table(16);  // capacity 12
    ASSERT_EQ(table.capacity(), 12u);
    table.add_static(ip("10.10.1.2"), kClientMac, kWan);
    stack::NeighEntry* used = table.get_or_create(ip("10.10.2.2"), kLan, 5);  // output entry
    ASSERT_NE(used, nullptr);
    table.learn(ip("10.10.2.2"), kRs1Mac, kLan, 5, false);
    for (unsigned i = 0; i < 10; ++i) {
        char a[32];
        std::snprintf(a, sizeof a, "10.10.1.%u", 10 + i);
        ASSERT_NE(table.learn(ip(a), kAttackerMac, kWan, 100 + i, true), nullptr) << a;
    }
    ASSERT_EQ(table.size(), 12u);
    // One more: the oldest learned-unused entry (10.10.1.10) goes.
    ASSERT_NE(table.learn(ip("10.10.1.50"), kClientMac, kWan, 200, true), nullptr);
    EXPECT_EQ(table.size(), 12u);
    EXPECT_EQ(table.evictions(), 1u);
    EXPECT_EQ(table.find(ip("10.10.1.10")), nullptr);
    EXPECT_NE(table.find(ip("10.10.1.11")), nullptr);
    EXPECT_NE(table.find(ip("10.10.1.2")), nullptr);
    EXPECT_NE(table.find(ip("10.10.2.2")), nullptr);
}

TEST_F(NeighSecurityTest, MartianSourcesCreateNoConnection) {
    worker->neighbours().add_static(ip("10.10.1.2"), kClientMac, kWan);
    const char* martians[] = {"0.0.0.0", "0.1.2.3", "127.0.0.1", "224.0.0.5", "239.1.1.1",
                              "240.0.0.1", "255.255.255.255", "10.10.1.100", "10.10.1.1", "10.10.2.100"};
    uint16_t cport = 41000;
    for (const char* src : martians) {
        EXPECT_TRUE(roundtrip(kWan, syn_from(src, cport++, wan_mac()), kLan).empty()) << src;
        EXPECT_TRUE(recv(kWan).empty()) << src;
    }
    EXPECT_EQ(counter(Counter::drop_martian_source), std::size(martians));
    EXPECT_EQ(counter(Counter::conns_created), 0u);
    EXPECT_EQ(counter(Counter::arp_requests_sent), 0u);
    // Ordinary clients are still served.
    worker->neighbours().add_static(ip("10.10.2.2"), kRs1Mac, kLan);
    worker->neighbours().add_static(ip("10.10.2.3"), kRs2Mac, kLan);
    EXPECT_EQ(roundtrip(kWan, syn_from("10.10.1.2", cport, wan_mac()), kLan).size(), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 1u);
}

TEST_F(NeighSecurityTest, UnicastIpInBroadcastFrameIsDropped) {
    learn_neighbours();
    EXPECT_TRUE(roundtrip(kWan, syn_from("10.10.1.2", 42000, net::kBroadcastMac), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_l2_broadcast_ip), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 0u);
}

}  // namespace
}  // namespace xvs::test
