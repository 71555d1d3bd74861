/* The contract between xvsd and its XDP program (port/bpf/xvs_xdp.bpf.c), for net_af_xdp
 * ports: the maps and what each value means. C, so clang -target bpf reads it; the C++ side
 * uses these very structs (port/xdp_flows.h). */
#ifndef XVS_PORT_XDP_ABI_H
#define XVS_PORT_XDP_ABI_H

#include <linux/types.h>

#define XVS_XDP_MAX_ADDRS 4096

/* xvs_xdp_addrs: key = the 16 bytes of a net::InetAddr (IPv4 mapped: ::ffff:a.b.c.d),
 * value = one of these. */
#define XVS_XDP_OWNER_XVS 1    /* xvs's: director address, VIP, local address -> xsks_map */
#define XVS_XDP_OWNER_KERNEL 2 /* the kernel's own address -> XDP_PASS */

/* The flow fast path: one direction of a conn xvs has handed to the XDP program. A TCP
 * segment without SYN, FIN or RST, or a UDP datagram, whose 5-tuple is a key of
 * xvs_xdp_flows, is rewritten as the value says and redirected to the egress interface in
 * the kernel, without reaching xvs; everything else of the flow still goes to xvs (state
 * changes, TTL expiry, packets longer than the egress MTU, fragments, IP options, IPv6
 * extension headers). Per port: each port's program has its own maps. */
#define XVS_XDP_MAX_FLOWS 65536

/* xvs_xdp_flows key: the packet's addresses (IPv4 mapped, as net::InetAddr), ports and
 * protocol as it arrives; ports in network byte order. */
struct xvs_xdp_flow_key {
    __u8 saddr[16];
    __u8 daddr[16];
    __be16 sport;
    __be16 dport;
    __u8 proto;
    __u8 pad[3]; /* zero */
};

/* xvs_xdp_flow.flags. TTL: decrement the TTL / hop limit (NAT, SNAT: xvs routes); a packet
 * arriving with 1 goes to xvs (ICMP time exceeded). */
#define XVS_XDP_FLOW_V6 0x1 /* the flow's packets are IPv6 (else IPv4) */
#define XVS_XDP_FLOW_TTL 0x2

/* xvs_xdp_flows value: what the packet leaves with. */
struct xvs_xdp_flow {
    __u8 saddr[16]; /* IPv4 mapped for an IPv4 flow */
    __u8 daddr[16];
    __be16 sport;
    __be16 dport;
    __u8 dmac[6];  /* the next hop's */
    __u8 smac[6];  /* the egress port's */
    __u32 ifindex; /* egress interface (XDP_TX when it is the ingress one) */
    __u32 slot;    /* this direction's entry in xvs_xdp_seen */
    __u16 mtu;     /* IP packets longer than this go to xvs */
    __u16 flags;   /* XVS_XDP_FLOW_* */
};

/* xvs_xdp_seen: an mmapable array of XVS_XDP_MAX_FLOWS of these, indexed by
 * xvs_xdp_flow.slot; the program adds, xvsd reads (idle timeouts, service and dest stats). */
struct xvs_xdp_seen {
    __u64 last_ns; /* bpf_ktime_get_ns() (CLOCK_MONOTONIC) of the last packet, 0: none */
    __u64 packets;
    __u64 bytes; /* IP bytes (header and payload), as xvs counts them */
    __u64 reserved;
};

/* xvs_xdp_conf: an array of one; the fast path looks flows up only while `flows` is
 * non-zero (a port without offloaded flows pays no hash lookup a packet). */
struct xvs_xdp_conf {
    __u32 flows;
    __u32 reserved;
};

#endif
