// Packet tests: conhash with hash target qid (DPVS's QUIC connection-ID hashing) through the
// real pipeline, IPv4 and IPv6 from one templated body. A UDP conhash service places a flow by
// the QUIC Destination Connection ID of its first datagram: the Initial (long header, its
// length on the wire) and a later short header with the same ID (quic_cid_len bytes) from
// another address and port reach the same DR real server, exact frames; one client's
// connections spread over both servers; a datagram that is no QUIC packet falls back to the
// client address. Conservation is the fixture's.
#include <initializer_list>
#include <set>

#include "fixture/pipeline.h"

namespace xvs::test {
namespace {

using stack::Counter;

struct V4 {
    static constexpr const char* kVip = "10.10.1.100";
    static constexpr const char* kClientA = "10.10.1.2";
    static constexpr const char* kClientB = "10.10.1.7";
    static constexpr const char* kRs[2] = {"10.10.2.2", "10.10.2.3"};
    static net::InetAddr addr(const char* text) { return ip(text); }
    static void addresses(lb::Director& d) {
        ASSERT_TRUE(d.address_add(ip("10.10.1.1"), 24, "wan").ok());
        ASSERT_TRUE(d.address_add(ip("10.10.2.1"), 24, "lan").ok());
    }
    static PacketBuilder& l3(PacketBuilder& b, const char* src, const char* dst) {
        return b.ipv4(src, dst);
    }
};

struct V6 {
    static constexpr const char* kVip = "2001:db8:1::100";
    static constexpr const char* kClientA = "2001:db8:1::2";
    static constexpr const char* kClientB = "2001:db8:1::7";
    static constexpr const char* kRs[2] = {"2001:db8:2::2", "2001:db8:2::3"};
    static net::InetAddr addr(const char* text) { return ip6(text); }
    static void addresses(lb::Director& d) {
        ASSERT_TRUE(d.address_add(ip6("2001:db8:1::1"), 64, "wan").ok());
        ASSERT_TRUE(d.address_add(ip6("2001:db8:2::1"), 64, "lan").ok());
    }
    static PacketBuilder& l3(PacketBuilder& b, const char* src, const char* dst) {
        return b.ipv6(src, dst);
    }
};

constexpr uint8_t kCidLen = 8;  // the servers' connection-ID length (quic_cid_len)

// The datagrams are built byte by byte: GCC 12 at -O3 takes a range insert into a vector
// this small for an out-of-bounds memcpy (-Warray-bounds, a false positive).
Bytes joined(std::initializer_list<uint8_t> head, const Bytes& mid, std::initializer_list<uint8_t> tail) {
    Bytes p;
    p.reserve(head.size() + mid.size() + tail.size());
    for (uint8_t b : head) p.push_back(b);
    for (uint8_t b : mid) p.push_back(b);
    for (uint8_t b : tail) p.push_back(b);
    return p;
}
// A QUIC v1 Initial's first bytes: long header, version 1, DCID (length on the wire), SCID.
Bytes initial(const Bytes& dcid) {
    return joined({0xc3, 0x00, 0x00, 0x00, 0x01, static_cast<uint8_t>(dcid.size())}, dcid,
                  {0x04, 0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x41, 0x00, 0x11, 0x22});
}
// A 1-RTT packet: short header with the fixed bit, the DCID, then protected bytes.
Bytes short_header(const Bytes& dcid) {
    return joined({0x43}, dcid, {0x5e, 0x11, 0x22, 0x33});
}
Bytes cid(uint32_t k) {
    return Bytes{0xc1, 0xd0, uint8_t(k >> 24), uint8_t(k >> 16), uint8_t(k >> 8), uint8_t(k),
                 0x77, 0x88};
}

template <class Af>
class ConhashQuicTest : public PipelineTest {
  protected:
    void configure(uint32_t flags = lb::kSvcFlagHashQid, uint8_t cid_len = kCidLen) {
        Af::addresses(*director);
        lb::ServiceSpec s{17, Af::addr(Af::kVip), 443, "conhash"};
        s.fwd = lb::FwdMode::Dr;
        s.flags = flags;
        s.quic_cid_len = cid_len;
        ASSERT_TRUE(director->service_add(s).ok());
        for (const char* rs : Af::kRs) {
            lb::DestSpec d{Af::addr(rs), 443, 1};
            d.fwd = lb::FwdMode::Dr;
            ASSERT_TRUE(director->dest_add(key(), d).ok());
        }
        director->commit();
        start_worker();
        worker->neighbours().add_static(Af::addr(Af::kClientA), kClientMac, kWan);
        worker->neighbours().add_static(Af::addr(Af::kRs[0]), kRs1Mac, kLan);
        worker->neighbours().add_static(Af::addr(Af::kRs[1]), kRs2Mac, kLan);
    }
    lb::ServiceKey key() const { return lb::make_service_key(17, Af::addr(Af::kVip), 443); }
    Bytes datagram(net::MacAddr src_mac, net::MacAddr dst_mac, const char* client,
                   uint16_t cport, const Bytes& payload) {
        PacketBuilder b;
        b.eth(src_mac, dst_mac);
        Af::l3(b, client, Af::kVip).udp(cport, 443).payload(payload);
        return b.build();
    }
    // The real server (0 or 1) the datagram went to, checked byte for byte: DR changes the
    // MACs only. -1 when nothing or something else came out.
    int sent_to(const char* client, uint16_t cport, const Bytes& payload) {
        auto out = roundtrip(kWan, datagram(kClientMac, wan_mac(), client, cport, payload), kLan);
        if (out.size() != 1) {
            ADD_FAILURE() << client << ":" << cport << ": " << out.size() << " frames out";
            return -1;
        }
        for (int rs = 0; rs < 2; ++rs) {
            const net::MacAddr mac = rs == 0 ? kRs1Mac : kRs2Mac;
            if (FramesEqual(datagram(lan_mac(), mac, client, cport, payload), out[0])) return rs;
        }
        ADD_FAILURE() << "not the client's datagram to a real server";
        return -1;
    }
};

using Families = ::testing::Types<V4, V6>;
TYPED_TEST_SUITE(ConhashQuicTest, Families);

// The Initial places the connection; its short headers from another address and port (a
// migrated client, a NAT rebinding) follow it, and one client's connections spread.
TYPED_TEST(ConhashQuicTest, AConnectionIdKeepsItsServerFromAnyAddress) {
    this->configure();
    std::set<int> used;
    for (uint32_t k = 0; k < 24; ++k) {
        const int rs = this->sent_to(TypeParam::kClientA, uint16_t(40000 + k), initial(cid(k)));
        used.insert(rs);
        EXPECT_EQ(this->sent_to(TypeParam::kClientB, uint16_t(50000 + k), short_header(cid(k))),
                  rs)
            << k;
    }
    EXPECT_EQ(used, (std::set<int>{0, 1}));  // one client address, both servers
    EXPECT_EQ(this->counter(Counter::conns_created), 48u);
}

// An Initial's DCID longer than quic_cid_len is hashed by its first quic_cid_len bytes, so a
// server that keeps them as its own ID keeps the connection.
TYPED_TEST(ConhashQuicTest, ALongerInitialIdIsCutToTheServersLength) {
    this->configure();
    for (uint32_t k = 0; k < 12; ++k) {
        const Bytes longer = joined({}, cid(k), {0xee, 0xee, 0xee, 0xee});  // 12 bytes
        const int rs = this->sent_to(TypeParam::kClientA, uint16_t(40000 + k), initial(longer));
        EXPECT_EQ(this->sent_to(TypeParam::kClientB, uint16_t(50000 + k), short_header(cid(k))),
                  rs);
    }
}

// No QUIC packet (version negotiation, a bare byte), or short headers with no length known:
// the client address decides, as plain conhash: every flow of one client on one server.
TYPED_TEST(ConhashQuicTest, WithoutAConnectionIdTheClientAddressDecides) {
    this->configure(lb::kSvcFlagHashQid, 0);
    std::set<int> used;
    for (uint32_t k = 0; k < 12; ++k) {
        used.insert(this->sent_to(TypeParam::kClientA, uint16_t(40000 + k), short_header(cid(k))));
        used.insert(this->sent_to(TypeParam::kClientA, uint16_t(41000 + k), Bytes{0x00}));
        Bytes vn = initial(cid(k));
        vn[1] = vn[2] = vn[3] = vn[4] = 0;  // version 0: Version Negotiation
        used.insert(this->sent_to(TypeParam::kClientA, uint16_t(42000 + k), vn));
    }
    EXPECT_EQ(used.size(), 1u);
}

// The control: without hash target qid the same Initials all follow the client address.
TYPED_TEST(ConhashQuicTest, WithoutQidTheIdIsIgnored) {
    this->configure(0, 0);
    std::set<int> used;
    for (uint32_t k = 0; k < 24; ++k)
        used.insert(this->sent_to(TypeParam::kClientA, uint16_t(40000 + k), initial(cid(k))));
    EXPECT_EQ(used.size(), 1u);
}

// What the director refuses: qid on TCP, on another scheduler, a length without qid.
TYPED_TEST(ConhashQuicTest, DirectorRefusesWhatHasNoEffect) {
    TypeParam::addresses(*this->director);
    lb::ServiceSpec tcp{6, TypeParam::addr(TypeParam::kVip), 443, "conhash"};
    tcp.flags = lb::kSvcFlagHashQid;
    EXPECT_FALSE(this->director->service_add(tcp).ok());
    lb::ServiceSpec rr{17, TypeParam::addr(TypeParam::kVip), 443, "rr"};
    rr.flags = lb::kSvcFlagHashQid;
    EXPECT_FALSE(this->director->service_add(rr).ok());
    lb::ServiceSpec len{17, TypeParam::addr(TypeParam::kVip), 443, "conhash"};
    len.quic_cid_len = 8;
    EXPECT_FALSE(this->director->service_add(len).ok());
    len.flags = lb::kSvcFlagHashQid;
    len.quic_cid_len = 21;
    EXPECT_FALSE(this->director->service_add(len).ok());
    len.quic_cid_len = 20;
    EXPECT_TRUE(this->director->service_add(len).ok());
}

}  // namespace
}  // namespace xvs::test
