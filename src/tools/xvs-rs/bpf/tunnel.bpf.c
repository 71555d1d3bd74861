/* xvs-rs tunnel: the real-server side of xvs's NatTun mode (issue 20), with no ipip/fou module
 * and no VIP. tc ingress strips the outer IPIP (or IPv4 + UDP + GUE v0) header of packets from a
 * configured director address and records the flow (client, client port, protocol, local port)
 * -> director in an LRU map; tc egress wraps the server's replies to a recorded client, and
 * its ICMP errors about that client's packets, in an outer header toward that director. Invariant: a packet of no session, or not from a
 * director's tunnel, passes byte for byte unchanged. */
/* clang-format off */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
/* clang-format on */
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#include "../tunnel_abi.h"

#ifndef AF_INET
#define AF_INET 2
#endif

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, XVS_RT_MAX_DIRECTORS);
    __type(key, __u32); /* director local address, network byte order */
    __type(value, __u8);
} xvs_rt_dirs SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, XVS_RT_SESSIONS_DEFAULT); /* the loader sets --max-sessions */
    __type(key, struct xvs_rt_key);
    __type(value, struct xvs_rt_session);
} xvs_rt_sessions SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct xvs_rt_config);
} xvs_rt_config SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, XVS_RT_COUNTER_MAX);
    __type(key, __u32);
    __type(value, __u64);
} xvs_rt_stats SEC(".maps");

static __always_inline int count(__u32 idx, int verdict) {
    __u64* value = bpf_map_lookup_elem(&xvs_rt_stats, &idx);
    if (value) *value += 1;
    return verdict;
}

static __always_inline struct xvs_rt_config* config(void) {
    __u32 zero = 0;
    return bpf_map_lookup_elem(&xvs_rt_config, &zero);
}

static __always_inline __u16 csum_fold(__u32 sum) {
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (__u16)~sum;
}

/* The IPv4 header checksum of a 20-byte header (its checksum field zero). */
static __always_inline __u16 ipv4_csum(const struct iphdr* ip) {
    const __u16* w = (const __u16*)ip;
    __u32 sum = 0;
#pragma unroll
    for (int i = 0; i < 10; i++) sum += w[i];
    return csum_fold(sum);
}

/* Ports of a TCP/UDP packet whose IPv4 header (not a fragment) starts at off; -1 otherwise. */
static __always_inline int l4_ports(struct __sk_buff* skb, __u32 off, __u8* proto, __u32* saddr,
                                    __u32* daddr, __u16* sport, __u16* dport) {
    struct iphdr ip;
    if (bpf_skb_load_bytes(skb, off, &ip, sizeof(ip))) return -1;
    if (ip.version != 4 || ip.ihl < 5) return -1;
    if (ip.protocol != IPPROTO_TCP && ip.protocol != IPPROTO_UDP) return -1;
    if (ip.frag_off & bpf_htons(0x3fff)) return -1; /* later fragments have no ports */
    __u16 ports[2];
    if (bpf_skb_load_bytes(skb, off + ip.ihl * 4, ports, sizeof(ports))) return -1;
    *proto = ip.protocol;
    *saddr = ip.saddr;
    *daddr = ip.daddr;
    *sport = ports[0];
    *dport = ports[1];
    return 0;
}

/* An ICMP error (unreachable, time exceeded) the server sends to a client about that client's
 * packet to it (e.g. port unreachable for a datagram): the session key from the quoted packet
 * (client:cport -> local:lport), so the error travels back through the tunnel like a reply and
 * the director translates it for the client. 0 when it is such an error, -1 otherwise. */
