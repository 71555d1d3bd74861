// PROXY protocol v1/v2 builders, strict parser and sequence-shift maps. Formats follow the
// HAProxy proxy-protocol spec as restated in reference/wire-formats.md; the builders write
// nothing unless the whole header fits.
#include "net/proxy_protocol.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "net/byteorder.h"
#include "net/headers.h"
#include "net/tcp_options.h"
#include "net/tcp_seq.h"

namespace xvs::net {

namespace {

// Appends the decimal form of v (no leading zeros); returns the new end.
char* put_decimal(char* p, unsigned v) {
    char digits[10];
    int n = 0;
    do {
        digits[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) *p++ = digits[--n];
    return p;
}

// Appends a wire-order IPv4 address as a dotted quad.
char* put_ipv4(char* p, uint32_t addr_be) {
    const auto* b = reinterpret_cast<const uint8_t*>(&addr_be);
    for (int i = 0; i < 4; ++i) {
        if (i) *p++ = '.';
        p = put_decimal(p, b[i]);
    }
    return p;
}

// A v1 port: 1-5 decimal digits, no leading zero unless it is "0", at most 65535.
bool parse_port(std::string_view s, uint16_t* port_be) {
    if (s.empty() || s.size() > 5 || (s.size() > 1 && s[0] == '0')) return false;
    unsigned v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + unsigned(c - '0');
    }
    if (v > 65535) return false;
    *port_be = hton16(static_cast<uint16_t>(v));
    return true;
}

// inet_pton needs a NUL-terminated string; tokens are bounded by the 107-byte line.
bool parse_addr(std::string_view s, int af, uint8_t* out) {
    char buf[kPpV1MaxLen + 1];
    if (s.empty() || s.size() >= sizeof(buf)) return false;
    std::memcpy(buf, s.data(), s.size());
    buf[s.size()] = '\0';
    return inet_pton(af, buf, out) == 1;
}

std::optional<PpParsed> parse_v1(std::span<const uint8_t> in) {
    // The line ends at the first CRLF, which must come within kPpV1MaxLen bytes; a lone CR or
    // LF before it is malformed.
    const size_t limit = std::min(in.size(), kPpV1MaxLen);
    size_t eol = 0;
    for (;; ++eol) {
        if (eol + 1 >= limit) return std::nullopt;  // no CRLF (yet, or ever)
        if (in[eol] == '\n') return std::nullopt;
        if (in[eol] == '\r') {
            if (in[eol + 1] != '\n') return std::nullopt;
            break;
        }
    }
    std::string_view line(reinterpret_cast<const char*>(in.data()), eol);

    PpParsed parsed;
    parsed.version = 1;
    parsed.header_len = eol + 2;
    // UNKNOWN: the rest of the line, whatever it holds, is to be ignored.
    if (line == "PROXY UNKNOWN" || line.starts_with("PROXY UNKNOWN ")) return parsed;

    // Split on single spaces; an empty token means a doubled, leading or trailing space.
    std::string_view tokens[6];
    size_t count = 0;
    for (size_t start = 0;;) {
        size_t sp = line.find(' ', start);
        std::string_view token = line.substr(start, sp == line.npos ? line.npos : sp - start);
        if (token.empty() || count == std::size(tokens)) return std::nullopt;
        tokens[count++] = token;
        if (sp == line.npos) break;
        start = sp + 1;
    }
    if (count < 2 || tokens[0] != "PROXY") return std::nullopt;

    int af;
    if (tokens[1] == "TCP4") {
        af = AF_INET;
        parsed.family = PpFamily::Inet;
    } else if (tokens[1] == "TCP6") {
        af = AF_INET6;
        parsed.family = PpFamily::Inet6;
    } else {
        return std::nullopt;
    }
    if (count != 6) return std::nullopt;
    parsed.transport = kIpProtoTcp;
    if (!parse_addr(tokens[2], af, parsed.src_addr.data()) ||
        !parse_addr(tokens[3], af, parsed.dst_addr.data()) ||
        !parse_port(tokens[4], &parsed.sport_be) || !parse_port(tokens[5], &parsed.dport_be)) {
        return std::nullopt;
    }
    return parsed;
}

std::optional<PpParsed> parse_v2(std::span<const uint8_t> in) {
    if (in.size() < kPpV2FixedLen) return std::nullopt;
    const uint8_t ver_cmd = in[12];
    const uint8_t fam = in[13];
    const size_t len = load_be16(&in[14]);
    if (ver_cmd != kPpV2VerCmdLocal && ver_cmd != kPpV2VerCmdProxy) return std::nullopt;
    if (in.size() < kPpV2FixedLen + len) return std::nullopt;

    PpParsed parsed;
    parsed.version = 2;
    parsed.local = ver_cmd == kPpV2VerCmdLocal;
    parsed.header_len = kPpV2FixedLen + len;

    size_t addr_len;
    switch (fam) {
        case 0x00:  // AF_UNSPEC, UNSPEC transport
            addr_len = 0;
            break;
        case kPpV2FamTcp4:
        case kPpV2FamUdp4:
            addr_len = kPpV2AddrLenInet;
            break;
        case kPpV2FamTcp6:
        case kPpV2FamUdp6:
            addr_len = kPpV2AddrLenInet6;
            break;
        default:  // AF_UNIX, unknown families and transports
            return std::nullopt;
    }
    if (len < addr_len) return std::nullopt;

    // TLVs {type u8, len be16, value} must tile what follows the addresses exactly.
    parsed.tlv_offset = kPpV2FixedLen + addr_len;
    parsed.tlv_len = len - addr_len;
    for (size_t at = parsed.tlv_offset; at < parsed.header_len;) {
        if (parsed.header_len - at < 3) return std::nullopt;
        const size_t value_len = load_be16(&in[at + 1]);
        if (parsed.header_len - at - 3 < value_len) return std::nullopt;
        at += 3 + value_len;
    }

    // LOCAL: the receiver must ignore the address block, so report none.
    if (parsed.local || addr_len == 0) return parsed;

    const uint8_t* a = &in[kPpV2FixedLen];
    const size_t alen = addr_len == kPpV2AddrLenInet ? 4 : 16;
    parsed.family = alen == 4 ? PpFamily::Inet : PpFamily::Inet6;
    parsed.transport = (fam & 0x0f) == 0x01 ? kIpProtoTcp : kIpProtoUdp;
    std::memcpy(parsed.src_addr.data(), a, alen);
    std::memcpy(parsed.dst_addr.data(), a + alen, alen);
    std::memcpy(&parsed.sport_be, a + 2 * alen, 2);
    std::memcpy(&parsed.dport_be, a + 2 * alen + 2, 2);
    return parsed;
}

}  // namespace

size_t pp_v1_build(uint8_t* out, size_t cap, uint32_t src_be, uint32_t dst_be, uint16_t sport_be,
                   uint16_t dport_be) noexcept {
    char line[kPpV1Tcp4MaxLen];
    char* p = line;
    constexpr std::string_view kPrefix = "PROXY TCP4 ";
    p = std::copy(kPrefix.begin(), kPrefix.end(), p);
    p = put_ipv4(p, src_be);
    *p++ = ' ';
    p = put_ipv4(p, dst_be);
    *p++ = ' ';
    p = put_decimal(p, ntoh16(sport_be));
    *p++ = ' ';
    p = put_decimal(p, ntoh16(dport_be));
    *p++ = '\r';
    *p++ = '\n';
    const auto len = static_cast<size_t>(p - line);
    if (len > cap) return 0;
    std::memcpy(out, line, len);
    return len;
}

namespace {

// "PROXY TCP6 <src> <dst> <sport> <dport>\r\n" into line (kPpV1MaxLen bytes); its length, or
// 0 if it would not fit (it always does: RFC 5952 text is at most 39 characters).
size_t v1_tcp6_line(char* line, const InetAddr& src, const InetAddr& dst, uint16_t sport_be,
                    uint16_t dport_be) {
    char a[INET6_ADDRSTRLEN];
    char b[INET6_ADDRSTRLEN];
    if (!inet_ntop(AF_INET6, src.b, a, sizeof a) || !inet_ntop(AF_INET6, dst.b, b, sizeof b))
        return 0;
    const std::string_view sa(a), sb(b);
    constexpr std::string_view kPrefix = "PROXY TCP6 ";
    // Prefix, two addresses, four separators and CRLF, two ports of at most 5 digits.
    if (kPrefix.size() + sa.size() + sb.size() + 5 + 10 > kPpV1MaxLen) return 0;
    char* p = line;
    p = std::copy(kPrefix.begin(), kPrefix.end(), p);
    p = std::copy(sa.begin(), sa.end(), p);
    *p++ = ' ';
    p = std::copy(sb.begin(), sb.end(), p);
    *p++ = ' ';
    p = put_decimal(p, ntoh16(sport_be));
    *p++ = ' ';
    p = put_decimal(p, ntoh16(dport_be));
    *p++ = '\r';
    *p++ = '\n';
    return static_cast<size_t>(p - line);
}

}  // namespace

size_t pp_v1_build(uint8_t* out, size_t cap, const InetAddr& src, const InetAddr& dst,
                   uint16_t sport_be, uint16_t dport_be) noexcept {
    if (src.is_v4() != dst.is_v4()) return 0;
    if (src.is_v4()) return pp_v1_build(out, cap, src.v4_be(), dst.v4_be(), sport_be, dport_be);
    char line[kPpV1MaxLen];
    const size_t len = v1_tcp6_line(line, src, dst, sport_be, dport_be);
    if (len == 0 || len > cap) return 0;
    std::memcpy(out, line, len);
    return len;
}

size_t pp_v1_len(const InetAddr& src, const InetAddr& dst, uint16_t sport_be,
                 uint16_t dport_be) noexcept {
    uint8_t line[kPpV1MaxLen];
    return pp_v1_build(line, sizeof line, src, dst, sport_be, dport_be);
}

size_t pp_v2_build(uint8_t* out, size_t cap, uint8_t transport, const InetAddr& src,
                   const InetAddr& dst, uint16_t sport_be, uint16_t dport_be) noexcept {
    if (src.is_v4() != dst.is_v4()) return 0;
    if (src.is_v4())
        return pp_v2_build(out, cap, transport, src.v4_be(), dst.v4_be(), sport_be, dport_be);
    uint8_t fam;
    if (transport == kIpProtoTcp) {
        fam = kPpV2FamTcp6;
    } else if (transport == kIpProtoUdp) {
        fam = kPpV2FamUdp6;
    } else {
        return 0;
    }
    if (cap < kPpV2Inet6Len) return 0;
    std::memcpy(out, kPpV2Signature.data(), kPpV2Signature.size());
    out[12] = kPpV2VerCmdProxy;
    out[13] = fam;
    store_be16(&out[14], kPpV2AddrLenInet6);
    std::memcpy(&out[16], src.b, 16);
    std::memcpy(&out[32], dst.b, 16);
    std::memcpy(&out[48], &sport_be, 2);
    std::memcpy(&out[50], &dport_be, 2);
    return kPpV2Inet6Len;
}

size_t pp_v2_build(uint8_t* out, size_t cap, uint8_t transport, uint32_t src_be, uint32_t dst_be,
                   uint16_t sport_be, uint16_t dport_be) noexcept {
    uint8_t fam;
    if (transport == kIpProtoTcp) {
        fam = kPpV2FamTcp4;
    } else if (transport == kIpProtoUdp) {
        fam = kPpV2FamUdp4;
    } else {
        return 0;
    }
    if (cap < kPpV2Inet4Len) return 0;
    std::memcpy(out, kPpV2Signature.data(), kPpV2Signature.size());
    out[12] = kPpV2VerCmdProxy;
    out[13] = fam;
    store_be16(&out[14], kPpV2AddrLenInet);
    // Addresses and ports are already in wire order: copy them as they are.
    std::memcpy(&out[16], &src_be, 4);
    std::memcpy(&out[20], &dst_be, 4);
    std::memcpy(&out[24], &sport_be, 2);
    std::memcpy(&out[26], &dport_be, 2);
    return kPpV2Inet4Len;
}

uint32_t PpParsed::src_v4_be() const noexcept {
    uint32_t v;
    std::memcpy(&v, src_addr.data(), 4);
    return v;
}

uint32_t PpParsed::dst_v4_be() const noexcept {
    uint32_t v;
    std::memcpy(&v, dst_addr.data(), 4);
    return v;
}

InetAddr PpParsed::src() const noexcept {
    return family == PpFamily::Inet6 ? InetAddr::v6(src_addr.data()) : InetAddr::v4(src_v4_be());
}

InetAddr PpParsed::dst() const noexcept {
    return family == PpFamily::Inet6 ? InetAddr::v6(dst_addr.data()) : InetAddr::v4(dst_v4_be());
}

std::optional<PpParsed> pp_parse(std::span<const uint8_t> in) noexcept {
    if (in.size() >= kPpV2Signature.size() &&
        std::equal(kPpV2Signature.begin(), kPpV2Signature.end(), in.begin())) {
        return parse_v2(in);
    }
    return parse_v1(in);
}

uint32_t seq_client_to_rs(uint32_t seq, PpSeqShift shift) noexcept {
    return seq_ge(seq, shift.insert_seq) ? seq + shift.delta : seq;
}

uint32_t ack_rs_to_client(uint32_t ack, PpSeqShift shift) noexcept {
    if (seq_lt(ack, shift.insert_seq)) return ack;
    if (seq_lt(ack, shift.insert_seq + shift.delta)) return shift.insert_seq;
    return ack - shift.delta;
}

size_t pp_sack_rs_to_client(std::span<uint8_t> opts, PpSeqShift shift, uint16_t* csum) noexcept {
    return tcp_sack_blocks_unshift(opts, shift.insert_seq, shift.delta, csum);
}

}  // namespace xvs::net
