// Packet tests: FULLNAT for TCP through the real pipeline — handshake, data both ways, state
// machine and timeouts, defence against packets without a connection, weight 0, dest removal.
#include <rte_mbuf.h>

#include <cstring>

#include "fixture/pipeline.h"
#include "lb/laddr.h"
#include "net/tcp_options.h"

namespace xvs::test {
namespace {

using stack::Counter;

constexpr uint16_t kCport = 40000;
const Bytes kSynOptions = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};

struct Flow {
    const char* rs;          // chosen real server
    net::MacAddr rs_mac;
    uint16_t lport;          // local port chosen by xvs
};

class FullnatTcpTest : public PipelineTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        start_worker();
        learn_neighbours();
    }

    Bytes client_pkt(uint16_t cport, uint32_t seq, uint32_t ack, uint8_t flags,
                     const std::string& data = "", Bytes opts = {}) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", "10.10.1.100")
            .tcp(cport, 80)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .tcp_options(std::move(opts))
            .payload(data)
            .build();
    }
    Bytes to_rs(const Flow& f, uint32_t seq, uint32_t ack, uint8_t flags,
                const std::string& data = "", Bytes opts = {}) {
        return PacketBuilder()
            .eth(lan_mac(), f.rs_mac)
            .ipv4("10.10.2.100", f.rs)
            .tcp(f.lport, 8080)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .tcp_options(std::move(opts))
            .payload(data)
            .build();
    }
    Bytes rs_pkt(const Flow& f, uint32_t seq, uint32_t ack, uint8_t flags,
                 const std::string& data = "", Bytes opts = {}) {
        return PacketBuilder()
            .eth(f.rs_mac, lan_mac())
            .ipv4(f.rs, "10.10.2.100")
            .tcp(8080, f.lport)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .tcp_options(std::move(opts))
            .payload(data)
            .build();
    }
    Bytes to_client(uint16_t cport, uint32_t seq, uint32_t ack, uint8_t flags,
                    const std::string& data = "", Bytes opts = {}) {
        return PacketBuilder()
            .eth(wan_mac(), kClientMac)
            .ipv4("10.10.1.100", "10.10.1.2")
            .tcp(80, cport)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .tcp_options(std::move(opts))
            .payload(data)
            .build();
    }

    // Client SYN -> the SYN xvs sends to a real server; returns the flow it picked.
    Flow open(uint16_t cport) {
        auto out = roundtrip(kWan, client_pkt(cport, 1000, 0, net::kTcpSyn, "", kSynOptions), kLan);
        EXPECT_EQ(out.size(), 1u);
        if (out.empty()) return {};
        const Bytes& syn = out[0];
        Flow f = flow_of(syn);
        EXPECT_GE(f.lport, 1025);
        EXPECT_TRUE(FramesEqual(to_rs(f, 1000, 0, net::kTcpSyn, "", kSynOptions), syn));
        return f;
    }
    // The flow of a SYN xvs sent to a real server: which one, and the local port.
    Flow flow_of(const Bytes& syn) {
        decltype(ip("")) daddr;  // the IPv4 destination (bytes 16-19 of the header)
        std::memcpy(&daddr, syn.data() + 14 + 16, sizeof(daddr));
        Flow f;
        f.rs = daddr == ip("10.10.2.2") ? "10.10.2.2" : "10.10.2.3";
        f.rs_mac = daddr == ip("10.10.2.2") ? kRs1Mac : kRs2Mac;
        f.lport = net::ntoh16(net::load_wire16(syn.data() + 34));  // the TCP source port
        return f;
    }
    void establish(uint16_t cport, Flow& f) {
        f = open(cport);
        auto out = roundtrip(kLan, rs_pkt(f, 5000, 1001, net::kTcpSyn | net::kTcpAck, "", kSynOptions), kWan);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_TRUE(FramesEqual(to_client(cport, 5000, 1001, net::kTcpSyn | net::kTcpAck, "", kSynOptions), out[0]));
        out = roundtrip(kWan, client_pkt(cport, 1001, 5001, net::kTcpAck), kLan);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_TRUE(FramesEqual(to_rs(f, 1001, 5001, net::kTcpAck), out[0]));
    }
    const lb::Conn* find_conn(uint16_t cport) {
        const lb::Conn* found = nullptr;
        worker->conns().for_each([&](const lb::Conn& c) {
            if (c.cport == net::hton16(cport)) found = &c;
        });
        return found;
    }
};

