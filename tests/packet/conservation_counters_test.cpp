// Packet tests: frames that used to be freed without a counter (found while writing the
// pipeline fuzzer's conservation check, tests/fuzz/pipeline_fuzz.cpp) are counted under exactly
// one name: received ARP replies (arp_replies_received), client packets saved during a SYN-proxy
// handshake that failed (synproxy_saved_dropped) and the RS SYN-ACK a deferring SYN proxy
// absorbs (synproxy_rs_synack_absorbed).
#include "fixture/pipeline.h"
#include "lb/service.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 40000;
constexpr uint32_t kIsn = 1000;

uint32_t be32_at(const Bytes& f, size_t off) {
    return uint32_t(f[off]) << 24 | uint32_t(f[off + 1]) << 16 | uint32_t(f[off + 2]) << 8 |
           f[off + 3];
}
uint16_t be16_at(const Bytes& f, size_t off) {
    return static_cast<uint16_t>(f[off] << 8 | f[off + 1]);
}
// TCP field offsets in an Ethernet + 20-byte IPv4 frame (what the SYN proxy sends).
constexpr size_t kTcp = 14 + 20;

class ConservationCountersTest : public PipelineTest {
  protected:
    void start(bool defer) {
        configure_default("rr");
        ASSERT_TRUE(director
                        ->service_edit(lb::ServiceSpec{6, *net::parse_ipv4("10.10.1.100"), 80, "rr",
                                                       lb::FwdMode::FullNat, lb::kSvcFlagSynProxy})
                        .ok());
        lb::SynProxyConf conf;
        conf.defer_rs_syn = defer;
        director->synproxy_set(conf);
        director->commit();
        start_worker();
        learn_neighbours();
    }
    Bytes client(uint32_t seq, uint32_t ack, uint8_t flags, const std::string& data = "") {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", "10.10.1.100")
            .tcp(kCport, 80)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .payload(data)
            .build();
    }
    // SYN -> cookie SYN-ACK; returns the cookie.
    uint32_t syn() {
        auto out = roundtrip(kWan, client(kIsn, 0, net::kTcpSyn), kWan);
        EXPECT_EQ(out.size(), 1u);
        return out.empty() ? 0 : be32_at(out[0], kTcp + 4);
    }
};

TEST_F(ConservationCountersTest, ArpReplyReceivedIsCounted) {
    configure_default();
    start_worker();
    send(kLan, arp_frame(kRs1Mac, lan_mac(), net::kArpOpReply, kRs1Mac, "10.10.2.2", lan_mac(),
                         "10.10.2.1"));
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_EQ(counter(Counter::arp_replies_received), 1u);
    EXPECT_EQ(counter(Counter::rx_packets), 1u);
}

TEST_F(ConservationCountersTest, SavedPacketsFreedOnRsTimeoutAreDrops) {
    start(false);
    const uint32_t cookie = syn();
    // The handshake ACK opens the conn and is saved while the SYN goes to the RS.
    auto rs_syn = roundtrip(kWan, client(kIsn + 1, cookie + 1, net::kTcpAck), kLan);
    ASSERT_EQ(rs_syn.size(), 1u);
    // The RS never answers: SYN retransmitted 3 times (1, 2, 4 s), then the client is reset.
    for (int i = 0; i < 20; ++i) {
        worker->advance_clock(1000);
        poll();
    }
    EXPECT_EQ(recv(kLan).size(), 3u);  // retransmissions
    auto rst = recv(kWan);
    ASSERT_EQ(rst.size(), 1u);
    EXPECT_EQ(rst[0][kTcp + 13], net::kTcpRst);
    EXPECT_EQ(counter(Counter::synproxy_rs_timeout), 1u);
    EXPECT_EQ(counter(Counter::synproxy_saved_dropped), 1u);
    EXPECT_EQ(worker->synproxy_saved_count(), 0u);
}

TEST_F(ConservationCountersTest, SavedPacketsFreedOnClientRstAreDrops) {
    start(false);
    const uint32_t cookie = syn();
    ASSERT_EQ(roundtrip(kWan, client(kIsn + 1, cookie + 1, net::kTcpAck), kLan).size(), 1u);
    ASSERT_EQ(roundtrip(kWan, client(kIsn + 1, cookie + 1, net::kTcpAck, "x"), kLan).size(), 0u);
    EXPECT_EQ(worker->synproxy_saved_count(), 2u);
    // The client gives up: its RST goes to the RS, the two saved packets are dropped (counted).
    EXPECT_EQ(roundtrip(kWan, client(kIsn + 2, cookie + 1, net::kTcpRst), kLan).size(), 1u);
    EXPECT_EQ(counter(Counter::synproxy_saved_dropped), 2u);
    EXPECT_EQ(worker->synproxy_saved_count(), 0u);
}

TEST_F(ConservationCountersTest, DeferredHandoverAbsorbsTheRsSynAck) {
    start(true);
    const uint32_t cookie = syn();
    // defer_rs_syn: the first data segment opens the RS side.
    auto rs_syn =
        roundtrip(kWan, client(kIsn + 1, cookie + 1, net::kTcpAck | net::kTcpPsh, "GET"), kLan);
    ASSERT_EQ(rs_syn.size(), 1u);
    const uint16_t lport = be16_at(rs_syn[0], kTcp);
    const Bytes synack = PacketBuilder()
                             .eth(kRs1Mac, lan_mac())
                             .ipv4("10.10.2.2", "10.10.2.100")
                             .tcp(8080, lport)
                             .seq(7000)
                             .ack(kIsn + 1)
                             .flags(net::kTcpSyn | net::kTcpAck)
                             .build();
    const bool to_rs1 = be32_at(rs_syn[0], 14 + 16) == be32_at(synack, 14 + 12);
    Bytes f = synack;
    if (!to_rs1)
        f = PacketBuilder()
                .eth(kRs2Mac, lan_mac())
                .ipv4("10.10.2.3", "10.10.2.100")
                .tcp(8080, lport)
                .seq(7000)
                .ack(kIsn + 1)
                .flags(net::kTcpSyn | net::kTcpAck)
                .build();
    // The saved data segment is replayed to the RS; the SYN-ACK itself goes nowhere.
    auto out = roundtrip(kLan, f, kLan);
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(counter(Counter::synproxy_handover), 1u);
    EXPECT_EQ(counter(Counter::synproxy_rs_synack_absorbed), 1u);
}

}  // namespace
}  // namespace xvs::test
