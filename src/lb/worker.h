// A data-plane worker: one per lcore. Owns its connection table, timer wheel, neighbour cache,
// TX buffers and counters; reads configuration from the Director's current snapshot once per
// poll. poll_once() is the whole packet path for one iteration and is what tests call.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "lb/command.h"
#include "lb/conn_table.h"
#include "lb/director.h"
#include "lb/synproxy.h"
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
    uint16_t synproxy_pending = 4096;  // SYN proxy handshakes in flight (side pool, <= 65535)
};

enum class PollMode : uint8_t { Busy, Adaptive };

// A PROXY header segment to send around a client packet (Worker::pp_inbound).
enum class PpHeaderSegment : uint8_t { None, Before, After };

class Worker {
public:
    static Result<std::unique_ptr<Worker>> create(Director& director, const WorkerConfig& cfg);
    ~Worker();  // release_held(): a destroyed worker gives every mbuf back
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

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

    // Control thread: runs a command on this worker and calls use() with the complete answer
    // (still on the control thread). A thread polling the worker (run(), or a Polling scope)
    // serves it from poll_once; when none does, this thread serves it, as then nothing else
    // touches the tables. An error when the worker does not answer within timeout_ms; it keeps
    // that command and a later call discards the late answer.
    Result<void> command(Command::Kind kind, uint64_t timeout_ms,
                         const std::function<void(const Command&)>& use);

    // Declares that the current thread polls this worker (run() holds one). A test calling
    // poll_once on one thread while another calls command() holds one around its loop.
    class Polling {
      public:
        explicit Polling(Worker& w);
        ~Polling();
        Polling(const Polling&) = delete;
        Polling& operator=(const Polling&) = delete;

      private:
        Worker& w_;
    };

    void advance_clock(uint64_t ms) { ctx_.now_ms += ms; }
    uint64_t now_ms() const { return ctx_.now_ms; }

    // Admission control for a new connection from client_be (network order) to `view`'s
    // service, before any state is made: admit_source checks the blacklist and whitelist;
    // admit does that and then takes one token of this worker's share of the service's
    // new-connection rate. On refusal the drop reason is counted (drop_blacklisted,
    // drop_not_whitelisted, drop_conn_rate) and false returned; the caller frees the packet
    // without counting it again. conn_create calls admit. The SYN proxy calls admit_source
    // before it answers a SYN, so a listed-out client never gets a cookie; the rate token is
    // taken only when a cookie-valid ACK creates the connection, so a spoofed SYN flood cannot
    // use up the tokens real clients need. Allocation-free, O(log n) in the list sizes.
    bool admit_source(const ServiceView& view, uint32_t client_be);
    bool admit(const ServiceView& view, uint32_t client_be);

    const stack::Counters& counters() const { return ctx_.counters; }
    // Frames the worker owns between polls (stack/conservation.h): waiting for ARP, saved by
    // the SYN proxy, or buffered for TX.
    uint64_t held_frames() const;
    // Sends what TX buffers hold and frees the rest, each counted (drop_neigh_unresolved,
    // synproxy_saved_dropped): afterwards held_frames() is 0. Conns stay; a SYN-proxy conn
    // still waiting for its RS simply has nothing left to replay.
    void release_held();
    const ConnTable& conns() const { return *conns_; }
    // SYN proxy memory: per-slot translation array, handshake side pool and its free list.
    size_t synproxy_memory_bytes() const;
    // Client packets held by SYN proxy handshakes (conservation: frames held). O(side pool).
    unsigned synproxy_saved_count() const;
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
    // PROXY protocol (FULLNAT). pp_conn_init fixes the header length (the TCP seq shift) when
    // the conn is created. pp_inbound runs before the FULLNAT rewrite and says whether a
    // separate header segment must go out just before (the segment at client ISN + 1 had no
    // room for it) or just after (server speaks first: the handshake ACK) this packet
    // (pp_send_header_segment).
    void pp_conn_init(Conn* conn);
    PpHeaderSegment pp_inbound(LbPacket& lp, Conn* conn);
    void pp_outbound(LbPacket& lp, Conn* conn);
    bool pp_insert(LbPacket& lp, Conn* conn, size_t l4_hdr_len);
    void pp_send_header_segment(Conn* conn, uint32_t ack_be, uint16_t window_be);
    // The header segment is retransmitted (RTO 1 s, doubling) until the RS acks past it.
    // Called from the conn timer while the conn lives; returns when the timer must fire next
    // (never later than the idle deadline expires_ms).
    uint64_t pp_header_timer(Conn* conn, uint64_t now_ms);
    bool pp_header_segment_emit(Conn* conn, uint32_t ack_be);
    // UOA (FULLNAT UDP), after the FULLNAT rewrite of a client datagram: inserted in place, or
    // sent ahead in an empty datagram when it does not fit.
    void uoa_inbound(LbPacket& lp, Conn* conn);
    void uoa_send_empty(const Conn* conn);
    static uint64_t clock_ms();
    // Why a scheduler found no dest: drop_dest_overloaded when some dest had a weight (so the
    // thresholds kept them all out), else drop_no_dest.
    static stack::Counter sched_fail_reason(const SchedPlan& plan);
    // Runs a stored client packet of conn through the inbound packet path (SYN proxy replay).
    void lb_replay(rte_mbuf* pkt, Conn* conn);