TEST_F(FullnatTcpTest, SynToVipBecomesSynFromLocalAddressToRealServer) {
    Flow f = open(kCport);
    EXPECT_EQ(counter(Counter::conns_created), 1u);
    const lb::Conn* c = find_conn(kCport);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->state, lb::TcpState::SynRecv);
    EXPECT_EQ(net::ntoh16(c->lport), f.lport);
    EXPECT_TRUE(worker->conn_laddr(*c)->workers[0].pool->in_use(f.lport));
}

TEST_F(FullnatTcpTest, HandshakeAndDataBothWays) {
    Flow f;
    establish(kCport, f);
    EXPECT_EQ(find_conn(kCport)->state, lb::TcpState::Established);
    auto out = roundtrip(kWan, client_pkt(kCport, 1001, 5001, net::kTcpAck | net::kTcpPsh,
                                          "GET / HTTP/1.1\r\nHost: vip\r\n\r\n"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(f, 1001, 5001, net::kTcpAck | net::kTcpPsh,
                                  "GET / HTTP/1.1\r\nHost: vip\r\n\r\n"), out[0]));
    std::string body(1400, 'x');
    out = roundtrip(kLan, rs_pkt(f, 5001, 1029, net::kTcpAck, body), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(kCport, 5001, 1029, net::kTcpAck, body), out[0]));
    // Odd-length payload exercises the checksum's trailing byte.
    out = roundtrip(kLan, rs_pkt(f, 6401, 1029, net::kTcpAck, "odd"), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(kCport, 6401, 1029, net::kTcpAck, "odd"), out[0]));

    const auto& svc = *director->services().front();
    EXPECT_EQ(svc.workers[0].inpkts, 3u);  // SYN, ACK, GET
    EXPECT_EQ(svc.workers[0].outpkts, 3u);
    EXPECT_EQ(svc.workers[0].conns, 1u);
}

TEST_F(FullnatTcpTest, ConnectionsAreSpreadRoundRobinWithDistinctLocalPorts) {
    Flow a = open(41000), b = open(41001), c = open(41002);
    EXPECT_STRNE(a.rs, b.rs);
    EXPECT_STREQ(a.rs, c.rs);
    EXPECT_NE(a.lport, b.lport);
    EXPECT_NE(a.lport, c.lport);
    EXPECT_NE(b.lport, c.lport);
}

TEST_F(FullnatTcpTest, ClientCloseWalksStatesAndExpires) {
    Flow f;
    establish(kCport, f);
    auto out = roundtrip(kWan, client_pkt(kCport, 1001, 5001, net::kTcpFin | net::kTcpAck), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(f, 1001, 5001, net::kTcpFin | net::kTcpAck), out[0]));
    EXPECT_EQ(find_conn(kCport)->state, lb::TcpState::CloseWait);
    out = roundtrip(kLan, rs_pkt(f, 5001, 1002, net::kTcpFin | net::kTcpAck), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(find_conn(kCport)->state, lb::TcpState::TimeWait);
    out = roundtrip(kWan, client_pkt(kCport, 1002, 5002, net::kTcpAck), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(find_conn(kCport)->state, lb::TcpState::TimeWait);

    // DPVS TIME_WAIT timeout is 7 s: alive at 6.5 s, gone after 7.2 s, port back in the pool.
    worker->advance_clock(6500);
    poll();
    EXPECT_NE(find_conn(kCport), nullptr);
    worker->advance_clock(700);
    poll();
    EXPECT_EQ(find_conn(kCport), nullptr);
    EXPECT_EQ(counter(Counter::conns_expired), 1u);
    auto laddr = director->services().front()->laddrs.front();
    EXPECT_FALSE(laddr->workers[0].pool->in_use(f.lport));
    EXPECT_EQ(director->services().front()->dests[0]->sum_refs() +
                  director->services().front()->dests[1]->sum_refs(),
              0u);

    // A late ACK now has no connection: dropped, never forwarded.
    out = roundtrip(kWan, client_pkt(kCport, 1002, 5002, net::kTcpAck), kLan);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(counter(Counter::drop_tcp_no_conn), 1u);
}

TEST_F(FullnatTcpTest, RstClosesQuickly) {
    Flow f;
    establish(kCport, f);
    auto out = roundtrip(kLan, rs_pkt(f, 5001, 1001, net::kTcpRst | net::kTcpAck), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(kCport, 5001, 1001, net::kTcpRst | net::kTcpAck), out[0]));
    EXPECT_EQ(find_conn(kCport)->state, lb::TcpState::Close);
    worker->advance_clock(3100);  // CLOSE: 3 s
    poll();
    EXPECT_EQ(find_conn(kCport), nullptr);
}

