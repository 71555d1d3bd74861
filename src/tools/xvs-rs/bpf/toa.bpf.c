/* xvs-rs toa: the client address of a FULLNAT connection, from xvs's TOA option (kind 254,
 * port + address), for unmodified servers on a stock kernel (no toa module). A cgroup sockops
 * program reads the option from the ACK that completes the handshake (PASSIVE_ESTABLISHED,
 * the segment xvs puts TOA on) or, failing that, from the next XVS_TOA_MAX_TRIES segments
 * (PARSE_ALL_HDR_OPT), and keeps it in the socket's storage; cgroup getpeername4/6 programs
 * answer getpeername() and accept()'s address with it. Invariant: a socket without a
 * well-formed TOA keeps its real peer address. */
/* clang-format off */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
/* clang-format on */
#include <linux/tcp.h>

#include "../readers_abi.h"

struct {
    __uint(type, BPF_MAP_TYPE_SK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct xvs_toa_peer);
} xvs_toa_peers SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, XVS_TOA_COUNTER_MAX);
    __type(key, __u32);
    __type(value, __u64);
} xvs_toa_stats SEC(".maps");

static __always_inline void count(__u32 idx) {
    __u64* value = bpf_map_lookup_elem(&xvs_toa_stats, &idx);
    if (value) *value += 1;
}

/* The options area is at most 40 bytes, copied into a zeroed 64-byte buffer (the copy's length
 * masked to it), so every constant index below stays inside it. */
#define OPT_BUF 64
/* The index masked after an optimisation barrier: clang otherwise drops the mask it can prove
 * redundant, and the verifier, which tracks the bound on another register, rejects the read. */
#define AT(i)                                \
    ({                                       \
        __u32 at_ = (i);                     \
        asm volatile("" : "+r"(at_));        \
        at_ & (OPT_BUF - 1);                 \
    })

/* 1 and *peer filled when the segment's options hold a kind-254 option of length 8 or 20 (the
 * first one, as the toa module reads it), 0 otherwise. */
static __always_inline int toa_scan(struct bpf_sock_ops* ops, struct xvs_toa_peer* peer) {
    __u8* data = (__u8*)(long)ops->skb_data;
    __u8* end = (__u8*)(long)ops->skb_data_end;
    if (data + sizeof(struct tcphdr) > end) return 0;
    const __u32 hdrlen = ((struct tcphdr*)data)->doff * 4u;
    if (hdrlen <= sizeof(struct tcphdr) || data + hdrlen > end) return 0;
    const __u32 limit = hdrlen - sizeof(struct tcphdr); /* bytes of options, 4..40 */
    /* One copy of the whole area (a byte loop over packet pointers forks the verifier's
     * states per byte): [skb_data, skb_data_end) is the TCP header, in the linear data. */
    __u8 buf[OPT_BUF] = {};
    if (bpf_probe_read_kernel(buf, AT(limit), data + sizeof(struct tcphdr))) return 0;
    /* Walk the options with constant indexes only: `next` is where the next option starts;
     * an index that is not an option boundary is skipped. Bytes past `limit` read as EOL. */
    __u32 next = 0;
#pragma unroll
    for (int i = 0; i < 40; i++) {
        if (i != next) continue;
        if (i >= limit) return 0;
        const __u8 kind = buf[i];
        if (kind == 0) return 0; /* EOL */
        if (kind == 1) {         /* NOP */
            next = i + 1;
            continue;
        }
        const __u8 len = buf[i + 1];
        if (len < 2 || i + len > limit) return 0; /* malformed: stop */
        if (kind == XVS_TOA_KIND && len == XVS_TOA_LEN_V4 && i + XVS_TOA_LEN_V4 <= 40) {
            peer->port = (__u16)(buf[i + 2] | buf[i + 3] << 8); /* stays network order */
            peer->addr[0] = 0;
            peer->addr[1] = 0;
            peer->addr[2] = bpf_htonl(0xffff);
            __builtin_memcpy(&peer->addr[3], &buf[i + 4], 4);
            peer->family = 4;
            return 1;
        }
        if (kind == XVS_TOA_KIND && len == XVS_TOA_LEN_V6 && i + XVS_TOA_LEN_V6 <= 40) {
            peer->port = (__u16)(buf[i + 2] | buf[i + 3] << 8);
            __builtin_memcpy(peer->addr, &buf[i + 4], 16);
            peer->family = 6;
            return 1;
        }
        next = i + len;
    }
    return 0;
}

