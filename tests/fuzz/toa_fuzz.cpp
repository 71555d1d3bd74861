// libFuzzer target for net/toa: arbitrary bytes as an options area (toa_plan) and as an IPv4/TCP
// packet (toa_insert_ipv4) in an exactly sized buffer, so ASan flags any access past capacity.
// Whenever TOA is inserted the result must walk cleanly, start with our TOA, hold no other
// kind-254 option, keep the payload, and carry checksums equal to a full recompute.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "net/checksum.h"
#include "net/toa.h"

namespace {

using namespace xvs::net;

// Not assert(): fuzz builds may define NDEBUG, and a silent pass is worse than no fuzzer.
#define FUZZ_CHECK(cond)  \
    do {                  \
        if (!(cond)) {    \
            std::abort(); \
        }                 \
    } while (0)

constexpr uint32_t kAddr = 0x070aa8c0;  // 192.168.10.7 in wire order
constexpr uint16_t kPort = 0x409c;      // 40000 in wire order
constexpr uint32_t kSaddr = 0x0100000a, kDaddr = 0x0200000a;

// A clean walk with exactly one kind-254 option, ours, first.
void check_new_options(const uint8_t* opts, size_t len) {
    FUZZ_CHECK(len % 4 == 0 && len >= kTcpOptLenToaV4 && len <= kTcpOptionsMaxLen);
    FUZZ_CHECK(opts[0] == kTcpOptToa && opts[1] == kTcpOptLenToaV4);
    FUZZ_CHECK(std::memcmp(opts + 2, &kPort, 2) == 0 && std::memcmp(opts + 4, &kAddr, 4) == 0);
    TcpOptionWalker walker({opts, len});
    TcpOption opt;
    size_t toas = 0;
    while (walker.next(opt)) toas += opt.kind == kTcpOptToa;
    FUZZ_CHECK(!walker.malformed());
    FUZZ_CHECK(toas == 1);
    const auto found = toa_find({opts, len});
    FUZZ_CHECK(found && found->first == kAddr && found->second == kPort);
}

void fuzz_plan(const uint8_t* data, size_t size, bool allow) {
    std::vector<uint8_t> opts(data, data + size);
    const ToaPlan plan = toa_plan(opts, kAddr, kPort, allow);
    if (!toa_inserted(plan.outcome)) {
        FUZZ_CHECK(plan.new_len == 0);
        return;
    }
    check_new_options(plan.new_opts, plan.new_len);
    const auto before = parse_tcp_options(opts);
    const auto after = parse_tcp_options({plan.new_opts, plan.new_len});
    FUZZ_CHECK(after.mss == before.mss && after.wscale == before.wscale);
    FUZZ_CHECK(after.sack_perm == before.sack_perm && after.timestamp == before.timestamp);
    if (plan.outcome != ToaOutcome::InsertedPrunedSack) {
        FUZZ_CHECK(after.sack_blocks == before.sack_blocks);
    }
    if (!allow) FUZZ_CHECK(plan.outcome != ToaOutcome::InsertedPrunedSack);
}

// Input: [ctl][rest]. ctl picks capacity slack and SACK pruning; rest is taken as a packet from
// the IPv4 header on. Half of the runs repair lengths and checksums first, so the insertion path
// (not only validation) is reached and checksum verification after it is meaningful.
void fuzz_packet(const uint8_t* data, size_t size) {
    if (size < 2) return;
    const uint8_t ctl = data[0];
    const bool allow = ctl & 1;
    const bool repair = ctl & 2;
    const size_t slack = (ctl >> 2) % 48;
    const size_t pkt_len = size - 1;
    std::vector<uint8_t> buf(pkt_len + slack);  // exactly the capacity, for ASan
    std::memcpy(buf.data(), data + 1, pkt_len);
    uint8_t* ip = buf.data();

    bool checksums_valid = false;
    if (repair && pkt_len >= 40) {
        // Turn the bytes into a plausible IPv4/TCP segment; keep doff and options as fuzzed
        // as long as they fit in the packet.
        ip[0] = 0x45;
        ip[6] &= 0x40;  // DF may stay, no MF and no offset
        ip[7] = 0;
        ip[9] = kIpProtoTcp;
        store_be16(ip + 2, static_cast<uint16_t>(pkt_len > 0xffff ? 0xffff : pkt_len));
        std::memcpy(ip + 12, &kSaddr, 4);
        std::memcpy(ip + 16, &kDaddr, 4);
        uint8_t* tcp = ip + 20;
        const size_t tcp_len = load_be16(ip + 2) - 20;
        if ((size_t(tcp[12] >> 4) * 4) > tcp_len || (tcp[12] >> 4) < 5) {
            tcp[12] = static_cast<uint8_t>(5 << 4 | (tcp[12] & 0x0f));
        }
        ip[10] = ip[11] = 0;
        std::vector<uint8_t> copy(ip, ip + 20);
        const uint16_t ip_csum = ipv4_header_checksum(reinterpret_cast<Ipv4Hdr*>(copy.data()));
        std::memcpy(ip + 10, &ip_csum, 2);
        tcp[16] = tcp[17] = 0;
        std::vector<uint8_t> seg(tcp, tcp + tcp_len);
        const uint16_t tcp_csum =
            ipv4_l4_checksum(kSaddr, kDaddr, kIpProtoTcp, seg.data(), seg.size());
        std::memcpy(tcp + 16, &tcp_csum, 2);
        checksums_valid = true;
    }

    const std::vector<uint8_t> before = buf;
    // Payload as it was, when the packet is a segment at all.
    std::vector<uint8_t> payload;
    if (pkt_len >= 20) {
        const size_t ihl = size_t(ip[0] & 0x0f) * 4;
        const size_t total = load_be16(ip + 2);
        if (ihl >= 20 && total <= pkt_len && total >= ihl + 20) {
            const size_t doff = size_t(ip[ihl + 12] >> 4) * 4;
            if (doff >= 20 && ihl + doff <= total) {
                payload.assign(ip + ihl + doff, ip + total);
            }
        }
    }

    const ToaResult r = toa_insert_ipv4(ip, pkt_len, buf.size(), kAddr, kPort, allow);
    if (!toa_inserted(r.outcome)) {
        FUZZ_CHECK(buf == before);
        FUZZ_CHECK(r.new_pkt_len == pkt_len);
        return;
    }
    if (!allow) FUZZ_CHECK(r.outcome != ToaOutcome::InsertedPrunedSack);
    FUZZ_CHECK(r.new_pkt_len <= buf.size());
    const size_t ihl = size_t(ip[0] & 0x0f) * 4;
    FUZZ_CHECK(load_be16(ip + 2) == r.new_pkt_len);
    const uint8_t* tcp = ip + ihl;
    const size_t doff = size_t(tcp[12] >> 4) * 4;
    FUZZ_CHECK(ihl + doff <= r.new_pkt_len);
    check_new_options(tcp + 20, doff - 20);
    FUZZ_CHECK(r.new_pkt_len - ihl - doff == payload.size());
    // std::equal, not memcmp: an empty payload's data() may be null (memcmp on null is UB).
    FUZZ_CHECK(std::equal(payload.begin(), payload.end(), tcp + doff));
    // Everything before the TCP options is unchanged except total length and IP checksum.
    FUZZ_CHECK(std::memcmp(ip + 4, before.data() + 4, 6) == 0);
    // Addresses, IPv4 options and the TCP header up to the data offset byte are contiguous.
    FUZZ_CHECK(std::memcmp(ip + 12, before.data() + 12, ihl) == 0);
    FUZZ_CHECK(std::memcmp(tcp + 13, before.data() + ihl + 13, 3) == 0);
    FUZZ_CHECK(std::memcmp(tcp + 18, before.data() + ihl + 18, 2) == 0);

    if (checksums_valid) {
        std::vector<uint8_t> copy(ip, ip + r.new_pkt_len);
        auto* hdr = reinterpret_cast<Ipv4Hdr*>(copy.data());
        FUZZ_CHECK(ipv4_header_checksum(hdr) == hdr->checksum);
        auto* th = reinterpret_cast<TcpHdr*>(copy.data() + ihl);
        const uint16_t stored = th->checksum;
        th->checksum = 0;
        FUZZ_CHECK(ipv4_l4_checksum(hdr->saddr, hdr->daddr, kIpProtoTcp, th, r.new_pkt_len - ihl) ==
                   stored);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz_plan(data, size, true);
    fuzz_plan(data, size, false);
    fuzz_packet(data, size);
    return 0;
}
