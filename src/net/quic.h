// QUIC connection IDs as a load balancer can read them without keys: the version-independent
// invariants of RFC 8999 (section 5). Long header: the first byte's 0x80 bit set, a 32-bit
// version, the Destination Connection ID length in one byte, the DCID. Short header: 0x80
// clear, the DCID right after the first byte, its length on no wire: only the server that
// chose it knows it, so the caller passes the length its servers use. Pure, allocation-free.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xvs::net {

// QUIC v1 and v2 cap a connection ID at 20 bytes (RFC 9000 section 17.2, RFC 9369); a longer
// one belongs to no version xvs knows and is not taken as a connection ID.
inline constexpr uint8_t kQuicMaxCidLen = 20;

struct QuicCid {
    const uint8_t* data = nullptr;  // into the datagram; nullptr: no connection ID found
    uint8_t len = 0;
};

// The DCID bytes of the QUIC packet that starts a UDP payload data[0..len). short_cid_len:
// the length of the connection IDs the servers choose (1..20), 0 = unknown. With it set, a
// long header's DCID of at least that length is cut to it, so a client's Initial and the
// short headers after it hash alike when the server keeps the DCID it was sent (the first
// short_cid_len bytes of it). None (len 0) for: no payload; a long header with version 0
// (Version Negotiation: servers send it, clients do not), a zero-length or over-long DCID, or
// one cut by the end of the data; a short header without the fixed bit 0x40 (RFC 9000
// section 17.3.1), or when short_cid_len is 0, or longer than the data.
QuicCid quic_dcid(const uint8_t* data, size_t len, uint8_t short_cid_len);

// A 64-bit hash of a connection ID (FNV-1a over the bytes with the seed folded in, then a
// 64-bit finaliser), for schedulers that hash it in place of the client address.
uint64_t quic_cid_hash(const QuicCid& cid, uint64_t seed);

}  // namespace xvs::net
