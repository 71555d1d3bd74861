// Tests for net/icmp_related: parse of dest-unreachable/time-exceeded quotes (TCP, UDP, echo,
// IP options) and every refusal; translation for FULLNAT path MTU, NAT port unreachable and
// SNAT traceroute compared byte for byte with the message rebuilt from scratch; and the
// frag-needed builder (576-byte cap, refusals, round trip through the parser).
#include "net/icmp_related.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "net/byteorder.h"
#include "packet_ref.h"

namespace xvs::net {
namespace {

using namespace testref;

constexpr uint32_t kClient = 0xcb007107;  // 203.0.113.7
constexpr uint32_t kVip = 0x0a000064;     // 10.0.0.100
constexpr uint32_t kLip = 0x0a000002;     // 10.0.0.2
constexpr uint32_t kRs = 0xc0a8000a;      // 192.168.0.10
constexpr uint32_t kRouter = 0xc63364fe;  // 198.51.100.254
constexpr uint32_t kInside = 0xc0a8010a;  // 192.168.1.10
constexpr uint32_t kWan = 0xc6336401;     // 198.51.100.1
constexpr uint32_t kOutside = 0x08080808;

Bytes payload(size_t n) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 7 + 3);
    return b;
}

IpFields quoted_fields() {
    IpFields f;
    f.ttl = 1;  // as a router quotes it (time exceeded) or any TTL: it is quoted verbatim
    f.id = 0x4321;
    return f;
}

Bytes tcp_pkt(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, size_t n) {
    return ipv4(6, s, d, tcp(s, d, sp, dp, payload(n)), quoted_fields());
}
Bytes udp_pkt(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, size_t n, bool csum = true) {
    return ipv4(17, s, d, udp(s, d, sp, dp, payload(n), csum), quoted_fields());
}

// Outer IPv4 + ICMP error quoting the first quote_len bytes of quoted.
Bytes error_pkt(uint32_t s, uint32_t d, uint8_t type, uint8_t code, uint32_t rest,
                const Bytes& quoted, size_t quote_len) {
    IpFields f;
    f.tos = 0xc0;
    f.frag = 0;
    f.id = 0x0777;
    return ipv4(1, s, d, icmp_error(type, code, rest, head(quoted, quote_len)), f);
}

Ipv4Hdr* ip_of(Bytes& b) {
    return reinterpret_cast<Ipv4Hdr*>(b.data());
}

bool parse(const Bytes& pkt, IcmpQuote& q) {
    return parse_icmp_error(pkt.data() + 20, pkt.size() - 20, q);
}

// FULLNAT download through a smaller-MTU link near the client: the router's frag-needed to
// the VIP quotes VIP:80 -> client:51000 and goes on to the RS quoting RS:8080 -> LIP:40000.
TEST(IcmpRelated, FullnatFragNeededToRs) {
    const Bytes sent = tcp_pkt(kVip, kClient, 80, 51000, 1460);
    Bytes pkt = error_pkt(kRouter, kVip, 3, 4, 1400, sent, 48);  // header + 28 quoted bytes
    IcmpQuote q;
    ASSERT_TRUE(parse(pkt, q));
    EXPECT_EQ(q.type, kIcmpDestUnreach);
    EXPECT_EQ(q.code, kIcmpFragNeededCode);
    EXPECT_EQ(q.next_hop_mtu, 1400);
    EXPECT_EQ(q.inner_proto, kIpProtoTcp);
    EXPECT_EQ(q.inner_saddr, InetAddr::v4(hton32(kVip)));
    EXPECT_EQ(q.inner_daddr, InetAddr::v4(hton32(kClient)));
    EXPECT_EQ(q.inner_sport, hton16(80));
    EXPECT_EQ(q.inner_dport, hton16(51000));
    EXPECT_EQ(q.inner_ip_off, 8);
    EXPECT_EQ(q.inner_ip_len, 20);
    EXPECT_EQ(q.inner_l4_off, 28);
    EXPECT_EQ(q.inner_l4_len, 28);
    EXPECT_TRUE(q.inner_l4_csum);

    const IcmpTranslation t{InetAddr::v4(hton32(kLip)),
                            InetAddr::v4(hton32(kRs)),
                            InetAddr::v4(hton32(kRs)),
                            InetAddr::v4(hton32(kLip)),
                            hton16(8080),
                            hton16(40000)};
    ASSERT_TRUE(translate_icmp_error(ip_of(pkt), pkt.data() + 20, pkt.size() - 20, q, t));
    const Bytes want = error_pkt(kLip, kRs, 3, 4, 1400, tcp_pkt(kRs, kLip, 8080, 40000, 1460), 48);
    EXPECT_EQ(pkt, want);
    EXPECT_TRUE(ref_valid(pkt.data(), 20));
    EXPECT_TRUE(ref_valid(pkt.data() + 20, pkt.size() - 20));
    EXPECT_TRUE(ref_valid(pkt.data() + 28, 20));  // quoted IP header
}

