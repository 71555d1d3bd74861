// Virtual services: the persistent part (identity, per-worker scheduler cursors and counters)
// and the per-snapshot view the data plane reads (scheduler plan, local addresses).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/flat_map.h"
#include "lb/admission.h"
#include "lb/dest.h"
#include "lb/laddr.h"
#include "lb/match.h"
#include "lb/sched/locality.h"
#include "lb/sched/sched.h"
#include "net/prefix_set.h"

namespace xvs::lb {

struct ServiceKey {
    net::InetAddr vip;
    uint16_t port = 0;  // network order
    uint8_t proto = 0;  // IPPROTO_TCP / IPPROTO_UDP; 0 for a firewall-mark service
    // A firewall-mark service (ipvsadm -f, keepalived `virtual_server fwmark N`): port and
    // proto are zero, vip is the unspecified address of the service's family (0.0.0.0 or ::,
    // make_fwmark_key): a mark has an IPv4 and an IPv6 service, as in IPVS. Packets reach it
    // through the snapshot's fwmark classifier (lb/fwmark.h).
    uint32_t fwmark = 0;
    bool operator==(const ServiceKey&) const = default;
};
inline uint64_t flat_hash(const ServiceKey& k) {
    return mix64(k.vip.fold() ^ (uint64_t(k.fwmark) << 32 | uint64_t(k.port) << 8 | k.proto) *
                                    0xff51afd7ed558ccdULL);
}

struct alignas(64) ServiceWorkerState {
    SchedCursor cursor;
    uint32_t laddr_cursor = 0;
    // Written by this worker, read by the control thread (xvsadm -L --stats).
    SingleWriter<uint64_t> conns;
    SingleWriter<uint64_t> inpkts;
    SingleWriter<uint64_t> outpkts;
    SingleWriter<uint64_t> inbytes;
    SingleWriter<uint64_t> outbytes;
    std::atomic<uint32_t> refs{0};  // conns on this worker belonging to this service
    TokenBucket conn_rate_bucket;   // this worker's share of Service::conn_rate
};

// Service flags (xvsadm -L shows them).
inline constexpr uint32_t kSvcFlagSynProxy = 1u << 0;
inline constexpr uint32_t kSvcFlagToa = 1u << 1;  // FULLNAT TCP: client address in TCP option 254
// FULLNAT: PROXY protocol header before the client's first payload byte (TCP) or first
// datagram (UDP, v2 only). Exclusive with each other and with kSvcFlagToa.
inline constexpr uint32_t kSvcFlagPpV1 = 1u << 2;
inline constexpr uint32_t kSvcFlagPpV2 = 1u << 3;
// FULLNAT UDP: UOA (DPVS's "UDP option of address") on the first datagrams of each flow, as a
// protocol-248 header (opp) or an IPv4 option (ipo). Exclusive with each other and with
// kSvcFlagPpV2.
inline constexpr uint32_t kSvcFlagUoaOpp = 1u << 4;
inline constexpr uint32_t kSvcFlagUoaIpo = 1u << 5;
// One-packet scheduling (ipvsadm -o, keepalived ops), UDP only: every datagram is scheduled
// anew and its conn goes as soon as the datagram is sent (IPVS's IP_VS_CONN_F_ONE_PACKET), so
// no reply can come back through the director: DR and TUN real servers only.
inline constexpr uint32_t kSvcFlagOps = 1u << 6;
// SIP persistence engine (ipvsadm --pe sip, keepalived persistence_engine sip), UDP persistent
// services only: a new flow's template is keyed by the Call-ID of its first datagram
// (net/sip.h) instead of the client address, so every datagram stream of one call reaches one
// real server whoever sends it; a datagram without a Call-ID keeps the client-address template.
inline constexpr uint32_t kSvcFlagPeSip = 1u << 7;
// DPVS's conhash hash target `qid` (keepalived `hash_target qid`, ipvsadm --hash-target qid):
// a UDP conhash service hashes a flow's QUIC Destination Connection ID, not the client address
// (lb/sched/conhash.cpp). Without it the target is DPVS's `sip`, the client address.
inline constexpr uint32_t kSvcFlagHashQid = 1u << 8;

struct Service {
    ServiceKey key;
    std::string sched_name = "wlc";
    uint32_t sched_flags = 0;    // ipvsadm -b (kSchedFlag*), those the scheduler accepts
    uint32_t mh_table_size = 0;  // mh: lookup table size, a prime; 0 = kMhDefaultTableSize
    uint8_t quic_cid_len = 0;    // kSvcFlagHashQid: the servers' short-header DCID length, 0 = unknown
    // lblc/lblcr tables, one per worker: allocated the first time the service schedules with
    // one of them and kept (snapshots point into it) until the service itself is freed.
    std::unique_ptr<LocalityTable[]> locality;
    FwdMode fwd = FwdMode::FullNat;
    uint32_t flags = 0;
    // Persistence (ipvsadm -p/-M, keepalived persistence_timeout/_granularity, lb/persist.h):
    // template timeout in seconds, 0 = not persistent; the client prefix length that shares a
    // template, in bits of the VIP's family (a firewall-mark service's: IPv4's; its IPv6
    // clients use /128).
    uint32_t persistence_s = 0;
    uint8_t persist_prefix = 32;
    // Admission control (Worker::admit): client black/white lists and a new-connection cap.
    std::vector<net::InetPrefix> blacklist;
    std::vector<net::InetPrefix> whitelist;  // non-empty: only these clients are admitted
    uint32_t conn_rate = 0;                  // new connections per second, 0 = no cap
    // Control-thread view of membership (the data plane reads ServiceView).
    std::vector<std::shared_ptr<Dest>> dests;
    std::vector<std::shared_ptr<LocalAddr>> laddrs;
    // SNAT match services (Director::match_add; `key` is unused, all zero): what selects the
    // service, the keepalived name it was configured under (messages only) and, parallel to
    // `dests` (the WAN addresses), the port pool of each WAN address.
    std::optional<MatchKey> match;
    std::string match_name;
    std::vector<std::shared_ptr<LocalAddr>> wan_pools;
    std::array<ServiceWorkerState, kMaxWorkers> workers;

