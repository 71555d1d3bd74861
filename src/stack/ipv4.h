// IPv4 input validation and ICMP echo. Validation follows RFC 1122/1812 input checks:
// version, header length, total length against the frame, header checksum, TTL, fragments,
// link-layer broadcast, martian sources.
#pragma once

#include <cstdint>

#include "net/headers.h"
#include "stack/context.h"

struct rte_mbuf;

namespace xvs::stack {

struct Ipv4View {
    net::Ipv4Hdr* ip = nullptr;
    uint8_t* l4 = nullptr;
    uint16_t l4_len = 0;
};

// Sources no packet may come from: 0/8, 127/8, 224/4 (multicast), 240/4 (reserved and the
// limited broadcast). Checked by ipv4_validate for every packet.
bool ipv4_source_martian(uint32_t saddr_be);
// A source that is one of the director's own addresses (VIP, LIP, its own): refused where
// state would start (a new conn, a cookie SYN-ACK, an echo reply), not per packet.
bool source_own(const StackView& view, const net::InetAddr& saddr);
// Validates the IPv4 packet after the Ethernet header; trims Ethernet padding. On failure pkt
// is dropped under its reason (stack::drop) and set to nullptr, and false returned (the caller
// frees pkt if it is still set). A fragment goes to reassembly: pkt becomes the reassembled
// datagram, or nullptr (held or dropped).
bool ipv4_validate(StackContext& ctx, rte_mbuf*& pkt, Ipv4View& out);
// ICMP for an own address: echo request -> reply (consumes pkt; other types counted, freed).
void icmp_input(StackContext& ctx, uint8_t port, rte_mbuf* pkt, const Ipv4View& v);

}  // namespace xvs::stack