// NAT: the RS answers client:51000 -> RS:5353 with port unreachable; the client must see it
// from the VIP about client:51000 -> VIP:53.
TEST(IcmpRelated, NatUdpPortUnreachableToClient) {
    for (bool csum : {true, false}) {
        const Bytes sent = udp_pkt(kClient, kRs, 51000, 5353, 30, csum);
        Bytes pkt = error_pkt(kRs, kClient, 3, 3, 0, sent, sent.size());
        IcmpQuote q;
        ASSERT_TRUE(parse(pkt, q));
        EXPECT_EQ(q.inner_l4_len, 38);
        EXPECT_EQ(q.next_hop_mtu, 0);
        const IcmpTranslation t{InetAddr::v4(hton32(kVip)),
                                InetAddr::v4(hton32(kClient)),
                                InetAddr::v4(hton32(kClient)),
                                InetAddr::v4(hton32(kVip)),
                                hton16(51000),
                                hton16(53)};
        ASSERT_TRUE(translate_icmp_error(ip_of(pkt), pkt.data() + 20, pkt.size() - 20, q, t));
        const Bytes want_quote = udp_pkt(kClient, kVip, 51000, 53, 30, csum);
        EXPECT_EQ(pkt, error_pkt(kVip, kClient, 3, 3, 0, want_quote, want_quote.size())) << csum;
        if (!csum) {
            EXPECT_EQ(get16(pkt, 28 + 20 + 6), 0);
        }
    }
}

// Only 8 bytes of TCP quoted (RFC 792 minimum): ports change, the checksum is not there.
TEST(IcmpRelated, TcpMinimalQuote) {
    const Bytes sent = tcp_pkt(kVip, kClient, 80, 51000, 100);
    Bytes pkt = error_pkt(kRouter, kVip, 11, 0, 0, sent, 28);
    IcmpQuote q;
    ASSERT_TRUE(parse(pkt, q));
    EXPECT_EQ(q.inner_l4_len, 8);
    EXPECT_FALSE(q.inner_l4_csum);
    const IcmpTranslation t{InetAddr::v4(hton32(kRouter)),
                            InetAddr::v4(hton32(kRs)),
                            InetAddr::v4(hton32(kRs)),
                            InetAddr::v4(hton32(kLip)),
                            hton16(8080),
                            hton16(40000)};
    ASSERT_TRUE(translate_icmp_error(ip_of(pkt), pkt.data() + 20, pkt.size() - 20, q, t));
    EXPECT_EQ(pkt, error_pkt(kRouter, kRs, 11, 0, 0, tcp_pkt(kRs, kLip, 8080, 40000, 100), 28));
}

// SNAT traceroute: a router's time exceeded for WAN -> 8.8.8.8 echo id 0x0400 goes back to
// the inside host quoting its own request, id 0x1234.
TEST(IcmpRelated, SnatTimeExceededForEcho) {
    const Bytes data = payload(56);
    const Bytes sent = ipv4(1, kWan, kOutside, icmp_echo(8, 0x0400, 3, data), quoted_fields());
    Bytes pkt = error_pkt(kRouter, kWan, 11, 0, 0, sent, sent.size());
    IcmpQuote q;
    ASSERT_TRUE(parse(pkt, q));
    EXPECT_EQ(q.inner_proto, kIpProtoIcmp);
    EXPECT_EQ(q.inner_icmp_type, kIcmpEchoRequest);
    EXPECT_EQ(q.inner_sport, hton16(0x0400));
    EXPECT_EQ(q.inner_dport, hton16(0x0400));
    EXPECT_TRUE(q.inner_l4_csum);
    const IcmpTranslation t{InetAddr::v4(hton32(kRouter)),
                            InetAddr::v4(hton32(kInside)),
                            InetAddr::v4(hton32(kInside)),
                            InetAddr::v4(hton32(kOutside)),
                            hton16(0x1234),
                            0};
    ASSERT_TRUE(translate_icmp_error(ip_of(pkt), pkt.data() + 20, pkt.size() - 20, q, t));
    const Bytes want_quote =
        ipv4(1, kInside, kOutside, icmp_echo(8, 0x1234, 3, data), quoted_fields());
    EXPECT_EQ(pkt, error_pkt(kRouter, kInside, 11, 0, 0, want_quote, want_quote.size()));
}

