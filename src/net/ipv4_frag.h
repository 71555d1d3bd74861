// IPv4 fragmentation helpers (RFC 791 3.2): which header options every fragment carries, and
// how much payload a fragment of a given MTU holds. No DPDK; stack/fragment.cpp builds frames.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xvs::net {

// The options of a non-first fragment: those whose type has the copied flag (0x80); EOL and NOP
// (single bytes, not copied) are left out, a malformed option ends the scan. The result is
// zero-padded (EOL) to a multiple of 4 bytes; returns its length (<= len rounded up).
inline size_t ipv4_copied_options(const uint8_t* opts, size_t len, uint8_t* out) {
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        const uint8_t type = opts[i];
        if (type == 0) break;  // end of option list
        if (type == 1) {       // no operation
            ++i;
            continue;
        }
        if (i + 1 >= len || opts[i + 1] < 2 || i + opts[i + 1] > len) break;
        const uint8_t olen = opts[i + 1];
        if (type & 0x80)
            for (uint8_t k = 0; k < olen; ++k) out[n++] = opts[i + k];
        i += olen;
    }
    while (n % 4) out[n++] = 0;
    return n;
}

// Payload bytes of a non-last fragment with a header of hlen bytes on a link of mtu: the most
// that fits, rounded down to 8 (offsets count 8-byte units). 0 when not even 8 fit.
inline uint32_t ipv4_fragment_payload(uint32_t mtu, uint32_t hlen) {
    return mtu > hlen ? (mtu - hlen) & ~7u : 0;
}

}  // namespace xvs::net
