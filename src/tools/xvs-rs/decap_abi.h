/* The contract between the xvs-rs XDP decapsulator (bpf/decap.bpf.c) and its loader: map
 * names, the config record and the counter list. Plain C so both the BPF object and the C++
 * tool include it; counters come from one X-macro so the tool prints the names in step. */
#ifndef XVS_RS_DECAP_ABI_H
#define XVS_RS_DECAP_ABI_H

#define XVS_RS_GUE_PORT_DEFAULT 6080
#define XVS_RS_MAX_ADDRS 64

/* X(name, help) — index order is the per-CPU array's order. */
#define XVS_RS_COUNTERS(X)                                                                    \
    X(ipip_decap, "IPIP to one of our addresses, outer header removed")                       \
    X(ipip_pass, "IPIP not to our addresses, or an outer fragment: passed untouched")         \
    X(ipip_malformed, "IPIP with a truncated or invalid inner IPv4 header: passed untouched") \
    X(gue_decap, "GUE (v0 or v1 direct) to our address and port, outer headers removed")      \
    X(gue_pass, "GUE we do not decapsulate (control, inner not IPv4, not to us): passed")     \
    X(gue_malformed, "GUE truncated or with an invalid header: passed untouched")             \
    X(outer_malformed, "IPv4 frame with a truncated or invalid outer header: passed")         \
    X(other, "everything else (not IPIP, not UDP to the GUE port): passed untouched")

enum xvs_rs_counter {
#define XVS_RS_COUNTER_ENUM(name, help) XVS_RS_##name,
    XVS_RS_COUNTERS(XVS_RS_COUNTER_ENUM)
#undef XVS_RS_COUNTER_ENUM
        XVS_RS_COUNTER_MAX
};

/* The one entry of the config array map. */
struct xvs_rs_config {
    unsigned short gue_port_be; /* UDP destination port of GUE, network byte order */
    unsigned short pad;
};

#endif
