// QUIC invariant header parsing for connection-ID hashing (net/quic.h; RFC 8999).
#include "net/quic.h"

namespace xvs::net {

namespace {

constexpr uint8_t kHeaderFormLong = 0x80;  // RFC 8999 section 5.1
constexpr uint8_t kFixedBit = 0x40;        // RFC 9000 section 17.3.1 (short header, v1)
constexpr size_t kLongDcidLenAt = 5;       // first byte, 32-bit version, then the length

}  // namespace

QuicCid quic_dcid(const uint8_t* data, size_t len, uint8_t short_cid_len) {
    if (len == 0) return {};
    if (short_cid_len > kQuicMaxCidLen) short_cid_len = kQuicMaxCidLen;
    if ((data[0] & kHeaderFormLong) != 0) {
        if (len <= kLongDcidLenAt) return {};
        const bool version_negotiation =
            data[1] == 0 && data[2] == 0 && data[3] == 0 && data[4] == 0;
        const uint8_t dcid_len = data[kLongDcidLenAt];
        if (version_negotiation || dcid_len == 0 || dcid_len > kQuicMaxCidLen ||
            len < kLongDcidLenAt + 1 + dcid_len)
            return {};
        const uint8_t used =
            short_cid_len != 0 && dcid_len > short_cid_len ? short_cid_len : dcid_len;
        return QuicCid{data + kLongDcidLenAt + 1, used};
    }
    if (short_cid_len == 0 || (data[0] & kFixedBit) == 0 || len < size_t{1} + short_cid_len)
        return {};
    return QuicCid{data + 1, short_cid_len};
}

uint64_t quic_cid_hash(const QuicCid& cid, uint64_t seed) {
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    for (uint8_t i = 0; i < cid.len; ++i) {
        h ^= cid.data[i];
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

}  // namespace xvs::net