// A quoted header with 4 bytes of options: ports are found after IHL * 4.
TEST(IcmpRelated, QuotedIpOptions) {
    Bytes sent = tcp_pkt(kVip, kClient, 80, 51000, 10);
    sent.insert(sent.begin() + 20, {1, 1, 1, 0});  // NOP NOP NOP EOL
    sent[0] = 0x46;
    put16(sent, 2, uint16_t(sent.size()));
    put16(sent, 10, 0);
    put16(sent, 10, ref_csum(sent.data(), 24));
    Bytes pkt = error_pkt(kRouter, kVip, 3, 4, 1400, sent, 24 + 20);
    IcmpQuote q;
    ASSERT_TRUE(parse(pkt, q));
    EXPECT_EQ(q.inner_ip_len, 24);
    EXPECT_EQ(q.inner_l4_off, 32);
    EXPECT_EQ(q.inner_sport, hton16(80));
    EXPECT_EQ(q.inner_dport, hton16(51000));
    const IcmpTranslation t{InetAddr::v4(hton32(kLip)),
                            InetAddr::v4(hton32(kRs)),
                            InetAddr::v4(hton32(kRs)),
                            InetAddr::v4(hton32(kLip)),
                            hton16(8080),
                            hton16(40000)};
    ASSERT_TRUE(translate_icmp_error(ip_of(pkt), pkt.data() + 20, pkt.size() - 20, q, t));
    EXPECT_TRUE(ref_valid(pkt.data(), 20));
    EXPECT_TRUE(ref_valid(pkt.data() + 20, pkt.size() - 20));
    EXPECT_TRUE(ref_valid(pkt.data() + 28, 24));
    EXPECT_EQ(get16(pkt, 28 + 24), 8080);
    EXPECT_EQ(get16(pkt, 28 + 26), 40000);
    // The quoted TCP checksum is that of the whole rewritten segment.
    Bytes seg(sent.begin() + 24, sent.end());
    put16(seg, 0, 8080);
    put16(seg, 2, 40000);
    put16(seg, 16, 0);
    EXPECT_EQ(get16(pkt, 28 + 24 + 16),
              ref_csum(seg.data(), seg.size(), ref_pseudo(kRs, kLip, 6, seg.size())));
}

