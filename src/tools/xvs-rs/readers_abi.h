/* The contract between the xvs-rs client-address readers (bpf/toa.bpf.c: cgroup sockops +
 * getpeername; bpf/uoa.bpf.c: tc ingress + cgroup recvmsg/sendmsg) and their loader
 * (readers.cpp): map records and counter lists. Plain C so the BPF objects and the C++ tool
 * include it. Addresses are stored as 16 bytes, an IPv4 one in its v4-mapped form
 * (::ffff:a.b.c.d), so one key serves IPv4 sockets and dual-stack IPv6 sockets alike. */
#ifndef XVS_RS_READERS_ABI_H
#define XVS_RS_READERS_ABI_H

/* ---- TOA (TCP option address, kind 254) ---- */

#define XVS_TOA_KIND 254
#define XVS_TOA_LEN_V4 8  /* kind, len, port (2), IPv4 address (4) */
#define XVS_TOA_LEN_V6 20 /* kind, len, port (2), IPv6 address (16) */
/* Segments parsed after the one that completed the handshake before giving up: xvs sends TOA
 * on every client packet that acks the RS SYN-ACK until the client acks RS data, so it is
 * nearly always on the completing ACK itself; a few more cover a lost or pruned one. */
#define XVS_TOA_MAX_TRIES 8

/* X(name, help): index order is the per-CPU array's order. */
#define XVS_TOA_COUNTERS(X)                                                                        \
    X(found_established, "TOA read from the segment that completed the handshake")                 \
    X(found_later, "TOA read from a later segment (after the handshake)")                          \
    X(not_found, "connection gave up: no TOA in its first segments (not through a TOA VIP)")       \
    X(no_storage, "socket storage could not be allocated: connection not tracked")                 \
    X(peer_rewritten, "getpeername()/accept() answered with the TOA client address")               \
    X(peer_family_mismatch, "IPv6 client on an IPv4 socket: peer address left as the director's")

enum xvs_toa_counter {
#define XVS_TOA_COUNTER_ENUM(name, help) XVS_TOA_##name,
    XVS_TOA_COUNTERS(XVS_TOA_COUNTER_ENUM)
#undef XVS_TOA_COUNTER_ENUM
        XVS_TOA_COUNTER_MAX
};

enum xvs_toa_state {
    XVS_TOA_PENDING = 0, /* still looking (PARSE_ALL_HDR_OPT on) */
    XVS_TOA_FOUND = 1,
    XVS_TOA_ABSENT = 2, /* gave up after XVS_TOA_MAX_TRIES segments */
};

/* Per accepted socket (BPF_MAP_TYPE_SK_STORAGE value). */
struct xvs_toa_peer {
    unsigned int addr[4];  /* client address, v4-mapped for an IPv4 client; network order */
    unsigned short port;   /* client port, network order */
    unsigned char family;  /* 4 or 6 once found */
    unsigned char state;   /* enum xvs_toa_state */
    unsigned char tries;   /* segments parsed after the handshake */
    unsigned char pad[3];
};

/* ---- UOA (UDP option of address: ipo = IPv4 option 31, opp = IP protocol 248) ---- */

#define XVS_UOA_OPT_CODE 31
#define XVS_UOA_OPT_LEN_V4 8
#define XVS_UOA_OPT_LEN_V6 20
#define XVS_UOA_PROTO_OPP 248
#define XVS_UOA_FLOWS_DEFAULT 65536

#define XVS_UOA_COUNTERS(X)                                                                        \
    X(ipo_seen, "IPv4 datagram with the UOA IP option: flow recorded (option left in place)")     \
    X(opp_stripped, "protocol-248 (opp) datagram: flow recorded, opp header removed, now UDP")    \
    X(opp_strip_failed, "opp datagram whose header could not be removed: dropped by the kernel") \
    X(malformed, "UOA datagram with a bad option or header: passed untouched")                     \
    X(other, "ingress packet without UOA: untouched")                                              \
    X(recv_rewritten, "recvfrom()/recvmsg() source shown as the UOA client")                       \
    X(send_rewritten, "sendto()/sendmsg() to a UOA client sent to its director address instead") \
    X(family_mismatch, "IPv6 client or director on an IPv4 socket: address left unchanged")

enum xvs_uoa_counter {
#define XVS_UOA_COUNTER_ENUM(name, help) XVS_UOA_##name,
    XVS_UOA_COUNTERS(XVS_UOA_COUNTER_ENUM)
#undef XVS_UOA_COUNTER_ENUM
        XVS_UOA_COUNTER_MAX
};

/* A UDP flow end as the real server's socket sees it: the peer address and port, and the
 * socket's own (local) port. xvs_uoa_fwd: key peer = the director's local address and port
 * (the datagram's source), value = the client. xvs_uoa_rev: key peer = the client, value = the
 * director's address and port. Ports in network order. */
struct xvs_uoa_key {
    unsigned int peer[4];
    unsigned short peer_port;
    unsigned short local_port;
};

struct xvs_uoa_addr {
    unsigned int addr[4];
    unsigned short port;
    unsigned char family; /* 4 or 6: the family of the address (a v4 one is v4-mapped) */
    unsigned char pad;
};

#endif