TEST_F(FullnatTcpTest, EstablishedIdleTimeoutIsRefreshedByTraffic) {
    Flow f;
    establish(kCport, f);
    for (int i = 0; i < 3; ++i) {
        worker->advance_clock(80'000);  // ESTABLISHED: 90 s
        poll();
        ASSERT_NE(find_conn(kCport), nullptr) << "round " << i;
        auto out = roundtrip(kWan, client_pkt(kCport, 1001, 5001, net::kTcpAck), kLan);
        ASSERT_EQ(out.size(), 1u);
    }
    worker->advance_clock(90'200);
    poll();
    EXPECT_EQ(find_conn(kCport), nullptr);
}

TEST_F(FullnatTcpTest, AckWithoutConnectionIsDroppedAndCounted) {
    for (uint8_t flags : {uint8_t(net::kTcpAck), uint8_t(net::kTcpFin | net::kTcpAck),
                          uint8_t(net::kTcpRst), uint8_t(net::kTcpSyn | net::kTcpAck),
                          uint8_t(net::kTcpSyn | net::kTcpFin)}) {
        EXPECT_TRUE(roundtrip(kWan, client_pkt(kCport, 1, 2, flags, "x"), kLan).empty());
    }
    EXPECT_EQ(counter(Counter::drop_tcp_no_conn), 5u);
    EXPECT_EQ(counter(Counter::conns_created), 0u);
}

TEST_F(FullnatTcpTest, PacketToLocalAddressWithoutConnectionDropped) {
    Flow fake{"10.10.2.2", kRs1Mac, 50000};
    EXPECT_TRUE(roundtrip(kLan, rs_pkt(fake, 1, 1, net::kTcpSyn | net::kTcpAck), kWan).empty());
    EXPECT_EQ(counter(Counter::drop_lip_no_conn), 1u);
}

TEST_F(FullnatTcpTest, SynToVipPortWithoutServiceDropped) {
    Bytes syn = PacketBuilder()
                    .eth(kClientMac, wan_mac())
                    .ipv4("10.10.1.2", "10.10.1.100")
                    .tcp(kCport, 443)
                    .flags(net::kTcpSyn)
                    .build();
    EXPECT_TRUE(roundtrip(kWan, syn, kLan).empty());
    EXPECT_EQ(counter(Counter::drop_no_service), 1u);
}

TEST_F(FullnatTcpTest, TcpToDirectorAddressAndForeignAddressDropped) {
    Bytes to_dir = PacketBuilder()
                       .eth(kClientMac, wan_mac())
                       .ipv4("10.10.1.2", "10.10.1.1")
                       .tcp(kCport, 22)
                       .flags(net::kTcpSyn)
                       .build();
    EXPECT_TRUE(roundtrip(kWan, to_dir, kLan).empty());
    EXPECT_EQ(counter(Counter::drop_to_director), 1u);
    Bytes foreign = PacketBuilder()
                        .eth(kClientMac, wan_mac())
                        .ipv4("10.10.1.2", "10.10.2.2")
                        .tcp(kCport, 8080)
                        .flags(net::kTcpSyn)
                        .build();
    EXPECT_TRUE(roundtrip(kWan, foreign, kLan).empty());
    EXPECT_EQ(counter(Counter::drop_not_local), 1u);
}

TEST_F(FullnatTcpTest, WeightZeroStopsNewConnectionsButExistingOnesFinish) {
    Flow f1, f2;
    establish(41000, f1);  // rr: RS1
    establish(41001, f2);  // RS2
    auto key = lb::make_service_key(6, *net::parse_ipv4("10.10.1.100"), 80);
    ASSERT_TRUE(director->dest_edit(key, lb::DestSpec{*net::parse_ipv4(f1.rs), 8080, 0}).ok());
    director->commit();
    for (uint16_t p = 42000; p < 42006; ++p) {
        Flow n = open(p);
        EXPECT_STRNE(n.rs, f1.rs) << "weight-0 server got a new connection";
    }
    auto out = roundtrip(kWan, client_pkt(41000, 1001, 5001, net::kTcpAck | net::kTcpPsh, "still here"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(f1, 1001, 5001, net::kTcpAck | net::kTcpPsh, "still here"), out[0]));
}

TEST_F(FullnatTcpTest, AllWeightsZeroMeansNoDest) {
    auto key = lb::make_service_key(6, *net::parse_ipv4("10.10.1.100"), 80);
    ASSERT_TRUE(director->dest_edit(key, lb::DestSpec{*net::parse_ipv4("10.10.2.2"), 8080, 0}).ok());
    ASSERT_TRUE(director->dest_edit(key, lb::DestSpec{*net::parse_ipv4("10.10.2.3"), 8080, 0}).ok());
    director->commit();
    EXPECT_TRUE(roundtrip(kWan, client_pkt(kCport, 1000, 0, net::kTcpSyn), kLan).empty());
    EXPECT_EQ(counter(Counter::drop_no_dest), 1u);
}

// IPVS (expire_nodest_conn off, the default): a removed dest's conn stays until it expires,
// its client packets dropped and counted; what the RS still sends reaches the client.
TEST_F(FullnatTcpTest, RemovedDestKeepsItsConnectionsUntilTheyExpire) {
    Flow f;
    establish(kCport, f);
    auto key = lb::make_service_key(6, *net::parse_ipv4("10.10.1.100"), 80);
    ASSERT_TRUE(director->dest_del(key, *net::parse_ipv4(f.rs), 8080).ok());
    director->commit();
    poll();
    director->reclaim();
    auto out = roundtrip(kWan, client_pkt(kCport, 1001, 5001, net::kTcpAck, "after removal"), kLan);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(counter(Counter::drop_dest_unavailable), 1u);
    out = roundtrip(kLan, rs_pkt(f, 5001, 1001, net::kTcpAck, "reply"), kWan);
    ASSERT_EQ(out.size(), 1u);
    // The whole service goes too; the connection is still there and then expires cleanly.
    ASSERT_TRUE(director->service_del(key).ok());
    director->commit();
    poll();
    director->reclaim();
    out = roundtrip(kLan, rs_pkt(f, 5006, 1001, net::kTcpRst), kWan);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_NE(find_conn(kCport), nullptr);
    worker->advance_clock(3100);
    poll();
    EXPECT_EQ(find_conn(kCport), nullptr);
    director->reclaim();
    EXPECT_EQ(director->retired_count(), 0u);
}

TEST_F(FullnatTcpTest, NewSynOnTimeWaitConnectionReusesTheTuple) {
    Flow f;
    establish(kCport, f);
    roundtrip(kWan, client_pkt(kCport, 1001, 5001, net::kTcpFin | net::kTcpAck), kLan);
    roundtrip(kLan, rs_pkt(f, 5001, 1002, net::kTcpFin | net::kTcpAck), kWan);
    ASSERT_EQ(find_conn(kCport)->state, lb::TcpState::TimeWait);
    auto out = roundtrip(kWan, client_pkt(kCport, 90000, 0, net::kTcpSyn), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(counter(Counter::conns_created), 2u);
    EXPECT_EQ(counter(Counter::conns_expired), 1u);
    EXPECT_EQ(find_conn(kCport)->state, lb::TcpState::SynRecv);
}

TEST_F(FullnatTcpTest, SynRetransmissionInSameBurstCreatesOneConnection) {
    send(kWan, client_pkt(kCport, 1000, 0, net::kTcpSyn));
    send(kWan, client_pkt(kCport, 1000, 0, net::kTcpSyn));
    poll();
    auto out = recv(kLan);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0], out[1]);
    EXPECT_EQ(counter(Counter::conns_created), 1u);
}

TEST_F(FullnatTcpTest, ConfigCommitKeepsConnections) {
    Flow f;
    establish(kCport, f);
    auto key = lb::make_service_key(6, *net::parse_ipv4("10.10.1.100"), 80);
    ASSERT_TRUE(director->dest_add(key, lb::DestSpec{*net::parse_ipv4("10.10.2.4"), 8080, 5}).ok());
    ASSERT_TRUE(director->service_edit(lb::ServiceSpec{6, *net::parse_ipv4("10.10.1.100"), 80, "wrr"}).ok());
    director->commit();
    auto out = roundtrip(kWan, client_pkt(kCport, 1001, 5001, net::kTcpAck, "same conn"), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(f, 1001, 5001, net::kTcpAck, "same conn"), out[0]));
}

