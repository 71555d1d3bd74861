// FULLNAT rewrite (DNAT + SNAT in one step) of an IPv4 TCP/UDP packet, with one combined
// RFC 1624 checksum delta for the IP header (addresses) and the L4 header (pseudo-header
// addresses and ports).
//   inbound  client:cport -> VIP:vport  becomes  LIP:lport -> RS:rport
//   outbound RS:rport -> LIP:lport      becomes  VIP:vport -> client:cport
#pragma once

#include <cstdint>

#include "net/byteorder.h"
#include "net/checksum.h"
#include "net/headers.h"
#include "stack/pkt.h"

namespace xvs::lb {

struct WorkerCtx;
struct LbPacket;
struct Conn;

// The FULLNAT xmit entry (lb/xmit/xmit.h). in: client:cport -> VIP:vport becomes
// LIP:lport -> RS:dport, then UOA for a UDP flow that carries it (lb/conserve/uoa.h).
// out: RS:dport -> LIP:lport becomes VIP:vport -> client:cport.
stack::Verdict fullnat_in(WorkerCtx& w, LbPacket& lp, Conn& c);
stack::Verdict fullnat_out(WorkerCtx& w, LbPacket& lp, Conn& c);

// All arguments in network order. l4 points at the TCP or UDP header.
inline void fullnat_rewrite(net::Ipv4Hdr* ip, uint8_t* l4, uint8_t proto, uint32_t saddr,
                            uint32_t daddr, uint16_t sport, uint16_t dport) {
    auto fold_add = [](uint32_t sum, uint32_t old_v, uint32_t new_v) {
        return sum + static_cast<uint16_t>(~old_v) + static_cast<uint16_t>(~(old_v >> 16)) +
               (new_v & 0xffff) + (new_v >> 16);
    };
    uint32_t addr_delta = fold_add(0, ip->saddr, saddr);
    addr_delta = fold_add(addr_delta, ip->daddr, daddr);
    ip->saddr = saddr;
    ip->daddr = daddr;
    ip->checksum = net::csum_fold(static_cast<uint16_t>(~ip->checksum) + addr_delta);

    // sport, dport lead both TCP and UDP.
    const uint16_t old_sport = net::load_wire16(l4);
    const uint16_t old_dport = net::load_wire16(l4 + 2);
    uint32_t l4_delta = addr_delta + static_cast<uint16_t>(~old_sport) + sport +
                        static_cast<uint16_t>(~old_dport) + dport;
    net::store_wire16(l4, sport);
    net::store_wire16(l4 + 2, dport);
    if (proto == net::kIpProtoTcp) {
        auto* tcp = reinterpret_cast<net::TcpHdr*>(l4);
        tcp->checksum = net::csum_fold(static_cast<uint16_t>(~tcp->checksum) + l4_delta);
    } else {
        auto* udp = reinterpret_cast<net::UdpHdr*>(l4);
        if (udp->checksum != 0) {  // 0 = no checksum, stays so
            udp->checksum = net::csum_fold(static_cast<uint16_t>(~udp->checksum) + l4_delta);
            if (udp->checksum == 0) udp->checksum = 0xffff;
        }
    }
}

}  // namespace xvs::lb