TEST(IcmpRelated, ParseRefusals) {
    const Bytes sent = tcp_pkt(kVip, kClient, 80, 51000, 100);
    IcmpQuote q;
    auto with_quote = [&](Bytes quote) {
        return error_pkt(kRouter, kVip, 3, 4, 1400, quote, quote.size());
    };
    ASSERT_TRUE(parse(with_quote(head(sent, 28)), q));
    EXPECT_FALSE(parse(with_quote(head(sent, 27)), q)) << "7 L4 bytes";
    for (uint8_t type : {0, 4, 5, 8, 12, 13}) {
        EXPECT_FALSE(parse(error_pkt(kRouter, kVip, type, 0, 0, sent, 48), q)) << int(type);
    }
    EXPECT_FALSE(parse(error_pkt(kRouter, kVip, 3, 16, 0, sent, 48), q));
    EXPECT_FALSE(parse(error_pkt(kRouter, kVip, 11, 2, 0, sent, 48), q));
    EXPECT_TRUE(parse(error_pkt(kRouter, kVip, 11, 1, 0, sent, 48), q));
    EXPECT_TRUE(parse(error_pkt(kRouter, kVip, 3, 13, 0, sent, 48), q));

    Bytes bad_csum = with_quote(head(sent, 48));
    bad_csum[22] ^= 1;
    EXPECT_FALSE(parse(bad_csum, q));

    auto mutated = [&](size_t at, uint8_t v) {
        Bytes s = head(sent, 48);
        s[at] = v;
        return with_quote(s);  // outer ICMP checksum recomputed over the mutated quote
    };
    EXPECT_FALSE(parse(mutated(0, 0x65), q)) << "version 6";
    EXPECT_FALSE(parse(mutated(0, 0x44), q)) << "IHL 4";
    EXPECT_FALSE(parse(mutated(0, 0x4f), q)) << "IHL 15, quote too short";
    EXPECT_FALSE(parse(mutated(9, 47), q)) << "GRE";
    EXPECT_FALSE(parse(mutated(7, 0x01), q)) << "fragment offset 8";
    EXPECT_TRUE(parse(mutated(6, 0x20), q)) << "first fragment (MF only)";
    {
        Bytes s = head(sent, 48);
        put16(s, 2, 27);  // total length shorter than IHL + 8
        EXPECT_FALSE(parse(with_quote(s), q));
    }
    // An error about an ICMP error, or about an ICMP type that is not echo.
    const Bytes err = ipv4(1, kVip, kClient, icmp_error(3, 3, 0, head(sent, 28)));
    EXPECT_FALSE(parse(with_quote(err), q));
    const Bytes ts = ipv4(1, kVip, kClient, icmp_echo(13, 1, 1, payload(12)));
    EXPECT_FALSE(parse(with_quote(ts), q));
    const Bytes reply = ipv4(1, kVip, kClient, icmp_echo(0, 1, 1, payload(12)));
    ASSERT_TRUE(parse(with_quote(reply), q));
    EXPECT_EQ(q.inner_icmp_type, kIcmpEchoReply);

    const Bytes ok = with_quote(head(sent, 48));
    EXPECT_FALSE(parse_icmp_error(ok.data() + 20, 35, q)) << "shorter than 8 + 20 + 8";
}

TEST(IcmpRelated, TranslateRefusesQuoteBeyondLength) {
    Bytes pkt = error_pkt(kRouter, kVip, 3, 4, 1400, tcp_pkt(kVip, kClient, 80, 51000, 100), 48);
    IcmpQuote q;
    ASSERT_TRUE(parse(pkt, q));
    const Bytes before = pkt;
    const IcmpTranslation t{
        InetAddr::v4(1), InetAddr::v4(2), InetAddr::v4(3), InetAddr::v4(4), 5, 6};
    EXPECT_FALSE(translate_icmp_error(ip_of(pkt), pkt.data() + 20, 40, q, t));
    IcmpQuote bad = q;
    bad.inner_l4_off = 30;
    EXPECT_FALSE(translate_icmp_error(ip_of(pkt), pkt.data() + 20, pkt.size() - 20, bad, t));
    EXPECT_EQ(pkt, before);
}

// The director's own frag-needed for a TUN packet that does not fit: 576 bytes in all.
TEST(IcmpRelated, BuildFragNeededCapsAt576) {
    const Bytes orig = tcp_pkt(kClient, kVip, 51000, 80, 1460);
    ASSERT_EQ(orig.size(), 1500u);
    uint8_t out[kIcmpErrorMaxLen];
    const size_t n = build_frag_needed(out, sizeof out, orig.data(), orig.size(),
                                       InetAddr::v4(hton32(kVip)), 1480, hton16(0x0777));
    ASSERT_EQ(n, 576u);
    IpFields f;
    f.tos = 0xc0;
    f.frag = 0;
    f.id = 0x0777;
    const Bytes want = ipv4(1, kVip, kClient, icmp_error(3, 4, 1480, head(orig, 548)), f);
    EXPECT_EQ(Bytes(out, out + n), want);
    EXPECT_TRUE(ref_valid(out, 20));
    EXPECT_TRUE(ref_valid(out + 20, n - 20));

    IcmpQuote q;
    ASSERT_TRUE(parse_icmp_error(out + 20, n - 20, q));
    EXPECT_EQ(q.next_hop_mtu, 1480);
    EXPECT_EQ(q.inner_saddr, InetAddr::v4(hton32(kClient)));
    EXPECT_EQ(q.inner_dport, hton16(80));
    EXPECT_EQ(q.inner_l4_len, 528);

    EXPECT_EQ(
        build_frag_needed(out, 575, orig.data(), orig.size(), InetAddr::v4(hton32(kVip)), 1480, 0),
        0u);
}

