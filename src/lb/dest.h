// Real servers (dests) and their per-worker counters. A Dest outlives every snapshot and every
// connection that points to it: the control plane retires it only when no worker holds a
// connection to it (refs summed over workers reach zero after removal).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "common/single_writer.h"
#include "lb/fwd_mode.h"
#include "net/addr.h"
#include "stack/nh_cache.h"

namespace xvs::lb {

struct Service;

inline constexpr unsigned kMaxWorkers = 16;

// Written by one worker only; the counters are also read by the control thread (xvsadm -L,
// retiring removed dests), hence SingleWriter: relaxed atomics, no locked RMW per packet.
struct alignas(64) DestWorkerStats {
    SingleWriter<uint64_t> conns;    // connections scheduled to this dest
    SingleWriter<uint64_t> inpkts;   // client -> RS
    SingleWriter<uint64_t> outpkts;  // RS -> client
    SingleWriter<uint64_t> inbytes;
    SingleWriter<uint64_t> outbytes;
    SingleWriter<uint32_t> active;    // conns in an active TCP state (ESTABLISHED, SYN_*)
    SingleWriter<uint32_t> inactive;  // all other conns (incl. UDP)
    SingleWriter<uint32_t> refs;      // conns on this worker pointing at this dest
    SingleWriter<uint32_t> persist;   // persistence templates to this dest (IPVS persistconns)
    // Passive health checking (lb/passive.h): TCP conns whose first RS answer was a SYN-ACK
    // (ok), or a RST or an ICMP unreachable, or none before the client's SYN retransmission or
    // the conn's expiry (fail); one each. Wrap at 2^32: readers take deltas.
    SingleWriter<uint32_t> conn_ok;
    SingleWriter<uint32_t> conn_fail;
    bool overloaded = false;  // over its -x share on this worker (lb/admission.h); worker only
    // Set by this worker around one pick only: the dest refused the client's previous SYN and
    // the retransmitted SYN is being scheduled again (reschedule_refused, lb/pipeline.cpp), so
    // the scheduler must pass it over if it can. Worker only.
    bool sched_skip = false;
    // The next hop toward this dest that this worker's newest conn to it found (its
    // NhDir::ToDest slot; stack/nh_cache.h): a new conn starts with it, so the first packet
    // skips the route scan when the generation still matches. Worker only.
    stack::NhCache nh;
};

struct Dest {
    net::InetAddr addr;
    uint16_t port = 0;  // host order
    // ipvsadm -e changes these while workers read them when they create a conn (a conn keeps
    // the mode it was created with): atomics, relaxed.
    std::atomic<FwdMode> fwd{FwdMode::FullNat};
    std::atomic<TunType> tun_type{TunType::Ipip};  // TUN only
    std::atomic<uint16_t> tun_port{0};             // GUE destination port, host order
    std::atomic<int32_t> weight{1};
    std::atomic<bool> removed{false};  // no longer in any service; awaiting refs == 0
    // The service it belongs to, set when it is created: a dest never moves to another
    // service (a dest taken back from the trash is its own service's). A conn reads its
    // service here (Conn::svc()).
    Service* svc = nullptr;
    uint32_t upper_threshold = 0;      // -x, 0 = none
    uint32_t lower_threshold = 0;      // -y
    std::array<DestWorkerStats, kMaxWorkers> stats{};

    uint64_t sum_active() const {
        uint64_t s = 0;
        for (auto& w : stats) s += w.active;
        return s;
    }
    uint64_t sum_inactive() const {
        uint64_t s = 0;
        for (auto& w : stats) s += w.inactive;
        return s;
    }
    uint64_t sum_persist() const {
        uint64_t s = 0;
        for (auto& w : stats) s += w.persist;
        return s;
    }
    uint64_t sum_refs() const {
        uint64_t s = 0;
        for (auto& w : stats) s += w.refs;
        return s;
    }
};

}  // namespace xvs::lb
