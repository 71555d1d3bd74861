// IP fragments on a worker: reassembly of fragments to one of our addresses into one large
// single-segment mbuf (net/reasm.h keeps the ranges; this file is the mbuf glue), and IPv4
// fragmentation of packets that exceed the egress MTU on output.
//
// Why a second mempool of large mbufs rather than DPDK's librte_ip_frag: ip_frag chains the
// fragments' mbufs (the stack and every xmit assume one segment, and linearising would copy
// anyway), pins the RX pool's mbufs while a datagram is incomplete (a fragment flood could
// starve RX), and merges overlaps instead of dropping the datagram (RFC 5722). Here each
// fragment's payload is copied once into a buffer taken when its datagram's first fragment
// arrives and the fragment's mbuf is freed at once; the pool is sized and filled at startup
// (max_datagrams plus slack for datagrams on their way out), so memory is bounded and nothing
// is allocated per packet.
//
// Frame conservation (stack/conservation.h): a stored fragment is held (held_fragments) until
// its datagram completes (frag_merged, consumed, per fragment; the datagram is a generated
// frame) or is dropped (one drop counter per fragment). A packet sent as fragments is consumed
// (frag_split) and each fragment generated.
#pragma once

#include <cstdint>

#include "net/headers.h"
#include "net/reasm.h"

struct rte_mbuf;
struct rte_mempool;

namespace xvs::stack {

struct StackContext;

// Bytes kept in front of a datagram's payload in the large mbuf for its Ethernet and IP header
// (IPv4 with options; IPv6 with its unfragmentable extension headers), and after it so TOA or
// a PROXY header can still be inserted.
inline constexpr uint32_t kReasmHeaderRoom = 128;
inline constexpr uint32_t kReasmTailRoom = 64;

struct FragConfig {
    net::ReasmLimits limits;
    uint32_t max_datagram_size = 65535;  // IP header + payload of a reassembled datagram
};

struct Fragments {
    net::Reassembler table{net::ReasmLimits{1, 1, 0}};  // replaced by fragments_init
    rte_mempool* pool = nullptr;  // large mbufs; nullptr: no reassembly (drop_ip_fragment)
    uint32_t max_datagram_size = 0;
    uint32_t next_id6 = 0;  // identification of the IPv6 fragments this worker sends
};

// Data room of the large mbufs for datagrams up to max_datagram_size bytes (<= 65535: the
// mbuf's 16-bit data room caps what one segment holds).
uint32_t reasm_data_room(uint32_t max_datagram_size);
// How many large mbufs a worker's pool needs: the table's datagrams plus those on their way
// out (TX buffers, neighbour queue).
uint32_t reasm_pool_size(const net::ReasmLimits& limits);
// Sizes the table (allocates: worker start). pool may be nullptr (reassembly off).
void fragments_init(Fragments& f, const FragConfig& cfg, rte_mempool* pool);

// The family-neutral step, for IPv4 below and the IPv6 input (RFC 8200 fragment header: id,
// offset in bytes, M flag). Stores the fragment's payload [offset, offset + len) of datagram
// key; hdr/hdr_len: what precedes the fragmentable part in the reassembled frame (<=
// kReasmHeaderRoom), kept from the fragment at offset 0 (IPv4: Ethernet + IP header; IPv6:
// Ethernet + IPv6 header + the unfragmentable extension headers, without the fragment header:
// the caller may edit those bytes in the fragment first, e.g. the next-header byte that named
// the fragment header). max_payload: the protocol's limit (65535 less the header the length
// field counts). Consumes frag. Returns the reassembled frame, hdr then payload, with
// first_hdr_len = that hdr's length (the caller fixes its length fields), else nullptr: the
// fragment was stored or dropped under a named counter.
rte_mbuf* reassemble(StackContext& ctx, rte_mbuf* frag, const net::ReasmKey& key, uint32_t offset,
                     bool more, const uint8_t* payload, uint32_t len, const uint8_t* hdr,
                     uint32_t hdr_len, uint32_t max_payload, uint32_t& first_hdr_len);
// An IPv4 fragment that passed the header checks (ip at hlen bytes, total_len its total
// length). Consumes frag. Returns the reassembled datagram when this fragment completed one
// (Ethernet header of the first fragment, IP header with MF and offset cleared, fresh
// checksum), else nullptr: the fragment was stored or dropped under a named counter.
rte_mbuf* ipv4_reassemble(StackContext& ctx, rte_mbuf* frag, const net::Ipv4Hdr* ip, uint32_t hlen,
                          uint32_t total_len);
// Drops datagrams past their timeout (each fragment counted drop_frag_timeout).
void fragments_expire(StackContext& ctx);
// Drops every incomplete datagram (worker stop), counted drop_frag_timeout.
void fragments_release(StackContext& ctx);
uint64_t fragments_held(const StackContext& ctx);     // frames held (fragments stored)
uint32_t fragments_buffers(const StackContext& ctx);  // large mbufs held by the table

// Sends an IPv4 packet larger than mtu, without DF, as fragments on port to dst (RFC 791:
// options with the copied flag in every fragment). Consumes pkt.
void ipv4_fragment_send(StackContext& ctx, rte_mbuf* pkt, uint8_t port, const net::MacAddr& dst,
                        uint32_t mtu);
// The same for IPv6 (RFC 8200 4.5), for packets the director sends over the MTU (a datagram it
// reassembled, now rewritten): a fragment header after the fixed header, the rest (extension
// headers included) fragmented in multiples of 8 bytes. A packet with a hop-by-hop or routing
// header (unfragmentable, RFC 8200 4.5) is dropped as drop_frame_too_big.
void ipv6_fragment_send(StackContext& ctx, rte_mbuf* pkt, uint8_t port, const net::MacAddr& dst,
                        uint32_t mtu);

}  // namespace xvs::stack
