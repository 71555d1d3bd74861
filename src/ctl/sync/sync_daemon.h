// The session sync daemon (issue 15 items 3 and 4), run by xvsd's control thread: it drains
// the workers' conn-event rings (lb/sync.h) into IPVS sync v1 messages (net/sync_wire.h) sent
// to the peers, installs the conns peers send through the workers' command channels (never
// touching a worker's table itself), answers a restarted peer's resync request with every
// live conn, and watches the peers' heartbeats. A peer silent for peer_timeout is failed: this
// director claims its FULLNAT local addresses (answers ARP for them, gratuitous ARP) so the
// real servers' replies of the conns it took over reach it, and a `role backup` director
// starts answering ARP for the VIPs (gratuitous ARP on the WAN side). keepalived notify
// scripts drive the same through `xvsctl sync takeover|release`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fd.h"
#include "common/result.h"
#include "ctl/config.h"
#include "lb/director.h"
#include "lb/sync.h"
#include "lb/worker.h"
#include "net/sync_wire.h"

namespace xvs::ctl {

struct SyncStats {
    uint64_t messages_sent = 0, messages_received = 0, messages_dropped = 0, send_errors = 0;
    uint64_t conns_sent = 0, conns_received = 0, conns_imported = 0, conns_import_failed = 0;
    uint64_t conns_skipped = 0;  // entries a peer sent that xvs cannot use (parameter, mode)
    uint64_t resyncs_served = 0, resync_conns_sent = 0, resyncs_requested = 0;
    uint64_t takeovers = 0, releases = 0;
};

class SyncDaemon {
public:
    // Opens the socket (bound to defs.port, joined to the group when no peer is listed) and
    // gives each worker its ring; call before the workers run. A backup stops answering ARP
    // for the VIPs here (commits the director).
    static Result<std::unique_ptr<SyncDaemon>> create(const SyncDefs& defs, lb::Director& director,
                                                      const std::vector<lb::Worker*>& workers);
    ~SyncDaemon();
    SyncDaemon(const SyncDaemon&) = delete;
    SyncDaemon& operator=(const SyncDaemon&) = delete;

    int fd() const { return sock_.get(); }
    // Control thread, every loop: receive, import, drain the rings and send, heartbeat, peers.
    void tick(uint64_t now_ms);

    // keepalived notify_master / `xvsctl sync takeover`: answer ARP for the VIPs (gratuitous
    // ARP) and claim every known peer's local addresses. notify_backup / `xvsctl sync
    // release`: a backup stops answering for the VIPs; claimed addresses are given back.
    Result<std::string> takeover(const std::string& why);
    Result<std::string> release(const std::string& why);

    nlohmann::json show(uint64_t now_ms) const;
    std::string metrics(uint64_t now_ms) const;  // Prometheus text (xvs_sync_*)
    const SyncStats& stats() const { return stats_; }

private:
    struct Peer {
        net::InetAddr addr;  // where its datagrams come from (its kernel address)
        uint32_t node_id = 0;
        // role and active as its last control message said; until one came (a conn update
        // may come first), announced is false and they are unknown.
        bool announced = false;
        net::SyncRole role = net::SyncRole::both;
        bool active = false;
        uint64_t last_seen_ms = 0;
        bool failed = false;
        bool resync_asked = false;  // we asked it for a full resync (node_id it had then)
        uint32_t resync_node = 0;
        uint64_t conns_received = 0;
        std::vector<net::InetAddr> laddrs;
    };

    SyncDaemon(const SyncDefs& defs, lb::Director& director, std::vector<lb::Worker*> workers);
    Result<void> open_socket();
    void receive(uint64_t now_ms);
    void handle(std::span<const uint8_t> datagram, const net::InetAddr& from, uint64_t now_ms);
    void import(const std::vector<net::SyncConn>& conns);
    void drain_and_send();
    void flush(const net::InetAddr* to);
    void send_to(std::span<const uint8_t> bytes, const net::InetAddr* to);
    void send_control(net::SyncControlKind kind, const net::InetAddr* to);
    void serve_resync(const net::InetAddr& to);
    void check_peers(uint64_t now_ms);
    void apply_claims(bool garp);
    Peer& peer_of(const net::InetAddr& from, uint64_t now_ms);
    std::vector<net::InetAddr> own_laddrs() const;

    SyncDefs defs_;
    lb::Director& director_;
    std::vector<lb::Worker*> workers_;
    std::vector<std::unique_ptr<lb::SyncRing>> rings_;
    UniqueFd sock_;
    net::SyncEncoder enc_;
    std::vector<lb::SyncRecord> drained_;  // scratch for ring pops
    uint32_t node_id_ = 0;
    uint32_t seq_ = 0;
    uint64_t next_heartbeat_ms_ = 0;
    bool active_ = false;  // answers ARP for the VIPs (role master/both: always)
    bool joined_ = false;  // multicast group joined
    std::vector<Peer> peers_;
    std::vector<net::InetAddr> claimed_;  // peers' local addresses this director answers for
    std::string claim_port_;
    SyncStats stats_;
};

// The wire form of a worker's record and back (what xvs's optional parameters carry).
net::SyncConn sync_conn_of(const lb::SyncRecord& r);
// nullopt when the entry cannot be a conn here (an IPVS template, a forwarding method xvs
// does not import, a state out of range).
std::optional<lb::SyncRecord> sync_record_of(const net::SyncConn& c);

}  // namespace xvs::ctl
