// A load-balanced connection: both tuples, its dest and local address, TCP state and timer.
// Lives in a per-worker preallocated pool; found through one or two hash entries (inbound
// tuple client->VIP, and the outbound tuple when the mode has one), each tagged with its direction.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lb/dest.h"
#include "lb/fwd_mode.h"
#include "lb/proto/tcp.h"
#include "lb/timer_wheel.h"
#include "net/addr.h"
#include "net/af.h"
#include "stack/nh_cache.h"

namespace xvs::lb {

struct Service;
struct LocalAddr;

// Where a TCP conn stands with reschedule_refused (lb/pipeline.cpp).
enum class ConnResched : uint8_t {
    None = 0,  // scheduled once; a refusal may be held back
    RstHeld,   // its RS refused the SYN and the client was not told: the SYN retransmission
               // finds this conn in CLOSE and is scheduled again
    Again,     // scheduled again after such a refusal: a refusal now reaches the client
};

// An IPv6 or NAT64 conn's four addresses: the second slot of its pair (Conn::wide).
struct ConnAddr6 {
    net::InetAddr c, v, l, d;  // client, VIP, local, dest
};
static_assert(sizeof(ConnAddr6) == 64);

// The hot part only: what every packet of every mode reads. Feature state lives in per-slot
// side arrays (ConnFeatSlot below, the SYN proxy's SpSlot) indexed by ConnTable::index_of.
// One 64-byte slot, one cache line, for an IPv4 conn: its addresses are 4 bytes each. A conn
// with any other address (IPv6, NAT64) is wide: it takes an aligned pair of slots, and the
// second holds its four addresses (ConnAddr6). ConnTable hands out both (alloc).
struct alignas(64) Conn {
    TimerNode timer;  // must stay first: timer callbacks cast back to Conn
    // The idle deadline, lazily re-armed (packets only move this stamp): 32-bit wrapping
    // milliseconds of the worker clock, read and written through expires()/set_expires().
    uint32_t expires_lo = 0;
    uint16_t flags = 0;  // kConn*
    uint8_t proto = 0;   // 0: a free slot
    TcpState state = TcpState::None;
    FwdMode mode = FwdMode::FullNat;  // bound at creation from the dest (kXmit[mode])
    // One byte, two users that never meet on one conn (each writes it at creation):
    union {
        // Persistence templates (proto == kProtoTemplate, lb/persist.h): the service's
        // protocol, for display (0 = a firewall-mark service's, shown as "IP").
        uint8_t tpl_proto = 0;
        // Every other conn.
        ConnResched resched;
    };
    stack::NhCache nh;  // next hop of each direction (stack/nh_cache.h)
    // Set by ConnTable::alloc for its whole life: the next slot holds the addresses.
    bool wide = false;
    // ConnTable's: the slot is handed out (alloc to release), whether or not proto is set yet.
    bool taken = false;
    // The change of this conn's addresses as checksums see it (RFC 1624), summed once by
    // set_addrs so that no packet reads and sums the old ones: inbound, client -> VIP
    // becoming local -> dest, the one's complement sum of ~caddr, ~vaddr, laddr and daddr
    // (folded, not complemented); outbound the reverse change (addr_sum_in/_out below).
    // FULLNAT's rewrite and NAT's (whose local address is the client's: the sum is then the
    // destination's change alone) add it. Of the addresses the rewrite writes: 4-byte for a
    // narrow conn, 16-byte for an IPv6 one (a NAT64 conn's translation does not use it).
    uint16_t addr_sum = 0;
    Dest* dest = nullptr;  // never null once created; the conn's service is its dest's
    // All addresses and ports in network order. The outbound tuple is daddr:dport ->
    // laddr_ip:lport: the local address for FULLNAT; NAT sets the client's, SNAT the WAN's.
    // The local address (FULLNAT LIP, SNAT WAN pool) object is cold, needed at creation and
    // expiry only: WorkerCtx::laddr_of, a per-slot side array.
    uint16_t cport = 0, vport = 0, lport = 0, dport = 0;
    // The addresses of a narrow conn (a wide one's IPv4 addresses too), read through caddr()
    // .. daddr() or caddr_as() .. daddr_as() and written by set_addrs() only. In a free
    // slot, ConnTable's free-list links.
    uint32_t caddr4 = 0, vaddr4 = 0, laddr4 = 0, daddr4 = 0;

