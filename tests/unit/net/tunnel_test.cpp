// Tests for net/tunnel: IPIP and GUE outer headers against bytes computed by hand (checksums
// by an independent script, and recomputed here), DF/TOS copying, the GUE source-port range,
// and the MTU decision (fits, fragment, frag-needed with mtu - overhead, MTU too small).
#include "net/tunnel.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "net/byteorder.h"
#include "packet_ref.h"

namespace xvs::net {
namespace {

using namespace testref;

constexpr uint32_t kClient = 0xcb007107;    // 203.0.113.7
constexpr uint32_t kVip = 0x0a000064;       // 10.0.0.100
constexpr uint32_t kDirector = 0x0a000001;  // 10.0.0.1
constexpr uint32_t kRs = 0x0a00010a;        // 10.0.1.10

const Bytes kPayload = {'G', 'E', 'T', ' ', '/', '\r', '\n'};

// client:51000 -> VIP:80, TOS 0x10, DF, 47 bytes.
Bytes inner_packet(uint8_t tos = 0x10, uint16_t frag = 0x4000) {
    IpFields f;
    f.tos = tos;
    f.frag = frag;
    return ipv4(6, kClient, kVip, tcp(kClient, kVip, 51000, 80, kPayload), f);
}

const Ipv4Hdr& hdr_of(const Bytes& b) {
    return *reinterpret_cast<const Ipv4Hdr*>(b.data());
}

TEST(Tunnel, IpipOuterExactBytes) {
    const Bytes inner = inner_packet();
    ASSERT_EQ(inner.size(), 47u);
    Bytes frame(kIpipOverhead + inner.size());
    std::copy(inner.begin(), inner.end(), frame.begin() + kIpipOverhead);
    ipip_outer(frame.data(), InetAddr::v4(hton32(kDirector)), InetAddr::v4(hton32(kRs)),
               hdr_of(inner), hton16(0x00aa));
    const Bytes want = {0x45, 0x10, 0x00, 0x43, 0x00, 0xaa, 0x40, 0x00, 0x40, 0x04,
                        0x24, 0xf3, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x01, 0x0a};
    EXPECT_EQ(head(frame, 20), want);
    EXPECT_TRUE(ref_valid(frame.data(), 20));
    EXPECT_EQ(Bytes(frame.begin() + 20, frame.end()), inner);  // inner untouched
}

TEST(Tunnel, IpipDfClearMfNotCopiedTtlConfigurable) {
    const Bytes inner = inner_packet(0x00, 0x2000);  // first fragment: MF, no DF
    uint8_t out[20];
    ipip_outer(out, InetAddr::v4(hton32(kDirector)), InetAddr::v4(hton32(kRs)), hdr_of(inner),
               hton16(1), 32);
    const Bytes want = {0x45, 0x00, 0x00, 0x43, 0x00, 0x01, 0x00, 0x00, 0x20, 0x04,
                        0x85, 0xac, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x01, 0x0a};
    EXPECT_EQ(Bytes(out, out + 20), want);
}

TEST(Tunnel, GueOuterExactBytes) {
    const Bytes inner = inner_packet();
    Bytes frame(kGueOverhead + inner.size());
    std::copy(inner.begin(), inner.end(), frame.begin() + kGueOverhead);
    const uint16_t sport = tunnel_flow_port(0x12345678);
    EXPECT_EQ(ntoh16(sport), 0xc44c);  // 0xc000 | ((h ^ h >> 16) & 0x3fff)
    gue_outer(frame.data(), InetAddr::v4(hton32(kDirector)), InetAddr::v4(hton32(kRs)),
              hdr_of(inner), hton16(0x00aa), sport, hton16(6080));
    const Bytes want = {0x45, 0x10, 0x00, 0x4f, 0x00, 0xaa, 0x40, 0x00, 0x40, 0x11,
                        0x24, 0xda, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x01, 0x0a,  // IPv4
                        0xc4, 0x4c, 0x17, 0xc0, 0x00, 0x3b, 0x00, 0x00,              // UDP, csum 0
                        0x00, 0x04, 0x00, 0x00};  // GUE v0, hlen 0, proto 4, flags 0
    EXPECT_EQ(head(frame, kGueOverhead), want);
    EXPECT_TRUE(ref_valid(frame.data(), 20));
    EXPECT_EQ(get16(frame, 2), frame.size());
    EXPECT_EQ(get16(frame, 24), frame.size() - 20);
    EXPECT_EQ(Bytes(frame.begin() + kGueOverhead, frame.end()), inner);
}

TEST(Tunnel, FlowPortSpreadsInDynamicRange) {
    std::set<uint16_t> seen;
    for (uint32_t h = 0; h < 4096; ++h) {
        const uint32_t hash = h * 0x9e3779b9u;
        const uint16_t port = ntoh16(tunnel_flow_port(hash));
        EXPECT_GE(port, 49152);
        EXPECT_EQ(port, ntoh16(tunnel_flow_port(hash)));  // one flow, one port
        seen.insert(port);
    }
    EXPECT_GT(seen.size(), 2000u);
}

TEST(Tunnel, Fits) {
    EXPECT_TRUE(tunnel_fits(1480, kIpipOverhead, 1500));
    EXPECT_FALSE(tunnel_fits(1481, kIpipOverhead, 1500));
    EXPECT_TRUE(tunnel_fits(1468, kGueOverhead, 1500));
    EXPECT_FALSE(tunnel_fits(1469, kGueOverhead, 1500));
}

TEST(Tunnel, MtuCheck) {
    const Bytes df = inner_packet(0, 0x4000);
    const Bytes no_df = inner_packet(0, 0);
    auto v = tunnel_mtu_check(hdr_of(df), 1480, kIpipOverhead, 1500);
    EXPECT_EQ(v.action, TunnelMtuAction::Fits);
    EXPECT_EQ(v.next_hop_mtu, 0);
    v = tunnel_mtu_check(hdr_of(df), 1500, kIpipOverhead, 1500);
    EXPECT_EQ(v.action, TunnelMtuAction::FragNeeded);
    EXPECT_EQ(v.next_hop_mtu, 1480);
    v = tunnel_mtu_check(hdr_of(df), 1500, kGueOverhead, 1500);
    EXPECT_EQ(v.action, TunnelMtuAction::FragNeeded);
    EXPECT_EQ(v.next_hop_mtu, 1468);
    v = tunnel_mtu_check(hdr_of(no_df), 1500, kIpipOverhead, 1500);
    EXPECT_EQ(v.action, TunnelMtuAction::Fragment);
    EXPECT_EQ(v.next_hop_mtu, 0);
    v = tunnel_mtu_check(hdr_of(df), 200, kGueOverhead, 99);  // 99 - 32 = 67 < 68
    EXPECT_EQ(v.action, TunnelMtuAction::MtuTooSmall);
    v = tunnel_mtu_check(hdr_of(df), 200, kGueOverhead, 100);  // 68: still usable
    EXPECT_EQ(v.action, TunnelMtuAction::FragNeeded);
    EXPECT_EQ(v.next_hop_mtu, 68);
}

// tunnel_quote_outer_len: what an ICMP error's quote of our tunnel packet starts with.
TEST(Tunnel, QuoteOuterLenFindsIpipAndGueFromUs) {
    const Bytes inner = inner_packet();
    const InetAddr us = InetAddr::v4(hton32(kDirector));
    const Bytes ipip = ipv4(kIpProtoIpip, kDirector, kRs, inner);
    EXPECT_EQ(tunnel_quote_outer_len(ipip.data(), ipip.size(), us), 20u);
    // A router quotes only the start of it: the inner header and 8 bytes of its L4 suffice.
    EXPECT_EQ(tunnel_quote_outer_len(ipip.data(), 20 + 28, us), 20u);
    EXPECT_EQ(tunnel_quote_outer_len(ipip.data(), 20 + 27, us), 0u);
    Bytes gue_body = udp(kDirector, kRs, 50000, 6080, {}, false);
    append(gue_body, Bytes{0, 4, 0, 0});
    append(gue_body, inner);
    put16(gue_body, 4, uint16_t(gue_body.size()));
    const Bytes gue = ipv4(kIpProtoUdp, kDirector, kRs, gue_body);
    EXPECT_EQ(tunnel_quote_outer_len(gue.data(), gue.size(), us), 32u);
    // Not from the address the error came to, or not a tunnel: 0.
    EXPECT_EQ(tunnel_quote_outer_len(ipip.data(), ipip.size(), InetAddr::v4(hton32(kVip))), 0u);
    EXPECT_EQ(tunnel_quote_outer_len(inner.data(), inner.size(), InetAddr::v4(hton32(kClient))),
              0u);
    Bytes gue_v1 = gue;
    gue_v1[28] = 0x40;  // GUE version 1 (direct IP): not what we send
    EXPECT_EQ(tunnel_quote_outer_len(gue_v1.data(), gue_v1.size(), us), 0u);
    // An IPv6 quote for an IPv4 address (and vice versa) is no tunnel of ours.
    EXPECT_EQ(tunnel_quote_outer_len(ipip.data(), ipip.size(), InetAddr::v6(Bytes(16, 1).data())),
              0u);
}

}  // namespace
}  // namespace xvs::net
