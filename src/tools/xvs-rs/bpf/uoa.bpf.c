/* xvs-rs uoa: the client address of a FULLNAT UDP flow, from xvs's UOA (ipo: IPv4 option 31
 * {port, address}; opp: IP protocol 248 header + the same option, between IP and UDP), for
 * unmodified servers on a stock kernel (no uoa module). tc ingress records (director address,
 * director port, local port) -> client in xvs_uoa_fwd and the reverse in xvs_uoa_rev, and
 * removes an opp header (the kernel drops protocol 248; an ipo datagram passes as it is).
 * cgroup recvmsg4/6 show the client as a datagram's source; sendmsg4/6 send a reply to that
 * client to the director address instead, so it goes back through the director. Invariant: a
 * packet without UOA passes byte for byte unchanged; an address of no recorded flow is never
 * rewritten. */
/* clang-format off */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
/* clang-format on */
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>

#include "../readers_abi.h"

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, XVS_UOA_FLOWS_DEFAULT); /* the loader sets --max-flows */
    __type(key, struct xvs_uoa_key);
    __type(value, struct xvs_uoa_addr);
} xvs_uoa_fwd SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, XVS_UOA_FLOWS_DEFAULT);
    __type(key, struct xvs_uoa_key);
    __type(value, struct xvs_uoa_addr);
} xvs_uoa_rev SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, XVS_UOA_COUNTER_MAX);
    __type(key, __u32);
    __type(value, __u64);
} xvs_uoa_stats SEC(".maps");

static __always_inline void count(__u32 idx) {
    __u64* value = bpf_map_lookup_elem(&xvs_uoa_stats, &idx);
    if (value) *value += 1;
}

static __always_inline void v4_mapped(unsigned int out[4], __u32 addr_be) {
    out[0] = 0;
    out[1] = 0;
    out[2] = bpf_htonl(0xffff);
    out[3] = addr_be;
}

static __always_inline int is_v4_mapped(const unsigned int a[4]) {
    return a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0xffff);
}

/* The UOA option {31, len, port, address} in opt[0..len): the client, or -1. */
static __always_inline int uoa_opt_parse(const __u8* opt, struct xvs_uoa_addr* client) {
    if (opt[0] != XVS_UOA_OPT_CODE) return -1;
    client->port = (__u16)(opt[2] | opt[3] << 8); /* network order as stored */
    if (opt[1] == XVS_UOA_OPT_LEN_V4) {
        __u32 a;
        __builtin_memcpy(&a, opt + 4, 4);
        v4_mapped(client->addr, a);
        client->family = 4;
        return 0;
    }
    if (opt[1] == XVS_UOA_OPT_LEN_V6) {
        __builtin_memcpy(client->addr, opt + 4, 16);
        client->family = 6;
        return 0;
    }
    return -1;
}

/* Both directions of the flow: director (peer, peer_port) at local_port <-> client. */
static __always_inline void record(const unsigned int director[4], __u8 director_family,
                                   __u16 director_port, __u16 local_port,
                                   const struct xvs_uoa_addr* client) {
    struct xvs_uoa_key fk = {};
    __builtin_memcpy(fk.peer, director, 16);
    fk.peer_port = director_port;
    fk.local_port = local_port;
    bpf_map_update_elem(&xvs_uoa_fwd, &fk, client, BPF_ANY);
    struct xvs_uoa_key rk = {};
    __builtin_memcpy(rk.peer, client->addr, 16);
    rk.peer_port = client->port;
    rk.local_port = local_port;
    struct xvs_uoa_addr d = {};
    __builtin_memcpy(d.addr, director, 16);
    d.port = director_port;
    d.family = director_family;
    bpf_map_update_elem(&xvs_uoa_rev, &rk, &d, BPF_ANY);
}

#define L3 sizeof(struct ethhdr)
#define IPOPT_BUF 64 /* IPv4 options are at most 40 bytes; indexes masked with 63 */
/* The index masked after an optimisation barrier: clang otherwise drops the mask it can prove
 * redundant, and the verifier, which tracks the bound on another register, rejects the read. */