    Conn() = default;
    // A wide conn's addresses are in the slot after it: a copy would lose them.
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;

    Service* svc() const { return dest->svc; }
    net::InetAddr caddr() const { return wide ? addr6().c : net::InetAddr::v4(caddr4); }
    net::InetAddr vaddr() const { return wide ? addr6().v : net::InetAddr::v4(vaddr4); }
    net::InetAddr laddr_ip() const { return wide ? addr6().l : net::InetAddr::v4(laddr4); }
    net::InetAddr daddr() const { return wide ? addr6().d : net::InetAddr::v4(daddr4); }
    // An address as an Af header holds it (Af::Addr), without a branch: for IPv4 the 4 bytes
    // (the caller knows the address is IPv4; a wide conn fills them too, set_addrs), for IPv6
    // the InetAddr of a wide conn (every conn an IPv6 packet finds is wide).
    template <class Af>
    const typename Af::Addr& caddr_as() const {
        return pick<Af>(caddr4, &ConnAddr6::c);
    }
    template <class Af>
    const typename Af::Addr& vaddr_as() const {
        return pick<Af>(vaddr4, &ConnAddr6::v);
    }
    template <class Af>
    const typename Af::Addr& laddr_as() const {
        return pick<Af>(laddr4, &ConnAddr6::l);
    }
    template <class Af>
    const typename Af::Addr& daddr_as() const {
        return pick<Af>(daddr4, &ConnAddr6::d);
    }
    // All four at once (creation, a synced conn, a persistence template). A narrow conn takes
    // IPv4 addresses only (needs_wide), and the unspecified address as 0.0.0.0. A wide conn
    // also keeps the 4-byte fields, which for its IPv4 addresses (NAT64's IPv4 side) hold
    // them as caddr_as<Af4>() .. daddr_as<Af4>() read them.
    void set_addrs(const net::InetAddr& c, const net::InetAddr& v, const net::InetAddr& l,
                   const net::InetAddr& d) {
        if (wide) addr6() = ConnAddr6{c, v, l, d};
        caddr4 = c.v4_be();
        vaddr4 = v.v4_be();
        laddr4 = l.v4_be();
        daddr4 = d.v4_be();
        if (wide && !d.is_v4()) {
            const uint32_t sum = net::Af6::addr_delta(c, l) + net::Af6::addr_delta(v, d);
            addr_sum = static_cast<uint16_t>(~net::csum_fold(sum));
        } else {
            // The same sum over 32-bit words (2^16 = 1 modulo 0xffff): as 16-bit halves it
            // took twice the instructions, on every new conn.
            uint64_t sum = uint64_t{~caddr4} + uint64_t{~vaddr4} + laddr4 + daddr4;
            sum = (sum & 0xffffffff) + (sum >> 32);  // fits 32 bits: at most 0xffffffff
            addr_sum = static_cast<uint16_t>(~net::csum_fold(static_cast<uint32_t>(sum)));
        }
    }
    // The address delta of an inbound rewrite (net::rewrite_both_by, rewrite_daddr_dport_by):
    // congruent to the one the header's old addresses give, and like it not 0 (for any
    // addresses but all-ones ones), so the checksums come out bit for bit the same.
    uint32_t addr_sum_in() const { return addr_sum; }
    // Outbound: minus addr_sum, as 2 x 0xffff - addr_sum. Congruent to ~addr_sum, but never
    // 0, as the sum from the header never is, so the checksums come out bit for bit as if
    // summed from the header (a 0 could turn a checksum of 0xffff into 0x0000).
    uint32_t addr_sum_out() const { return 0x1fffeu - addr_sum; }
    // Whether a conn with these addresses takes a pair of slots (any is not IPv4; the
    // unspecified address, a template's local one, fits either).
    static bool needs_wide(const net::InetAddr& c, const net::InetAddr& v, const net::InetAddr& l,
                           const net::InetAddr& d) {
        return !(c.is_v4() && v.is_v4() && (l.is_v4() || l.is_unspecified()) && d.is_v4());
    }

