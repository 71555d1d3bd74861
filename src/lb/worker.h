// A data-plane worker: one per lcore. Owns its WorkerCtx (connection table, timer wheel,
// TX buffers, counters, feature state; the neighbour table is shared, stack/neigh_shared.h); reads configuration from the
// Director's current snapshot once per poll. poll_once() is the whole packet path for one
// iteration and is what tests call. Worker is the loop only: the packet path is free
// functions on WorkerCtx (lb/pipeline.h, lb/conn_ops.h, lb/xmit, lb/conserve, lb/synproxy).
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
#include "lb/poll_mode.h"
#include "lb/worker_ctx.h"

struct rte_mbuf;
struct rte_mempool;

namespace xvs::lb {

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
    void flush() {
        ctx_.stack.exc_tx.flush(ctx_.stack.counters);
        ctx_.stack.tx.flush(ctx_.stack.counters);
    }
    // Handles what other workers handed this one (poll_once does this; benches that feed
    // process_burst call it) and sends the result. Returns the frames taken.
    unsigned redirect_receive() {
        const unsigned n = ctx_.redirect ? redirect_poll() : 0;
        flush();
        return n;
    }
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
    // Control thread: arms this worker's packet capture with tap (stack/capture.h), or disarms
    // it (nullptr). Once this returns the worker uses the new tap and no longer the old one.
    Result<void> set_capture(std::shared_ptr<stack::CaptureTap> tap, uint64_t timeout_ms);
    // flush_dest the same way: expires every conn of `dest` on this worker (conn_expire: refs,
    // stats and local ports given back) and returns how many.
    Result<uint64_t> flush_dest(std::shared_ptr<const Dest> dest, uint64_t timeout_ms);
    // Session sync (lb/sync.h). import_conns installs peer conns on this worker (the caller
    // posts at most kCommandChunk records at once: the worker does them in one poll);
    // export_conns hands use() every conn this worker syncs, and whether room ran out.
    struct SyncCounts {
        uint64_t imported = 0, failed = 0;
    };
    Result<SyncCounts> import_conns(std::vector<SyncRecord> records, uint64_t timeout_ms);
    Result<void> export_conns(uint64_t timeout_ms,
                              const std::function<void(const std::vector<SyncRecord>&, bool)>& use);
    // Before run(): the ring conn events go to (session sync on); nullptr: off.
    void sync_ring_set(SyncRing* ring) { ctx_.sync_ring = ring; }

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

    void advance_clock(uint64_t ms) { ctx_.stack.now_ms += ms; }
    uint64_t now_ms() const { return ctx_.stack.now_ms; }

    // Admission control (lb/conn_ops.h admit_source / admit) on this worker.
    bool admit_source(const ServiceView& view, const net::InetAddr& client);
    bool admit(const ServiceView& view, const net::InetAddr& client);

    const stack::Counters& counters() const { return ctx_.stack.counters; }
    // Frames the worker owns between polls (stack/conservation.h): waiting for ARP, saved by
    // the SYN proxy, or buffered for TX.
    uint64_t held_frames() const;
    // mbufs the worker owns between polls: held_frames() less the fragments reassembly keeps
    // only as bytes, plus its large mbufs (one per datagram in flight, stack/fragment.h).
    uint64_t held_mbufs() const;
    // Sends what TX buffers hold and frees the rest, each counted (drop_neigh_unresolved,
    // synproxy_saved_dropped): afterwards held_frames() is 0. Conns stay; a SYN-proxy conn
    // still waiting for its RS simply has nothing left to replay.
    void release_held();
    const ConnTable& conns() const { return *ctx_.conns; }
    // The local address (or SNAT WAN pool) a conn holds a port of; nullptr when none.
    const LocalAddr* conn_laddr(const Conn& c) { return ctx_.laddr_of(&c); }
    // SYN proxy memory: per-slot translation array, handshake side pool and its free list.
    size_t synproxy_memory_bytes() const { return lb::synproxy_memory_bytes(ctx_.sp); }
    // Client packets held by SYN proxy handshakes (conservation: frames held). O(side pool).
    unsigned synproxy_saved_count() const { return lb::synproxy_saved_count(ctx_.sp); }
    // The neighbour table all workers share (stack/neigh_shared.h); only worker 0 writes it,
    // so tests and benches edit it only while no worker runs.
    stack::Neighbours& neighbours() { return *ctx_.stack.neigh; }
    // Frames this worker handed the neighbour owner that it has not taken yet (mbuf accounting).
    unsigned neigh_handoff_in_flight() const;
    unsigned id() const { return ctx_.id; }
    // The other workers pinned to this one's CPU (bit i: worker i); set before run(). A full
    // redirect ring toward one of them yields the CPU before dropping (lb/redirect.h).
    void set_cpu_peers(uint32_t workers) { cpu_peers_ = workers; }