#define AT(i)                                \
    ({                                       \
        __u32 at_ = (i);                     \
        asm volatile("" : "+r"(at_));        \
        at_ & (IPOPT_BUF - 1);               \
    })
/* A length of 1..64 bytes the verifier can see is not zero (n itself is 1..64). */
#define SIZE(n) (AT((n) - 1) + 1)

/* The opp header at off (right after the IP header) and the option it carries: *client, the
 * UDP ports after it and the header's length (*opp_len, what stripping removes). Nonzero,
 * counted as malformed, when it is not a well-formed opp of protocol UDP; check_version also
 * requires version 1 or 2 in the high nibble (the IPv4 sender's field). */
static __always_inline int opp_read(struct __sk_buff* skb, __u32 off, int check_version,
                                    struct xvs_uoa_addr* client, __u16 ports[2], __u32* opp_len) {
    struct {
        __u8 version;
        __u8 protocol;
        __u16 len;
        __u8 opt[XVS_UOA_OPT_LEN_V6];
    } opp = {};
    if (bpf_skb_load_bytes(skb, off, &opp, 4 + XVS_UOA_OPT_LEN_V4)) goto malformed;
    const __u32 len = bpf_ntohs(opp.len);
    if (opp.protocol != IPPROTO_UDP ||
        (check_version && opp.version >> 4 != 1 && opp.version >> 4 != 2) ||
        (len != 4 + XVS_UOA_OPT_LEN_V4 && len != 4 + XVS_UOA_OPT_LEN_V6) ||
        len != 4u + opp.opt[1])
        goto malformed;
    if (len == 4 + XVS_UOA_OPT_LEN_V6 &&
        bpf_skb_load_bytes(skb, off, &opp, 4 + XVS_UOA_OPT_LEN_V6))
        goto malformed;
    if (uoa_opt_parse(opp.opt, client) || bpf_skb_load_bytes(skb, off + len, ports, 4))
        goto malformed;
    *opp_len = len;
    return 0;
malformed:
    count(XVS_UOA_malformed);
    return -1;
}

/* An IPv4 datagram with UOA: ipo (an option, anywhere in the options; left in place) or opp
 * (protocol 248; the opp header removed). */