    // SYN proxy (worker_synproxy.cpp). A TCP packet to a VIP, as the SYN proxy sees it.
    struct SpPacket {
        rte_mbuf* pkt;
        net::Ipv4Hdr* ip;
        net::TcpHdr* tcp;
        uint8_t port;  // receiving port index
    };
    enum class SpVerdict : uint8_t { Pass, Consumed, Open };
    // No conn: SYN -> cookie SYN-ACK (Consumed); ACK -> cookie check: Open (the caller creates
    // the conn and calls synproxy_open) or Consumed (dropped, counted); Pass when the service
    // has no SYN proxy.
    SpVerdict synproxy_no_conn(const SpPacket& sp, bool pure_syn);
    void synproxy_open(const SpPacket& sp, Conn* conn);
    // A packet of a SYN-proxied conn. Returns true when consumed (handshake), false after
    // translating it in place for the normal path.
    bool synproxy_conn(const SpPacket& sp, Conn* conn, bool inbound);
    // The conn timer while the RS handshake runs: retransmits the RS SYN (true: still waiting)
    // or gives up (false: caller expires the conn).
    bool synproxy_rs_syn_timer(Conn* conn);
    void synproxy_release(Conn* conn);
    void synproxy_send_syncookie(const SpPacket& sp, const ServiceView& view);
    void synproxy_send_rs_syn(Conn* conn);
    void synproxy_handover(const SpPacket& sp, Conn* conn);
    void synproxy_reset_client(rte_mbuf* reuse, Conn* conn);

    // Handshake state that lives only between the client's ACK and the RS SYN-ACK.
    struct SpPending {
        rte_mbuf* saved[kSynProxyMaxAckSaved];
        uint32_t cookie;        // our SYN-ACK ISN: the client's view of the RS ISN
        uint32_t our_tsval;     // our SYN-ACK TSval (echoed by the client's ACK)
        uint32_t client_tsval;  // latest client TSval (RS SYN, window update TSecr)
        uint32_t window_bytes;  // the client's receive window (RS SYN window)
        net::CookieOptions opts;
        bool have_ts;
        uint8_t nsaved;
        uint8_t retries;
        uint8_t dup_acks;
    };
    // Per conn slot (indexed by ConnTable::index_of): the translation, and the pending index.
    struct SpSlot {
        uint32_t seq_delta = 0;
        uint32_t ts_delta = 0;
        uint8_t rs_wscale = 0;
        uint8_t our_wscale = 0;
        uint16_t pending = 0;  // side-pool index while kConnSpWaiting
        SynProxySeq seq() const { return {seq_delta, ts_delta, rs_wscale, our_wscale}; }
    };
    static_assert(sizeof(SpSlot) == 12, "per-conn SYN proxy bytes (bench memory figure)");
    // Filled by synproxy_no_conn for synproxy_open.
    struct SpOpen {
        uint32_t cookie, isn, our_tsval, client_tsval, window_bytes;
        net::CookieOptions opts;
        bool have_ts;
    };

    Director& director_;
    WorkerConfig cfg_;
    const Snapshot* snap_ = nullptr;
    stack::StackContext ctx_;
    std::unique_ptr<ConnTable> conns_;
    TimerWheel timers_;
    std::vector<SpSlot> sp_slots_;
    std::vector<SpPending> sp_pending_;
    std::vector<uint16_t> sp_free_;
    SpOpen sp_open_{};
    CommandChannel commands_;
    std::atomic<bool> polling_{false};  // a Polling scope is open (seq_cst: command handshake)
};

}  // namespace xvs::lb
