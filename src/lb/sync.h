// Session sync, the worker's side (issue 15 item 3): what a worker reports of its conns to
// the control thread's sync daemon (ctl/sync/), and how it installs a conn a peer director
// synced. Reports go through one single-producer single-consumer ring per worker (the worker
// pushes, the control thread pops): no lock, no allocation; a full ring counts
// sync_ring_full and the event is lost (the next state change or refresh sends the conn again).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "lb/conn.h"
#include "lb/synproxy/synproxy.h"
#include "net/addr.h"

namespace xvs::lb {

struct WorkerCtx;

// Everything needed to continue a conn on another director. Addresses and ports network order.
struct SyncRecord {
    net::InetAddr caddr, vaddr, laddr_ip, daddr;
    uint16_t cport = 0, vport = 0, lport = 0, dport = 0;
    uint32_t timeout_s = 0;  // the state's full timeout (the receiver's clock restarts it)
    uint16_t flags = 0;      // the kConn* bits of kSyncConnFlags
    uint8_t proto = 0;
    TcpState state = TcpState::None;
    FwdMode mode = FwdMode::FullNat;
    ConnFeatSlot feat{};  // TOA / PROXY protocol progress
    SynProxySeq sp{};     // SYN proxy translation (kConnSynProxy)
};

// The conn flags that describe a conn (and travel); counters and transient bits do not.
inline constexpr uint16_t kSyncConnFlags = kConnToa | kConnSynAckSeen | kConnToaDone |
                                           kConnPpV1 | kConnPpV2 | kConnPpSent | kConnPpHdrAcked |
                                           kConnSynProxy | kConnTunGue;

class SyncRing {
public:
    explicit SyncRing(uint32_t size);  // rounded up to a power of two
    bool push(const SyncRecord& r);     // the worker; false when full
    uint32_t pop(SyncRecord* out, uint32_t max);  // the control thread
    uint32_t capacity() const { return mask_ + 1; }

private:
    std::vector<SyncRecord> slots_;
    uint32_t mask_;
    alignas(64) std::atomic<uint32_t> head_{0};  // next to write: the producer's
    alignas(64) std::atomic<uint32_t> tail_{0};  // next to read: the consumer's
};

// Whether conn c is synced in its current state: as IPVS, TCP in ESTABLISHED and the closing
// states (FIN_WAIT, TIME_WAIT, CLOSE, CLOSE_WAIT, LAST_ACK), UDP always; never a
// persistence template, a one-packet conn or one still in a SYN-proxy handshake.
bool sync_wanted(const Conn& c);
SyncRecord sync_record_of(WorkerCtx& w, const Conn& c);
// Reports c to the sync daemon if sync is on (w.sync_ring) and c is wanted (sync_wanted).
void sync_report(WorkerCtx& w, const Conn& c);
// Installs (or refreshes: same inbound tuple) the conn of rec on w, bound to the snapshot's
// service and dest with those addresses; its local address is kept as is (a peer's LIP,
// which this director answers for once it takes the peer over). False, counted
// sync_import_failed, when no service/dest matches or the table has no room.
bool sync_import(WorkerCtx& w, const SyncRecord& rec);
// The worker a synced conn must live on among n: the local port's share for FULLNAT and
// SNAT (where the return traffic is steered, DESIGN.md "several workers"), else worker 0.
unsigned sync_owner(const SyncRecord& rec, unsigned nworkers);

}  // namespace xvs::lb
