/* xvsd's XDP program for net_af_xdp ports (the exception path, DESIGN.md "Packet path"): the
 * director's kernel keeps the interface and its own addresses; this program hands xvs only
 * what xvs needs (redirect to the AF_XDP socket of the receiving queue, xsks_map, which the
 * DPDK PMD fills) and passes everything else to the kernel unchanged.
 *   to xvs:     IP to an xvs address; IP to an address nobody here owns (traffic xvs
 *               routes: NAT replies to clients, SNAT); ARP and ND NS/NA except the kernel's
 *               (xvs answers for its addresses, learns from replies to its requests and from
 *               gratuitous ARP / unsolicited NA of its neighbours, and counts the rest).
 *   to kernel:  IP to a kernel address (xvs_xdp_addrs value KERNEL), multicast/broadcast
 *               and IPv6 link-local; ARP whose target is the kernel's (requests for it,
 *               replies to the kernel's requests); NS for a kernel address, NA sent to one;
 *               every other ethertype.
 * xvsd keeps xvs_xdp_addrs in step with its addresses and the kernel's (port/xdp_filter.h).
 * Before all that, the flow fast path (port/xdp_abi.h): a packet of a flow xvs has handed
 * over (xvs_xdp_flows) is rewritten here and redirected to its egress interface. */
/* clang-format off */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
/* clang-format on */
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#include "../xdp_abi.h"

struct xvs_addr {
    __u8 b[16];
};

struct {
    __uint(type, BPF_MAP_TYPE_XSKMAP);
    __uint(max_entries, 64);
    __type(key, __u32);
    __type(value, __u32);
} xsks_map SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, XVS_XDP_MAX_ADDRS);
    __type(key, struct xvs_addr);
    __type(value, __u8);
} xvs_xdp_addrs SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, XVS_XDP_MAX_FLOWS);
    __type(key, struct xvs_xdp_flow_key);
    __type(value, struct xvs_xdp_flow);
} xvs_xdp_flows SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(max_entries, XVS_XDP_MAX_FLOWS);
    __type(key, __u32);
    __type(value, struct xvs_xdp_seen);
} xvs_xdp_seen SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct xvs_xdp_conf);
} xvs_xdp_conf SEC(".maps");

struct arp_eth_ipv4 {
    __be16 htype, ptype;
    __u8 hlen, plen;
    __be16 op;
    __u8 sha[6];
    __u8 spa[4];
    __u8 tha[6];
    __u8 tpa[4];
} __attribute__((packed));

/* ICMPv6 neighbour solicitation / advertisement up to the target (RFC 4861 4.3, 4.4). */
struct nd_msg {
    __u8 type, code;
    __be16 checksum;
    __be32 flags;
    __u8 target[16];
};

/* The verdict when no AF_XDP socket is bound to the queue (yet): the kernel's. The unit test
 * sets it to XDP_TX before loading, to tell "for xvs" from "for the kernel" with an empty
 * xsks_map (BPF_PROG_TEST_RUN has no socket). */
const volatile __u64 xvs_no_socket = XDP_PASS;

static __always_inline int to_xvs(struct xdp_md* ctx) {
    return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, xvs_no_socket);
}

static __always_inline __u8 owner_v4(const __u8* a4) {
    struct xvs_addr k = {};
    k.b[10] = 0xff; /* IPv4-mapped, as net::InetAddr keeps IPv4 */
    k.b[11] = 0xff;
    __builtin_memcpy(&k.b[12], a4, 4);
    __u8* v = bpf_map_lookup_elem(&xvs_xdp_addrs, &k);
    return v ? *v : 0;
}

static __always_inline __u8 owner_v6(const __u8* a16) {
    struct xvs_addr k;
    __builtin_memcpy(k.b, a16, 16);
    __u8* v = bpf_map_lookup_elem(&xvs_xdp_addrs, &k);
    return v ? *v : 0;
}

/* ---- the flow fast path ---------------------------------------------------------------- */

#define NOT_MINE -1 /* not a fast-path packet: the filter below decides */

/* One's complement sums over raw 16-bit words (RFC 1624 eqn. 3): byte order does not
 * matter as long as every word is read and written as it lies in the packet. */
static __always_inline __u32 sum_replace(__u32 sum, const __u8* from, const __u8* to, int n) {
#pragma unroll
    for (int i = 0; i < 16; i += 2) {
        if (i >= n) break;
        __u16 f, t;
        __builtin_memcpy(&f, from + i, 2);
        __builtin_memcpy(&t, to + i, 2);
        sum += (__u16)~f;
        sum += t;
    }
    return sum;
}

static __always_inline __u16 sum_fold(__u32 sum) {
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (__u16)sum;
}

static __always_inline int flows_enabled(void) {
    __u32 zero = 0;
    struct xvs_xdp_conf* c = bpf_map_lookup_elem(&xvs_xdp_conf, &zero);
    return c && c->flows;
}

/* The L4 header's checksum field and its TCP flags after the bounds checks; NULL when the
 * packet is not one for the fast path (TCP with SYN, FIN or RST, or truncated). */
