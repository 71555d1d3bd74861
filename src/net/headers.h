// Wire-format header structs for Ethernet, ARP, IPv4, IPv6, TCP, UDP, ICMP and ICMPv6.
// All multi-byte fields are in network byte order exactly as on the wire; no DPDK here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "net/byteorder.h"

namespace xvs::net {

struct __attribute__((aligned(2))) MacAddr {
    uint8_t b[6];
    // Two loads and one compare: a defaulted == compares byte by byte (GCC 12: six compares
    // and branches, ~36 instructions on every received frame).
    constexpr bool operator==(const MacAddr& o) const {
        if (std::is_constant_evaluated()) {
            for (int i = 0; i < 6; ++i)
                if (b[i] != o.b[i]) return false;
            return true;
        }
        uint32_t a4, o4;
        uint16_t a2, o2;
        std::memcpy(&a4, b, 4);
        std::memcpy(&o4, o.b, 4);
        std::memcpy(&a2, b + 4, 2);
        std::memcpy(&o2, o.b + 4, 2);
        return ((a4 ^ o4) | static_cast<uint32_t>(a2 ^ o2)) == 0;
    }
    bool is_broadcast() const {
        uint32_t a4;
        uint16_t a2;
        std::memcpy(&a4, b, 4);
        std::memcpy(&a2, b + 4, 2);
        return (a4 & (0xffff0000u | a2)) == 0xffffffffu;
    }
    bool is_multicast() const { return b[0] & 1; }
};
inline constexpr MacAddr kBroadcastMac{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

// IPv4 multicast (224.0.0.0/4) and the Ethernet address a group travels to: 01:00:5e and the
// group's low 23 bits (RFC 1112 6.4), so 32 groups share one MAC. `group` in wire order.
constexpr bool ipv4_is_multicast(const uint8_t* group) {
    return (group[0] & 0xf0) == 0xe0;
}
constexpr MacAddr ipv4_multicast_mac(const uint8_t* group) {
    return MacAddr{{0x01, 0x00, 0x5e, static_cast<uint8_t>(group[1] & 0x7f), group[2], group[3]}};
}

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeArp = 0x0806;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86dd;

struct __attribute__((packed, aligned(2))) EtherHdr {
    MacAddr dst;
    MacAddr src;
    uint16_t ether_type;  // network order
};
static_assert(sizeof(EtherHdr) == 14);

inline constexpr uint16_t kArpOpRequest = 1;
inline constexpr uint16_t kArpOpReply = 2;

struct __attribute__((packed, aligned(2))) ArpHdr {
    uint16_t htype;  // 1 = Ethernet
    uint16_t ptype;  // 0x0800
    uint8_t hlen;    // 6
    uint8_t plen;    // 4
    uint16_t op;
    MacAddr sha;
    uint32_t spa;  // network order
    MacAddr tha;
    uint32_t tpa;  // network order
};
static_assert(sizeof(ArpHdr) == 28);

inline constexpr uint8_t kIpProtoIcmp = 1;
inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;
inline constexpr uint8_t kIpProtoIpv6 = 41;  // IPv6-in-IPv6 (RFC 2473)
inline constexpr uint8_t kIpProtoIcmp6 = 58;
// IPv6 extension headers (RFC 8200 4), walked to the L4 header by the IPv6 input.
inline constexpr uint8_t kIp6ExtHopByHop = 0;
inline constexpr uint8_t kIp6ExtRouting = 43;
inline constexpr uint8_t kIp6ExtFragment = 44;
inline constexpr uint8_t kIp6ExtEsp = 50;
inline constexpr uint8_t kIp6ExtAh = 51;
inline constexpr uint8_t kIp6NoNext = 59;
inline constexpr uint8_t kIp6ExtDestOpts = 60;

struct __attribute__((packed, aligned(2))) Ipv4Hdr {
    uint8_t version_ihl;
    uint8_t tos;
    uint16_t total_length;
    uint16_t id;
    uint16_t frag_off;  // flags (3 bits) + fragment offset (13 bits, 8-byte units)
    uint8_t ttl;
    uint8_t protocol;
    uint16_t checksum;
    uint32_t saddr;
    uint32_t daddr;

    unsigned version() const { return version_ihl >> 4; }
    unsigned header_len() const { return (version_ihl & 0x0f) * 4u; }
    bool is_fragment() const { return (ntoh16(frag_off) & 0x3fff) != 0; }  // MF or offset
};
static_assert(sizeof(Ipv4Hdr) == 20);
inline constexpr uint16_t kIpv4DontFragment = 0x4000;

struct __attribute__((packed, aligned(2))) Ipv6Hdr {
    uint32_t vtc_flow;     // version (4 bits), traffic class (8), flow label (20)
    uint16_t payload_len;  // bytes after this header, extension headers included
    uint8_t next_header;
    uint8_t hop_limit;
    uint8_t saddr[16];
    uint8_t daddr[16];

    unsigned version() const { return reinterpret_cast<const uint8_t*>(this)[0] >> 4; }
};
static_assert(sizeof(Ipv6Hdr) == 40);

// The fragment extension header (RFC 8200 4.5).
struct __attribute__((packed, aligned(2))) Ipv6FragHdr {
    uint8_t next_header;
    uint8_t reserved;
    uint16_t frag_off;  // offset (13 bits, 8-byte units) << 3 | M flag
    uint32_t id;
};
static_assert(sizeof(Ipv6FragHdr) == 8);

inline constexpr uint8_t kTcpFin = 0x01;
inline constexpr uint8_t kTcpSyn = 0x02;
inline constexpr uint8_t kTcpRst = 0x04;
inline constexpr uint8_t kTcpPsh = 0x08;
inline constexpr uint8_t kTcpAck = 0x10;
inline constexpr uint8_t kTcpUrg = 0x20;

struct __attribute__((packed, aligned(2))) TcpHdr {
    uint16_t sport;
    uint16_t dport;
    uint32_t seq;
    uint32_t ack;
    uint8_t data_off;  // high nibble: header length in 32-bit words
    uint8_t flags;
    uint16_t window;
    uint16_t checksum;
    uint16_t urg_ptr;

    unsigned header_len() const { return (data_off >> 4) * 4u; }
};
static_assert(sizeof(TcpHdr) == 20);

struct __attribute__((packed, aligned(2))) UdpHdr {
    uint16_t sport;
    uint16_t dport;
    uint16_t length;
    uint16_t checksum;
};
static_assert(sizeof(UdpHdr) == 8);

inline constexpr uint8_t kIcmpEchoReply = 0;
inline constexpr uint8_t kIcmpDestUnreach = 3;
inline constexpr uint8_t kIcmpEchoRequest = 8;
inline constexpr uint8_t kIcmpTimeExceeded = 11;

// ICMPv6 (RFC 4443) and neighbour discovery (RFC 4861) types.
inline constexpr uint8_t kIcmp6DestUnreach = 1;
inline constexpr uint8_t kIcmp6PacketTooBig = 2;
inline constexpr uint8_t kIcmp6TimeExceeded = 3;
inline constexpr uint8_t kIcmp6ParamProblem = 4;
inline constexpr uint8_t kIcmp6EchoRequest = 128;
inline constexpr uint8_t kIcmp6EchoReply = 129;
inline constexpr uint8_t kNdRouterSolicit = 133;
inline constexpr uint8_t kNdRouterAdvert = 134;
inline constexpr uint8_t kNdNeighSolicit = 135;
inline constexpr uint8_t kNdNeighAdvert = 136;
inline constexpr uint8_t kNdOptSourceLla = 1;
inline constexpr uint8_t kNdOptTargetLla = 2;
// Neighbour advertisement flags (first byte of the reserved word).
inline constexpr uint8_t kNaRouter = 0x80;
inline constexpr uint8_t kNaSolicited = 0x40;
inline constexpr uint8_t kNaOverride = 0x20;

// Neighbour solicitation and advertisement share this layout (RFC 4861 4.3, 4.4); options
// (link-layer addresses) follow.
struct __attribute__((packed, aligned(2))) NdMsg {
    uint8_t type;
    uint8_t code;
    uint16_t checksum;
    uint8_t flags;  // NA: R, S, O; NS: 0
    uint8_t reserved[3];
    uint8_t target[16];
};
static_assert(sizeof(NdMsg) == 24);

struct __attribute__((packed, aligned(2))) IcmpHdr {
    uint8_t type;
    uint8_t code;
    uint16_t checksum;
    uint16_t id;
    uint16_t seq;
};
static_assert(sizeof(IcmpHdr) == 8);

}  // namespace xvs::net