static __always_inline int icmp_error_key(struct __sk_buff* skb, __u32 off, struct xvs_rt_key* key,
                                          __u16* local_port) {
    struct iphdr ip;
    if (bpf_skb_load_bytes(skb, off, &ip, sizeof(ip))) return -1;
    if (ip.version != 4 || ip.ihl != 5 || ip.protocol != IPPROTO_ICMP) return -1;
    if (ip.frag_off & bpf_htons(0x3fff)) return -1;
    __u8 type;
    if (bpf_skb_load_bytes(skb, off + sizeof(ip), &type, 1)) return -1;
    if (type != 3 && type != 11) return -1; /* ICMP_DEST_UNREACH, ICMP_TIME_EXCEEDED */
    __u8 proto;
    __u32 qsrc, qdst;
    __u16 qsport, qdport;
    if (l4_ports(skb, off + sizeof(ip) + 8, &proto, &qsrc, &qdst, &qsport, &qdport)) return -1;
    if (qsrc != ip.daddr) return -1; /* about the packet of the client it goes to */
    key->proto = proto;
    key->client = qsrc;
    key->client_port = qsport;
    *local_port = qdport;
    return 0;
}

SEC("tc")
int xvs_rt_ingress(struct __sk_buff* skb) {
    if (skb->protocol != bpf_htons(ETH_P_IP)) return count(XVS_RT_in_other, TC_ACT_OK);
    struct iphdr outer;
    const __u32 l3 = sizeof(struct ethhdr);
    if (bpf_skb_load_bytes(skb, l3, &outer, sizeof(outer)))
        return count(XVS_RT_in_other, TC_ACT_OK);
    if (outer.version != 4 || outer.ihl != 5) return count(XVS_RT_in_other, TC_ACT_OK);
    if (outer.frag_off & bpf_htons(0x3fff)) return count(XVS_RT_in_other, TC_ACT_OK);
    __u32 director = outer.saddr;
    if (!bpf_map_lookup_elem(&xvs_rt_dirs, &director))
        return count(XVS_RT_in_other, TC_ACT_OK);
    __u32 strip = sizeof(struct iphdr);
    __u8 gue = 0;
    if (outer.protocol == IPPROTO_UDP) {
        struct xvs_rt_config* cfg = config();
        struct {
            struct udphdr udp;
            __u8 gue[4];
        } h;
        if (!cfg || !cfg->gue_port_be || bpf_skb_load_bytes(skb, l3 + strip, &h, sizeof(h)))
            return count(XVS_RT_in_other, TC_ACT_OK);
        /* GUE v0 data message without options, carrying IPv4 (what xvs sends). */
        if (h.udp.dest != cfg->gue_port_be || h.gue[0] != 0 || h.gue[1] != IPPROTO_IPIP)
            return count(XVS_RT_in_other, TC_ACT_OK);
        strip += sizeof(h);
        gue = 1;
    } else if (outer.protocol != IPPROTO_IPIP) {
        return count(XVS_RT_in_other, TC_ACT_OK);
    }
    struct xvs_rt_key key = {};
    __u32 local;
    if (l4_ports(skb, l3 + strip, &key.proto, &key.client, &local, &key.client_port,
                 &key.local_port))
        return count(XVS_RT_in_malformed, TC_ACT_OK);
    struct xvs_rt_session s = {};
    s.last_ns = bpf_ktime_get_ns();
    s.director = director;
    s.gue = gue;
    bpf_map_update_elem(&xvs_rt_sessions, &key, &s, BPF_ANY);
    if (bpf_skb_adjust_room(skb, -(__s32)strip, BPF_ADJ_ROOM_MAC, 0))
        return count(XVS_RT_in_malformed, TC_ACT_OK);
    return count(XVS_RT_in_decap, TC_ACT_OK);
}