TEST_F(FullnatTcpTest, DestCountersTrackActiveAndInactive) {
    Flow f;
    establish(kCport, f);
    const auto& dests = director->services().front()->dests;
    const lb::Dest* d = dests[0]->addr == *net::parse_ipv4(f.rs) ? dests[0].get() : dests[1].get();
    EXPECT_EQ(d->sum_active(), 1u);
    EXPECT_EQ(d->sum_inactive(), 0u);
    roundtrip(kWan, client_pkt(kCport, 1001, 5001, net::kTcpFin | net::kTcpAck), kLan);
    EXPECT_EQ(d->sum_active(), 0u);
    EXPECT_EQ(d->sum_inactive(), 1u);
}

// Passive health checking (lb/passive.h): the dest of a conn counts the RS's first answer.
class PassiveCountTest : public FullnatTcpTest {
  protected:
    const lb::Dest* dest_of(const Flow& f) {
        const auto& dests = director->services().front()->dests;
        return dests[0]->addr == *net::parse_ipv4(f.rs) ? dests[0].get() : dests[1].get();
    }
    static uint64_t fails(const lb::Dest* d) {
        uint64_t n = 0;
        for (const auto& w : d->stats) n += w.conn_fail;
        return n;
    }
    static uint64_t oks(const lb::Dest* d) {
        uint64_t n = 0;
        for (const auto& w : d->stats) n += w.conn_ok;
        return n;
    }
};