    // The deadline is exact from kDeadlinePastMs before now (a timer running late) to about
    // 48.9 days after it, which covers the longest timeout (kMaxTimeoutS).
    uint64_t expires(uint64_t now_ms) const {
        const uint32_t ahead = expires_lo - static_cast<uint32_t>(now_ms);
        if (ahead > ~kDeadlinePastMs) return now_ms - (~ahead + 1u);  // already past
        return now_ms + ahead;
    }
    void set_expires(uint64_t ms) { expires_lo = static_cast<uint32_t>(ms); }
    static constexpr uint32_t kDeadlinePastMs = 1u << 26;  // 18.6 hours

private:
    // The second slot of a wide conn's pair (ConnSlot below; defined after it).
    inline const ConnAddr6& addr6() const;
    inline ConnAddr6& addr6();
    template <class Af>
    const typename Af::Addr& pick(const uint32_t& narrow, net::InetAddr ConnAddr6::*in6) const {
        if constexpr (Af::family == 4)
            return narrow;
        else
            return addr6().*in6;
    }
};

// One slot of ConnTable's pool: a conn (or a free slot), or the second of a wide conn's pair.
// Conn is the first member, so a Conn in the pool and its slot are pointer-interconvertible.
union ConnSlot {
    Conn conn;
    ConnAddr6 addr6;
    ConnSlot() : conn() {}
};
static_assert(sizeof(ConnSlot) == 64);

inline const ConnAddr6& Conn::addr6() const {
    return (reinterpret_cast<const ConnSlot*>(this) + 1)->addr6;
}
inline ConnAddr6& Conn::addr6() { return (reinterpret_cast<ConnSlot*>(this) + 1)->addr6; }

// The longest timeout a conn carries (seconds): ipvsadm's 31 days, the config's limit too.
inline constexpr uint32_t kMaxTimeoutS = 2'678'400;
static_assert(uint64_t{kMaxTimeoutS} * 1000 < uint64_t{~Conn::kDeadlinePastMs},
              "a 32-bit deadline must hold the longest timeout");

// Per conn slot, beside the table (WorkerCtx::feat): TOA, PROXY protocol and UOA state.
struct ConnFeatSlot {
    uint32_t rs_isn = 0;      // host order: the real server's SYN-ACK sequence number
    uint32_t client_isn = 0;  // host order: the client's SYN sequence number (PROXY protocol)
    // PROXY protocol (FULLNAT only) and NatTun never meet on one conn.
    union {
        uint16_t pp_window = 0;  // network order: the header segment's window, for retransmission
        uint16_t nattun_mtu;     // NatTun: the tunnel's outer path MTU (0 = the port's), host order
    };
    uint8_t pp_len = 0;       // PROXY header length: TCP seq delta from conn creation on
    // TCP and UDP need different small counters; one byte serves both.
    union {
        uint8_t pp_rexmits = 0;  // TCP: header segment retransmissions so far (server speaks first)
        uint8_t uoa_left;        // UDP: client datagrams still to carry UOA; 0 = none
    };
};
static_assert(sizeof(ConnFeatSlot) == 12, "per-conn feature bytes (bench memory figure)");

inline constexpr uint8_t kConnToa = 1u << 0;          // insert TOA (service had toa on)
inline constexpr uint8_t kConnSynAckSeen = 1u << 1;   // RS SYN-ACK seen (TOA/PP: rs_isn set)
inline constexpr uint8_t kConnToaDone = 1u << 2;      // client acked RS data: no more TOA
inline constexpr uint8_t kConnPpV1 = 1u << 3;        // PROXY v1 header before client data
inline constexpr uint8_t kConnPpV2 = 1u << 4;        // PROXY v2 header (TCP stream or 1st datagram)
inline constexpr uint8_t kConnPpSent = 1u << 5;      // header sent (TCP: at least once; UDP: 1st datagram)
inline constexpr uint8_t kConnPpHdrSeg = 1u << 6;    // ... as its own segment (retransmitted by timer)
inline constexpr uint8_t kConnPpHdrAcked = 1u << 7;  // RS acked past client ISN + 1 (the header)
inline constexpr uint16_t kConnUoa = 1u << 10;       // UDP: ConnFeatSlot::uoa_left > 0
inline constexpr uint16_t kConnActive = 1u << 14;    // counted in dest active (else inactive)
inline constexpr uint16_t kConnUoaIpo = 1u << 15;    // UOA as IPv4 option 31 (else opp header)
// TCP only (UOA is UDP's): passive checking counted the conn as failed (lb/passive.h). No bit
// is free, so it shares kConnUoaIpo's, which no TCP conn carries.
inline constexpr uint16_t kConnRsFailed = 1u << 15;
static_assert(kConnRsFailed == kConnUoaIpo);
// SYN proxy (bits 8+): the conn was opened by a cookie-validated ACK; its seq/TS translation
// lives in the worker's per-slot SynProxySeq array (Conn has no room for 9 more bytes).
inline constexpr uint16_t kConnSynProxy = 1u << 8;
inline constexpr uint16_t kConnSpWaiting = 1u << 9;  // RS SYN sent, its SYN-ACK not yet seen
inline constexpr uint16_t kConnTunGue = 1u << 11;    // TUN: GUE outer header (else IPIP)
inline constexpr uint16_t kConnOps = 1u << 12;       // one-packet scheduling: gone once sent
inline constexpr uint16_t kConnPersist = 1u << 13;   // has a persistence template (lb/persist.h)
static_assert(offsetof(Conn, timer) == 0);
// The hot part of an IPv4 conn is one cache line.
static_assert(sizeof(Conn) == 64);

// The 5-tuple exactly as it appears in a packet (network order), 40 bytes (five 64-bit words).
struct ConnKey {
    net::InetAddr saddr;
    net::InetAddr daddr;
    uint16_t sport;
    uint16_t dport;
    uint8_t proto;
    uint8_t pad[3];

