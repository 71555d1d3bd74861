// Director: configuration model -> snapshots. Errors use ipvsadm's daemon-side texts where one
// exists ("Service already exists", "No such destination", ...), so xvsadm prints what an
// LVS operator expects.
#include "lb/director.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "lb/conn.h"
#include "lb/redirect.h"
#include "lb/service_check.h"
#include "stack/neigh_shared.h"

namespace xvs::lb {

namespace {

std::string addr_str(net::InetAddr a) {
    return net::to_string(a);
}

// The family rules of a service (issue 11): its real servers and local addresses share one
// family, the VIP's, except FULLNAT's, which may be IPv4 behind an IPv6 VIP (FNAT64).
// `other` is the family of what the service already has (dests or local addresses; nullptr
// when none).
// How messages name a service's virtual side: its VIP, or `fwmark N` and the family.
std::string vip_text(const ServiceKey& k) {
    if (k.fwmark)
        return "firewall-mark service " + std::to_string(k.fwmark) +
               (k.vip.is_v4() ? " (IPv4)" : " (IPv6)");
    return "virtual address " + net::to_string(k.vip);
}

Result<void> family_check(const ServiceKey& key, const net::InetAddr& a, const char* what,
                          const net::InetAddr* other, FwdMode mode) {
    const net::InetAddr& vip = key.vip;  // a fwmark service's: 0.0.0.0 or ::, its family
    if (other && other->is_v4() != a.is_v4())
        return make_error(std::string(what) + " " + net::to_string(a) + " is " +
                          (a.is_v4() ? "IPv4" : "IPv6") + " but the service's " +
                          (other->is_v4() ? "IPv4" : "IPv6") +
                          " real servers/local addresses are not: one service uses one family");
    if (vip.is_v4() == a.is_v4()) return {};
    if (vip.is_v4())
        return make_error(std::string(what) + " " + net::to_string(a) + " is IPv6 behind IPv4 " +
                          vip_text(key) +
                          ": xvs translates IPv6 to IPv4 only (FNAT64), not back; use an "
                          "IPv4 real server");
    if (mode != FwdMode::FullNat)
        return make_error(std::string(what) + " " + net::to_string(a) + " is IPv4 behind IPv6 " +
                          vip_text(key) +
                          ": only FULLNAT translates between the families (FNAT64); use an "
                          "IPv6 address or lb_kind FNAT");
    return {};
}

// What an IPv6 service cannot have: UOA's ipo form (an IPv4 option, so nothing an IPv6
// datagram can carry; DPVS also sends FNAT64's UOA as opp).
Result<void> v6_service_check(const ServiceKey& key, uint32_t flags) {
    if (key.vip.is_v4() || !(flags & kSvcFlagUoaIpo)) return {};
    return make_error("uoa_mode ipo on IPv6 " + vip_text(key) +
                      ": an IPv4 option cannot carry it over IPv6 (nor FNAT64, which uses "
                      "opp as DPVS does): use uoa_mode opp");
}

// Fills buf from the kernel CSPRNG. getrandom(2) blocks only until the pool is first seeded.
// Without it there is no safe fallback (predictable cookie keys let anyone forge handshakes),
// so failure ends the process with the reason.
void random_fill(uint8_t* buf, size_t len) {
    size_t got = 0;
    while (got < len) {
        ssize_t n = getrandom(buf + got, len - got, 0);
        if (n > 0) {
            got += size_t(n);
        } else if (n < 0 && errno != EINTR) {
            std::perror("xvs: getrandom for the SYN-cookie keys");
            std::abort();
        }
    }
}

net::CookieKeys random_cookie_keys() {
    net::CookieKeys k;
    random_fill(k.k0.data(), k.k0.size());
    return k;
}

}  // namespace

ServiceKey make_service_key(uint8_t proto, net::InetAddr vip, uint16_t port_host) {
    return ServiceKey{vip, net::hton16(port_host), proto};
}

ServiceKey make_fwmark_key(uint32_t mark, bool v6) {
    return ServiceKey{v6 ? net::InetAddr{} : net::InetAddr::v4(0), 0, 0, mark};
}

namespace {

ServiceKey spec_key(const ServiceSpec& spec) {
    return spec.fwmark ? make_fwmark_key(spec.fwmark, spec.fwmark_v6)
                       : make_service_key(spec.proto, spec.vip, spec.port);
}

// Persistence settings of a service (ipvsadm's rules): the timeout's range, the granularity's
// width for the family, port 0 only with persistence. The prefix length in effect is returned.
Result<uint8_t> persist_check(const ServiceSpec& spec) {
    const bool v4 = spec_key(spec).vip.is_v4();
    const uint8_t full = v4 ? 32 : 128;
    if (!spec.fwmark && spec.port == 0 && spec.persistence_s == 0)
        return make_error("Zero port specified for non-persistent service");
    if ((spec.flags & kSvcFlagPeSip) && spec.persistence_s == 0)
        return make_error(
            "persistence engine sip needs a persistent service: add -p [timeout] "
            "(persistence_timeout)");
    if (spec.persistence_s > kMaxTimeoutS)
        return make_error("persistence timeout " + std::to_string(spec.persistence_s) +
                          " s is out of range (1.." + std::to_string(kMaxTimeoutS) + ")");
    // The SYN proxy finds its service by exact VIP:port before any conn exists.
    if (!spec.fwmark && spec.port == 0 && (spec.flags & kSvcFlagSynProxy))
        return make_error("syn_proxy on a port-0 service is not supported yet: give the port");
    if (spec.persist_prefix == ServiceSpec::kPersistFull) return full;
    if (spec.persist_prefix > full)
        return make_error("persistence granularity /" + std::to_string(spec.persist_prefix) +
                          " is longer than an " + (v4 ? "IPv4" : "IPv6") + " address");
    return spec.persist_prefix;
}

// DPVS's conhash hash target (ipvsadm --hash-target, keepalived hash_target): `qid` is for
// conhash (DPVS: "hash target can only be set when schedule is conhash"), and the short-header
// connection-ID length only with it. UDP only is service_check's.
Result<void> hash_target_check(const ServiceSpec& spec) {
    const bool qid = (spec.flags & kSvcFlagHashQid) != 0;
    if (qid && spec.sched != "conhash")
        return make_error("hash target qid is for the conhash scheduler (the scheduler is " +
                          spec.sched + "): use -s conhash (lb_algo conhash) or drop it");
    if (spec.quic_cid_len != 0 && !qid)
        return make_error("quic_cid_len needs hash target qid (--hash-target qid, keepalived "
                          "hash_target qid): add it or remove quic_cid_len");
    if (spec.quic_cid_len > net::kQuicMaxCidLen)
        return make_error("quic_cid_len " + std::to_string(spec.quic_cid_len) +
                          " is longer than a QUIC connection ID (1..20 bytes)");
    return {};
}

}  // namespace

static_assert(kMaxWorkers <= stack::kMaxNeighWorkers);

Director::Director(unsigned nworkers)
    : nworkers_(std::clamp(nworkers, 1u, kMaxWorkers)),
      neigh_(std::make_unique<stack::NeighShared>(nworkers_)) {
    // Both key sets random: `previous` then validates nothing a client could have been given.
    cookie_.current = random_cookie_keys();
    cookie_.previous = random_cookie_keys();
    commit();
}

void Director::rotate_cookie_secrets(uint32_t count_now) {
    cookie_.previous = cookie_.current;
    cookie_.current = random_cookie_keys();
    cookie_.current_since = count_now + 1;
    commit();
}

Director::~Director() = default;

Result<Redirect*> Director::redirect_init(uint32_t conns_per_worker) {
    if (nworkers_ < 2) return nullptr;
    if (!redirect_) {
        auto r = Redirect::create(nworkers_, conns_per_worker);
        if (!r) return make_error(r.error());
        redirect_ = std::move(*r);
    }
    return redirect_.get();
}

std::optional<uint8_t> Director::port_index(const std::string& name) const {
    for (size_t i = 0; i < ports_.size(); ++i)
        if (ports_[i].name == name) return static_cast<uint8_t>(i);
    return std::nullopt;
}

Result<void> Director::port_add(const PortEntry& port) {
    if (port_index(port.name)) return make_error("port '" + port.name + "' already exists");
    if (ports_.size() >= stack::kMaxPorts)
        return make_error("too many ports (at most " + std::to_string(stack::kMaxPorts) + ")");
    ports_.push_back(port);
    return {};
}

bool Director::is_vip(net::InetAddr addr) const {
    for (const FwmarkDef& d : fwmarks_)  // firewall-mark addresses are VIPs too
        for (const FwmarkEntry& e : d.entries)
            if (e.dst.contains(addr)) return true;
    return std::any_of(services_.begin(), services_.end(),
                       [&](const auto& s) { return !s->key.fwmark && s->key.vip == addr; });
}

Result<void> Director::claimed_set(std::vector<ClaimedAddr> addrs) {
    for (const auto& c : addrs) {
        if (!port_index(c.port)) return make_error("no such port '" + c.port + "'");
        if (auto r = check_address_free(c.addr, "claimed local address"); !r) return r;
        if (is_vip(c.addr))
            return make_error("claimed local address " + addr_str(c.addr) +
                              " is a virtual service address here");
    }
    claimed_ = std::move(addrs);
    return {};
}

bool Director::is_lip(net::InetAddr addr) const {
    return std::any_of(laddrs_.begin(), laddrs_.end(),
                       [&](const auto& l) { return l->addr == addr; });
}

Result<void> Director::check_address_free(net::InetAddr addr, const char* what) const {
    for (const auto& a : addresses_)
        if (a.addr == addr)
            return make_error(std::string(what) + " " + addr_str(addr) +
                              " is already a director address");
    return {};
}

Result<void> Director::address_add(net::InetAddr addr, uint8_t prefix_len,
                                   const std::string& port) {
    if (prefix_len > (addr.is_v4() ? 32 : 128))
        return make_error(addr.is_v4() ? "prefix length must be 0..32"
                                       : "prefix length must be 0..128");
    if (!port_index(port)) return make_error("no such port '" + port + "'");
    if (auto r = check_address_free(addr, "address"); !r) return r;
    if (is_vip(addr)) return make_error("address " + addr_str(addr) + " is a virtual service address");
    if (is_lip(addr)) return make_error("address " + addr_str(addr) + " is a local address");
    addresses_.push_back(AddressEntry{addr, prefix_len, port});
    const net::InetPrefix prefix = net::InetPrefix::masked(addr, prefix_len);
    bool have = std::any_of(routes_.begin(), routes_.end(),
                            [&](const RouteSpec& r) { return r.prefix == prefix; });
    if (!have) routes_.push_back(RouteSpec{prefix, std::nullopt, port, true});
    return {};
}

Result<void> Director::address_del(net::InetAddr addr) {
    auto it = std::find_if(addresses_.begin(), addresses_.end(),
                           [&](const AddressEntry& a) { return a.addr == addr; });
    if (it == addresses_.end()) return make_error("no such address " + addr_str(addr));
    if (const Service* m = wan_user(addr))
        return make_error("address " + addr_str(addr) + " is the WAN address of SNAT service " +
                          to_string(*m->match) + ": remove it there first");
    for (const auto& [port, src] : tunnel_sources_)
        if (src == addr)
            return make_error("address " + addr_str(addr) + " is the tunnel source of port '" +
                              port + "': change or remove ip_defs `tunnel_source` first");
    uint8_t len = it->prefix_len;
    std::string port = it->port;
    addresses_.erase(it);
    const net::InetPrefix prefix = net::InetPrefix::masked(addr, len);
    bool still_used = std::any_of(addresses_.begin(), addresses_.end(), [&](const auto& a) {
        return net::InetPrefix::masked(a.addr, a.prefix_len) == prefix;
    });
    if (!still_used) {
        std::erase_if(routes_, [&](const RouteSpec& r) { return r.connected && r.prefix == prefix; });
    }
    return {};
}

Result<void> Director::tunnel_source_set(const std::string& port,
                                         std::optional<net::InetAddr> addr) {
    if (!port_index(port)) return make_error("no such port '" + port + "'");
    std::erase_if(tunnel_sources_, [&](const auto& t) { return t.first == port; });
    if (!addr) return {};
    // What the port offers, for the message: the addresses a tunnel may leave from.
    std::string own;
    for (const auto& a : addresses_)
        if (a.port == port) own += (own.empty() ? "" : ", ") + addr_str(a.addr);
    const std::string choose =
        own.empty()
            ? "port '" + port + "' has no director address yet: add one (ip_defs `address " +
                  "A.B.C.D/LEN dev " + port + "`)"
            : "use one of port '" + port + "': " + own;
    auto a = std::find_if(addresses_.begin(), addresses_.end(),
                          [&](const AddressEntry& e) { return e.addr == *addr; });
    if (a == addresses_.end())
        return make_error(addr_str(*addr) + " is not a director address (VIPs and local " +
                          "addresses do not qualify): add it (ip_defs `address " + addr_str(*addr) +
                          "/LEN dev " + port + "`) or " + choose);
    if (a->port != port)
        return make_error(addr_str(*addr) + " is on port '" + a->port + "', not on '" + port +
                          "' (the outer source must be an address of the port the tunnel " +
                          "leaves by): " + choose);
    tunnel_sources_.emplace_back(port, *addr);
    return {};
}

std::optional<net::InetAddr> Director::tunnel_source(const std::string& port) const {
    for (const auto& [p, src] : tunnel_sources_)
        if (p == port) return src;
    return std::nullopt;
}

Result<void> Director::route_add(net::InetPrefix prefix, std::optional<net::InetAddr> gateway,
                                 const std::string& port) {
    if (gateway && gateway->is_v4() != prefix.is_v4())
        return make_error("gateway " + addr_str(*gateway) + " is not of route " +
                          net::to_string(prefix) + "'s address family");
    if (!port_index(port)) return make_error("no such port '" + port + "'");
    for (const auto& r : routes_)
        if (r.prefix == prefix) return make_error("route " + net::to_string(prefix) + " exists");
    routes_.push_back(RouteSpec{prefix, gateway, port, false});
    return {};
}

Result<void> Director::route_del(net::InetPrefix prefix) {
    auto n = std::erase_if(routes_, [&](const RouteSpec& r) { return r.prefix == prefix; });
    if (n == 0) return make_error("no such route " + net::to_string(prefix));
    return {};
}

std::shared_ptr<Service> Director::service_find(const ServiceKey& key) const {
    for (const auto& s : services_)
        if (s->key == key) return s;
    return nullptr;
}

namespace {

// ops conns go once their datagram is sent: a reply through the director (FULLNAT, NAT) would
// find none to translate it back.
Result<void> ops_mode_check(uint32_t flags, FwdMode mode, const net::InetAddr& addr) {
    if (!(flags & kSvcFlagOps) || (mode != FwdMode::FullNat && mode != FwdMode::Nat)) return {};
    return make_error("real server " + net::to_string(addr) +
                      ": ops (one-packet scheduling) keeps " + "no connection, so " +
                      std::string(fwd_names(mode).keepalived) +
                      " replies could not be translated back: use DR or TUN real servers");
}

}  // namespace

Result<void> sched_check(std::string_view sched, uint32_t sched_flags, uint32_t mh_table_size) {
    const Scheduler* found = sched_find(sched);
    if (!found) return make_error("Scheduler not found");
    if (const uint32_t extra = sched_flags & ~found->flags; extra != 0) {
        std::string names;
        for (const std::string& n : sched_flag_names(sched, extra))
            names += (names.empty() ? "" : ",") + n;
        return make_error("scheduler flag " + names + " does not apply to scheduler " +
                          std::string(sched) + " (only sh and mh take -b sh-/mh-fallback,port)");
    }
    if (mh_table_size != 0 && (!sched_is_prime(mh_table_size) || mh_table_size > kMhMaxTableSize))
        return make_error("mh table size " + std::to_string(mh_table_size) +
                          " must be a prime number no larger than " +
                          std::to_string(kMhMaxTableSize) +
                          " (e.g. 65537, the default, or 251, 509, 1021, 2039, 4093, 131071)");
    return {};
}

Result<void> Director::service_add(const ServiceSpec& spec) {
    if (!spec.fwmark && spec.proto != 6 && spec.proto != 17)
        return make_error("protocol must be TCP or UDP");
    ServiceKey key = spec_key(spec);
    if (auto r = v6_service_check(key, spec.flags); !r) return r;
    if (service_find(key)) return make_error("Service already exists");
    if (auto r = sched_check(spec.sched, spec.sched_flags, spec.mh_table_size); !r) return r;
    auto prefix = persist_check(spec);
    if (!prefix) return make_error(prefix.error());
    if (auto r = hash_target_check(spec); !r) return r;
    // A firewall-mark service takes TCP and UDP: the options must suit both (proto 0).
    if (auto r = service_check(spec.fwmark ? uint8_t{0} : spec.proto, spec.fwd, spec.flags); !r)
        return r;
    if (!spec.fwmark) {
        if (auto r = check_address_free(spec.vip, "virtual address"); !r) return r;
        if (is_lip(spec.vip))
            return make_error("virtual address " + addr_str(spec.vip) + " is a local address");
    }
    auto svc = std::make_shared<Service>();
    svc->key = key;
    svc->sched_name = spec.sched;
    svc->sched_flags = spec.sched_flags;
    svc->mh_table_size = spec.mh_table_size;
    svc->quic_cid_len = spec.quic_cid_len;
    svc->fwd = spec.fwd;
    svc->flags = spec.flags;
    svc->conn_rate = spec.conn_rate;
    svc->persistence_s = spec.persistence_s;
    svc->persist_prefix = *prefix;
    services_.push_back(std::move(svc));
    return {};
}

Result<void> Director::service_edit(const ServiceSpec& spec) {
    auto svc = service_find(spec_key(spec));
    if (!svc) return make_error("No such service");
    const uint8_t proto = spec.fwmark ? uint8_t{0} : spec.proto;
    if (auto r = sched_check(spec.sched, spec.sched_flags, spec.mh_table_size); !r) return r;
    auto prefix = persist_check(spec);
    if (!prefix) return make_error(prefix.error());
    if (auto r = hash_target_check(spec); !r) return r;
    if (auto r = service_check(proto, spec.fwd, spec.flags); !r) return r;
    if (auto r = v6_service_check(svc->key, spec.flags); !r) return r;
    for (const auto& d : svc->dests) {
        if (auto r = service_check(proto, d->fwd, spec.flags); !r)
            return make_error("real server " + addr_str(d->addr) + ": " + r.error());
        if (auto r = ops_mode_check(spec.flags, d->fwd, d->addr); !r) return r;
    }
    // Scheduler and flags change for new connections; existing ones keep their dest.
    svc->sched_name = spec.sched;
    svc->sched_flags = spec.sched_flags;
    svc->mh_table_size = spec.mh_table_size;
    svc->quic_cid_len = spec.quic_cid_len;
    svc->flags = spec.flags;
    svc->conn_rate = spec.conn_rate;
    // Persistence too, for new conns: templates made before keep their dest until they expire.
    svc->persistence_s = spec.persistence_s;
    svc->persist_prefix = *prefix;
    return {};
}

Result<void> Director::service_del(const ServiceKey& key) {
    auto it = std::find_if(services_.begin(), services_.end(),
                           [&](const auto& s) { return s->key == key; });
    if (it == services_.end()) return make_error("No such service");
    service_retire(*it);
    services_.erase(it);
    laddrs_prune();
    return {};
}

void Director::service_retire(const std::shared_ptr<Service>& svc) {
    for (auto& d : svc->dests) {
        d->removed = true;
        dead_dests_.push_back(d);
        removed_.push_back(d);
    }
    dead_services_.push_back(svc);
}

void Director::services_clear() {
    while (!services_.empty()) (void)service_del(services_.front()->key);
    while (!matches_.empty()) (void)match_del(*matches_.front()->match);
}

// What dest_add and dest_edit both refuse. An edit replaces every attribute (ipvsadm -e), the
// method included: refuse what the data plane cannot do rather than keep the old method.
Result<void> Director::dest_check(const Service& svc, const DestSpec& spec) const {
    if (spec.weight < 0 || spec.weight > 65535) return make_error("Illegal weight specified");
    // IPVS refuses this too (ERANGE), whether or not an upper threshold is set.
    if (spec.lower_threshold > spec.upper_threshold)
        return make_error("lower threshold " + std::to_string(spec.lower_threshold) +
                          " is higher than upper threshold " +
                          std::to_string(spec.upper_threshold));
    if ((spec.fwd == FwdMode::Tun || spec.fwd == FwdMode::NatTun) &&
        spec.tun_type == TunType::Gue && spec.tun_port == 0)
        return make_error("GUE tunnels need a destination port");
    // DR and TUN leave the packet's destination (VIP:port) as it is: the RS serves the VIP's
    // own port. ipvsadm forces the port silently; xvs refuses a port it would not use.
    // Port 0: the packet's port, whatever it is (firewall-mark and port-0 services).
    if ((spec.fwd == FwdMode::Dr || spec.fwd == FwdMode::Tun) && spec.port != 0 &&
        spec.port != net::ntoh16(svc.key.port))
        return make_error(std::string(fwd_names(spec.fwd).keepalived) + " real server " +
                          addr_str(spec.addr) + ":" + std::to_string(spec.port) +
                          " cannot map ports: give the service's port " +
                          std::to_string(net::ntoh16(svc.key.port)));
    // DR changes only the MAC: the RS must be on a link of the director, not behind a gateway.
    if (spec.fwd == FwdMode::Dr) {
        const bool on_link = std::any_of(routes_.begin(), routes_.end(), [&](const RouteSpec& r) {
            return !r.gateway && r.prefix.contains(spec.addr);
        });
        if (!on_link)
            return make_error("DR real server " + addr_str(spec.addr) +
                              " is not on a directly connected network of the director (DR "
                              "changes only the MAC address): use TUN or NAT to reach it");
    }
    if (auto r = ops_mode_check(svc.flags, spec.fwd, spec.addr); !r) return r;
    const net::InetAddr* other = !svc.dests.empty()    ? &svc.dests.front()->addr
                                 : !svc.laddrs.empty() ? &svc.laddrs.front()->addr
                                                       : nullptr;
    if (auto r = family_check(svc.key, spec.addr, "real server", other, spec.fwd); !r) return r;
    return service_check(svc.key.proto, spec.fwd, svc.flags);
}

Result<void> Director::fwmark_set(std::vector<FwmarkDef> defs) {
    for (const FwmarkDef& d : defs) {
        if (d.mark == 0) return make_error("firewall mark 0 means no mark: use 1 or more");
        for (const FwmarkEntry& e : d.entries) {
            const std::string what =
                "fwmark " + std::to_string(d.mark) + " entry " + net::to_string(e.dst);
            if (fwmark_prefix_too_wide(e.dst))
                return make_error(what + ": a prefix may stand for at most " +
                                  std::to_string(kMaxFwmarkAddrs) + " addresses (" +
                                  fwmark_shortest_prefix(e.dst) +
                                  " or longer): each becomes a VIP xvs answers ARP/NDP for");
            if (e.port_first > e.port_last) return make_error(what + ": empty port range");
            if (e.proto != 0 && e.proto != 6 && e.proto != 17)
                return make_error(what + ": protocol must be tcp or udp");
            Result<void> free_ok;
            fwmark_entry_addrs(e.dst, [&](const net::InetAddr& a) {
                if (!free_ok) return;
                if (auto r = check_address_free(a, "firewall-mark address"); !r)
                    free_ok = r;
                else if (is_lip(a))
                    free_ok =
                        make_error("firewall-mark address " + addr_str(a) + " is a local address");
            });
            if (!free_ok) return free_ok;
        }
    }
    fwmarks_ = std::move(defs);
    return {};
}

Result<void> Director::dest_add(const ServiceKey& key, const DestSpec& spec) {
    auto svc = service_find(key);
    if (!svc) return make_error("No such service");
    if (auto r = dest_check(*svc, spec); !r) return r;
    for (const auto& d : svc->dests)
        if (d->addr == spec.addr && d->port == spec.port)
            return make_error("Destination already exists");
    std::shared_ptr<Dest> dest;
    std::erase_if(trash_, [](const Trashed& t) { return t.dest.expired(); });
    for (auto it = trash_.begin(); it != trash_.end(); ++it) {
        auto d = it->dest.lock();
        if (it->svc.lock() != svc || d->addr != spec.addr || d->port != spec.port) continue;
        dest = std::move(d);
        trash_.erase(it);
        std::erase(dead_dests_, dest);
        break;
    }
    if (!dest) dest = std::make_shared<Dest>();
    dest->svc = svc.get();
    dest->addr = spec.addr;
    dest->port = spec.port;
    dest->fwd = spec.fwd;
    dest->tun_type = spec.tun_type;
    dest->tun_port = spec.tun_port;
    dest->weight = spec.weight;
    dest->upper_threshold = spec.upper_threshold;
    dest->lower_threshold = spec.lower_threshold;
    dest->removed = false;  // a dest from the trash is available again
    svc->dests.push_back(std::move(dest));
    return {};
}

Result<void> Director::dest_edit(const ServiceKey& key, const DestSpec& spec) {
    auto svc = service_find(key);
    if (!svc) return make_error("No such service");
    if (auto r = dest_check(*svc, spec); !r) return r;
    for (auto& d : svc->dests) {
        if (d->addr == spec.addr && d->port == spec.port) {
            d->weight = spec.weight;
            d->upper_threshold = spec.upper_threshold;
            d->lower_threshold = spec.lower_threshold;
            d->fwd = spec.fwd;  // new conns only: a conn keeps the mode it was created with
            d->tun_type = spec.tun_type;
            d->tun_port = spec.tun_port;
            return {};
        }
    }
    return make_error("No such destination");
}

Result<void> Director::dest_del(const ServiceKey& key, net::InetAddr addr, uint16_t port) {
    auto svc = service_find(key);
    if (!svc) return make_error("No such service");
    auto it = std::find_if(svc->dests.begin(), svc->dests.end(),
                           [&](const auto& d) { return d->addr == addr && d->port == port; });
    if (it == svc->dests.end()) return make_error("No such destination");
    // Its conns stay until they expire, their packets dropped (drop_dest_unavailable), or
    // are flushed at once with expire_nodest_conn (IPVS).
    (*it)->removed = true;
    dead_dests_.push_back(*it);
    removed_.push_back(*it);
    trash_.push_back(Trashed{svc, *it});
    svc->dests.erase(it);
    return {};
}

Result<void> Director::laddr_add(const ServiceKey& key, net::InetAddr lip,
                                 const std::string& port) {
    auto svc = service_find(key);
    if (!svc) return make_error("No such service");
    const net::InetAddr* other = !svc->dests.empty()    ? &svc->dests.front()->addr
                                 : !svc->laddrs.empty() ? &svc->laddrs.front()->addr
                                                        : nullptr;
    if (auto r = family_check(svc->key, lip, "local address", other, FwdMode::FullNat); !r)
        return r;
    if (!port_index(port)) return make_error("no such port '" + port + "'");
    if (auto r = check_address_free(lip, "local address"); !r) return r;
    if (is_vip(lip)) return make_error("local address " + addr_str(lip) + " is a virtual service address");
    for (const auto& l : svc->laddrs)
        if (l->addr == lip) return make_error("Local address already exists");
    std::shared_ptr<LocalAddr> laddr;
    for (const auto& l : laddrs_)
        if (l->addr == lip) laddr = l;
    if (laddr && laddr->port_name != port)
        return make_error("local address " + addr_str(lip) + " is already used on port '" +
                          laddr->port_name + "'");
    if (!laddr) {
        // A LIP removed earlier may still carry connections: take the same object back, so its
        // port pools keep handing out only ports those connections do not hold.
        auto dead = std::find_if(dead_laddrs_.begin(), dead_laddrs_.end(), [&](const auto& l) {
            return l->addr == lip && l->port_name == port;
        });
        if (dead != dead_laddrs_.end()) {
            laddr = *dead;
            dead_laddrs_.erase(dead);
            laddrs_.push_back(laddr);
        }
    }
    if (!laddr) {
        laddr = std::make_shared<LocalAddr>(lip, port, nworkers_);
        laddrs_.push_back(laddr);
    }
    svc->laddrs.push_back(std::move(laddr));
    return {};
}

Result<void> Director::laddr_del(const ServiceKey& key, net::InetAddr lip) {
    auto svc = service_find(key);
    if (!svc) return make_error("No such service");
    auto n = std::erase_if(svc->laddrs, [&](const auto& l) { return l->addr == lip; });
    if (n == 0) return make_error("No such local address");
    laddrs_prune();
    return {};
}

namespace {

std::vector<net::InetPrefix>& acl_of(Service& svc, AclKind kind) {
    return kind == AclKind::Black ? svc.blacklist : svc.whitelist;
}

const char* acl_name(AclKind kind) { return kind == AclKind::Black ? "blacklist" : "whitelist"; }

// A bound on list size keeps a runaway script from growing snapshots without end; the lookup
// itself is O(log n) at any size.
constexpr size_t kMaxAclEntries = 65536;

}  // namespace

Result<void> Director::acl_add(const ServiceKey& key, AclKind kind, net::InetPrefix prefix) {
    auto svc = service_find(key);
    if (!svc) return make_error("No such service");
    auto& list = acl_of(*svc, kind);
    if (std::find(list.begin(), list.end(), prefix) != list.end())
        return make_error(net::to_string(prefix) + " is already in the " + acl_name(kind));
    if (list.size() >= kMaxAclEntries)
        return make_error(std::string(acl_name(kind)) + " is full (at most " +
                          std::to_string(kMaxAclEntries) + " entries)");
    list.push_back(prefix);
    return {};
}

Result<void> Director::acl_del(const ServiceKey& key, AclKind kind, net::InetPrefix prefix) {
    auto svc = service_find(key);
    if (!svc) return make_error("No such service");
    if (std::erase(acl_of(*svc, kind), prefix) == 0)
        return make_error(net::to_string(prefix) + " is not in the " + acl_name(kind));
    return {};
}

Result<void> Director::acl_set(const ServiceKey& key, AclKind kind,
                               std::vector<net::InetPrefix> list) {
    auto svc = service_find(key);
    if (!svc) return make_error("No such service");
    if (list.size() > kMaxAclEntries)
        return make_error(std::string(acl_name(kind)) + " too long (at most " +
                          std::to_string(kMaxAclEntries) + " entries)");
    acl_of(*svc, kind) = std::move(list);
    return {};
}

std::unique_ptr<Snapshot> Director::build() {
    auto snap = std::make_unique<Snapshot>();
    snap->timeouts = timeouts_;
    snap->uoa_max_trail = uoa_max_trail_;
    snap->expire_nodest_conn = expire_nodest_conn_;
    snap->reschedule_refused = reschedule_refused_;
    snap->expire_quiescent_template = expire_quiescent_template_;
    snap->synproxy = synproxy_;
    snap->cookie = cookie_;
    stack::StackView& sv = snap->stack;
    for (const auto& p : ports_) {
        sv.ports.push_back(stack::PortView{p.port_id, p.mac, p.mtu, p.name});
        sv.ports.back().has_exception = p.exception_port_id.has_value();
        sv.ports.back().exception_port_id = p.exception_port_id.value_or(0);
        sv.ports.back().max_rx_frame =
            std::max<uint32_t>(p.mtu + sizeof(net::EtherHdr), p.max_rx_frame);
    }
    sv.port_source.assign(ports_.size(), net::InetAddr{});
    sv.port_source6.assign(ports_.size(), net::InetAddr{});
    // The first own address of each family on a port is its source for ARP/ND.
    auto source_candidate = [&](uint8_t port, const net::InetAddr& a) {
        net::InetAddr& src = a.is_v4() ? sv.port_source[port] : sv.port_source6[port];
        if (src.is_unspecified()) src = a;
    };

    std::vector<std::pair<stack::AddrKey, stack::OwnAddr>> own;
    for (const auto& a : addresses_) {
        uint8_t port = *port_index(a.port);
        own.push_back({{a.addr}, {stack::AddrKind::Director, port, nullptr}});
        source_candidate(port, a.addr);
    }
    for (const auto& r : routes_) {
        stack::RouteEntry e;
        e.dst = r.prefix;
        if (r.prefix.is_v4()) {
            e.v4_mask = r.prefix.len == 0 ? 0 : ~uint32_t(0) << (32 - r.prefix.len);
            e.v4_prefix = __builtin_bswap32(r.prefix.addr.v4_be()) & e.v4_mask;
        }
        e.port = *port_index(r.port);
        if (r.gateway) e.gateway = *r.gateway;
        sv.routes.push_back(e);
    }
    std::stable_sort(sv.routes.begin(), sv.routes.end(),
                     [](const auto& a, const auto& b) { return a.dst.len > b.dst.len; });

    // Used LIPs: owned on their port, per the registry.
    std::vector<std::shared_ptr<LocalAddr>> used_laddrs;
    for (const auto& svc : services_)
        for (const auto& l : svc->laddrs)
            if (std::find(used_laddrs.begin(), used_laddrs.end(), l) == used_laddrs.end())
                used_laddrs.push_back(l);
    for (const auto& l : used_laddrs) {
        uint8_t port = *port_index(l->port_name);
        // A backup (not yet active) makes no conn with its own local addresses and must not
        // answer for them while an active peer may have claimed them (session sync).
        own.push_back({{l->addr}, {stack::AddrKind::Lip, port, l.get(), !vip_arp_}});
        // Announced with the VIPs (a start with session sync, a takeover): a peer may have
        // claimed them while this director was down, and the real servers still send there.
        if (vip_arp_ && l->addr.is_v4()) sv.garp.push_back({l->addr, port});
        source_candidate(port, l->addr);
        snap->keep_laddrs.push_back(l);
    }
    // A failed peer's local addresses, taken over (session sync): owned like ours, no pool.
    for (const auto& c : claimed_) {
        const stack::AddrKey ck{c.addr};
        if (std::any_of(own.begin(), own.end(), [&](const auto& o) { return o.first == ck; }))
            continue;
        const uint8_t port = *port_index(c.port);
        own.push_back({ck, {stack::AddrKind::Lip, port, nullptr}});
        if (c.addr.is_v4()) sv.garp.push_back({c.addr, port});
    }
    sv.garp_generation = garp_generation_;
    // NatTun GUE: replies come back in GUE to the dest's tunnel port at a local address.
    for (const auto& svc : services_)
        for (const auto& d : svc->dests) {
            if (d->fwd.load(std::memory_order_relaxed) != FwdMode::NatTun ||
                d->tun_type.load(std::memory_order_relaxed) != TunType::Gue)
                continue;
            const uint16_t p = net::hton16(d->tun_port.load(std::memory_order_relaxed));
            if (std::find(sv.nattun_gue_ports.begin(), sv.nattun_gue_ports.end(), p) ==
                sv.nattun_gue_ports.end())
                sv.nattun_gue_ports.push_back(p);
        }

    // A VIP lives on the port of the director subnet that contains it, else on the port of the
    // default route (where clients come from), else on the first port.
    auto own_vip = [&](const net::InetAddr& vip) {
        uint8_t vport = 0;
        bool placed = false;
        for (const auto& a : addresses_) {
            if (net::InetPrefix::masked(a.addr, a.prefix_len).contains(vip)) {
                vport = *port_index(a.port);
                placed = true;
                break;
            }
        }
        if (!placed) {
            for (const auto& r : routes_)
                if (r.prefix.len == 0) vport = *port_index(r.port);
        }
        stack::AddrKey vk{vip};
        if (std::none_of(own.begin(), own.end(), [&](const auto& o) { return o.first == vk; })) {
            own.push_back({vk, {stack::AddrKind::Vip, vport, nullptr, !vip_arp_}});
            if (vip_arp_ && vip.is_v4()) sv.garp.push_back({vip, vport});
        }
        if (!ports_.empty()) source_candidate(vport, vip);
    };
    std::vector<std::pair<ServiceKey, const ServiceView*>> svc_items;
    std::unordered_map<const Service*, CachedView> next_views;
    for (const auto& svc : services_) {
        if (!svc->key.fwmark) own_vip(svc->key.vip);
        if (!svc->key.fwmark && svc->key.port == 0) snap->has_port0 = true;

        auto view = service_view(*svc, next_views);
        for (const auto& d : svc->dests) snap->keep_dests.push_back(d);
        svc_items.push_back({svc->key, view.get()});
        snap->service_views.push_back(std::move(view));
        snap->keep_services.push_back(svc);
    }
    build_matches(*snap);
    // The firewall-mark classifier: in order, the entries whose family's service of the mark
    // exists (IPVS: a mark has a service per family; an IPv4 packet never meets the IPv6 one).
    for (const FwmarkDef& d : fwmarks_) {
        for (const FwmarkEntry& e : d.entries) {
            const ServiceKey want = make_fwmark_key(d.mark, !e.dst.is_v4());
            const ServiceView* view = nullptr;
            for (const auto& [k, v] : svc_items)
                if (k == want) view = v;
            if (!view) continue;
            snap->fwmark_rules.push_back(fwmark_rule(e, d.mark, view));
            fwmark_entry_addrs(e.dst, own_vip);
        }
    }
    for (auto& r : sv.routes) {
        r.source =
            r.port < sv.port_source.size() ? sv.source_of(r.port, r.dst.addr) : net::InetAddr{};
    }
    for (size_t i = 0; i < sv.ports.size(); ++i) {
        const auto src = tunnel_source(ports_[i].name);
        sv.ports[i].tunnel_source = src && src->is_v4() ? *src : sv.port_source[i];
        sv.ports[i].tunnel_source6 = src && !src->is_v4() ? *src : sv.port_source6[i];
    }
    sv.set_own(own);
    snap->services = FlatMap<ServiceKey, const ServiceView*>(svc_items);
    views_ = std::move(next_views);  // only the views of services still configured stay candidates
    return snap;
}

std::shared_ptr<const ServiceView> Director::service_view(
    Service& svc, std::unordered_map<const Service*, CachedView>& next) {
    ViewInputs in;
    in.sched = sched_find(svc.sched_name);
    in.fwd = svc.fwd;
    in.flags = svc.flags;
    in.quic_cid_len = svc.quic_cid_len;
    in.blacklist = svc.blacklist;
    in.whitelist = svc.whitelist;
    in.conn_rate = svc.conn_rate;
    in.persist_s = svc.persistence_s;
    in.persist_prefix = svc.persist_prefix;
    for (const auto& d : svc.dests) {
        in.dests.push_back(d.get());
        in.weights.push_back(d->weight.load(std::memory_order_relaxed));
    }
    // Thresholds only when some dest has one: schedulers skip the check on an empty list.
    if (std::any_of(svc.dests.begin(), svc.dests.end(),
                    [](const auto& d) { return d->upper_threshold != 0; })) {
        for (const auto& d : svc.dests)
            in.limits.push_back(DestLimit{d->upper_threshold, d->lower_threshold});
    }
    SchedPlan plan;
    sched_plan_inputs(svc, plan, *in.sched, nworkers_);
    in.sched_flags = plan.flags;
    in.table_size = plan.table_size;
    in.locality = plan.locality;
    for (const auto& l : svc.laddrs) in.laddrs.push_back(l.get());

    if (auto it = views_.find(&svc); it != views_.end() && it->second.inputs == in) {
        return next.emplace(&svc, it->second).first->second.view;
    }
    auto view = std::make_shared<ServiceView>();
    view->svc = &svc;
    view->sched = in.sched;
    view->fwd = in.fwd;
    view->flags = in.flags;
    view->quic_cid_len = in.quic_cid_len;
    view->blacklist = net::PrefixSet(in.blacklist);
    view->whitelist = net::PrefixSet(in.whitelist);
    view->conn_rate = in.conn_rate;
    view->persist_s = in.persist_s;
    const bool v4 = svc.key.vip.is_v4();  // a fwmark service's too (make_fwmark_key)
    const net::InetAddr ones = net::InetAddr::from_words(~uint64_t{0}, ~uint64_t{0});
    view->persist_mask4 = net::InetPrefix::masked(net::InetAddr::v4(~uint32_t{0}),
                                                  v4 ? std::min<uint8_t>(in.persist_prefix, 32) : 32)
                              .addr;
    view->persist_mask6 = v4 ? ones : net::InetPrefix::masked(ones, in.persist_prefix).addr;
    plan.dests = in.dests;
    plan.weights = in.weights;
    plan.limits = in.limits;
    plan.workers = nworkers_;
    view->plan = std::move(plan);
    view->sched->build(view->plan);
    view->laddrs = in.laddrs;
    next.emplace(&svc, CachedView{std::move(in), view});
    return view;
}

uint64_t Director::commit() {
    auto snap = build();
    snap->generation = ++generation_;
    const Snapshot* raw = snap.get();
    current_.store(raw, std::memory_order_release);
    if (current_owner_) retired_.push_back(Retired{std::move(current_owner_), generation_});
    current_owner_ = std::move(snap);
    laddrs_prune();
    if (commit_waits_ && !wait_quiescent(generation_, kCommitWaitLimit)) ++commit_wait_timeouts_;
    reclaim();
    return generation_;
}

bool Director::wait_quiescent(uint64_t generation, std::chrono::milliseconds limit) const {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
        bool all = true;
        for (unsigned w = 0; w < nworkers_ && all; ++w)
            all = seen_[w].value.load(std::memory_order_acquire) >= generation;
        if (all) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        // A worker announces at the top of every poll: microseconds when busy, at most one
        // adaptive back-off sleep when idle.
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

// Drops LIPs no service uses any more from the registry (they live on while conns do). Done at
// once on removal, so the address is free for another role (director address, another port)
// in the same batch of changes.
void Director::laddrs_prune() {
    for (auto it = laddrs_.begin(); it != laddrs_.end();) {
        bool used = std::any_of(services_.begin(), services_.end(), [&](const auto& s) {
            return std::find(s->laddrs.begin(), s->laddrs.end(), *it) != s->laddrs.end();
        });
        if (!used) {
            dead_laddrs_.push_back(*it);
            it = laddrs_.erase(it);
        } else {
            ++it;
        }
    }
}

void Director::reclaim() {
    uint64_t min_seen = UINT64_MAX;
    for (unsigned w = 0; w < nworkers_; ++w)
        min_seen = std::min(min_seen, seen_[w].value.load(std::memory_order_acquire));
    std::erase_if(retired_, [&](const Retired& r) { return r.superseded_by <= min_seen; });
    // Only the registry/snapshots and conns can hold these; use_count 1 = only us.
    std::erase_if(dead_dests_, [](const auto& d) { return d.use_count() == 1 && d->sum_refs() == 0; });
    std::erase_if(dead_services_,
                  [](const auto& s) { return s.use_count() == 1 && s->sum_refs() == 0; });
    std::erase_if(dead_laddrs_,
                  [](const auto& l) { return l.use_count() == 1 && l->sum_refs() == 0; });
}

size_t Director::retired_count() const { return retired_.size(); }

std::vector<std::shared_ptr<Dest>> Director::take_removed_dests() {
    std::vector<std::shared_ptr<Dest>> out;
    for (const auto& w : removed_)
        if (auto d = w.lock()) out.push_back(std::move(d));
    removed_.clear();
    return out;
}

}  // namespace xvs::lb