TEST_F(PassiveCountTest, RstAnsweringTheSynIsAFailure) {
    director->reschedule_refused_set(false);  // the refusal is relayed (tested on below)
    director->commit();
    Flow f = open(kCport);
    const lb::Dest* d = dest_of(f);
    EXPECT_EQ(fails(d), 0u);
    // Connection refused: RST|ACK acking the SYN, relayed to the client as before.
    auto out = roundtrip(kLan, rs_pkt(f, 0, 1001, net::kTcpRst | net::kTcpAck), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(kCport, 0, 1001, net::kTcpRst | net::kTcpAck), out[0]));
    EXPECT_EQ(fails(d), 1u);
    EXPECT_EQ(oks(d), 0u);
    // A second RST of the same conn (now CLOSE) is not counted again.
    roundtrip(kLan, rs_pkt(f, 0, 1001, net::kTcpRst | net::kTcpAck), kWan);
    EXPECT_EQ(fails(d), 1u);
    // Its expiry in CLOSE is no failure either.
    worker->advance_clock(3100);
    poll();
    EXPECT_EQ(find_conn(kCport), nullptr);
    EXPECT_EQ(fails(d), 1u);
}

TEST_F(PassiveCountTest, SynAckIsASuccessAndALaterRstIsNot) {
    Flow f;
    establish(kCport, f);
    const lb::Dest* d = dest_of(f);
    EXPECT_EQ(oks(d), 1u);
    EXPECT_EQ(fails(d), 0u);
    roundtrip(kLan, rs_pkt(f, 5001, 1001, net::kTcpRst | net::kTcpAck), kWan);
    EXPECT_EQ(fails(d), 0u);
    EXPECT_EQ(oks(d), 1u);
}

