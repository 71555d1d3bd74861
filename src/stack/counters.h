// Every data-plane event and drop reason, from one list (X-macro) so counter names, the
// per-worker array and `xvsctl stats` stay in step. Each worker owns one Counters block and is
// its only writer; the control thread sums them.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "common/single_writer.h"

namespace xvs::stack {

// X(name, is_drop, description)
#define XVS_COUNTERS(X)                                                                            \
    X(rx_packets, false, "frames received")                                                        \
    X(tx_packets, false, "frames sent")                                                            \
    X(arp_replies_sent, false, "ARP replies sent for own addresses")                               \
    X(arp_requests_sent, false, "ARP requests sent to resolve next hops")                          \
    X(arp_gratuitous_sent, false, "gratuitous ARPs sent (takeover: VIPs, a peer's local addresses)")\
    X(icmp_echo_replies, false, "ICMP echo replies sent")                                          \
    X(icmp6_echo_replies, false, "ICMPv6 echo replies sent")                                       \
    X(nd_adverts_sent, false, "IPv6 neighbour advertisements sent for own addresses")              \
    X(nd_solicits_sent, false, "IPv6 neighbour solicitations sent to resolve next hops")           \
    X(nd_adverts_received, false, "IPv6 neighbour advertisements received (learned if we asked)")  \
    X(nd_no_source, false, "no solicitation sent: the port has no IPv6 address to send it from")   \
    X(arp_replies_received, false, "ARP replies received (learned if we asked, then freed)")       \
    X(neigh_evicted, false, "neighbour entries evicted to make room (table full)")                 \
    X(lb_forwarded, false, "load-balanced packets handed to output (client->RS, RS->client)")      \
    X(frames_generated, false,                                                                     \
      "frames the stack built itself, incl. those lost to drop_mbuf_alloc")                        \
    X(icmp_related_forwarded, false, "ICMP errors of a conn translated and forwarded (PMTU etc.)") \
    X(icmp_nat64_translated, false,                                                                \
      "FNAT64 ICMP error consumed: sent on rebuilt in the other family")                           \
    X(icmp_frag_needed_sent, false, "ICMP frag-needed / packet too big sent (TUN, FNAT64)")        \
    X(icmp_time_exceeded_sent, false, "ICMP time exceeded sent (NAT/SNAT packet with TTL 1)")      \
    X(nat64_translated, false, "FNAT64 packets translated between IPv6 and IPv4")                  \
    X(nat64_mss_clamped, false, "FNAT64: real server SYN-ACK MSS lowered by 20 for IPv6")          \
    X(conns_created, false, "connections created")                                                 \
    X(conns_expired, false, "connections expired")                                                 \
    X(conn_out_tuple_full, false,                                                                  \
      "conns ended after their first packet: the reply tuple found both hash buckets full")         \
    X(xdp_offloaded, false, "conns handed to the XDP fast path (lb/offload.h)")                    \
    X(xdp_taken_back, false, "conns taken back from the XDP fast path (state, expiry, next hop)")  \
    X(xdp_offload_failed, false, "hand-overs to the XDP fast path refused (map full, bpf error)")   \
    X(xdp_offload_no_xmit, false,                                                                  \
      "hand-overs to the XDP fast path refused: an egress port takes no XDP frames (veth peer)")   \
    X(sync_reported, false, "conn events handed to the session sync daemon (lb/sync.h)")           \
    X(sync_ring_full, false, "conn events lost: the worker's sync ring was full (lb/sync.h)")      \
    X(sync_imported, false, "conns installed or refreshed from a peer director (session sync)")   \
    X(sync_import_failed, false, "synced conns not installed: no such service/dest, or no room")  \
    X(neigh_queued, false, "packets queued waiting for ARP resolution")                            \
    X(neigh_handoff_sent, false,                                                                   \
      "frames handed to the neighbour owner worker (no usable next hop entry, ARP/ND received)")   \
    X(neigh_handoff_received, false, "frames the neighbour owner took from other workers")         \
    X(nh_cache_hits, false, "packets sent through the next hop cached on their conn")              \
    X(toa_inserted, false, "TOA option inserted (client address for the real server)")             \
    X(toa_pruned_nop, false, "TOA inserted after dropping NOP padding")                            \
    X(toa_pruned_sack, false, "TOA inserted after dropping SACK blocks")                           \
    X(toa_forged_removed, false, "client-supplied kind-254 options removed")                       \
    X(toa_fail_no_room, false, "TOA not inserted: TCP option space full (forwarded)")              \
    X(toa_fail_mtu, false, "TOA not inserted: packet would exceed the MTU (forwarded)")            \
    X(toa_fail_malformed, false, "TOA not inserted: malformed TCP options (forwarded)")            \
    X(pp_mss_clamped, false, "real server SYN-ACK MSS lowered by the PROXY header length")         \
    X(pp_inserted, false, "PROXY header inserted in front of client data")                         \
    X(pp_header_segment_sent, false, "PROXY header sent as its own segment (first time)")          \
    X(pp_fail_mtu, false, "PROXY header not inserted: packet would exceed the MTU")                \
    X(pp_fail_no_room, false, "PROXY header not inserted: no mbuf tailroom")                       \
    X(pp_fail_alloc, false, "PROXY header segment not sent: mbuf allocation failed")               \
    X(toa_mss_clamped, false, "real server SYN-ACK MSS lowered to leave room for TOA")             \
    X(pp_header_retransmitted, false, "PROXY header segment sent again: the RS had not acked it")  \
    X(pp_header_gave_up, false, "PROXY header segment never acked after every retransmission")     \
    X(pp_header_segment_for_room, false, "PROXY header sent alone ahead of data it did not fit")   \
    X(uoa_inserted, false, "UOA inserted into a client datagram (ipo option / opp header)")        \
    X(uoa_empty_sent, false, "UOA sent in an empty datagram ahead of a client datagram")           \
    X(uoa_fail_mtu, false, "UOA would exceed the MTU: sent in an empty datagram first")            \
    X(uoa_fail_no_room, false, "no mbuf tailroom for UOA: sent in an empty datagram first")        \
    X(uoa_fail_ip_options, false,                                                                  \
      "IPv4 options full (ipo) or IPv6 ext headers (opp): UOA sent empty")                         \
    X(uoa_fail_alloc, false, "UOA empty datagram not sent: mbuf alloc failed (forwarded)")         \
    X(synproxy_syn_cookie_sent, false, "SYN proxy: cookie SYN-ACK sent for a client SYN")          \
    X(synproxy_ack_valid, false, "SYN proxy: client ACK with a valid cookie")                      \
    X(synproxy_ack_deferred, false, "SYN proxy: bare handshake ACK absorbed (defer_rs_syn)")       \
    X(synproxy_rs_syn_sent, false, "SYN proxy: SYN sent to a real server")                         \
    X(synproxy_rs_syn_retransmit, false, "SYN proxy: SYN to a real server retransmitted")          \
    X(synproxy_handover, false, "SYN proxy: real server SYN-ACK, connection handed over")          \
    X(synproxy_saved_replayed, false, "SYN proxy: saved client packets replayed to the RS")        \
    X(synproxy_window_update, false, "SYN proxy: window update sent to the client")                \
    X(synproxy_rs_synack_reacked, false, "SYN proxy: retransmitted RS SYN-ACK acked again")        \
    X(synproxy_rs_rst_relayed, false, "SYN proxy: RS RST in the handshake relayed to the client")  \
    X(synproxy_rs_timeout, false, "SYN proxy: RS never answered the SYN, client reset")            \
    X(synproxy_rs_synack_absorbed, false,                                                          \
      "SYN proxy (defer_rs_syn): RS SYN-ACK absorbed at handover")                                 \
    X(frag_merged, false, "IP fragments merged into a reassembled datagram (consumed)")            \
    X(frag_reassembled, false, "IP datagrams reassembled from fragments")                          \
    X(frag_split, false, "IPv4 packets over the egress MTU sent as fragments (consumed)")          \
    X(frag_created, false, "IPv4 fragments built for packets over the egress MTU")                 \
    X(exc_to_kernel, false, "frames handed to the director's kernel (exception TAP port)")         \
    X(exc_from_kernel, false, "frames the kernel wrote to the exception port, sent on the port")   \
    X(redirect_out, false, "frames handed to the worker owning their conn (several workers)")     \
    X(redirect_in, false, "frames received from another worker: their conn is this one's")       \
    X(drop_redirect_full, true, "frame for another worker's conn: the ring to it was full")       \
    X(redirect_yield, false,                                                                       \
      "ring to a worker pinned to this CPU full: gave it the CPU once, then tried again")          \
    X(drop_owner_table_full, true,                                                                 \
      "new NAT conn refused: the owner table has no room for its return tuple (several workers)")  \
    X(drop_frag_timeout, true, "IP fragment of a datagram not complete in time (or at stop)")      \
    X(drop_frag_table_full, true, "IP fragment of a new datagram: reassembly table full")          \
    X(drop_frag_no_buffer, true, "IP fragment of a new datagram: no reassembly buffer free")       \
    X(drop_frag_too_many, true, "IP fragment of a datagram beyond max_fragments (datagram too)")   \
    X(drop_frag_overlap, true, "IP fragment overlapping received bytes (datagram dropped too)")    \
    X(drop_frag_bad_length, true,                                                                  \
      "IP fragment: non-last not a multiple of 8, or end inconsistent")                            \
    X(drop_frag_too_big, true, "IP fragment: datagram beyond 65535 or max_datagram_size")          \
    X(drop_frag_duplicate, true, "IP fragment: exact duplicate of one already received")           \
    X(drop_frame_too_big, true, "frame larger than the port MTU")                                  \
    X(drop_frame_truncated, true, "frame shorter than its headers")                                \
    X(drop_not_for_us, true, "destination MAC is neither ours nor broadcast")                      \
    X(drop_ethertype, true, "unsupported ethertype (IPv6, VLAN, LLDP, ...)")                       \
    X(drop_arp_malformed, true, "ARP not Ethernet/IPv4 or truncated")                              \
    X(drop_arp_not_ours, true, "ARP request for an address we do not own on that port")            \
    X(drop_arp_off_link, true, "ARP from a sender outside the receiving port's subnets")           \
    X(drop_arp_own_address, true, "ARP whose sender claims one of our own addresses")              \
    X(drop_nd_malformed, true, "IPv6 ND message invalid (RFC 4861 7.1: hop limit, code, options)") \
    X(drop_nd_not_ours, true, "neighbour solicitation for an address we do not own on that port")  \
    X(drop_nd_off_link, true, "ND from a sender outside the receiving port's subnets")             \
    X(drop_nd_own_address, true, "ND whose sender claims one of our own addresses")                \
    X(drop_nd_dad, true, "duplicate address detection probe (unspecified source): not answered")   \
    X(drop_ip6_ext_header, true, "IPv6 extension headers malformed, too many, or unforwardable")   \
    X(drop_nat64_too_big, true, "FNAT64 packet too big for the next link once translated")         \
    X(drop_icmp_nat64, true,                                                                       \
      "FNAT64 ICMP error with no counterpart in the other family (or no mbuf)")                    \
    X(drop_ip6_multicast, true, "IPv6 packet to a multicast address (only ND is handled)")         \
    X(drop_ip4_multicast, true, "IPv4 multicast frame on a port without an exception path")        \
    X(drop_l2_broadcast_ip, true, "IPv4 packet in a broadcast Ethernet frame")                     \
    X(drop_martian_source, true, "martian source (RFC 1812, RFC 4291) or one of our addresses")    \
    X(drop_ip_version, true, "IP version does not match the EtherType")                            \
    X(drop_ip_header_len, true, "IPv4 header length below 20 or beyond the packet")                \
    X(drop_ip_total_len, true, "IP total/payload length inconsistent with the frame")              \
    X(drop_ip_checksum, true, "IPv4 header checksum wrong")                                        \
    X(drop_ip_ttl, true, "IPv4 TTL zero")                                                          \
    X(drop_ip_fragment, true, "IP fragment while reassembly is off (frag_defs max_datagrams 0)")   \
    X(drop_not_local, true, "destination not an own address (forwarding disabled)")                \
    X(drop_to_director, true, "TCP/UDP to an xvs address, no conn (kernel's: exception path)")     \
    X(drop_ip_proto, true, "IP protocol not handled for this address")                             \
    X(drop_icmp_malformed, true, "ICMP truncated or bad checksum")                                 \
    X(drop_icmp_unhandled, true, "ICMP type not handled (only echo request)")                      \
    X(drop_icmp_unrelated, true, "ICMP error quoting a packet of no conn of ours")                 \
    X(drop_icmp_not_sent, true, "ICMP error built but not sent (RFC 1122: no error for it)")       \
    X(drop_tunnel_too_big, true, "TUN: the packet with the outer header exceeds the MTU")          \
    X(drop_no_headroom, true, "no mbuf headroom for an outer header")                              \
    X(drop_tcp_header, true, "TCP header truncated or bad data offset")                            \
    X(drop_udp_header, true, "UDP header truncated or bad length")                                 \
    X(drop_no_service, true, "TCP/UDP to a VIP port with no virtual service")                      \
    X(drop_tcp_no_conn, true, "TCP non-SYN to a VIP without a connection")                         \
    X(drop_lip_no_conn, true, "packet to a local address without a connection")                    \
    X(tunnel_decap, false, "NatTun: tunnelled packets to a local address, outer header stripped")   \
    X(drop_tunnel_no_conn, true, "NatTun: decapsulated packet that is no NatTun conn's reply")     \
    X(drop_nattun_bare_reply, true, "NatTun: RS reply that did not come through the tunnel")      \
    X(nattun_mss_clamped, false, "NatTun: SYN/SYN-ACK MSS lowered by the tunnel overhead")        \
    X(nattun_icmp_unwrapped, false, "NatTun: ICMP error quoting a tunnel packet, outer quote cut")  \
    X(nattun_pmtu_lowered, false, "NatTun: a conn's tunnel path MTU lowered by a too-big report")  \
    X(drop_no_dest, true, "scheduler found no available real server")                              \
    X(drop_laddr_exhausted, true, "no free local port on any local address")                       \
    X(drop_no_laddr, true, "FULLNAT service without local addresses")                              \
    X(drop_dest_unavailable, true, "client packet of a conn whose real server was removed (IPVS)") \
    X(drop_rs_refused_held, true, "RS's RST to a SYN held back: the client's retry is rescheduled")\
    X(drop_fwd_mode_unsupported, true, "new conn to a dest whose forwarding mode has no xmit yet") \
    X(drop_conn_pool_full, true, "connection pool exhausted")                                      \
    X(drop_conn_table_full, true, "connection hash table insert failed")                           \
    X(drop_ttl_expired, true, "forwarded (NAT, SNAT) packet whose TTL would reach 0")              \
    X(drop_no_route, true, "no route to the destination")                                          \
    X(drop_neigh_queue_full, true, "ARP pending queue full")                                       \
    X(drop_neigh_unresolved, true, "next hop did not answer ARP")                                  \
    X(drop_neigh_handoff_full, true, "frame for the neighbour owner worker: its handoff ring full")\
    X(drop_mbuf_alloc, true, "mbuf pool empty when building a packet")                             \
    X(drop_tx_full, true, "port TX queue full")                                                    \
    X(drop_exc_full, true, "exception (TAP) port queue full: frame for the kernel dropped")        \
    X(drop_blacklisted, true, "new connection from a client on the service's blacklist")           \
    X(drop_not_whitelisted, true, "new connection from a client not on the service's whitelist")   \
    X(drop_conn_rate, true, "new connection over the service's conn_rate_limit (per second)")      \
    X(drop_dest_overloaded, true,                                                                  \
      "every usable real server is at its upper connection threshold (-x)")                        \
    X(synproxy_bad_cookie, true, "SYN proxy: ACK without a connection and without a valid cookie") \
    X(synproxy_ack_storm, true,                                                                    \
      "SYN proxy: duplicate ACK beyond ack_storm_thresh in the handshake")                         \
    X(synproxy_saved_full, true, "SYN proxy: client packet beyond max_ack_saved in the handshake") \
    X(synproxy_saved_dropped, true,                                                                \
      "SYN proxy: saved client packet freed (RS timeout/RST, client RST)")                         \
    X(synproxy_pending_full, true, "SYN proxy: handshake side pool exhausted")                     \
    X(synproxy_rs_unexpected, true,                                                                \
      "SYN proxy: RS packet other than SYN-ACK/RST in the handshake")                              \
    X(synproxy_syn_in_handshake, true, "SYN proxy: client SYN on a proxied connection still open")

enum class Counter : uint16_t {
#define XVS_COUNTER_ENUM(name, is_drop, desc) name,
    XVS_COUNTERS(XVS_COUNTER_ENUM)
#undef XVS_COUNTER_ENUM
        Count
};
inline constexpr size_t kCounterCount = static_cast<size_t>(Counter::Count);

struct CounterInfo {
    std::string_view name;
    bool is_drop;
    std::string_view description;
};

inline constexpr std::array<CounterInfo, kCounterCount> kCounterInfo{{
#define XVS_COUNTER_INFO(name, is_drop, desc) {#name, is_drop, desc},
    XVS_COUNTERS(XVS_COUNTER_INFO)
#undef XVS_COUNTER_INFO
}};

// The worker increments, the control thread sums (xvsctl stats): SingleWriter cells.
struct alignas(64) Counters {
    std::array<SingleWriter<uint64_t>, kCounterCount> v{};
    [[gnu::always_inline]] void inc(Counter c, uint64_t n = 1) { v[static_cast<size_t>(c)] += n; }
    uint64_t get(Counter c) const { return v[static_cast<size_t>(c)]; }
};

}  // namespace xvs::stack
