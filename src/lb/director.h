// The Director: the configuration model of ports, addresses, routes, services, dests and local
// addresses, with ipvsadm's error texts. Control thread only. commit() turns the model into an
// immutable Snapshot that workers pick up at their next burst; reclaim() frees what no worker
// can still see. This is the API the control plane, the tests and the benches all use.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "lb/snapshot.h"
#include "net/addr.h"

namespace xvs::stack {
class NeighShared;
}

namespace xvs::lb {

class Redirect;

struct ServiceSpec {
    uint8_t proto = 6;  // 6 TCP, 17 UDP
    net::InetAddr vip;
    uint16_t port = 0;  // host order
    std::string sched = "wlc";
    FwdMode fwd = FwdMode::FullNat;
    uint32_t flags = 0;
    uint32_t conn_rate = 0;      // new connections per second, 0 = no cap
    uint32_t sched_flags = 0;    // ipvsadm -b (lb/sched/sched.h kSchedFlag*)
    uint32_t mh_table_size = 0;  // mh lookup table size (prime); 0 = default
    // With kSvcFlagHashQid (conhash by QUIC connection ID): the length of the connection IDs
    // the real servers choose, which short headers do not carry (1..20; 0 = unknown: short
    // headers are hashed by the client address).
    uint8_t quic_cid_len = 0;
    // ipvsadm -f / keepalived `virtual_server fwmark N`: a firewall-mark service (vip, port
    // and proto ignored; its packets are those fwmark_set's rules give this mark). A mark has
    // a service per family, as in IPVS: fwmark_v6 is the IPv6 one (ipvsadm -f N -6), which
    // takes the IPv6 packets the mark's IPv6 entries match.
    uint32_t fwmark = 0;
    bool fwmark_v6 = false;
    // ipvsadm -p / persistence_timeout: seconds (1..kMaxTimeoutS), 0 = not persistent; -M /
    // persistence_granularity as a prefix length of the service's family, kPersistFull = the
    // whole address (-M 255.255.255.255).
    uint32_t persistence_s = 0;
    uint8_t persist_prefix = kPersistFull;
    static constexpr uint8_t kPersistFull = 255;
};

// Checks a scheduler name with its -b flags and Maglev table size ("Scheduler not found", a
// flag the scheduler has no use for, a table size that is not a prime).
Result<void> sched_check(std::string_view sched, uint32_t sched_flags, uint32_t mh_table_size);

struct DestSpec {
    net::InetAddr addr;
    uint16_t port = 0;  // host order
    int32_t weight = 1;
    FwdMode fwd = FwdMode::FullNat;
    uint32_t upper_threshold = 0;
    uint32_t lower_threshold = 0;
    TunType tun_type = TunType::Ipip;  // TUN only
    uint16_t tun_port = 0;             // GUE destination port, host order (TUN GUE only)
};

// A SNAT match service (DPVS's `-A -H MATCH`): selected by `key`, dests are WAN addresses.
struct MatchSpec {
    MatchKey key;
    std::string name;  // keepalived `virtual_server match NAME`; "" from xvsadm
    std::string sched = "wlc";
};

struct PortEntry {
    std::string name;
    uint16_t port_id = 0;
    net::MacAddr mac{};
    uint16_t mtu = 1500;
    // The exception path's TAP port (stack/exception.h), when the port has one.
    std::optional<uint16_t> exception_port_id;
    // Largest frame accepted on RX when above mtu + 14: an af_packet port with a large
    // framesz receives IPv4 datagrams the kernel reassembled (port_rx_frame). 0: none.
    uint16_t max_rx_frame = 0;
};

struct AddressEntry {
    net::InetAddr addr;
    uint8_t prefix_len = 32;
    std::string port;
};

struct RouteSpec {
    net::InetPrefix prefix;
    std::optional<net::InetAddr> gateway;  // none = directly connected
    std::string port;
    bool connected = false;  // added with an address; removed with it
};

ServiceKey make_service_key(uint8_t proto, net::InetAddr vip, uint16_t port_host);
// The key of firewall-mark service `mark` of one family: port and proto 0, vip the family's
// unspecified address (0.0.0.0 or ::), so that key.vip.is_v4() is the service's family for
// every kind of service and the two services of a mark are two keys.
ServiceKey make_fwmark_key(uint32_t mark, bool v6);

class Director {
public:
    explicit Director(unsigned nworkers = 1);
    ~Director();
    Director(const Director&) = delete;
    Director& operator=(const Director&) = delete;