static __always_inline int uoa_ipv4(struct __sk_buff* skb) {
    struct iphdr ip;
    if (bpf_skb_load_bytes(skb, L3, &ip, sizeof(ip))) return TC_ACT_OK;
    if (ip.version != 4 || ip.ihl < 5) return TC_ACT_OK;
    if (ip.frag_off & bpf_htons(0x3fff)) return TC_ACT_OK; /* a fragment: no UDP header here */
    const __u32 hlen = ip.ihl * 4;
    struct xvs_uoa_addr client = {};
    unsigned int director[4];
    v4_mapped(director, ip.saddr);
    if (ip.protocol == IPPROTO_UDP && ip.ihl > 5) {
        __u8 opts[IPOPT_BUF] = {};
        const __u32 olen = hlen - sizeof(ip);
        if (olen > 40 || bpf_skb_load_bytes(skb, L3 + sizeof(ip), opts, SIZE(olen)))
            return TC_ACT_OK;
        /* Walk the options with constant indexes only (a variable index forks the verifier's
         * states past its limit): `next` is where the next option starts. */
        int found = -1;
        __u32 next = 0;
#pragma unroll
        for (int i = 0; i < 40; i++) {
            if (i != next) continue;
            if (i >= olen) break;
            const __u8 code = opts[i];
            if (code == 0) break; /* end of options */
            if (code == 1) {      /* no-op */
                next = i + 1;
                continue;
            }
            const __u8 len = opts[i + 1];
            if (len < 2 || i + len > olen) break;
            if (code == XVS_UOA_OPT_CODE) {
                if (i + XVS_UOA_OPT_LEN_V4 > 40) break;
                __u8 opt[XVS_UOA_OPT_LEN_V6] = {};
                if (len == XVS_UOA_OPT_LEN_V4) {
                    __builtin_memcpy(opt, &opts[i], XVS_UOA_OPT_LEN_V4);
                } else if (len == XVS_UOA_OPT_LEN_V6 && i + XVS_UOA_OPT_LEN_V6 <= 40) {
                    __builtin_memcpy(opt, &opts[i], XVS_UOA_OPT_LEN_V6);
                }
                found = uoa_opt_parse(opt, &client);
                if (found) {
                    count(XVS_UOA_malformed);
                    return TC_ACT_OK;
                }
                break;
            }
            next = i + len;
        }
        if (found) {
            count(XVS_UOA_other);
            return TC_ACT_OK;
        }
        __u16 ports[2];
        if (bpf_skb_load_bytes(skb, L3 + hlen, ports, sizeof(ports))) {
            count(XVS_UOA_malformed);
            return TC_ACT_OK;
        }
        record(director, 4, ports[0], ports[1], &client);
        count(XVS_UOA_ipo_seen);
        return TC_ACT_OK;
    }
    if (ip.protocol != XVS_UOA_PROTO_OPP) {
        count(XVS_UOA_other);
        return TC_ACT_OK;
    }
    /* opp: {version << 4, protocol 17, length be16} then the option, then UDP. */
    __u16 ports[2];
    __u32 opp_len = 0;
    if (opp_read(skb, L3 + hlen, 1, &client, ports, &opp_len)) return TC_ACT_OK;
    /* Remove opp_len bytes after the IP header: take them off the front of the IP header, then
     * write the header (options included) back in front of UDP, protocol 17, shorter. */
    __u8 hdr[IPOPT_BUF] = {};
    if (hlen > 60 || bpf_skb_load_bytes(skb, L3, hdr, SIZE(hlen))) {
        count(XVS_UOA_malformed);
        return TC_ACT_OK;
    }
    struct iphdr* h = (struct iphdr*)hdr;
    h->protocol = IPPROTO_UDP;
    h->tot_len = bpf_htons(bpf_ntohs(ip.tot_len) - opp_len);
    h->check = 0;
    __u32 sum = 0;
#pragma unroll
    for (int k = 0; k < 30; k++)
        if ((__u32)k * 2 < hlen) sum += ((__u16*)hdr)[k];
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    h->check = (__u16)~sum;
    if (bpf_skb_adjust_room(skb, -(__s32)opp_len, BPF_ADJ_ROOM_MAC, 0) ||
        bpf_skb_store_bytes(skb, L3, hdr, SIZE(hlen), BPF_F_RECOMPUTE_CSUM)) {
        count(XVS_UOA_opp_strip_failed);
        return TC_ACT_OK;
    }
    record(director, 4, ports[0], ports[1], &client);
    count(XVS_UOA_opp_stripped);
    return TC_ACT_OK;
}

/* An IPv6 datagram with opp right after the fixed header (FNAT66: xvs adds no extension
 * header); the opp header removed. */
static __always_inline int uoa_ipv6(struct __sk_buff* skb) {
    struct ipv6hdr ip6;
    if (bpf_skb_load_bytes(skb, L3, &ip6, sizeof(ip6))) return TC_ACT_OK;
    if (ip6.version != 6 || ip6.nexthdr != XVS_UOA_PROTO_OPP) {
        count(XVS_UOA_other);
        return TC_ACT_OK;
    }
    struct xvs_uoa_addr client = {};
    __u16 ports[2];
    __u32 opp_len = 0;
    if (opp_read(skb, L3 + sizeof(ip6), 0, &client, ports, &opp_len)) return TC_ACT_OK;
    ip6.nexthdr = IPPROTO_UDP;
    ip6.payload_len = bpf_htons(bpf_ntohs(ip6.payload_len) - opp_len);
    if (bpf_skb_adjust_room(skb, -(__s32)opp_len, BPF_ADJ_ROOM_MAC, 0) ||
        bpf_skb_store_bytes(skb, L3, &ip6, sizeof(ip6), BPF_F_RECOMPUTE_CSUM)) {
        count(XVS_UOA_opp_strip_failed);
        return TC_ACT_OK;
    }
    unsigned int director[4];
    __builtin_memcpy(director, &ip6.saddr, 16);
    record(director, 6, ports[0], ports[1], &client);
    count(XVS_UOA_opp_stripped);
    return TC_ACT_OK;
}

