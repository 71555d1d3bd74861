// A data-plane worker: one per lcore. Owns its connection table, timer wheel, neighbour cache,
// TX buffers and counters; reads configuration from the Director's current snapshot once per
// poll. poll_once() is the whole packet path for one iteration and is what tests call.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "common/clock.h"
#include "common/result.h"
#include "lb/conn_table.h"
#include "lb/director.h"
#include "lb/timer_wheel.h"
#include "stack/context.h"

struct rte_mbuf;
struct rte_mempool;

namespace xvs::lb {

struct WorkerConfig {
    unsigned id = 0;
    uint32_t max_conns = 1 << 16;
    rte_mempool* pool = nullptr;       // for packets the worker builds (ARP)
    uint16_t rx_burst = 32;
    bool manual_clock = false;         // tests drive time with advance_clock()
    size_t timer_slots = 1 << 12;      // 100 ms ticks: one revolution = 409.6 s
    uint64_t timer_tick_ms = 100;
    stack::NeighTimes neigh_times{};
};

enum class PollMode : uint8_t { Busy, Adaptive };

class Worker {
public:
    static Result<std::unique_ptr<Worker>> create(Director& director, const WorkerConfig& cfg);

    // One iteration: new snapshot, timers, RX every port, packet path, TX flush.
    // Returns the number of packets received.
    unsigned poll_once();
    // The packet path for a burst received on port index `port` (benches call this directly).
    void process_burst(uint8_t port, rte_mbuf** pkts, uint16_t n);
    void flush() { ctx_.tx.flush(ctx_.counters); }
    // Loads the current snapshot (poll_once does this; benches call it once).
    void refresh_snapshot();

    // Runs poll_once until stop is set. Adaptive: an idle worker backs off to short sleeps.
    void run(const std::atomic<bool>& stop, PollMode mode);

    void advance_clock(uint64_t ms) { ctx_.now_ms += ms; }
    uint64_t now_ms() const { return ctx_.now_ms; }

    // Admission control for a new connection from client_be (network order) to `view`'s
    // service, before any state is made: blacklist, whitelist, then the service's
    // new-connection rate (one token of this worker's bucket). On refusal the drop reason is
    // counted (drop_blacklisted, drop_not_whitelisted, drop_conn_rate) and false returned; the
    // caller frees the packet without counting it again. conn_create calls it; the SYN proxy
    // must call it before it answers a SYN, so that a refused client never gets a cookie, and
    // then must not call it again for the connection that the cookie's ACK creates (one token
    // per connection). Allocation-free, O(log n) in the list sizes.
    bool admit(const ServiceView& view, uint32_t client_be);

    const stack::Counters& counters() const { return ctx_.counters; }
    const ConnTable& conns() const { return *conns_; }
    stack::Neighbours& neighbours() { return ctx_.neigh; }
    unsigned id() const { return cfg_.id; }

private:
    Worker(Director& director, const WorkerConfig& cfg);

    struct LbPacket;
    void lb_handle(LbPacket& lp, ConnRef ref);
    Conn* conn_create(LbPacket& lp);
    void conn_expire(Conn* conn);
    void conn_set_state(Conn* conn, TcpState state);
    void toa_inbound(LbPacket& lp, Conn* conn);
    void toa_synack(LbPacket& lp, Conn* conn);
    // PROXY protocol (FULLNAT). pp_inbound runs before the FULLNAT rewrite and returns true
    // when the packet is the handshake-completing ACK after which a separate header segment
    // must follow it (pp_send_header_segment, after the ACK went out).
    bool pp_inbound(LbPacket& lp, Conn* conn);
    void pp_outbound(LbPacket& lp, Conn* conn);
    bool pp_insert(LbPacket& lp, Conn* conn, size_t l4_hdr_len);
    void pp_send_header_segment(Conn* conn, uint32_t ack_be, uint16_t window_be);
    // Server speaks first: the header segment is retransmitted (RTO 1 s, doubling) until the
    // RS acks past it. Called from the conn timer while the conn lives; returns when the timer
    // must fire next (never later than the idle deadline expires_ms).
    uint64_t pp_header_timer(Conn* conn, uint64_t now_ms);
    void pp_header_segment_emit(Conn* conn, uint32_t ack_be);
    // UOA (FULLNAT UDP), after the FULLNAT rewrite of a client datagram: inserted in place, or
    // sent ahead in an empty datagram when it does not fit.
    void uoa_inbound(LbPacket& lp, Conn* conn);
    void uoa_send_empty(const Conn* conn);
    static uint64_t clock_ms();
    // Why a scheduler found no dest: drop_dest_overloaded when some dest had a weight (so the
    // thresholds kept them all out), else drop_no_dest.
    static stack::Counter sched_fail_reason(const SchedPlan& plan);

    Director& director_;
    WorkerConfig cfg_;
    const Snapshot* snap_ = nullptr;
    stack::StackContext ctx_;
    std::unique_ptr<ConnTable> conns_;
    TimerWheel timers_;
};

}  // namespace xvs::lb