    unsigned workers() const { return nworkers_; }
    // Several workers: the rings and owner table they hand packets over with (lb/redirect.h),
    // made by the first Worker::create for conn tables of `conns_per_worker`; nullptr with one
    // worker. Outlives the workers (they drain their rings as they go).
    Result<Redirect*> redirect_init(uint32_t conns_per_worker);
    Redirect* redirect() const { return redirect_.get(); }
    // The one neighbour table of the workers and their handoff rings (stack/neigh_shared.h).
    stack::NeighShared& neigh_shared() { return *neigh_; }

    // Ports are opened by the port layer; the Director only names them.
    Result<void> port_add(const PortEntry& port);
    const std::vector<PortEntry>& ports() const { return ports_; }

    // Director-owned addresses: answer ARP and ping; their prefix becomes a connected route.
    Result<void> address_add(net::InetAddr addr, uint8_t prefix_len, const std::string& port);
    Result<void> address_del(net::InetAddr addr);
    const std::vector<AddressEntry>& addresses() const { return addresses_; }

    Result<void> route_add(net::InetPrefix prefix, std::optional<net::InetAddr> gateway,
                           const std::string& port);
    Result<void> route_del(net::InetPrefix prefix);
    const std::vector<RouteSpec>& routes() const { return routes_; }

    // Outer source of TUN packets leaving by `port` (ip_defs `tunnel_source ADDR dev PORT`):
    // a director address (address_add) on that port; nullopt = the default, the port's first
    // director address. A tunnel source cannot be removed with address_del.
    Result<void> tunnel_source_set(const std::string& port, std::optional<net::InetAddr> addr);
    std::optional<net::InetAddr> tunnel_source(const std::string& port) const;

    Result<void> service_add(const ServiceSpec& spec);
    Result<void> service_edit(const ServiceSpec& spec);
    Result<void> service_del(const ServiceKey& key);
    void services_clear();
    const std::vector<std::shared_ptr<Service>>& services() const { return services_; }
    std::shared_ptr<Service> service_find(const ServiceKey& key) const;

    Result<void> dest_add(const ServiceKey& key, const DestSpec& spec);
    Result<void> dest_edit(const ServiceKey& key, const DestSpec& spec);
    Result<void> dest_del(const ServiceKey& key, net::InetAddr addr, uint16_t port);

    // SNAT match services (lb/match.h), with ipvsadm's errors. Their dests are WAN addresses:
    // director addresses (address_add) on the service's oif port, port 0, mode Snat; each
    // WAN address has one port pool (a LocalAddr) shared by every match service using it.
    Result<void> match_add(const MatchSpec& spec);
    Result<void> match_edit(const MatchSpec& spec);  // scheduler (and name)
    Result<void> match_del(const MatchKey& key);
    std::shared_ptr<Service> match_find(const MatchKey& key) const;
    const std::vector<std::shared_ptr<Service>>& matches() const { return matches_; }
    Result<void> match_dest_add(const MatchKey& key, const DestSpec& spec);
    Result<void> match_dest_edit(const MatchKey& key, const DestSpec& spec);
    Result<void> match_dest_del(const MatchKey& key, net::InetAddr wan);

    // FULLNAT local addresses of a service (DPVS's -P/-Q). A LIP may serve several services.
    Result<void> laddr_add(const ServiceKey& key, net::InetAddr lip, const std::string& port);
    Result<void> laddr_del(const ServiceKey& key, net::InetAddr lip);

    // Client black/white lists of a service (checked before any state is made, see
    // Worker::admit). add refuses a prefix already listed, del one that is not; set replaces
    // the whole list (config reload). Connections already made are not cut.
    Result<void> acl_add(const ServiceKey& key, AclKind kind, net::InetPrefix prefix);
    Result<void> acl_del(const ServiceKey& key, AclKind kind, net::InetPrefix prefix);
    Result<void> acl_set(const ServiceKey& key, AclKind kind, std::vector<net::InetPrefix> list);

    // The firewall-mark classifier (lb/fwmark.h, config `fwmark_defs`): replaces every mark's
    // entries. Their addresses become VIPs (xvs answers ARP for them); a prefix stands for at
    // most kMaxFwmarkAddrs addresses (an IPv4 entry /24 or longer, an IPv6 one /120 or longer).
    Result<void> fwmark_set(std::vector<FwmarkDef> defs);
    const std::vector<FwmarkDef>& fwmarks() const { return fwmarks_; }
    static constexpr uint32_t kMaxFwmarkAddrs = 1u << kFwmarkMaxHostBits;