static __always_inline __u16* l4_check(void* l4, void* end, __u8 proto) {
    if (proto == IPPROTO_TCP) {
        struct tcphdr* t = l4;
        if ((void*)(t + 1) > end) return 0;
        if (t->syn | t->fin | t->rst) return 0;
        return &t->check;
    }
    struct udphdr* u = l4;
    if ((void*)(u + 1) > end) return 0;
    return &u->check;
}

static __always_inline void count(const struct xvs_xdp_flow* f, __u32 bytes) {
    __u32 slot = f->slot;
    struct xvs_xdp_seen* s = bpf_map_lookup_elem(&xvs_xdp_seen, &slot);
    if (!s) return;
    s->last_ns = bpf_ktime_get_ns();
    __sync_fetch_and_add(&s->packets, 1);
    __sync_fetch_and_add(&s->bytes, bytes);
}

static __always_inline int send(struct xdp_md* ctx, struct ethhdr* eth,
                                const struct xvs_xdp_flow* f) {
    __builtin_memcpy(eth->h_dest, f->dmac, 6);
    __builtin_memcpy(eth->h_source, f->smac, 6);
    if (f->ifindex == ctx->ingress_ifindex) return XDP_TX;
    return bpf_redirect(f->ifindex, 0);
}

static __always_inline int fast_v4(struct xdp_md* ctx, struct ethhdr* eth, struct iphdr* ip,
                                   void* end) {
    if (ip->ihl != 5 || (ip->frag_off & bpf_htons(0x3fff)) ||
        (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP))
        return NOT_MINE;
    __be16* ports = (void*)(ip + 1);
    if ((void*)(ports + 2) > end) return NOT_MINE;
    struct xvs_xdp_flow_key k = {};
    k.saddr[10] = k.saddr[11] = k.daddr[10] = k.daddr[11] = 0xff;
    __builtin_memcpy(&k.saddr[12], &ip->saddr, 4);
    __builtin_memcpy(&k.daddr[12], &ip->daddr, 4);
    k.sport = ports[0];
    k.dport = ports[1];
    k.proto = ip->protocol;
    const struct xvs_xdp_flow* f = bpf_map_lookup_elem(&xvs_xdp_flows, &k);
    if (!f || (f->flags & XVS_XDP_FLOW_V6)) return NOT_MINE;
    __u16* check = l4_check(ports, end, ip->protocol);
    const __u16 len = bpf_ntohs(ip->tot_len);
    if (!check || len > f->mtu || ((f->flags & XVS_XDP_FLOW_TTL) && ip->ttl <= 1)) return NOT_MINE;

    /* Addresses and ports: in the L4 checksum (pseudo-header) and, addresses, the IP one. */
    __u32 ipsum = (__u16)~ip->check;
    ipsum = sum_replace(ipsum, (const __u8*)&ip->saddr, &f->saddr[12], 4);
    ipsum = sum_replace(ipsum, (const __u8*)&ip->daddr, &f->daddr[12], 4);
    if (ip->protocol == IPPROTO_TCP || *check) { /* a UDP checksum of 0: none, stays 0 */
        __u32 l4sum = (__u16) ~*check;
        l4sum = sum_replace(l4sum, (const __u8*)&ip->saddr, &f->saddr[12], 4);
        l4sum = sum_replace(l4sum, (const __u8*)&ip->daddr, &f->daddr[12], 4);
        l4sum = sum_replace(l4sum, (const __u8*)ports, (const __u8*)&f->sport, 4);
        __u16 c = (__u16)~sum_fold(l4sum);
        if (ip->protocol == IPPROTO_UDP && c == 0) c = 0xffff;
        *check = c;
    }
    if (f->flags & XVS_XDP_FLOW_TTL) {
        __u8 old[2], now[2];
        old[0] = ip->ttl;
        old[1] = ip->protocol;
        now[0] = (__u8)(ip->ttl - 1);
        now[1] = ip->protocol;
        ipsum = sum_replace(ipsum, old, now, 2);
        ip->ttl = now[0];
    }
    ip->check = (__u16)~sum_fold(ipsum);
    __builtin_memcpy(&ip->saddr, &f->saddr[12], 4);
    __builtin_memcpy(&ip->daddr, &f->daddr[12], 4);
    ports[0] = f->sport;
    ports[1] = f->dport;
    count(f, len);
    return send(ctx, eth, f);
}

