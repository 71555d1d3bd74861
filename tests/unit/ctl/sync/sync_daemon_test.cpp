// Tests for src/ctl/sync/sync_daemon.cpp's wire mapping: a worker's record survives the trip
// through an IPVS sync v1 message with xvs's parameters, and what an IPVS peer sends (no xvs
// parameters) becomes a conn of its forwarding method, or nothing (templates, bad states).
#include "ctl/sync/sync_daemon.h"

#include <gtest/gtest.h>

#include "net/byteorder.h"

namespace xvs::ctl {
namespace {

net::InetAddr v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    return net::InetAddr::v4(
        net::hton32(uint32_t(a) << 24 | uint32_t(b) << 16 | uint32_t(c) << 8 | d));
}

lb::SyncRecord fullnat_record() {
    lb::SyncRecord r;
    r.caddr = v4(10, 10, 1, 2);
    r.vaddr = v4(10, 10, 1, 100);
    r.laddr_ip = v4(10, 10, 2, 100);
    r.daddr = v4(10, 10, 2, 2);
    r.cport = net::hton16(40000);
    r.vport = net::hton16(80);
    r.lport = net::hton16(43181);
    r.dport = net::hton16(8080);
    r.timeout_s = 90;
    r.proto = net::kIpProtoTcp;
    r.state = lb::TcpState::Established;
    r.mode = lb::FwdMode::FullNat;
    r.flags = lb::kConnToa | lb::kConnSynAckSeen | lb::kConnSynProxy;
    r.feat.rs_isn = 1234;
    r.feat.client_isn = 5678;
    r.sp = {0x1000, 77, 7, 9};
    return r;
}

TEST(SyncDaemonWire, FullnatRecordRoundTripsThroughAMessage) {
    const lb::SyncRecord r = fullnat_record();
    net::SyncEncoder enc(3);
    ASSERT_TRUE(enc.add(sync_conn_of(r)));
    auto m = net::sync_decode(enc.bytes());
    ASSERT_TRUE(m) << m.error();
    ASSERT_EQ(m->conns.size(), 1u);
    // What an IPVS peer would read: a masquerading conn to the RS, in state ESTABLISHED (1).
    EXPECT_EQ(m->conns[0].flags & net::kIpvsFwdMask, net::kIpvsFwdMasq);
    EXPECT_EQ(m->conns[0].state, 1);
    auto back = sync_record_of(m->conns[0]);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->laddr_ip, r.laddr_ip);
    EXPECT_EQ(back->lport, r.lport);
    EXPECT_EQ(back->mode, lb::FwdMode::FullNat);
    EXPECT_EQ(back->state, lb::TcpState::Established);
    EXPECT_EQ(back->flags, r.flags);
    EXPECT_EQ(back->feat.rs_isn, 1234u);
    EXPECT_EQ(back->feat.client_isn, 5678u);
    EXPECT_EQ(back->sp.seq_delta, 0x1000u);
    EXPECT_EQ(back->sp.our_wscale, 9);
    EXPECT_EQ(back->timeout_s, 90u);
}

TEST(SyncDaemonWire, IpvsPeerConnsMapToTheirMethod) {
    net::SyncConn c = sync_conn_of(fullnat_record());
    c.has_xvs = c.has_feat = c.has_synproxy = false;
    c.flags = net::kIpvsFwdDroute;
    auto r = sync_record_of(c);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->mode, lb::FwdMode::Dr);
    EXPECT_EQ(r->laddr_ip, c.caddr);  // no local address: the outbound tuple ends at the client
    EXPECT_EQ(r->lport, c.cport);
    EXPECT_EQ(r->flags, 0);
    c.flags = net::kIpvsFwdMasq;
    EXPECT_EQ(sync_record_of(c)->mode, lb::FwdMode::Nat);
    c.flags = net::kIpvsFwdTunnel;
    EXPECT_EQ(sync_record_of(c)->mode, lb::FwdMode::Tun);
    c.flags = 1;  // LOCALNODE: nothing xvs forwards
    EXPECT_FALSE(sync_record_of(c));
    c.flags = net::kIpvsConnTemplate;
    EXPECT_FALSE(sync_record_of(c));
    c.flags = net::kIpvsFwdMasq;
    c.state = 11;  // past SYNACK
    EXPECT_FALSE(sync_record_of(c));
}

TEST(SyncDaemonWire, SynproxyFlagNeedsItsDeltas) {
    net::SyncConn c = sync_conn_of(fullnat_record());
    c.has_synproxy = false;  // a peer that lost the parameter: the conn cannot be translated
    auto r = sync_record_of(c);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->flags & lb::kConnSynProxy);
}

TEST(SyncRing, FifoBoundedAndCountsNothingItself) {
    lb::SyncRing ring(5);  // rounded up to 8
    EXPECT_EQ(ring.capacity(), 8u);
    lb::SyncRecord r = fullnat_record();
    for (uint16_t i = 0; i < 8; ++i) {
        r.cport = i;
        EXPECT_TRUE(ring.push(r));
    }
    EXPECT_FALSE(ring.push(r));  // full: the caller counts sync_ring_full
    lb::SyncRecord out[16];
    ASSERT_EQ(ring.pop(out, 3), 3u);
    EXPECT_EQ(out[0].cport, 0);
    EXPECT_EQ(out[2].cport, 2);
    EXPECT_TRUE(ring.push(r));
    ASSERT_EQ(ring.pop(out, 16), 6u);
    EXPECT_EQ(out[0].cport, 3);
    EXPECT_EQ(ring.pop(out, 16), 0u);
}

}  // namespace
}  // namespace xvs::ctl