    // run()'s loop iterations so far, by outcome: busy (received something) or idle. Their
    // sum is the worker's heartbeat: the control thread's watchdog (ctl/worker_watch.h) sees a
    // worker that stops advancing it as stuck. Written by run() only, read by anyone.
    struct PollCounts {
        uint64_t busy = 0;
        uint64_t idle = 0;
    };
    PollCounts poll_counts() const {
        return {polls_busy_.load(std::memory_order_relaxed),
                polls_idle_.load(std::memory_order_relaxed)};
    }

private:
    Worker(Director& director, const WorkerConfig& cfg);
    static uint64_t clock_ms();
    template <class Af>
    bool key_of(LbPacket<Af>& lp);
    template <class Af>
    void handle_all(LbPacket<Af>* lbp, unsigned n);
    // The packet path for a burst; `redirected`: the frames came from other workers' rings
    // (counted redirect_in, never handed on again).
    void burst(uint8_t port, rte_mbuf** pkts, uint16_t n, bool redirected);
    // Several workers (lb/redirect.h): the worker owning the conn of a packet that missed
    // this one's table, the frames staged for each, their hand-over, and the frames others
    // handed to this one.
    template <class Af>
    unsigned owner_of(const LbPacket<Af>& lp) const;
    void redirect_stage(unsigned owner, uint8_t port, rte_mbuf* m, bool tunneled);
    void redirect_flush();
    unsigned redirect_poll();
    Result<void> command_run(Command::Kind kind, std::shared_ptr<const Dest> dest,
                             uint64_t timeout_ms, const std::function<void(const Command&)>& use,
                             std::shared_ptr<stack::CaptureTap> tap = nullptr);

    WorkerCtx ctx_;
    CommandChannel commands_;
    // The burst being classified, kept here rather than on the stack: its keys' addresses
    // have default initializers, and zeroing 64 of them per burst cost a nanosecond a packet.
    static constexpr unsigned kMaxBurst = 64;
    LbPacket4 burst_[kMaxBurst];
    LbPacket6 burst6_[kMaxBurst];
    // Their lookup results, here for the same reason (lookup_bulk writes all n of them).
    ConnRef refs_[kMaxBurst];
    std::atomic<bool> polling_{false};  // a Polling scope is open (seq_cst: command handshake)
    bool redirected_ = false;            // the burst being handled came from another worker
    uint32_t cpu_peers_ = 0;             // set_cpu_peers
    uint16_t rd_count_[kMaxWorkers] = {};
    rte_mbuf* rd_buf_[kMaxWorkers][kMaxBurst] = {};
    static constexpr unsigned kMaxPortIds = 64;  // DPDK port ids mapped back to port indexes
    uint8_t port_index_[kMaxPortIds] = {};
    // One writer (run()): a relaxed load and store, no locked instruction. On a line of
    // their own so the control thread's reads do not disturb the worker's hot fields.
    alignas(64) std::atomic<uint64_t> polls_busy_{0};
    std::atomic<uint64_t> polls_idle_{0};
};

}  // namespace xvs::lb