TEST(IcmpRelated, BuildFragNeededShortOriginals) {
    uint8_t out[kIcmpErrorMaxLen];
    const Bytes small = tcp_pkt(kClient, kVip, 51000, 80, 7);  // 47 bytes: quoted whole
    size_t n = build_frag_needed(out, sizeof out, small.data(), small.size(),
                                 InetAddr::v4(hton32(kVip)), 1400, hton16(9), 255);
    ASSERT_EQ(n, 28 + 47u);
    IpFields f;
    f.tos = 0xc0;
    f.frag = 0;
    f.id = 9;
    f.ttl = 255;
    EXPECT_EQ(Bytes(out, out + n), ipv4(1, kVip, kClient, icmp_error(3, 4, 1400, small), f));

    // Only the first 100 bytes of a 1500-byte packet at hand: those are quoted.
    const Bytes big = tcp_pkt(kClient, kVip, 51000, 80, 1460);
    n = build_frag_needed(out, sizeof out, big.data(), 100, InetAddr::v4(hton32(kVip)), 1400,
                          hton16(9));
    ASSERT_EQ(n, 128u);
    EXPECT_EQ(Bytes(out + 28, out + n), head(big, 100));
}

// Time exceeded in transit (NAT/SNAT forwarding with TTL 1): type 11 code 0, bytes 4-7 zero.
TEST(IcmpRelated, BuildTimeExceeded) {
    uint8_t out[kIcmpErrorMaxLen];
    const Bytes small = tcp_pkt(kClient, kVip, 51000, 80, 7);
    const size_t n = build_time_exceeded(out, sizeof out, small.data(), small.size(),
                                         InetAddr::v4(hton32(kVip)), hton16(5));
    ASSERT_EQ(n, 28 + 47u);
    IpFields f;
    f.tos = 0xc0;
    f.frag = 0;
    f.id = 5;
    EXPECT_EQ(Bytes(out, out + n), ipv4(1, kVip, kClient, icmp_error(11, 0, 0, small), f));
    IcmpQuote q;
    ASSERT_TRUE(parse_icmp_error(out + 20, n - 20, q));
    EXPECT_EQ(q.type, kIcmpTimeExceeded);
    EXPECT_EQ(q.next_hop_mtu, 0);
}

TEST(IcmpRelated, BuildFragNeededRefusals) {
    uint8_t out[kIcmpErrorMaxLen];
    auto build = [&](const Bytes& o) {
        return build_frag_needed(out, sizeof out, o.data(), o.size(), InetAddr::v4(hton32(kVip)),
                                 1400, 0);
    };
    const Bytes ok = tcp_pkt(kClient, kVip, 51000, 80, 100);
    ASSERT_NE(build(ok), 0u);
    EXPECT_NE(build(ipv4(1, kClient, kVip, icmp_echo(8, 1, 1, payload(100)))), 0u);
    EXPECT_EQ(build(ipv4(1, kClient, kVip, icmp_error(3, 4, 1400, head(ok, 28)))), 0u);
    EXPECT_EQ(build(ipv4(1, kClient, kVip, icmp_error(11, 0, 0, head(ok, 28)))), 0u);
    IpFields frag;
    frag.frag = 0x4010;  // DF, offset 128 bytes
    EXPECT_EQ(build(ipv4(6, kClient, kVip, payload(100), frag)), 0u);
    for (uint32_t src : {0x00000001u, 0x7f000001u, 0xe0000001u, 0xffffffffu}) {
        EXPECT_EQ(build(tcp_pkt(src, kVip, 1, 80, 10)), 0u) << std::hex << src;
    }
    EXPECT_EQ(build(tcp_pkt(kClient, 0xffffffff, 1, 80, 10)), 0u);
    EXPECT_EQ(build(tcp_pkt(kClient, 0xe00000fb, 1, 80, 10)), 0u);
    Bytes v6 = ok;
    v6[0] = 0x65;
    EXPECT_EQ(build(v6), 0u);
    EXPECT_EQ(build(head(ok, 19)), 0u);
    Bytes long_ihl = head(ok, 30);
    long_ihl[0] = 0x4f;  // 60-byte header in 30 bytes
    EXPECT_EQ(build(long_ihl), 0u);
}

}  // namespace
}  // namespace xvs::net