    // The last word as one load: sport | dport << 16 | proto << 32, the padding zero (as
    // conn_key stores it).
    uint64_t tail_word() const {
        uint64_t w;
        std::memcpy(&w, reinterpret_cast<const unsigned char*>(this) + kTailOffset, sizeof w);
        return w;
    }
    static constexpr size_t kTailOffset = 32;
};
static_assert(sizeof(ConnKey) == 40);
static_assert(std::endian::native == std::endian::little);
static_assert(offsetof(ConnKey, sport) == ConnKey::kTailOffset &&
              offsetof(ConnKey, dport) == ConnKey::kTailOffset + 2 &&
              offsetof(ConnKey, proto) == ConnKey::kTailOffset + 4);

// The ports, proto and padding are stored as one 64-bit word: ConnTable's hash loads them as
// one, and a load spanning several smaller stores still in flight would wait for them to
// reach the cache (the key is hashed soon after it is built).
inline ConnKey conn_key(uint8_t proto, const net::InetAddr& saddr, const net::InetAddr& daddr,
                        uint16_t sport, uint16_t dport) {
    ConnKey k;
    k.saddr = saddr;
    k.daddr = daddr;
    const uint64_t tail = uint64_t{sport} | uint64_t{dport} << 16 | uint64_t{proto} << 32;
    std::memcpy(reinterpret_cast<unsigned char*>(&k) + ConnKey::kTailOffset, &tail, sizeof tail);
    return k;
}

// Hash entries store the Conn pointer with the direction in bit 0 (Conn is 8-aligned).
enum class ConnDir : uint8_t { In = 0, Out = 1 };

}  // namespace xvs::lb
