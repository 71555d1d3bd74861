// PROXY protocol headers (HAProxy proxy-protocol spec, v1 text and v2 binary): builders for the
// FULLNAT path, a strict parser for tests and e2e helpers, and the sequence-space shift that
// inserting a header into a client's TCP stream causes. Nothing here allocates or throws.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "net/addr.h"

namespace xvs::net {

// v1: "PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n" is 56 bytes; the spec caps
// any v1 line (TCP6 included) at 107 bytes including CRLF.
inline constexpr size_t kPpV1MaxLen = 107;
inline constexpr size_t kPpV1Tcp4MaxLen = 56;
// "PROXY TCP6 " + two 39-character addresses + two 5-digit ports + spaces + CRLF.
inline constexpr size_t kPpV1Tcp6MaxLen = 104;
// v2: 12-byte signature, version/command, family/transport, be16 length, then the addresses.
inline constexpr std::array<uint8_t, 12> kPpV2Signature = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                                           0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
inline constexpr size_t kPpV2FixedLen = 16;
inline constexpr size_t kPpV2AddrLenInet = 12;   // src, dst (4 each), sport, dport
inline constexpr size_t kPpV2AddrLenInet6 = 36;  // src, dst (16 each), sport, dport
inline constexpr size_t kPpV2Inet4Len = kPpV2FixedLen + kPpV2AddrLenInet;   // 28
inline constexpr size_t kPpV2Inet6Len = kPpV2FixedLen + kPpV2AddrLenInet6;  // 52
inline constexpr uint8_t kPpV2VerCmdLocal = 0x20;
inline constexpr uint8_t kPpV2VerCmdProxy = 0x21;
inline constexpr uint8_t kPpV2FamTcp4 = 0x11;
inline constexpr uint8_t kPpV2FamUdp4 = 0x12;
inline constexpr uint8_t kPpV2FamTcp6 = 0x21;
inline constexpr uint8_t kPpV2FamUdp6 = 0x22;

// Writes "PROXY TCP4 <src> <dst> <sport> <dport>\r\n" (v1 has no UDP form). Addresses and ports
// are in network order. Returns the length written, or 0 (nothing written) if cap is too small;
// cap >= kPpV1Tcp4MaxLen always suffices.
size_t pp_v1_build(uint8_t* out, size_t cap, uint32_t src_be, uint32_t dst_be, uint16_t sport_be,
                   uint16_t dport_be) noexcept;

// Writes a v2 PROXY header for an IPv4 flow: signature, 0x21, 0x11 (TCP) or 0x12 (UDP), length
// 12, src, dst, sport, dport; no TLVs. transport is kIpProtoTcp or kIpProtoUdp. Returns 28, or
// 0 (nothing written) if cap < 28 or the transport is neither.
size_t pp_v2_build(uint8_t* out, size_t cap, uint8_t transport, uint32_t src_be, uint32_t dst_be,
                   uint16_t sport_be, uint16_t dport_be) noexcept;

// Either family, picked from the addresses (client and VIP, so FNAT64's IPv6 client gets the
// IPv6 form): v1 "PROXY TCP4 ..." or "PROXY TCP6 <src> <dst> <sport> <dport>\r\n" with the
// addresses in RFC 5952 form; v2 0x11/0x12 with 12 address bytes, or 0x21 (TCP over IPv6) /
// 0x22 (UDP over IPv6) with 36: src (16), dst (16), sport, dport. Ports in network order.
// Returns the length written (v2: 28 or 52), or 0 (nothing written) if cap is too small or
// src and dst are of different families (the spec has no form for that). cap >=
// kPpV1Tcp6MaxLen / kPpV2Inet6Len always suffices.
size_t pp_v1_build(uint8_t* out, size_t cap, const InetAddr& src, const InetAddr& dst,
                   uint16_t sport_be, uint16_t dport_be) noexcept;
size_t pp_v2_build(uint8_t* out, size_t cap, uint8_t transport, const InetAddr& src,
                   const InetAddr& dst, uint16_t sport_be, uint16_t dport_be) noexcept;
// Bytes the header takes for this flow: v1 the exact line length (0 for a family mix), v2 28
// or 52. For sequence shifts, decided before the header is written.
size_t pp_v1_len(const InetAddr& src, const InetAddr& dst, uint16_t sport_be,
                 uint16_t dport_be) noexcept;
inline size_t pp_v2_len(const InetAddr& src) {
    return src.is_v4() ? kPpV2Inet4Len : kPpV2Inet6Len;
}

enum class PpFamily : uint8_t { Unspec, Inet, Inet6 };

// What a header says. For v1 UNKNOWN, v2 LOCAL and v2 AF_UNSPEC, family is Unspec and the
// address fields are zero: the receiver uses the connection's own endpoints.
struct PpParsed {
    uint8_t version = 0;  // 1 or 2
    bool local = false;   // v2 command LOCAL (health checks from the proxy itself)
    PpFamily family = PpFamily::Unspec;
    uint8_t transport = 0;  // kIpProtoTcp, kIpProtoUdp, or 0 when unspecified
    // Network order. IPv4 uses bytes 0..3 (src_v4_be() reads them as a wire-order uint32).
    std::array<uint8_t, 16> src_addr{};
    std::array<uint8_t, 16> dst_addr{};
    uint16_t sport_be = 0;
    uint16_t dport_be = 0;
    size_t header_len = 0;  // bytes the header occupies; the payload starts there
    size_t tlv_offset = 0;  // v2: TLVs at [tlv_offset, header_len), each checked to fit exactly
    size_t tlv_len = 0;