static __always_inline int fast_v6(struct xdp_md* ctx, struct ethhdr* eth, struct ipv6hdr* ip,
                                   void* end) {
    if (ip->nexthdr != IPPROTO_TCP && ip->nexthdr != IPPROTO_UDP) return NOT_MINE;
    __be16* ports = (void*)(ip + 1);
    if ((void*)(ports + 2) > end) return NOT_MINE;
    struct xvs_xdp_flow_key k = {};
    __builtin_memcpy(k.saddr, &ip->saddr, 16);
    __builtin_memcpy(k.daddr, &ip->daddr, 16);
    k.sport = ports[0];
    k.dport = ports[1];
    k.proto = ip->nexthdr;
    const struct xvs_xdp_flow* f = bpf_map_lookup_elem(&xvs_xdp_flows, &k);
    if (!f || !(f->flags & XVS_XDP_FLOW_V6)) return NOT_MINE;
    __u16* check = l4_check(ports, end, ip->nexthdr);
    const __u32 len = 40u + bpf_ntohs(ip->payload_len);
    /* A UDP checksum of 0 is invalid over IPv6: xvs drops it, counted. */
    if (!check || !*check || len > f->mtu || ((f->flags & XVS_XDP_FLOW_TTL) && ip->hop_limit <= 1))
        return NOT_MINE;
    __u32 l4sum = (__u16) ~*check;
    l4sum = sum_replace(l4sum, (const __u8*)&ip->saddr, f->saddr, 16);
    l4sum = sum_replace(l4sum, (const __u8*)&ip->daddr, f->daddr, 16);
    l4sum = sum_replace(l4sum, (const __u8*)ports, (const __u8*)&f->sport, 4);
    __u16 c = (__u16)~sum_fold(l4sum);
    if (ip->nexthdr == IPPROTO_UDP && c == 0) c = 0xffff;
    *check = c;
    if (f->flags & XVS_XDP_FLOW_TTL) ip->hop_limit--;
    __builtin_memcpy(&ip->saddr, f->saddr, 16);
    __builtin_memcpy(&ip->daddr, f->daddr, 16);
    ports[0] = f->sport;
    ports[1] = f->dport;
    count(f, len);
    return send(ctx, eth, f);
}

/* ---- the filter ---------------------------------------------------------------------- */

SEC("xdp")
int xvs_xdp(struct xdp_md* ctx) {
    void* data = (void*)(long)ctx->data;
    void* end = (void*)(long)ctx->data_end;
    struct ethhdr* eth = data;
    if ((void*)(eth + 1) > end) return XDP_PASS;

    if (eth->h_proto == bpf_htons(ETH_P_ARP)) {
        struct arp_eth_ipv4* arp = (void*)(eth + 1);
        if ((void*)(arp + 1) > end) return XDP_PASS;
        return owner_v4(arp->tpa) == XVS_XDP_OWNER_KERNEL ? XDP_PASS : to_xvs(ctx);
    }
    if (eth->h_proto == bpf_htons(ETH_P_IP)) {
        struct iphdr* ip = (void*)(eth + 1);
        if ((void*)(ip + 1) > end) return XDP_PASS;
        if (flows_enabled()) {
            const int v = fast_v4(ctx, eth, ip, end);
            if (v != NOT_MINE) return v;
        }
        const __u8* d = (const __u8*)&ip->daddr;
        switch (owner_v4(d)) {
            case XVS_XDP_OWNER_XVS:
                return to_xvs(ctx);
            case XVS_XDP_OWNER_KERNEL:
                return XDP_PASS;
        }
        /* Multicast, limited broadcast, or a frame not sent to our MAC: the kernel's. */
        if ((d[0] & 0xf0) == 0xe0 || ip->daddr == 0xffffffff || (eth->h_dest[0] & 1))
            return XDP_PASS;
        return to_xvs(ctx); /* routed through xvs (NAT, SNAT) or dropped there, counted */
    }
    if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
        struct ipv6hdr* ip6 = (void*)(eth + 1);
        if ((void*)(ip6 + 1) > end) return XDP_PASS;
        if (flows_enabled()) {
            const int v = fast_v6(ctx, eth, ip6, end);
            if (v != NOT_MINE) return v;
        }
        const __u8* d = ip6->daddr.in6_u.u6_addr8;
        if (ip6->nexthdr == IPPROTO_ICMPV6) {
            struct nd_msg* icmp = (void*)(ip6 + 1);
            if ((void*)(icmp + 1) > end) return XDP_PASS;
            if (icmp->type == 135 || icmp->type == 136) { /* NS, NA */
                const __u8 target = owner_v6(icmp->target);
                if (target == XVS_XDP_OWNER_XVS) return to_xvs(ctx);
                /* A solicitation for the kernel's address; an advertisement answering the
                 * kernel's solicitation comes to the kernel's address. */
                if (icmp->type == 135 ? target == XVS_XDP_OWNER_KERNEL
                                      : owner_v6(d) == XVS_XDP_OWNER_KERNEL)
                    return XDP_PASS;
                return to_xvs(ctx);
            }
        }
        switch (owner_v6(d)) {
            case XVS_XDP_OWNER_XVS:
                return to_xvs(ctx);
            case XVS_XDP_OWNER_KERNEL:
                return XDP_PASS;
        }
        /* Multicast (ff00::/8) and link-local (fe80::/10): the kernel's. */
        if (d[0] == 0xff || (d[0] == 0xfe && (d[1] & 0xc0) == 0x80) || (eth->h_dest[0] & 1))
            return XDP_PASS;
        return to_xvs(ctx);
    }
    return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
