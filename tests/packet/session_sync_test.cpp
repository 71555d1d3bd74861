// Session sync on the worker (lb/sync.h) and takeover in the stack (issue 15 items 3, 4): a
// conn a peer director synced is installed through the command channel and forwards both
// directions with the peer's local address and port; a backup answers no ARP for its VIPs and
// local addresses until it takes over, then sends gratuitous ARPs for the VIPs and the
// claimed addresses; a worker reports established conns into its sync ring.
#include <cstring>

#include "fixture/pipeline.h"
#include "lb/sync.h"
#include "net/byteorder.h"

namespace xvs::test {
namespace {

using stack::Counter;

class SessionSyncTest : public PipelineTest {
  protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
    }
    void start() {
        start_worker();
        learn_neighbours();
    }

    // What director A synced: 10.10.1.2:40000 -> VIP:80 via A's local address 10.10.2.200:5000
    // to RS2 10.10.2.3:8080, ESTABLISHED.
    static lb::SyncRecord peer_record() {
        lb::SyncRecord r;
        r.caddr = *net::parse_ipv4("10.10.1.2");
        r.vaddr = *net::parse_ipv4("10.10.1.100");
        r.laddr_ip = *net::parse_ipv4("10.10.2.200");
        r.daddr = *net::parse_ipv4("10.10.2.3");
        r.cport = net::hton16(40000);
        r.vport = net::hton16(80);
        r.lport = net::hton16(5000);
        r.dport = net::hton16(8080);
        r.proto = net::kIpProtoTcp;
        r.state = lb::TcpState::Established;
        r.mode = lb::FwdMode::FullNat;
        r.timeout_s = 90;
        return r;
    }
    Bytes tcp_frame(net::MacAddr src_mac, net::MacAddr dst_mac, const char* s, uint16_t sp,
                    const char* d, uint16_t dp) const {
        return PacketBuilder()
            .eth(src_mac, dst_mac)
            .ipv4(s, d)
            .tcp(sp, dp)
            .seq(1000)
            .ack(2000)
            .flags(net::kTcpAck)
            .payload(Bytes{'h', 'i'})
            .build();
    }
};

// IPv4 source/destination and TCP ports of a frame, as "a.b.c.d:p>a.b.c.d:p".
std::string tuple_of(const Bytes& f) {
    auto ip = [&](size_t off) {
        return std::to_string(f[off]) + "." + std::to_string(f[off + 1]) + "." +
               std::to_string(f[off + 2]) + "." + std::to_string(f[off + 3]);
    };
    const size_t l4 = 14 + size_t(f[14] & 0x0f) * 4;
    return ip(14 + 12) + ":" + std::to_string(net::load_be16(&f[l4])) + ">" + ip(14 + 16) + ":" +
           std::to_string(net::load_be16(&f[l4 + 2]));
}

TEST_F(SessionSyncTest, ImportedFullnatConnForwardsBothWaysWithThePeersLocalAddress) {
    ASSERT_TRUE(director->claimed_set({{*net::parse_ipv4("10.10.2.200"), "lan"}}).ok());
    director->commit();
    start();
    auto n = worker->import_conns({peer_record()}, 1000);
    ASSERT_TRUE(n.ok()) << n.error();
    EXPECT_EQ(n->imported, 1u);
    EXPECT_EQ(counter(Counter::sync_imported), 1u);
    ASSERT_EQ(worker->conns().in_use(), 1u);

    // A mid-stream client segment (no SYN): forwarded as on the peer, no conn scheduled here.
    auto out = roundtrip(kWan, tcp_frame(kClientMac, wan_mac(), "10.10.1.2", 40000, "10.10.1.100", 80), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(tuple_of(out[0]), "10.10.2.200:5000>10.10.2.3:8080");
    EXPECT_EQ(counter(Counter::conns_created), 0u);
    // The real server's reply to the peer's local address, which this director now claims.
    out = roundtrip(kLan, tcp_frame(kRs2Mac, lan_mac(), "10.10.2.3", 8080, "10.10.2.200", 5000), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(tuple_of(out[0]), "10.10.1.100:80>10.10.1.2:40000");
    EXPECT_EQ(counter(Counter::lb_forwarded), 2u);

    // The same record again refreshes the conn; a closing state moves it.
    lb::SyncRecord fin = peer_record();
    fin.state = lb::TcpState::FinWait;
    n = worker->import_conns({fin}, 1000);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(worker->conns().in_use(), 1u);
    const lb::Conn* c = nullptr;
    worker->conns().for_each([&](const lb::Conn& x) { c = &x; });
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->state, lb::TcpState::FinWait);
}

TEST_F(SessionSyncTest, ImportWithoutSuchServiceOrDestIsRefusedAndCounted) {
    start();
    lb::SyncRecord no_dest = peer_record();
    no_dest.daddr = *net::parse_ipv4("10.10.2.9");
    lb::SyncRecord no_service = peer_record();
    no_service.vport = net::hton16(81);
    lb::SyncRecord nattun = peer_record();
    nattun.mode = lb::FwdMode::NatTun;
    auto n = worker->import_conns({no_dest, no_service, nattun}, 1000);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(n->imported, 0u);
    EXPECT_EQ(n->failed, 3u);
    EXPECT_EQ(counter(Counter::sync_import_failed), 3u);
    EXPECT_EQ(worker->conns().in_use(), 0u);
}

TEST_F(SessionSyncTest, BackupIsSilentForVipsAndLocalAddressesUntilTakeover) {
    director->vip_arp_set(false);
    director->commit();
    start();
    auto ask = [&](uint8_t port, net::MacAddr from, const char* from_ip, const char* target) {
        send(port, arp_frame(from, net::kBroadcastMac, net::kArpOpRequest, from, from_ip,
                             net::MacAddr{}, target));
        poll();
        return recv(port);
    };
    EXPECT_TRUE(ask(kWan, kClientMac, "10.10.1.2", "10.10.1.100").empty());
    EXPECT_TRUE(ask(kLan, kRs1Mac, "10.10.2.2", "10.10.2.100").empty());
    EXPECT_EQ(ask(kWan, kClientMac, "10.10.1.2", "10.10.1.1").size(), 1u);  // its own address

    // Takeover: the VIP, its own local address (a peer may have claimed it) and a failed
    // peer's local address, each announced once at once.
    director->vip_arp_set(true);
    ASSERT_TRUE(director->claimed_set({{*net::parse_ipv4("10.10.2.201"), "lan"}}).ok());
    director->garp_request();
    director->commit();
    poll();
    auto wan = recv(kWan);
    auto lan = recv(kLan);
    ASSERT_EQ(wan.size(), 1u);
    EXPECT_TRUE(FramesEqual(arp_frame(wan_mac(), net::kBroadcastMac, net::kArpOpRequest, wan_mac(),
                                      "10.10.1.100", net::MacAddr{}, "10.10.1.100"),
                            wan[0]));
    ASSERT_EQ(lan.size(), 2u);
    EXPECT_TRUE(FramesEqual(arp_frame(lan_mac(), net::kBroadcastMac, net::kArpOpRequest, lan_mac(),
                                      "10.10.2.100", net::MacAddr{}, "10.10.2.100"),
                            lan[0]));
    EXPECT_TRUE(FramesEqual(arp_frame(lan_mac(), net::kBroadcastMac, net::kArpOpRequest, lan_mac(),
                                      "10.10.2.201", net::MacAddr{}, "10.10.2.201"),
                            lan[1]));
    EXPECT_EQ(counter(Counter::arp_gratuitous_sent), 3u);
    // Repeated twice more, 1 s apart.
    worker->advance_clock(1000);
    poll();
    EXPECT_EQ(recv(kWan).size(), 1u);
    EXPECT_EQ(recv(kLan).size(), 2u);
    worker->advance_clock(1000);
    poll();
    worker->advance_clock(1000);
    poll();
    EXPECT_EQ(counter(Counter::arp_gratuitous_sent), 9u);
    (void)recv(kWan);
    (void)recv(kLan);
    EXPECT_EQ(ask(kWan, kClientMac, "10.10.1.2", "10.10.1.100").size(), 1u);
    EXPECT_EQ(ask(kLan, kRs1Mac, "10.10.2.2", "10.10.2.100").size(), 1u);
    EXPECT_EQ(ask(kLan, kRs1Mac, "10.10.2.2", "10.10.2.201").size(), 1u);
}

TEST_F(SessionSyncTest, EstablishedConnIsReportedIntoTheRing) {
    start();
    lb::SyncRing ring(64);
    worker->sync_ring_set(&ring);
    // Handshake through the director: SYN, RS SYN-ACK, client ACK.
    send(kWan, PacketBuilder().eth(kClientMac, wan_mac()).ipv4("10.10.1.2", "10.10.1.100")
                   .tcp(40001, 80).seq(100).flags(net::kTcpSyn).build());
    poll();
    auto syn = recv(kLan);
    ASSERT_EQ(syn.size(), 1u);
    lb::SyncRecord out[8];
    EXPECT_EQ(ring.pop(out, 8), 0u);  // SYN_RECV is not synced
    const std::string t = tuple_of(syn[0]);
    const std::string lip = t.substr(0, t.find(':'));
    const uint16_t lport = static_cast<uint16_t>(std::stoi(t.substr(t.find(':') + 1, t.find('>') - t.find(':') - 1)));
    const std::string rs = t.substr(t.find('>') + 1, t.rfind(':') - t.find('>') - 1);
    const net::MacAddr rs_mac = rs == "10.10.2.2" ? kRs1Mac : kRs2Mac;
    send(kLan, PacketBuilder().eth(rs_mac, lan_mac()).ipv4(rs.c_str(), lip.c_str()).tcp(8080, lport)
                   .seq(5000).ack(101).flags(net::kTcpSyn | net::kTcpAck).build());
    poll();
    (void)recv(kWan);
    send(kWan, PacketBuilder().eth(kClientMac, wan_mac()).ipv4("10.10.1.2", "10.10.1.100")
                   .tcp(40001, 80).seq(101).ack(5001).flags(net::kTcpAck).build());
    poll();
    (void)recv(kLan);
    ASSERT_EQ(ring.pop(out, 8), 1u);
    EXPECT_EQ(out[0].state, lb::TcpState::Established);
    EXPECT_EQ(out[0].cport, net::hton16(40001));
    EXPECT_EQ(out[0].lport, net::hton16(lport));
    EXPECT_EQ(net::to_string(out[0].laddr_ip), lip);
    EXPECT_EQ(out[0].mode, lb::FwdMode::FullNat);
    EXPECT_EQ(counter(Counter::sync_reported), 1u);
    worker->sync_ring_set(nullptr);
}

}  // namespace
}  // namespace xvs::test
