// Packet tests: IPv4 input validation — malformed frames are dropped and counted, never crash
// and never forwarded.
#include "fixture/pipeline.h"
#include "net/checksum.h"

namespace xvs::test {
namespace {

using stack::Counter;

class Ipv4InputTest : public PipelineTest {
protected:
    void SetUp() override {
        PipelineTest::SetUp();
        configure_default("rr");
        start_worker();
        learn_neighbours();
    }
    PacketBuilder syn() {
        PacketBuilder b;
        b.eth(kClientMac, wan_mac()).ipv4("10.10.1.2", "10.10.1.100").tcp(40000, 80).flags(net::kTcpSyn);
        return b;
    }
    void expect_dropped(const Bytes& f, Counter c) {
        uint64_t before = counter(c);
        send(kWan, f);
        poll();
        EXPECT_TRUE(recv(kLan).empty());
        EXPECT_TRUE(recv(kWan).empty());
        EXPECT_EQ(counter(c), before + 1) << stack::kCounterInfo[size_t(c)].name;
        EXPECT_EQ(counter(Counter::conns_created), 0u);
    }
};

TEST_F(Ipv4InputTest, BadHeaderChecksum) { expect_dropped(syn().ip_checksum(0x1234).build(), Counter::drop_ip_checksum); }

TEST_F(Ipv4InputTest, TruncatedFrames) {
    Bytes f = syn().build();
    expect_dropped(Bytes(f.begin(), f.begin() + 10), Counter::drop_frame_truncated);
    expect_dropped(Bytes(f.begin(), f.begin() + 30), Counter::drop_frame_truncated);
    // IP says 40 bytes, frame carries 30 of them.
    expect_dropped(Bytes(f.begin(), f.begin() + 44), Counter::drop_ip_total_len);
}

TEST_F(Ipv4InputTest, BadVersionAndHeaderLength) {
    expect_dropped(syn().ip_version_ihl(0x65).build(), Counter::drop_ip_version);
    expect_dropped(syn().ip_version_ihl(0x44).build(), Counter::drop_ip_header_len);
    expect_dropped(syn().ip_version_ihl(0x4f).build(), Counter::drop_ip_header_len);
}

TEST_F(Ipv4InputTest, TotalLengthInconsistent) {
    expect_dropped(syn().ip_total_length(19).build(), Counter::drop_ip_total_len);
    expect_dropped(syn().ip_total_length(1000).build(), Counter::drop_ip_total_len);
}

TEST_F(Ipv4InputTest, TtlZeroAndFragments) {
    expect_dropped(syn().ttl(0).build(), Counter::drop_ip_ttl);
    // Fragments go to reassembly (fragments_test.cpp): a non-last fragment of 20 bytes is not
    // a multiple of 8.
    expect_dropped(syn().frag_off(0x2000).build(), Counter::drop_frag_bad_length);
}

TEST_F(Ipv4InputTest, BadTcpDataOffset) {
    expect_dropped(syn().data_offset_words(4).build(), Counter::drop_tcp_header);
    expect_dropped(syn().data_offset_words(15).build(), Counter::drop_tcp_header);
    Bytes f = syn().build();
    // Cut the TCP header to 12 bytes (IP total length adjusted, checksum recomputed).
    PacketBuilder b;
    Bytes shortf(f.begin(), f.begin() + 14 + 20 + 12);
    auto* h = reinterpret_cast<net::Ipv4Hdr*>(shortf.data() + 14);
    h->total_length = net::hton16(32);
    h->checksum = 0;
    h->checksum = net::csum_fold(net::csum_partial(h, 20, 0));
    expect_dropped(shortf, Counter::drop_tcp_header);
}

TEST_F(Ipv4InputTest, EthernetPaddingIsTrimmedNotForwarded) {
    Bytes f = syn().build();
    f.resize(f.size() + 6, 0);  // minimum-frame padding after a 54-byte SYN
    send(kWan, f);
    poll();
    auto out = recv(kLan);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].size(), 54u);
}

TEST_F(Ipv4InputTest, OversizedFrameDropped) {
    expect_dropped(syn().payload(std::string(1500, 'a')).build(), Counter::drop_frame_too_big);
}

TEST_F(Ipv4InputTest, OtherIpProtocolDropped) {
    Bytes f = syn().build();
    auto* h = reinterpret_cast<net::Ipv4Hdr*>(f.data() + 14);
    h->protocol = 47;  // GRE
    h->checksum = 0;
    h->checksum = net::csum_fold(net::csum_partial(h, 20, 0));
    expect_dropped(f, Counter::drop_ip_proto);
}

TEST_F(Ipv4InputTest, GarbageNeverCrashes) {
    // Random frames with a valid Ethernet header: whatever they are, they are dropped/counted.
    uint64_t seed = 12345;
    auto rnd = [&] { return seed = seed * 6364136223846793005ULL + 1442695040888963407ULL; };
    for (int i = 0; i < 2000; ++i) {
        Bytes f = syn().payload(std::string(rnd() % 64, 'p')).build();
        size_t n = 1 + rnd() % 6;
        for (size_t k = 0; k < n; ++k) f[14 + rnd() % (f.size() - 14)] = uint8_t(rnd());
        f.resize(14 + rnd() % (f.size() - 13));
        send(kWan, f);
        if (i % 32 == 31) poll();
    }
    poll();
    recv(kLan);
    recv(kWan);
    uint64_t drops = 0;
    for (size_t c = 0; c < stack::kCounterCount; ++c)
        if (stack::kCounterInfo[c].is_drop) drops += worker->counters().v[c];
    EXPECT_GT(drops, 1500u);
}

// The input looks an own address up once for a run of packets to one destination (OwnMemo):
// each packet of a mixed burst still gets its own destination's answer, and what was learned
// goes with the configuration it was learned from, when the address may no longer be ours.
TEST_F(Ipv4InputTest, OwnAddressAnswersFollowEachPacketAndTheConfiguration) {
    auto to = [&](const char* dst, uint16_t cport) {
        return PacketBuilder()
            .eth(kClientMac, wan_mac())
            .ipv4("10.10.1.2", dst)
            .tcp(cport, 80)
            .flags(net::kTcpSyn)
            .build();
    };
    send(kWan, to("10.10.1.100", 40001));  // the VIP
    send(kWan, to("10.10.1.100", 40002));
    send(kWan, to("10.10.2.2", 40003));  // nobody's
    send(kWan, to("10.10.1.1", 40004));  // the director's own address
    send(kWan, to("10.10.1.100", 40005));
    poll();
    EXPECT_EQ(recv(kLan).size(), 3u);
    EXPECT_TRUE(recv(kWan).empty());
    EXPECT_EQ(counter(Counter::conns_created), 3u);
    EXPECT_EQ(counter(Counter::drop_not_local), 1u);
    EXPECT_EQ(counter(Counter::drop_to_director), 1u);

    // The VIP's services go, and with them the VIP: the answer remembered for it must too.
    for (uint8_t proto : {uint8_t{6}, uint8_t{17}}) {
        const uint16_t vport = proto == 6 ? 80 : 53;
        const auto key = lb::make_service_key(proto, *net::parse_ipv4("10.10.1.100"), vport);
        ASSERT_TRUE(director->service_del(key).ok());
    }
    director->commit();
    poll();
    director->reclaim();
    send(kWan, to("10.10.1.100", 40006));
    poll();
    EXPECT_TRUE(recv(kLan).empty());
    EXPECT_EQ(counter(Counter::drop_not_local), 2u);
    EXPECT_EQ(counter(Counter::drop_no_service), 0u);
}

}  // namespace
}  // namespace xvs::test