SEC("tc")
int xvs_rt_egress(struct __sk_buff* skb) {
    if (skb->protocol != bpf_htons(ETH_P_IP)) return count(XVS_RT_out_other, TC_ACT_OK);
    const __u32 l3 = sizeof(struct ethhdr);
    struct xvs_rt_key key = {};
    __u32 local;
    __u16 local_port;
    if (l4_ports(skb, l3, &key.proto, &local, &key.client, &local_port, &key.client_port) &&
        icmp_error_key(skb, l3, &key, &local_port))
        return count(XVS_RT_out_other, TC_ACT_OK);
    key.local_port = local_port;
    struct xvs_rt_session* s = bpf_map_lookup_elem(&xvs_rt_sessions, &key);
    if (!s) return count(XVS_RT_out_other, TC_ACT_OK);
    struct xvs_rt_config* cfg = config();
    if (!cfg) return count(XVS_RT_out_fail, TC_ACT_OK);
    const __u64 now = bpf_ktime_get_ns();
    if (cfg->idle_ns && now - s->last_ns > cfg->idle_ns) {
        bpf_map_delete_elem(&xvs_rt_sessions, &key);
        return count(XVS_RT_out_expired, TC_ACT_OK);
    }
    s->last_ns = now;
    const __u32 director = s->director;
    const int gue = s->gue && cfg->gue_port_be;
    const __u32 add = sizeof(struct iphdr) + (gue ? sizeof(struct udphdr) + 4 : 0);
    struct iphdr inner;
    if (bpf_skb_load_bytes(skb, l3, &inner, sizeof(inner))) return count(XVS_RT_out_fail, TC_ACT_OK);
    const __u32 inner_len = bpf_ntohs(inner.tot_len);
    /* A GSO packet is cut to size after this hook: segments must fit with the outer header, the
     * MSS clamp by the director keeps TCP's within it. */
    if (cfg->mtu && !skb->gso_size && inner_len + add > cfg->mtu)
        return count(XVS_RT_out_too_big, TC_ACT_OK);
    __u64 flags = BPF_F_ADJ_ROOM_ENCAP_L3_IPV4;
    if (gue) flags |= BPF_F_ADJ_ROOM_ENCAP_L4_UDP;
    if (bpf_skb_adjust_room(skb, (__s32)add, BPF_ADJ_ROOM_MAC, flags))
        return count(XVS_RT_out_fail, TC_ACT_OK);
    struct {
        struct iphdr ip;
        struct udphdr udp;
        __u8 gue[4];
    } h = {};
    h.ip.version = 4;
    h.ip.ihl = 5;
    h.ip.tos = inner.tos;
    h.ip.tot_len = bpf_htons(inner_len + add);
    h.ip.id = inner.id;
    h.ip.frag_off = inner.frag_off & bpf_htons(0x4000); /* DF copied */
    h.ip.ttl = 64;
    h.ip.protocol = gue ? IPPROTO_UDP : IPPROTO_IPIP;
    h.ip.saddr = inner.saddr;
    h.ip.daddr = director;
    h.ip.check = ipv4_csum(&h.ip);
    if (gue) {
        /* Source port from the flow (RFC 8086 3.2: entropy for ECMP), checksum 0 (RFC 768). */
        h.udp.source = bpf_htons(0xc000 | ((key.client ^ key.client_port ^ local_port) & 0x3fff));
        h.udp.dest = cfg->gue_port_be;
        h.udp.len = bpf_htons(inner_len + sizeof(struct udphdr) + 4);
        h.gue[1] = IPPROTO_IPIP;
    }
    if (bpf_skb_store_bytes(skb, l3, &h, add, 0)) return count(XVS_RT_out_fail, TC_ACT_SHOT);
    /* The frame now goes to the director: its next hop's MACs, when the FIB knows them (the
     * client may be on a link the director is not). */
    struct bpf_fib_lookup fib = {};
    fib.family = AF_INET;
    fib.ipv4_src = inner.saddr;
    fib.ipv4_dst = director;
    fib.ifindex = skb->ifindex;
    fib.tot_len = inner_len + add;
    if (bpf_fib_lookup(skb, &fib, sizeof(fib), BPF_FIB_LOOKUP_OUTPUT) == BPF_FIB_LKUP_RET_SUCCESS &&
        fib.ifindex == skb->ifindex) {
        bpf_skb_store_bytes(skb, 0, fib.dmac, 6, 0);
        bpf_skb_store_bytes(skb, 6, fib.smac, 6, 0);
    }
    return count(XVS_RT_out_encap, TC_ACT_OK);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
