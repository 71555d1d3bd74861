/* The contract between the xvs-rs NatTun programs (bpf/tunnel.bpf.c, tc ingress + egress) and
 * their loader (tc_tunnel.cpp): map names, records and the counter list (issue 20). Plain C so
 * the BPF object and the C++ tool include it. */
#ifndef XVS_RS_TUNNEL_ABI_H
#define XVS_RS_TUNNEL_ABI_H

#define XVS_RT_MAX_DIRECTORS 64
#define XVS_RT_SESSIONS_DEFAULT 65536
#define XVS_RT_IDLE_DEFAULT_S 900 /* IPVS's TCP established timeout */

/* X(name, help): index order is the per-CPU array's order. */
#define XVS_RT_COUNTERS(X)                                                                     \
    X(in_decap, "tunnel packet from a director: outer header stripped, session recorded")     \
    X(in_malformed, "tunnel packet from a director with a bad inner packet: passed untouched") \
    X(in_other, "ingress packet not from a configured director's tunnel: passed untouched")   \
    X(out_encap, "reply to a recorded client: wrapped toward its director")                   \
    X(out_expired, "reply to a client whose session idled out: entry removed, sent as is")    \
    X(out_too_big, "reply that would not fit the device MTU once wrapped: sent as is")        \
    X(out_fail, "reply that could not be wrapped (no room): sent as is")                      \
    X(out_other, "egress packet of no session (the server's other traffic): untouched")

enum xvs_rt_counter {
#define XVS_RT_COUNTER_ENUM(name, help) XVS_RT_##name,
    XVS_RT_COUNTERS(XVS_RT_COUNTER_ENUM)
#undef XVS_RT_COUNTER_ENUM
        XVS_RT_COUNTER_MAX
};

/* A client flow as the real server sees it: (client address, client port, protocol, local
 * port). Addresses and ports in network byte order. */
struct xvs_rt_key {
    unsigned int client;
    unsigned short client_port;
    unsigned short local_port;
    unsigned char proto;
    unsigned char pad[3];
};

/* Where that flow's replies go: the director's local address, and how. */
struct xvs_rt_session {
    unsigned long long last_ns; /* bpf_ktime_get_ns() of the last packet either way */
    unsigned int director;      /* network byte order */
    unsigned char gue;          /* 1: the director sent GUE, so replies go back in GUE */
    unsigned char pad[3];
};

/* The one entry of the config array map. */
struct xvs_rt_config {
    unsigned long long idle_ns; /* a session idle this long is gone (0: LRU only) */
    unsigned short gue_port_be; /* GUE UDP port both ways, network order (0: no GUE) */
    unsigned short mtu;         /* the device MTU: a wrapped reply must fit it (0: no check) */
    unsigned int pad;
};

#endif
