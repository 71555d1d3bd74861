// xvsd's XDP program (port/bpf/xvs_xdp.bpf.c, embedded in xvs_port) loaded for
// BPF_PROG_TEST_RUN, with its verdict for frames bound to xvs while no AF_XDP socket is bound
// (xvs_no_socket, the program's one .rodata value) set to `no_socket`: with an empty xsks_map
// a test tells "to xvs" from "to the kernel" (XDP_PASS) by it. Shared by the port unit tests.
#pragma once

#include <bpf/libbpf.h>

#include <cstdint>
#include <cstring>
#include <string>

extern "C" {
extern const unsigned char xvs_port_xdp_bpf_object[];
extern const size_t xvs_port_xdp_bpf_object_size;
}

namespace xvs::test {

// The loaded object, or nullptr with *why set. The caller closes it (bpf_object__close).
inline bpf_object* load_xvs_xdp(uint64_t no_socket, std::string* why) {
    bpf_object* obj =
        bpf_object__open_mem(xvs_port_xdp_bpf_object, xvs_port_xdp_bpf_object_size, nullptr);
    if (!obj) {
        *why = "opening the embedded object failed";
        return nullptr;
    }
    bpf_map* rodata = nullptr;
    bpf_map* m;
    bpf_object__for_each_map(m, obj) if (std::strstr(bpf_map__name(m), ".rodata")) rodata = m;
    if (!rodata)
        *why = "no .rodata (xvs_no_socket)";
    else if (bpf_map__set_initial_value(rodata, &no_socket, sizeof no_socket) != 0)
        *why = ".rodata is not xvs_no_socket alone";
    else if (bpf_object__load(obj) != 0)
        *why = "loading the XDP program failed";
    else
        return obj;
    bpf_object__close(obj);
    return nullptr;
}

}  // namespace xvs::test
