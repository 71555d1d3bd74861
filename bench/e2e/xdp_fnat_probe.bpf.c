/* bench/e2e's XDP probe (issue 18): what an in-kernel XDP fast path for established FULLNAT
 * flows could move on this veth topology, next to nftables and xvsd in the same run. Not
 * part of xvs: a measuring stick, built and attached by bench/e2e/run.sh (BENCH_XDP_PROBE=1).
 *
 * It does per frame what such a fast path must do and nothing more: parse Ethernet/IPv4/TCP,
 * look the flow up in a hash map (an LRU map, inserted on first sight, a packet and byte
 * counter updated), rewrite the addresses FULLNAT-style (client -> VIP becomes LIP -> RS and
 * back; ports kept, which one client address makes unique), decrement the TTL, update the IP
 * and TCP checksums incrementally, set the MACs and redirect to the other interface. Every
 * value it needs (addresses, port, MACs, ifindexes) is fixed at compile time (-D, see
 * run.sh); anything else passes to the director namespace's kernel (ARP for its addresses).
 * A redirect into a veth needs NAPI on the peer end: run.sh attaches xdp_pass there
 * (-DPROBE_PASS_ONLY). */
/* clang-format off */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
/* clang-format on */
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/tcp.h>

#ifdef PROBE_PASS_ONLY
/* For the peer ends of the director's veths: gives them the NAPI a redirect needs. */
SEC("xdp")
int xdp_pass(struct xdp_md* ctx) {
    (void)ctx;
    return XDP_PASS;
}
#else
#ifndef PROBE_VIP
#error "build with -DPROBE_VIP=... (see bench/e2e/run.sh)"
#endif

struct probe_key {
    __u32 saddr, daddr;
    __u16 sport, dport;
};

struct probe_val {
    __u64 packets, bytes;
};

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 65536);
    __type(key, struct probe_key);
    __type(value, struct probe_val);
} probe_flows SEC(".maps");

/* RFC 1624 eqn. 3 for a 32-bit field: HC' = ~(~HC + ~m + m'). The sum is taken over the words
 * as they lie in memory, which a one's complement sum allows (RFC 1071 byte order
 * independence). */
static __always_inline __u16 csum_replace4(__u16 check, __u32 from, __u32 to) {
    __u32 s = (__u16)~check;
    s += (~from >> 16) + (~from & 0xffff);
    s += (to >> 16) + (to & 0xffff);
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return (__u16)~s;
}

static __always_inline __u16 csum_replace2(__u16 check, __u16 from, __u16 to) {
    __u32 s = (__u16)~check;
    s += (__u16)~from;
    s += to;
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return (__u16)~s;
}

static __always_inline void set_mac(__u8* dst, __u64 mac) {
    for (int i = 0; i < 6; i++) dst[i] = (__u8)(mac >> (8 * (5 - i)));
}

static __always_inline int forward(struct xdp_md* ctx, struct ethhdr* eth, struct iphdr* ip,
                                   struct tcphdr* tcp, __u32 saddr, __u32 daddr, __u64 src_mac,
                                   __u64 dst_mac, int ifindex) {
    struct probe_key k = {ip->saddr, ip->daddr, tcp->source, tcp->dest};
    struct probe_val* v = bpf_map_lookup_elem(&probe_flows, &k);
    const __u64 len = (__u64)(ctx->data_end - ctx->data);
    if (v) {
        v->packets++;
        v->bytes += len;
    } else {
        struct probe_val nv = {1, len};
        bpf_map_update_elem(&probe_flows, &k, &nv, BPF_ANY);
    }
    if (ip->ttl <= 1) return XDP_PASS;
    /* TTL: the 16-bit word ttl|protocol. */
    __u16 old_word, new_word;
    __builtin_memcpy(&old_word, &ip->ttl, 2);
    ip->ttl--;
    __builtin_memcpy(&new_word, &ip->ttl, 2);
    __u16 check = csum_replace2(ip->check, old_word, new_word);
    check = csum_replace4(check, ip->saddr, saddr);
    ip->check = csum_replace4(check, ip->daddr, daddr);
    /* TCP: the pseudo-header's addresses. */
    check = csum_replace4(tcp->check, ip->saddr, saddr);
    tcp->check = csum_replace4(check, ip->daddr, daddr);
    ip->saddr = saddr;
    ip->daddr = daddr;
    set_mac(eth->h_source, src_mac);
    set_mac(eth->h_dest, dst_mac);
    return bpf_redirect(ifindex, 0);
}

SEC("xdp")
int xdp_fnat_probe(struct xdp_md* ctx) {
    void* data = (void*)(long)ctx->data;
    void* end = (void*)(long)ctx->data_end;
    struct ethhdr* eth = data;
    if ((void*)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP)) return XDP_PASS;
    struct iphdr* ip = (void*)(eth + 1);
    if ((void*)(ip + 1) > end || ip->ihl != 5 || ip->protocol != IPPROTO_TCP ||
        (ip->frag_off & bpf_htons(0x3fff)))
        return XDP_PASS;
    struct tcphdr* tcp = (void*)(ip + 1);
    if ((void*)(tcp + 1) > end) return XDP_PASS;
    /* client -> VIP:port on the WAN side: LIP -> RS:port on the LAN side */
    if (ip->daddr == bpf_htonl(PROBE_VIP) && tcp->dest == bpf_htons(PROBE_PORT) &&
        ip->saddr == bpf_htonl(PROBE_CLIENT))
        return forward(ctx, eth, ip, tcp, bpf_htonl(PROBE_LIP), bpf_htonl(PROBE_RS), PROBE_LAN_MAC,
                       PROBE_RS_MAC, PROBE_LAN_IFINDEX);
    /* RS:port -> LIP on the LAN side: VIP:port -> client on the WAN side */
    if (ip->saddr == bpf_htonl(PROBE_RS) && tcp->source == bpf_htons(PROBE_PORT) &&
        ip->daddr == bpf_htonl(PROBE_LIP))
        return forward(ctx, eth, ip, tcp, bpf_htonl(PROBE_VIP), bpf_htonl(PROBE_CLIENT),
                       PROBE_WAN_MAC, PROBE_CLIENT_MAC, PROBE_WAN_IFINDEX);
    return XDP_PASS;
}

#endif

char LICENSE[] SEC("license") = "Dual BSD/GPL";
