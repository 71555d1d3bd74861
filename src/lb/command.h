// Control -> worker commands (DESIGN.md "Threads"): the control thread never walks a worker's
// live tables; it posts a Command on the worker's channel and the worker answers it from its
// own poll loop. One producer (the control thread), one consumer (the worker), one command in
// flight. The worker copies entries into room the control thread reserved before posting (it
// never allocates), at most kCommandChunk table slots per poll, so a dump of a 1M-conn table
// costs the packet path a few microseconds per poll instead of one long stall. flush_dest
// walks the table the same way, expiring the conns of one dest through the normal expiry.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "lb/proto/tcp.h"
#include "lb/sync.h"
#include "net/addr.h"
#include "net/headers.h"
#include "stack/neigh.h"

namespace xvs::stack {
class CaptureTap;
}

namespace xvs::lb {

class ConnTable;
struct Conn;
struct Dest;

// What `conns` / `conn_show` print of one connection (addresses and ports network order).
struct ConnDumpEntry {
    net::InetAddr caddr, vaddr, laddr_ip, daddr;
    uint16_t cport, vport, lport, dport;
    uint8_t proto;
    TcpState state;
    uint64_t expire_s;  // seconds left, rounded up, from the worker clock at copy time
    // A persistence template (lb/persist.h): proto is its service's (0: a firewall-mark
    // service's), cport is 0, state NONE.
    bool tpl = false;
};

// What `neigh_show` prints of one neighbour entry.
struct NeighDumpEntry {
    net::InetAddr addr;
    net::MacAddr mac;
    uint8_t port;
    stack::NeighState state;
};

inline constexpr uint32_t kCommandChunk = 4096;  // table slots copied per poll

struct Command {
    enum Kind : uint8_t {
        dump_conns,
        dump_neighbours,
        flush_dest,
        set_capture,
        import_conns,  // session sync: install records (lb/sync.h sync_import)
        export_conns,  // session sync: every synced conn as a record (a peer's full resync)
    };
    Kind kind = dump_conns;
    // set_capture: the tap the worker captures into from now on (nullptr: none). The control
    // thread keeps its own reference until a later set_capture has been answered, so the
    // worker's raw pointer never outlives the tap.
    std::shared_ptr<stack::CaptureTap> tap;
    // flush_dest: the dest whose conns go. The control thread's reference keeps it alive (and
    // its address unused by a new dest) while the command is out; the worker only compares it.
    std::shared_ptr<const Dest> dest;
    uint64_t flushed = 0;  // flush_dest: conns expired
    // Room reserved by the control thread; the worker fills it up to capacity() and sets
    // truncated if more entries were live than fit.
    std::vector<ConnDumpEntry> conns;
    std::vector<NeighDumpEntry> neighbours;
    // import_conns: the records to install (all in one poll: the control thread posts at most
    // kCommandChunk), and how many went in / were refused. export_conns: room reserved by the
    // control thread, filled like conns.
    std::vector<SyncRecord> records;
    uint64_t imported = 0, import_failed = 0;
    uint32_t cursor = 0;  // next table slot to copy: where the next poll resumes
    bool truncated = false;
};

// Copies up to kCommandChunk slots from cmd.cursor on. True when the whole table is copied.
// Runs on whichever thread owns the tables at that moment (the worker; or the control thread
// when no loop polls the worker).
bool command_serve_chunk(Command& cmd, const ConnTable& conns, const stack::Neighbours& neigh,
                         uint64_t now_ms);

// flush_dest: calls expire(ctx, conn) for each live conn of cmd.dest among up to kCommandChunk
// slots from cmd.cursor on (expire must free the slot: conn_expire), counting them in
// cmd.flushed. True when the whole table is walked. Same threads as command_serve_chunk.
using ConnExpireFn = void (*)(void* ctx, Conn* conn);
bool command_flush_chunk(Command& cmd, ConnTable& conns, ConnExpireFn expire, void* ctx);

class CommandChannel {
  public:
    enum State : uint8_t {
        Free,      // the control thread owns cmd
        Posted,    // the worker owns cmd
        Inline,    // the control thread serves cmd itself (no loop polls the worker)
        Answered,  // the control thread owns cmd again: the answer is complete
    };

    // Control thread. The command to fill: usable only when state() is Free or Answered.
    Command& command() { return cmd_; }
    State state() const { return static_cast<State>(state_.load(std::memory_order_acquire)); }
    void post() { state_.store(Posted, std::memory_order_release); }
    void release() { state_.store(Free, std::memory_order_relaxed); }
    // Posted -> Inline; false when the worker already answered (or nothing was posted).
    bool claim_inline() {
        uint8_t want = Posted;
        return state_.compare_exchange_strong(want, Inline, std::memory_order_seq_cst);
    }
    void unclaim_inline() { state_.store(Posted, std::memory_order_seq_cst); }

    // Worker. pending(): the posted command, or nullptr (one acquire load when idle).
    Command* pending() {
        return state_.load(std::memory_order_acquire) == Posted ? &cmd_ : nullptr;
    }
    void answer() { state_.store(Answered, std::memory_order_release); }
    // Raw state for the loop-entry handshake (Worker::loop_enter).
    State state_seq_cst() const { return static_cast<State>(state_.load()); }

  private:
    std::atomic<uint8_t> state_{Free};
    Command cmd_;
};

}  // namespace xvs::lb