    uint64_t sum_refs() const {
        uint64_t s = 0;
        for (auto& w : workers) s += w.refs.load(std::memory_order_relaxed);
        return s;
    }
};

// The scheduler inputs of a plan besides its dests, weights and limits: the -b flags, the mh
// table size and, for lblc/lblcr, the service's per-worker tables (allocated here, on the
// control thread, the first time the service needs them).
inline void sched_plan_inputs(Service& svc, SchedPlan& plan, const Scheduler& sched,
                              unsigned workers) {
    plan.flags = svc.sched_flags & sched.flags;
    plan.table_size = svc.mh_table_size;
    if (sched.needs_locality && !svc.locality)
        svc.locality = std::make_unique<LocalityTable[]>(workers);
    plan.locality = sched.needs_locality ? svc.locality.get() : nullptr;
}

// Immutable per snapshot.
struct ServiceView {
    Service* svc = nullptr;
    const Scheduler* sched = nullptr;
    SchedPlan plan;
    std::vector<LocalAddr*> laddrs;
    FwdMode fwd = FwdMode::FullNat;
    uint32_t flags = 0;        // kSvcFlag*, as configured when this snapshot was built
    uint8_t quic_cid_len = 0;  // kSvcFlagHashQid: short-header DCID length (net/quic.h), 0 = unknown
    net::PrefixSet blacklist;  // compiled from Service::blacklist
    net::PrefixSet whitelist;
    uint32_t conn_rate = 0;
    // Persistence (lb/persist.h): template timeout (s, 0 = none) and the client masks that
    // share a template, one per client family (applied as two 64-bit ANDs per new conn).
    uint32_t persist_s = 0;
    net::InetAddr persist_mask4;
    net::InetAddr persist_mask6;
    // SNAT match services only (Snapshot::matches): the match with its ports resolved to
    // StackView port indexes (-1 = any), and the WAN address pool of plan.dests[i].
    struct Match {
        uint8_t proto = 0;  // as the packet says it: ICMPv6 (58) for an IPv6 `icmp` match
        AddrRange src;
        AddrRange dst;
        int16_t iif = -1;
        int16_t oif = -1;
        uint8_t family = 0;  // MatchKey::family: 4 or 6 (0 matches either: tests' views)
    } match;
    std::vector<LocalAddr*> wan;

    // The SYN proxy (lb/synproxy) answers this service's SYNs: configured, and in a mode it
    // works with (FULLNAT, or NAT over a tunnel).
    bool syn_proxied() const {
        return (flags & kSvcFlagSynProxy) && (fwd == FwdMode::FullNat || fwd == FwdMode::NatTun);
    }
};

// Which client list of a service (DPVS's blklst / whtlst).
enum class AclKind : uint8_t { Black, White };

}  // namespace xvs::lb