SEC("sockops")
int xvs_toa_sockops(struct bpf_sock_ops* ops) {
    const __u32 op = ops->op;
    if (op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB && op != BPF_SOCK_OPS_PARSE_HDR_OPT_CB) return 1;
    struct bpf_sock* sk = ops->sk;
    if (!sk) return 1;
    if (op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB) {
        struct xvs_toa_peer* peer =
            bpf_sk_storage_get(&xvs_toa_peers, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
        if (!peer) {
            count(XVS_TOA_no_storage);
            return 1;
        }
        if (toa_scan(ops, peer)) {
            peer->state = XVS_TOA_FOUND;
            count(XVS_TOA_found_established);
            return 1;
        }
        /* Not on the completing segment: look at the next few. */
        peer->state = XVS_TOA_PENDING;
        bpf_sock_ops_cb_flags_set(ops, ops->bpf_sock_ops_cb_flags |
                                           BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG);
        return 1;
    }
    /* PARSE_HDR_OPT_CB: only sockets we switched it on for (another program may too). */
    struct xvs_toa_peer* peer = bpf_sk_storage_get(&xvs_toa_peers, sk, 0, 0);
    if (!peer || peer->state != XVS_TOA_PENDING) return 1;
    struct xvs_toa_peer found = {};
    if (toa_scan(ops, &found)) {
        __builtin_memcpy(peer->addr, found.addr, sizeof(found.addr));
        peer->port = found.port;
        peer->family = found.family;
        peer->state = XVS_TOA_FOUND;
        count(XVS_TOA_found_later);
    } else if (++peer->tries < XVS_TOA_MAX_TRIES) {
        return 1;
    } else {
        peer->state = XVS_TOA_ABSENT;
        count(XVS_TOA_not_found);
    }
    bpf_sock_ops_cb_flags_set(ops, ops->bpf_sock_ops_cb_flags &
                                       ~BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG);
    return 1;
}

static __always_inline struct xvs_toa_peer* found_peer(struct bpf_sock_addr* ctx) {
    struct bpf_sock* sk = ctx->sk;
    if (!sk || ctx->type != 1 /* SOCK_STREAM */) return 0;
    struct xvs_toa_peer* peer = bpf_sk_storage_get(&xvs_toa_peers, sk, 0, 0);
    if (!peer || peer->state != XVS_TOA_FOUND) return 0;
    return peer;
}

SEC("cgroup/getpeername4")
int xvs_toa_peer4(struct bpf_sock_addr* ctx) {
    struct xvs_toa_peer* peer = found_peer(ctx);
    if (!peer) return 1;
    if (peer->family != 4) {
        count(XVS_TOA_peer_family_mismatch);
        return 1;
    }
    ctx->user_ip4 = peer->addr[3];
    ctx->user_port = peer->port;
    count(XVS_TOA_peer_rewritten);
    return 1;
}

SEC("cgroup/getpeername6")
int xvs_toa_peer6(struct bpf_sock_addr* ctx) {
    struct xvs_toa_peer* peer = found_peer(ctx);
    if (!peer) return 1;
    /* A dual-stack socket: an IPv4 client reads as ::ffff:a.b.c.d, as the kernel shows it. */
    ctx->user_ip6[0] = peer->addr[0];
    ctx->user_ip6[1] = peer->addr[1];
    ctx->user_ip6[2] = peer->addr[2];
    ctx->user_ip6[3] = peer->addr[3];
    ctx->user_port = peer->port;
    count(XVS_TOA_peer_rewritten);
    return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