    void timeouts_set(const Timeouts& t) { timeouts_ = t; }
    const Timeouts& timeouts() const { return timeouts_; }
    // How many client datagrams of a UOA flow carry the client address (new flows only).
    void uoa_max_trail_set(uint8_t n) { uoa_max_trail_ = n; }

    // Session sync takeover (ctl/sync/). vip_arp_set(false): a backup director owns its VIPs
    // and local addresses but does not answer ARP for them; true: it does (and announces the
    // VIPs, below).
    void vip_arp_set(bool answer) { vip_arp_ = answer; }
    bool vip_arp() const { return vip_arp_; }
    // A failed peer's FULLNAT local addresses this director answers for (on their port) so the
    // real servers' replies to the conns it took over reach it. Replaces the set.
    struct ClaimedAddr {
        net::InetAddr addr;
        std::string port;
        bool operator==(const ClaimedAddr&) const = default;
    };
    Result<void> claimed_set(std::vector<ClaimedAddr> addrs);
    const std::vector<ClaimedAddr>& claimed() const { return claimed_; }
    // The next commit makes the neighbour owner send gratuitous ARPs for the VIPs (when
    // vip_arp) and the claimed addresses.
    void garp_request() { ++garp_generation_; }
    uint8_t uoa_max_trail() const { return uoa_max_trail_; }
    void synproxy_set(const SynProxyConf& conf) { synproxy_ = conf; }
    const SynProxyConf& synproxy() const { return synproxy_; }
    // IPVS's expire_nodest_conn (default off): see Snapshot::expire_nodest_conn.
    void expire_nodest_conn_set(bool on) { expire_nodest_conn_ = on; }
    bool expire_nodest_conn() const { return expire_nodest_conn_; }
    // xvs's reschedule_refused (default on): see Snapshot::reschedule_refused.
    void reschedule_refused_set(bool on) { reschedule_refused_ = on; }
    bool reschedule_refused() const { return reschedule_refused_; }
    // IPVS's expire_quiescent_template (default off): see Snapshot::expire_quiescent_template.
    void expire_quiescent_template_set(bool on) { expire_quiescent_template_ = on; }
    bool expire_quiescent_template() const { return expire_quiescent_template_; }
    // Dests removed (dest_del, match_dest_del, a service leaving) since the last call: the
    // control thread flushes their conns from the workers when expire_nodest_conn is on.
    std::vector<std::shared_ptr<Dest>> take_removed_dests();
    // Removed dests some conn still points at (awaiting reclaim()).
    const std::vector<std::shared_ptr<Dest>>& removed_dests() const { return dead_dests_; }

    // SYN-cookie secrets: random keys from getrandom(2) at construction. Rotation makes new
    // current keys valid from counter count_now + 1 (earlier counters keep using the replaced
    // keys, now `previous`, until their cookies expire) and publishes a new snapshot.
    const net::CookieSecrets& cookie_secrets() const { return cookie_; }
    void rotate_cookie_secrets(uint32_t count_now);

    // Builds a snapshot of the model and publishes it; returns its generation. With
    // commit_waits on, it returns only once every worker polls with the new snapshot (or after
    // kCommitWaitLimit, counted in commit_wait_timeouts), so a change is in force for every
    // packet received after xvsadm or a reload returns, as IPVS's changes are.
    uint64_t commit();
    // On while the workers run on their own threads; off while they are polled by hand (tests)
    // or stopped, when nothing would ever catch up.
    void commit_waits_set(bool on) { commit_waits_ = on; }
    // Whether every worker announced `generation` (or later) within `limit`.
    bool wait_quiescent(uint64_t generation, std::chrono::milliseconds limit) const;
    uint64_t commit_wait_timeouts() const { return commit_wait_timeouts_; }
    static constexpr std::chrono::milliseconds kCommitWaitLimit{2000};
    // Frees retired snapshots every worker has moved past, and removed dests, services and
    // local addresses once no connection refers to them.
    void reclaim();
    size_t retired_count() const;

