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
 * xvsd keeps xvs_xdp_addrs in step with its addresses and the kernel's (port/xdp_filter.h). */
/* clang-format off */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
/* clang-format on */
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

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
