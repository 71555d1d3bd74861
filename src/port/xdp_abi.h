/* The contract between xvsd and its XDP program (port/bpf/xvs_xdp.bpf.c), for net_af_xdp
 * ports: the map of addresses and what each value means. C, so clang -target bpf reads it. */
#ifndef XVS_PORT_XDP_ABI_H
#define XVS_PORT_XDP_ABI_H

#define XVS_XDP_MAX_ADDRS 4096

/* xvs_xdp_addrs: key = the 16 bytes of a net::InetAddr (IPv4 mapped: ::ffff:a.b.c.d),
 * value = one of these. */
#define XVS_XDP_OWNER_XVS 1    /* xvs's: director address, VIP, local address -> xsks_map */
#define XVS_XDP_OWNER_KERNEL 2 /* the kernel's own address -> XDP_PASS */

#endif