    // Data-plane side: workers load the current snapshot once per burst and announce the
    // generation they use, which proves they no longer read older ones.
    const Snapshot* snapshot() const { return current_.load(std::memory_order_acquire); }
    void worker_quiescent(unsigned worker, uint64_t generation) {
        seen_[worker].value.store(generation, std::memory_order_release);
    }

private:
    std::optional<uint8_t> port_index(const std::string& name) const;
    Result<void> check_address_free(net::InetAddr addr, const char* what) const;
    Result<void> dest_check(const Service& svc, const DestSpec& spec) const;
    bool is_vip(net::InetAddr addr) const;
    bool is_lip(net::InetAddr addr) const;
    // A service (VIP or match) leaving the model: its dests are marked removed and, like the
    // service, kept until no worker holds a conn to them (reclaim()).
    void service_retire(const std::shared_ptr<Service>& svc);
    void laddrs_prune();
    Result<void> match_check(const MatchSpec& spec) const;
    Result<void> match_dest_check(const Service& svc, const DestSpec& spec) const;
    const Service* wan_user(net::InetAddr addr) const;  // a match service using addr as WAN
    void wans_prune();
    // Adds the views of the match services to snap (Snapshot::matches).
    void build_matches(Snapshot& snap) const;
    std::unique_ptr<Snapshot> build();
    // Everything a VIP service's view is built from. A view whose inputs equal the last
    // snapshot's is shared by the new one as it is: a dest's weight or health change rebuilds
    // that service's view and scheduler only, not every service's (a Maglev table is 65537
    // entries a service).
    struct ViewInputs {
        const Scheduler* sched = nullptr;
        FwdMode fwd = FwdMode::FullNat;
        uint32_t flags = 0;
        std::vector<net::InetPrefix> blacklist, whitelist;
        uint32_t conn_rate = 0, persist_s = 0;
        uint8_t persist_prefix = 0;
        std::vector<Dest*> dests;
        std::vector<int32_t> weights;
        std::vector<DestLimit> limits;
        uint32_t sched_flags = 0, table_size = 0;
        uint8_t quic_cid_len = 0;
        LocalityTable* locality = nullptr;
        std::vector<LocalAddr*> laddrs;
        bool operator==(const ViewInputs&) const = default;
    };
    struct CachedView {
        ViewInputs inputs;
        std::shared_ptr<const ServiceView> view;
    };
    // The view of svc for the snapshot being built: the cached one if its inputs are the same,
    // else a new one; either goes into `next` (the cache of the new snapshot).
    std::shared_ptr<const ServiceView> service_view(
        Service& svc, std::unordered_map<const Service*, CachedView>& next);

    unsigned nworkers_;
    std::unique_ptr<Redirect> redirect_;
    std::unique_ptr<stack::NeighShared> neigh_;
    std::vector<PortEntry> ports_;
    std::vector<AddressEntry> addresses_;
    std::vector<RouteSpec> routes_;
    std::vector<std::pair<std::string, net::InetAddr>> tunnel_sources_;  // port name -> address
    std::vector<std::shared_ptr<Service>> services_;
    std::vector<std::shared_ptr<LocalAddr>> laddrs_;  // registry: one object per LIP
    std::vector<std::shared_ptr<Service>> matches_;   // SNAT match services, in order
    std::vector<std::shared_ptr<LocalAddr>> wans_;    // registry: one pool per WAN address
    Timeouts timeouts_ = Timeouts::dpvs_defaults();
    uint8_t uoa_max_trail_ = net::kUoaDefaultMaxTrail;
    bool vip_arp_ = true;
    std::vector<ClaimedAddr> claimed_;
    uint32_t garp_generation_ = 0;
    SynProxyConf synproxy_;
    bool expire_nodest_conn_ = false;
    bool reschedule_refused_ = true;
    bool expire_quiescent_template_ = false;
    std::vector<FwmarkDef> fwmarks_;
    net::CookieSecrets cookie_;

    bool commit_waits_ = false;
    uint64_t commit_wait_timeouts_ = 0;
    // The views of the current snapshot's VIP services (build() reuses the unchanged ones).
    std::unordered_map<const Service*, CachedView> views_;
    std::atomic<const Snapshot*> current_{nullptr};
    std::unique_ptr<Snapshot> current_owner_;
    uint64_t generation_ = 0;
    struct Retired {
        std::unique_ptr<Snapshot> snap;
        uint64_t superseded_by;
    };
    std::vector<Retired> retired_;
    struct alignas(64) Seen {
        std::atomic<uint64_t> value{0};
    };
    std::array<Seen, kMaxWorkers> seen_{};
    std::vector<std::shared_ptr<Dest>> dead_dests_;
    std::vector<std::weak_ptr<Dest>> removed_;  // not yet taken (weak: never delays reclaim)
    // IPVS's dest trash: a dest dest_del took out of a service that still exists. Re-adding
    // the same address and port to it takes the object back, so its remaining conns flow again.
    struct Trashed {
        std::weak_ptr<Service> svc;
        std::weak_ptr<Dest> dest;
    };
    std::vector<Trashed> trash_;
    std::vector<std::shared_ptr<Service>> dead_services_;
    std::vector<std::shared_ptr<LocalAddr>> dead_laddrs_;
};

}  // namespace xvs::lb
