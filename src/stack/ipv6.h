// IPv6 input validation and ICMPv6 echo (RFC 8200, RFC 4443). Validation: version, payload
// length against the frame, martian sources, multicast destinations (only neighbour
// discovery's), and the extension headers walked to the upper-layer header.
#pragma once

#include <cstdint>

#include "net/addr.h"
#include "net/headers.h"
#include "stack/context.h"

struct rte_mbuf;

namespace xvs::stack {

struct Ipv6View {
    net::Ipv6Hdr* ip = nullptr;
    uint8_t* l4 = nullptr;   // the upper-layer header, after any extension headers
    uint16_t l4_len = 0;     // from l4 to the end of the packet
    uint8_t proto = 0;       // its protocol (the last next-header value)
    bool multicast = false;  // destination is a multicast address (ND only gets this far)
};

// Sources no IPv6 packet may come from: :: (except a DAD probe, refused by ND itself),
// ::1, multicast ff00::/8, and IPv4-mapped ::ffff:0:0/96 (xvs holds IPv4 in that form, so such
// a source would alias an IPv4 client).
bool ipv6_source_martian(const uint8_t* saddr);
// True for the solicited-node multicast address of target (ff02::1:ffXX:XXXX, RFC 4291 2.7.1).
bool ipv6_is_solicited_node_of(const uint8_t* daddr, const net::InetAddr& target);
// Validates the IPv6 packet after the Ethernet header; trims Ethernet padding; walks
// hop-by-hop, destination options, routing (only with no segments left) and atomic fragment
// headers (RFC 6946); a fragment goes to reassembly (stack/fragment.h): pkt becomes the whole
// datagram, or nullptr when the fragment was stored or dropped (counted). On failure pkt is
// dropped under its reason (stack::drop) and set to nullptr, and false returned (the caller
// frees pkt if it is still set).
bool ipv6_validate(StackContext& ctx, rte_mbuf*& pkt, Ipv6View& out);
// ICMPv6 for an own address: echo request -> reply (consumes pkt; other types counted, freed).
void icmp6_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt, const Ipv6View& v);

}  // namespace xvs::stack
