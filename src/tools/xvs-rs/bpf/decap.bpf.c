/* xvs-rs decap: an XDP program for a TUN-mode real server whose kernel has no ipip/fou
 * module. It removes the outer IPv4 header of IPIP, or IPv4+UDP+GUE (v0 with inner IPv4,
 * v1 "direct" IPv4), of packets addressed to one of this server's addresses (map
 * xvs_rs_addrs), keeps the Ethernet header and passes the inner packet up the stack.
 * Invariant: a frame it does not decapsulate is passed byte for byte unchanged. */
/* linux/bpf.h first: libbpf's helper headers use its types. */
/* clang-format off */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
/* clang-format on */
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>

#include "../decap_abi.h"

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, XVS_RS_MAX_ADDRS);
    __type(key, __u32); /* IPv4 address, network byte order */
    __type(value, __u8);
} xvs_rs_addrs SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct xvs_rs_config);
} xvs_rs_config SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, XVS_RS_COUNTER_MAX);
    __type(key, __u32);
    __type(value, __u64);
} xvs_rs_stats SEC(".maps");

static __always_inline int count(__u32 idx, int verdict) {
    __u64* value = bpf_map_lookup_elem(&xvs_rs_stats, &idx);
    if (value) *value += 1;
    return verdict;
}

/* An inner IPv4 header must be whole and plausible before we strip what covers it. */
static __always_inline int inner_ipv4_ok(const void* inner, const void* data_end) {
    const struct iphdr* ip = inner;
    if ((const void*)(ip + 1) > data_end) return 0;
    if (ip->version != 4 || ip->ihl < 5) return 0;
    if ((const void*)ip + ip->ihl * 4 > data_end) return 0;
    return 1;
}

/* Drops the `strip` bytes after the Ethernet header: the Ethernet header moves forward by
 * `strip` and the frame head with it. */
static __always_inline int strip_after_eth(struct xdp_md* ctx, __u32 strip) {
    void* data = (void*)(long)ctx->data;
    void* data_end = (void*)(long)ctx->data_end;
    struct ethhdr eth;
    if (data + sizeof(eth) > data_end) return -1;
    __builtin_memcpy(&eth, data, sizeof(eth));
    if (bpf_xdp_adjust_head(ctx, (int)strip)) return -1;
    data = (void*)(long)ctx->data;
    data_end = (void*)(long)ctx->data_end;
    if (data + sizeof(eth) > data_end) return -1;
    __builtin_memcpy(data, &eth, sizeof(eth));
    return 0;
}

SEC("xdp")
int xvs_rs_decap(struct xdp_md* ctx) {
    void* data = (void*)(long)ctx->data;
    void* data_end = (void*)(long)ctx->data_end;
    struct ethhdr* eth = data;
    if ((void*)(eth + 1) > data_end) return XDP_PASS; /* not even Ethernet: not ours to count */
    if (eth->h_proto != bpf_htons(ETH_P_IP)) return count(XVS_RS_other, XDP_PASS);

    struct iphdr* outer = (void*)(eth + 1);
    if ((void*)(outer + 1) > data_end) return count(XVS_RS_outer_malformed, XDP_PASS);
    if (outer->version != 4 || outer->ihl < 5) return count(XVS_RS_outer_malformed, XDP_PASS);
    __u32 outer_len = outer->ihl * 4;
    if ((void*)outer + outer_len > data_end) return count(XVS_RS_outer_malformed, XDP_PASS);

    int is_ipip = outer->protocol == IPPROTO_IPIP;
    if (!is_ipip && outer->protocol != IPPROTO_UDP) return count(XVS_RS_other, XDP_PASS);

    struct udphdr* udp = (void*)outer + outer_len;
    __u16 gue_port = bpf_htons(XVS_RS_GUE_PORT_DEFAULT);
    if (!is_ipip) {
        __u32 zero = 0;
        struct xvs_rs_config* cfg = bpf_map_lookup_elem(&xvs_rs_config, &zero);
        if (cfg && cfg->gue_port_be) gue_port = cfg->gue_port_be;
        if ((void*)(udp + 1) > data_end) return count(XVS_RS_other, XDP_PASS);
        if (udp->dest != gue_port) return count(XVS_RS_other, XDP_PASS);
    }
    const __u32 pass = is_ipip ? XVS_RS_ipip_pass : XVS_RS_gue_pass;
    const __u32 malformed = is_ipip ? XVS_RS_ipip_malformed : XVS_RS_gue_malformed;
    const __u32 decap = is_ipip ? XVS_RS_ipip_decap : XVS_RS_gue_decap;

    __u32 daddr = outer->daddr;
    if (!bpf_map_lookup_elem(&xvs_rs_addrs, &daddr)) return count(pass, XDP_PASS);
    /* A fragment of a tunnel packet cannot be decapsulated on its own. */
    if (outer->frag_off & bpf_htons(0x3fff)) return count(pass, XDP_PASS);

    __u32 strip = outer_len;
    if (!is_ipip) {
        __u8* gue = (void*)(udp + 1);
        if ((void*)(gue + 1) > data_end) return count(malformed, XDP_PASS);
        __u8 version = gue[0] >> 6;
        if (version == 1) {
            /* GUE v1 "direct": the inner IP header follows UDP; its version nibble says 4 or
             * 6 (0x4 = 01 00, 0x6 = 01 10). Only IPv4 here. */
            if ((gue[0] >> 4) != 4) return count(pass, XDP_PASS);
            strip += sizeof(struct udphdr);
        } else if (version == 0) {
            if ((void*)(gue + 4) > data_end) return count(malformed, XDP_PASS);
            if (gue[0] & 0x20) return count(pass, XDP_PASS); /* C bit: control message */
            if (gue[1] != IPPROTO_IPIP) return count(pass, XDP_PASS);
            __u32 hlen = (gue[0] & 0x1f) * 4; /* option words after the 4-byte header */
            strip += sizeof(struct udphdr) + 4 + hlen;
        } else {
            return count(malformed, XDP_PASS);
        }
    }
    /* At most 60 (outer IPv4) + 8 (UDP) + 4 (GUE) + 124 (GUE options): bounds the verifier. */
    if (strip > 60 + 8 + 4 + 124) return count(malformed, XDP_PASS);
    if (!inner_ipv4_ok((void*)outer + strip, data_end)) return count(malformed, XDP_PASS);
    if (strip_after_eth(ctx, strip)) return count(malformed, XDP_PASS);
    return count(decap, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