TEST_F(PassiveCountTest, ExpiryWaitingForTheSynAckIsAFailure) {
    Flow f = open(kCport);
    const lb::Dest* d = dest_of(f);
    // The client's SYN again at once (a duplicate: sooner than kPassiveSynRetransmitMs, its
    // retransmission timer cannot have run) is no verdict; the RS never answers. SYN_RECV
    // lasts 30 s (DPVS).
    worker->advance_clock(400);
    roundtrip(kWan, client_pkt(kCport, 1000, 0, net::kTcpSyn, "", kSynOptions), kLan);
    EXPECT_EQ(fails(d), 0u);
    worker->advance_clock(30'500);
    poll();
    EXPECT_EQ(find_conn(kCport), nullptr);
    EXPECT_EQ(fails(d), 1u);
    EXPECT_EQ(oks(d), 0u);
}

TEST_F(PassiveCountTest, ExpiryAfterTheSynAckIsNoFailure) {
    // The RS answered; the client never completed (it went away, or a spoofed SYN).
    Flow f = open(kCport);
    const lb::Dest* d = dest_of(f);
    roundtrip(kLan, rs_pkt(f, 5000, 1001, net::kTcpSyn | net::kTcpAck, "", kSynOptions), kWan);
    EXPECT_EQ(find_conn(kCport)->state, lb::TcpState::SynRecv);
    worker->advance_clock(30'500);
    poll();
    EXPECT_EQ(find_conn(kCport), nullptr);
    EXPECT_EQ(fails(d), 0u);
    EXPECT_EQ(oks(d), 1u);
}

// The client retransmits its SYN (its timer: 1 s, RFC 6298) because the RS did not answer:
// a failure at once, not 30 s later at the SYN_RECV expiry, and only once.
TEST_F(PassiveCountTest, ClientSynRetransmissionIsAFailureOnce) {
    Flow f = open(kCport);
    const lb::Dest* d = dest_of(f);
    worker->advance_clock(1000);
    auto out = roundtrip(kWan, client_pkt(kCport, 1000, 0, net::kTcpSyn, "", kSynOptions), kLan);
    ASSERT_EQ(out.size(), 1u);  // forwarded as before
    EXPECT_TRUE(FramesEqual(to_rs(f, 1000, 0, net::kTcpSyn, "", kSynOptions), out[0]));
    EXPECT_EQ(fails(d), 1u);
    // The client's second retransmission (2 s later) counts no more.
    worker->advance_clock(2000);
    out = roundtrip(kWan, client_pkt(kCport, 1000, 0, net::kTcpSyn, "", kSynOptions), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(fails(d), 1u);
    // Nor does the SYN_RECV expiry of the judged conn.
    worker->advance_clock(30'500);
    poll();
    EXPECT_EQ(find_conn(kCport), nullptr);
    EXPECT_EQ(fails(d), 1u);
    EXPECT_EQ(oks(d), 0u);
}

// An RS SYN-ACK after the retransmission: the conn goes on as any other, but its verdict
// stays "failed" (the RS let the client's timer run out); the next conns say whether it
// recovered.
TEST_F(PassiveCountTest, SynAckAfterTheRetransmissionIsNoSuccess) {
    Flow f = open(kCport);
    const lb::Dest* d = dest_of(f);
    worker->advance_clock(1000);
    ASSERT_EQ(
        roundtrip(kWan, client_pkt(kCport, 1000, 0, net::kTcpSyn, "", kSynOptions), kLan).size(),
        1u);
    auto out =
        roundtrip(kLan, rs_pkt(f, 5000, 1001, net::kTcpSyn | net::kTcpAck, "", kSynOptions), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(
        to_client(kCport, 5000, 1001, net::kTcpSyn | net::kTcpAck, "", kSynOptions), out[0]));
    out = roundtrip(kWan, client_pkt(kCport, 1001, 5001, net::kTcpAck), kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_rs(f, 1001, 5001, net::kTcpAck), out[0]));
    EXPECT_EQ(find_conn(kCport)->state, lb::TcpState::Established);
    EXPECT_EQ(fails(d), 1u);
    EXPECT_EQ(oks(d), 0u);
}

// The first 28 bytes of an IPv4 packet (header + 8 bytes of L4), as routers quote it.
Bytes quote28(const Bytes& frame) {
    Bytes ip = ip_packet(frame);
    ip.resize(28);
    return ip;
}

// The RS's kernel refuses the SYN with ICMP port unreachable (nftables `reject with icmp
// port-unreachable`, or nothing bound on some stacks): a failure, once; the error still
// reaches the client, translated as every related error is.
TEST_F(PassiveCountTest, RsPortUnreachableIsAFailureOnceAndReachesTheClient) {
    Flow f = open(kCport);
    const lb::Dest* d = dest_of(f);
    const Bytes err =
        PacketBuilder()
            .eth(f.rs_mac, lan_mac())
            .ipv4(f.rs, "10.10.2.100")
            .icmp_error(3, 3, 0, quote28(to_rs(f, 1000, 0, net::kTcpSyn, "", kSynOptions)))
            .build();
    const Bytes want =
        PacketBuilder()
            .eth(wan_mac(), kClientMac)
            .ipv4("10.10.1.100", "10.10.1.2")
            .icmp_error(3, 3, 0,
                        quote28(client_pkt(kCport, 1000, 0, net::kTcpSyn, "", kSynOptions)))
            .build();
    auto out = roundtrip(kLan, err, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(want, out[0]));
    EXPECT_EQ(fails(d), 1u);
    EXPECT_EQ(oks(d), 0u);
    // The same error again (the client retransmits, the RS refuses again): forwarded, not
    // counted; nor are the client's retransmission and the conn's expiry.
    out = roundtrip(kLan, err, kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(want, out[0]));
    worker->advance_clock(1000);
    ASSERT_EQ(
        roundtrip(kWan, client_pkt(kCport, 1000, 0, net::kTcpSyn, "", kSynOptions), kLan).size(),
        1u);
    worker->advance_clock(30'500);
    poll();
    EXPECT_EQ(find_conn(kCport), nullptr);
    EXPECT_EQ(fails(d), 1u);
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 2u);
}

// Host unreachable from a router on the RS's side and admin-prohibited count too; frag-needed
// (path-MTU discovery) counts nothing and the conn is judged later as usual.
TEST_F(PassiveCountTest, UnreachableCodesCountFragNeededDoesNot) {
    Flow f = open(kCport);
    const lb::Dest* d = dest_of(f);
    const Bytes syn_quote = quote28(to_rs(f, 1000, 0, net::kTcpSyn, "", kSynOptions));
    auto out = roundtrip(kLan,
                         PacketBuilder()
                             .eth(f.rs_mac, lan_mac())
                             .ipv4(f.rs, "10.10.2.100")
                             .icmp_error(3, 4, 1400, syn_quote)
                             .build(),
                         kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(
        PacketBuilder()
            .eth(wan_mac(), kClientMac)
            .ipv4("10.10.1.100", "10.10.1.2")
            .icmp_error(3, 4, 1400,
                        quote28(client_pkt(kCport, 1000, 0, net::kTcpSyn, "", kSynOptions)))
            .build(),
        out[0]));
    // Time exceeded is not the RS's doing either.
    ASSERT_EQ(roundtrip(kLan,
                        PacketBuilder()
                            .eth(f.rs_mac, lan_mac())
                            .ipv4(f.rs, "10.10.2.100")
                            .icmp_error(11, 0, 0, syn_quote)
                            .build(),
                        kWan)
                  .size(),
              1u);
    EXPECT_EQ(fails(d), 0u);
    roundtrip(kLan, rs_pkt(f, 5000, 1001, net::kTcpSyn | net::kTcpAck, "", kSynOptions), kWan);
    EXPECT_EQ(oks(d), 1u);
    EXPECT_EQ(fails(d), 0u);

    // Host unreachable (1) and communication administratively prohibited (13): one each.
    uint16_t cport = kCport + 1;
    for (uint8_t code : {uint8_t(1), uint8_t(13)}) {
        Flow g = open(cport);
        const lb::Dest* dg = dest_of(g);
        const uint64_t before = fails(dg);
        ASSERT_EQ(
            roundtrip(kLan,
                      PacketBuilder()
                          .eth(g.rs_mac, lan_mac())
                          .ipv4(g.rs, "10.10.2.100")
                          .icmp_error(3, code, 0,
                                      quote28(to_rs(g, 1000, 0, net::kTcpSyn, "", kSynOptions)))
                          .build(),
                      kWan)
                .size(),
            1u)
            << "code " << int(code);
        EXPECT_EQ(fails(dg), before + 1) << "code " << int(code);
        ++cport;
    }
    EXPECT_EQ(counter(Counter::icmp_related_forwarded), 4u);
}

// Once the RS answered (the conn judged a success), an ICMP error about the conn is no
// failure: the RS may have gone since, but that is for the next conns to tell.
TEST_F(PassiveCountTest, UnreachableAfterTheSynAckIsNoFailure) {
    Flow f;
    establish(kCport, f);
    const lb::Dest* d = dest_of(f);
    auto out =
        roundtrip(kLan,
                  PacketBuilder()
                      .eth(f.rs_mac, lan_mac())
                      .ipv4(f.rs, "10.10.2.100")
                      .icmp_error(3, 3, 0, quote28(to_rs(f, 1001, 5001, net::kTcpAck, "more")))
                      .build(),
                  kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(fails(d), 0u);
    EXPECT_EQ(oks(d), 1u);
}

// reschedule_refused (default on): the RS's RST answering the client's SYN is held back, the
// conn stays in CLOSE, and the client's SYN retransmission goes to the other RS.
class RescheduleRefusedTest : public PassiveCountTest {};

TEST_F(RescheduleRefusedTest, RefusedSynGoesToTheOtherServerOnTheClientsRetransmission) {
    Flow a = open(kCport);
    auto out = roundtrip(kLan, rs_pkt(a, 0, 1001, net::kTcpRst | net::kTcpAck), kWan);
    EXPECT_TRUE(out.empty()) << "the client must not hear of the refusal";
    EXPECT_EQ(counter(Counter::drop_rs_refused_held), 1u);
    ASSERT_NE(find_conn(kCport), nullptr);
    EXPECT_EQ(find_conn(kCport)->state, lb::TcpState::Close);
    EXPECT_EQ(fails(dest_of(a)), 1u);  // passive checking still counts it
    // Another client meanwhile: rr would give it the other RS and the retry the refusing one
    // again; the retry passes over the refusing RS instead.
    Flow other = open(kCport + 1);
    EXPECT_STRNE(other.rs, a.rs);

    worker->advance_clock(1000);  // the client's RTO
    out = roundtrip(kWan, client_pkt(kCport, 1000, 0, net::kTcpSyn, "", kSynOptions), kLan);
    ASSERT_EQ(out.size(), 1u);
    const Flow b = flow_of(out[0]);
    EXPECT_STRNE(b.rs, a.rs) << "the retransmitted SYN went to the server that refused it";
    EXPECT_TRUE(FramesEqual(to_rs(b, 1000, 0, net::kTcpSyn, "", kSynOptions), out[0]));
    EXPECT_EQ(counter(Counter::conns_created), 3u);
    EXPECT_EQ(counter(Counter::conns_expired), 1u);  // the refused conn, its port freed
    auto laddr = director->services().front()->laddrs.front();
    EXPECT_FALSE(laddr->workers[0].pool->in_use(a.lport));
    // The other RS accepts: the client sees an ordinary handshake.
    constexpr uint8_t kSynAck = net::kTcpSyn | net::kTcpAck;
    out = roundtrip(kLan, rs_pkt(b, 5000, 1001, kSynAck, "", kSynOptions), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(kCport, 5000, 1001, kSynAck, "", kSynOptions), out[0]));
    EXPECT_EQ(oks(dest_of(b)), 1u);
    // Nothing was left in the skip mark.
    for (const auto& d : director->services().front()->dests) EXPECT_FALSE(d->stats[0].sched_skip);
}

TEST_F(RescheduleRefusedTest, ASecondRefusalReachesTheClient) {
    Flow a = open(kCport);
    roundtrip(kLan, rs_pkt(a, 0, 1001, net::kTcpRst | net::kTcpAck), kWan);
    worker->advance_clock(1000);
    auto out = roundtrip(kWan, client_pkt(kCport, 1000, 0, net::kTcpSyn, "", kSynOptions), kLan);
    ASSERT_EQ(out.size(), 1u);
    const Flow b = flow_of(out[0]);
    out = roundtrip(kLan, rs_pkt(b, 0, 1001, net::kTcpRst | net::kTcpAck), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(kCport, 0, 1001, net::kTcpRst | net::kTcpAck), out[0]));
    EXPECT_EQ(counter(Counter::drop_rs_refused_held), 1u);
    EXPECT_EQ(find_conn(kCport)->state, lb::TcpState::Close);
}

TEST_F(RescheduleRefusedTest, HeldConnWaitsForTheRetransmissionAsLongAsSynRecv) {
    Flow a = open(kCport);
    roundtrip(kLan, rs_pkt(a, 0, 1001, net::kTcpRst | net::kTcpAck), kWan);
    worker->advance_clock(3100);  // past CLOSE's 3 s: a client retrying after 3 s still finds it
    poll();
    ASSERT_NE(find_conn(kCport), nullptr);
    worker->advance_clock(30'000);  // SYN_RECV's 30 s: gone, its port freed
    poll();
    EXPECT_EQ(find_conn(kCport), nullptr);
    auto laddr = director->services().front()->laddrs.front();
    EXPECT_FALSE(laddr->workers[0].pool->in_use(a.lport));
}

TEST_F(RescheduleRefusedTest, NoOtherServerWithAWeightRelaysTheRefusal) {
    Flow a = open(kCport);
    // The other RS quiesced (weight 0): nowhere else to go, so the client learns at once.
    const auto& dests = director->services().front()->dests;
    const lb::Dest* other = dests[0].get() == dest_of(a) ? dests[1].get() : dests[0].get();
    auto key = lb::make_service_key(6, *net::parse_ipv4("10.10.1.100"), 80);
    ASSERT_TRUE(director->dest_edit(key, lb::DestSpec{other->addr, other->port, 0}).ok());
    director->commit();
    auto out = roundtrip(kLan, rs_pkt(a, 0, 1001, net::kTcpRst | net::kTcpAck), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(FramesEqual(to_client(kCport, 0, 1001, net::kTcpRst | net::kTcpAck), out[0]));
    EXPECT_EQ(counter(Counter::drop_rs_refused_held), 0u);
}

TEST_F(RescheduleRefusedTest, RstAfterTheSynAckIsRelayed) {
    Flow f;
    establish(kCport, f);
    auto out = roundtrip(kLan, rs_pkt(f, 5001, 1001, net::kTcpRst | net::kTcpAck), kWan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(counter(Counter::drop_rs_refused_held), 0u);
}

}  // namespace
}  // namespace xvs::test