SEC("tc")
int xvs_uoa_ingress(struct __sk_buff* skb) {
    if (skb->protocol == bpf_htons(ETH_P_IP)) return uoa_ipv4(skb);
    if (skb->protocol == bpf_htons(ETH_P_IPV6)) return uoa_ipv6(skb);
    count(XVS_UOA_other);
    return TC_ACT_OK;
}

/* The socket's own port (bpf_sock keeps it in host order), network order. */
static __always_inline __u16 local_port(struct bpf_sock_addr* ctx) {
    struct bpf_sock* sk = ctx->sk;
    return sk ? bpf_htons((__u16)sk->src_port) : 0;
}

/* The four sockaddr hooks share one shape: look the datagram's peer (as the application
 * sees it, with the socket's own port) up in `map` and, when found, put the address and port
 * it maps to in its place. recvmsg looks up xvs_uoa_fwd (director -> client: the application
 * sees the client), sendmsg xvs_uoa_rev (client -> director: the reply goes back through the
 * director). An IPv4 socket takes only IPv4 entries. On an IPv6 socket any client can be shown
 * (an IPv6 client behind an IPv4 director address: FNAT64), but a reply goes to a director of
 * the peer's own kind: v4-mapped to an IPv4 entry, native to an IPv6 one (same_family). */
static __always_inline int rewrite4(struct bpf_sock_addr* ctx, void* map, __u32 rewritten) {
    struct xvs_uoa_key k = {};
    v4_mapped(k.peer, ctx->user_ip4);
    k.peer_port = (__u16)ctx->user_port;
    k.local_port = local_port(ctx);
    struct xvs_uoa_addr* to = bpf_map_lookup_elem(map, &k);
    if (!to) return 1;
    if (to->family != 4) {
        count(XVS_UOA_family_mismatch);
        return 1;
    }
    ctx->user_ip4 = to->addr[3];
    ctx->user_port = to->port;
    count(rewritten);
    return 1;
}

static __always_inline int rewrite6(struct bpf_sock_addr* ctx, void* map, __u32 rewritten,
                                    int same_family) {
    struct xvs_uoa_key k = {};
    k.peer[0] = ctx->user_ip6[0];
    k.peer[1] = ctx->user_ip6[1];
    k.peer[2] = ctx->user_ip6[2];
    k.peer[3] = ctx->user_ip6[3];
    k.peer_port = (__u16)ctx->user_port;
    k.local_port = local_port(ctx);
    struct xvs_uoa_addr* to = bpf_map_lookup_elem(map, &k);
    if (!to) return 1;
    if (same_family && (to->family == 4) != is_v4_mapped(k.peer)) {
        count(XVS_UOA_family_mismatch);
        return 1;
    }
    ctx->user_ip6[0] = to->addr[0];
    ctx->user_ip6[1] = to->addr[1];
    ctx->user_ip6[2] = to->addr[2];
    ctx->user_ip6[3] = to->addr[3];
    ctx->user_port = to->port;
    count(rewritten);
    return 1;
}

SEC("cgroup/recvmsg4")
int xvs_uoa_recv4(struct bpf_sock_addr* ctx) {
    return rewrite4(ctx, &xvs_uoa_fwd, XVS_UOA_recv_rewritten);
}

SEC("cgroup/recvmsg6")
int xvs_uoa_recv6(struct bpf_sock_addr* ctx) {
    return rewrite6(ctx, &xvs_uoa_fwd, XVS_UOA_recv_rewritten, 0);
}

SEC("cgroup/sendmsg4")
int xvs_uoa_send4(struct bpf_sock_addr* ctx) {
    return rewrite4(ctx, &xvs_uoa_rev, XVS_UOA_send_rewritten);
}

SEC("cgroup/sendmsg6")
int xvs_uoa_send6(struct bpf_sock_addr* ctx) {
    return rewrite6(ctx, &xvs_uoa_rev, XVS_UOA_send_rewritten, 1);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