    uint32_t src_v4_be() const noexcept;
    uint32_t dst_v4_be() const noexcept;
    // The addresses as InetAddr (Inet or Inet6; meaningless for Unspec).
    InetAddr src() const noexcept;
    InetAddr dst() const noexcept;
};

// Parses one header at the start of `in`. Returns nullopt when the bytes are not a complete,
// well-formed header: v1 must be "PROXY " TCP4|TCP6|UNKNOWN with single spaces, addresses of
// the stated family (inet_pton rules: dotted quad, no leading zeros), decimal ports 0..65535
// without leading zeros or signs, and CRLF within 107 bytes; v2 needs the signature, version 2,
// command LOCAL or PROXY, a known family/transport byte (AF_UNIX is refused as unsupported), a
// length that covers the address block and is all present in `in`, and TLVs that tile the rest
// exactly. Truncated input is nullopt too; callers that stream should wait for more bytes.
std::optional<PpParsed> pp_parse(std::span<const uint8_t> in) noexcept;

// Sequence-space shift caused by inserting a PROXY header of `delta` bytes into the client's
// byte stream at client sequence `insert_seq` (the first payload byte: client ISN + 1).
// From the RS's point of view the client sent header + payload, so:
//   client->RS seq  : bytes at or after insert_seq move up by delta (seq_client_to_rs);
//   RS->client ack  : moves down by delta, never below insert_seq (ack_rs_to_client);
//   RS->client SACK : edges map like acks (pp_sack_rs_to_client).
// RS sequence numbers (RS->client seq, client->RS ack and SACK) are untouched. The worker
// applies delta from the connection's creation on (the header length depends only on the
// 4-tuple), before the header itself reached the RS; delta 0 makes all three maps the identity.
// The segment that carries the header keeps seq = insert_seq: the header is its first bytes.
struct PpSeqShift {
    uint32_t insert_seq = 0;
    uint32_t delta = 0;
};

// seq + delta for seq at or after insert_seq (mod 2^32); earlier seqs (the SYN) are unchanged.
uint32_t seq_client_to_rs(uint32_t seq, PpSeqShift shift) noexcept;
// ack - delta for acks at or after insert_seq + delta; an ack inside the header (it covers only
// part of it) maps to insert_seq, as the client has had none of its own payload acknowledged;
// acks before insert_seq (the SYN-ACK's ISN + 1 is equal to it) are unchanged.
uint32_t ack_rs_to_client(uint32_t ack, PpSeqShift shift) noexcept;
// Rewrites the SACK blocks of an RS->client segment's options area (net/tcp_options.h) with the
// ack_rs_to_client map, updating *csum incrementally unless null. A block inside the header
// collapses to an empty block at insert_seq, which receivers ignore. Returns blocks visited.
size_t pp_sack_rs_to_client(std::span<uint8_t> opts, PpSeqShift shift, uint16_t* csum) noexcept;

}  // namespace xvs::net
