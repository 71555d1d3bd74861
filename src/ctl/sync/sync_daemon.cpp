// The session sync daemon (ctl/sync/sync_daemon.h). Control thread only: it owns the socket,
// the peer table and the claims; workers are reached through their rings and command channels.
#include "ctl/sync/sync_daemon.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "ctl/log.h"
#include "lb/laddr.h"
#include "lb/service.h"
#include "net/byteorder.h"

namespace xvs::ctl {

namespace {

constexpr uint64_t kCommandTimeoutMs = 2000;

std::string addr_text(const net::InetAddr& a) { return net::to_string(a); }

std::string_view role_name(SyncRoleDef r) {
    switch (r) {
        case SyncRoleDef::Master: return "master";
        case SyncRoleDef::Backup: return "backup";
        case SyncRoleDef::Both: return "both";
    }
    return "both";
}
std::string_view role_name(net::SyncRole r) {
    switch (r) {
        case net::SyncRole::master: return "master";
        case net::SyncRole::backup: return "backup";
        case net::SyncRole::both: return "both";
    }
    return "both";
}
net::SyncRole wire_role(SyncRoleDef r) {
    return r == SyncRoleDef::Master   ? net::SyncRole::master
           : r == SyncRoleDef::Backup ? net::SyncRole::backup
                                      : net::SyncRole::both;
}

sockaddr_in sockaddr_of(const net::InetAddr& a, uint16_t port) {
    sockaddr_in s{};
    s.sin_family = AF_INET;
    s.sin_port = htons(port);
    s.sin_addr.s_addr = a.v4_be();
    return s;
}

}  // namespace

net::SyncConn sync_conn_of(const lb::SyncRecord& r) {
    net::SyncConn c;
    c.v6 = !r.caddr.is_v4();
    c.proto = r.proto;
    const bool tcp = r.proto == net::kIpProtoTcp;
    c.state = tcp ? static_cast<uint16_t>(r.state) : 0;
    switch (r.mode) {
        case lb::FwdMode::Dr: c.flags = net::kIpvsFwdDroute; break;
        case lb::FwdMode::Tun: c.flags = net::kIpvsFwdTunnel; break;
        default: c.flags = net::kIpvsFwdMasq; break;  // IPVS has no FULLNAT: its nearest
    }
    if (tcp && !lb::tcp_state_is_active(r.state)) c.flags |= net::kIpvsConnInactive;
    c.cport = r.cport;
    c.vport = r.vport;
    c.dport = r.dport;
    c.timeout_s = r.timeout_s;
    c.caddr = r.caddr;
    c.vaddr = r.vaddr;
    c.daddr = r.daddr;
    c.has_xvs = true;
    c.xvs.mode = static_cast<uint8_t>(r.mode);
    c.xvs.conn_flags = r.flags;
    c.xvs.laddr = r.laddr_ip;
    c.xvs.lport = r.lport;
    if (r.flags & (lb::kConnToa | lb::kConnPpV1 | lb::kConnPpV2 | lb::kConnSynAckSeen)) {
        c.has_feat = true;
        c.feat = {r.feat.rs_isn, r.feat.client_isn, r.feat.pp_window, r.feat.pp_len,
                  r.feat.pp_rexmits};
    }
    if (r.flags & lb::kConnSynProxy) {
        c.has_synproxy = true;
        c.synproxy = {r.sp.seq_delta, r.sp.ts_delta, r.sp.rs_wscale, r.sp.our_wscale};
    }
    return c;
}

std::optional<lb::SyncRecord> sync_record_of(const net::SyncConn& c) {
    if (c.flags & net::kIpvsConnTemplate) return std::nullopt;  // no persistence sync yet
    lb::SyncRecord r;
    r.caddr = c.caddr;
    r.vaddr = c.vaddr;
    r.daddr = c.daddr;
    r.cport = c.cport;
    r.vport = c.vport;
    r.dport = c.dport;
    r.proto = c.proto;
    r.timeout_s = c.timeout_s;
    if (c.proto == net::kIpProtoTcp) {
        if (c.state >= lb::kTcpStateCount) return std::nullopt;
        r.state = static_cast<lb::TcpState>(c.state);
    }
    if (c.has_xvs) {
        if (c.xvs.mode >= lb::kFwdModeCount) return std::nullopt;
        r.mode = static_cast<lb::FwdMode>(c.xvs.mode);
        r.laddr_ip = c.xvs.laddr;
        r.lport = c.xvs.lport;
        r.flags = c.xvs.conn_flags & lb::kSyncConnFlags;
    } else {
        // An IPVS peer's conn: its forwarding method; no local address (the outbound tuple
        // ends at the client, as conn_create makes it for these modes).
        switch (c.flags & net::kIpvsFwdMask) {
            case net::kIpvsFwdMasq: r.mode = lb::FwdMode::Nat; break;
            case net::kIpvsFwdDroute: r.mode = lb::FwdMode::Dr; break;
            case net::kIpvsFwdTunnel: r.mode = lb::FwdMode::Tun; break;
            default: return std::nullopt;
        }
        r.laddr_ip = c.caddr;
        r.lport = c.cport;
    }
    if (c.has_feat) {
        r.feat.rs_isn = c.feat.rs_isn;
        r.feat.client_isn = c.feat.client_isn;
        r.feat.pp_window = c.feat.pp_window;
        r.feat.pp_len = c.feat.pp_len;
        r.feat.pp_rexmits = c.feat.pp_rexmits;
    }
    if (c.has_synproxy)
        r.sp = {c.synproxy.seq_delta, c.synproxy.ts_delta, c.synproxy.rs_wscale,
                c.synproxy.our_wscale};
    else
        r.flags &= static_cast<uint16_t>(~lb::kConnSynProxy);  // no deltas: cannot translate
    return r;
}

SyncDaemon::SyncDaemon(const SyncDefs& defs, lb::Director& director,
                       std::vector<lb::Worker*> workers)
    : defs_(defs),
      director_(director),
      workers_(std::move(workers)),
      enc_(static_cast<uint8_t>(defs.syncid), defs.max_message) {
    drained_.resize(256);
    std::random_device rd;
    node_id_ = rd() | 1u;  // a new one per start: peers see a restart
    active_ = defs_.role != SyncRoleDef::Backup;
}

SyncDaemon::~SyncDaemon() {
    for (auto* w : workers_) w->sync_ring_set(nullptr);  // (workers are stopped by now)
}

Result<std::unique_ptr<SyncDaemon>> SyncDaemon::create(const SyncDefs& defs, lb::Director& director,
                                                       const std::vector<lb::Worker*>& workers) {
    std::unique_ptr<SyncDaemon> d(new SyncDaemon(defs, director, workers));
    if (auto r = d->open_socket(); !r) return make_error(r.error());
    for (auto* w : d->workers_) {
        d->rings_.push_back(std::make_unique<lb::SyncRing>(defs.ring_size));
        w->sync_ring_set(d->rings_.back().get());
    }
    d->claim_port_ = defs.claim_dev;
    if (d->claim_port_.empty())
        for (const auto& svc : director.services())
            for (const auto& l : svc->laddrs)
                if (d->claim_port_.empty()) d->claim_port_ = l->port_name;
    if (defs.role == SyncRoleDef::Backup) {
        director.vip_arp_set(false);
    } else {
        // Active from the start: announce the VIPs and this director's local addresses, which
        // a peer may have claimed while it was down (the peer gives them back once it hears
        // this one, within a heartbeat; the three announcements span two seconds).
        director.garp_request();
    }
    director.commit();
    std::string where = defs.peers.empty() ? "group " + addr_text(defs.mcast_group) : "peers";
    for (const auto& p : defs.peers) where += " " + addr_text(p);
    log_info("sync: syncid " + std::to_string(defs.syncid) + ", role " +
             std::string(role_name(defs.role)) + ", port " + std::to_string(defs.port) + ", " +
             where + (defs.role == SyncRoleDef::Backup ? "; VIPs silent until takeover" : "") +
             (d->claim_port_.empty() ? "; no local address port: a failed peer's LIPs are not claimed"
                                     : ""));
    return d;
}

Result<void> SyncDaemon::open_socket() {
    UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (s.get() < 0) return make_error(std::string("sync: socket: ") + std::strerror(errno));
    const int one = 1;
    setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // The source may not exist yet (the kernel's address on the exception path is added once
    // xvsd made its TAP): bind anyway.
    setsockopt(s.get(), IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
    const bool unicast = !defs_.peers.empty();
    const net::InetAddr any = net::InetAddr::v4(0);
    sockaddr_in a = sockaddr_of(unicast && defs_.source ? *defs_.source : any, defs_.port);
    if (::bind(s.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
        return make_error("sync_defs: cannot bind UDP port " + std::to_string(defs_.port) + ": " +
                          std::strerror(errno) + " (another sync daemon on this host?)");
    if (!unicast) {
        const int ttl = 1, loop = 0;
        setsockopt(s.get(), IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl);
        setsockopt(s.get(), IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop);
    }
    sock_ = std::move(s);
    return {};
}

std::vector<net::InetAddr> SyncDaemon::own_laddrs() const {
    std::vector<net::InetAddr> out;
    for (const auto& svc : director_.services())
        for (const auto& l : svc->laddrs)
            if (std::find(out.begin(), out.end(), l->addr) == out.end()) out.push_back(l->addr);
    return out;
}

void SyncDaemon::tick(uint64_t now_ms) {
    if (defs_.peers.empty() && !joined_) {
        // Joined once the source address exists (it may come after xvsd starts).
        ip_mreqn m{};
        m.imr_multiaddr.s_addr = defs_.mcast_group.v4_be();
        m.imr_address.s_addr = defs_.source ? defs_.source->v4_be() : 0;
        if (setsockopt(sock_.get(), IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) == 0 ||
            errno == EADDRINUSE) {
            joined_ = true;
            if (defs_.source) {
                in_addr ifa{};
                ifa.s_addr = defs_.source->v4_be();
                setsockopt(sock_.get(), IPPROTO_IP, IP_MULTICAST_IF, &ifa, sizeof ifa);
            }
            log_info("sync: joined " + addr_text(defs_.mcast_group));
        }
    }
    receive(now_ms);
    drain_and_send();
    if (now_ms >= next_heartbeat_ms_) {
        send_control(net::SyncControlKind::heartbeat, nullptr);
        next_heartbeat_ms_ = now_ms + defs_.heartbeat_ms;
    }
    check_peers(now_ms);
}

void SyncDaemon::receive(uint64_t now_ms) {
    static uint8_t buf[net::kSyncMaxMessage + 1];
    for (int i = 0; i < 1024; ++i) {
        sockaddr_in from{};
        socklen_t fl = sizeof from;
        const ssize_t n = ::recvfrom(sock_.get(), buf, sizeof buf, MSG_DONTWAIT,
                                     reinterpret_cast<sockaddr*>(&from), &fl);
        if (n < 0) return;
        handle({buf, static_cast<size_t>(n)}, net::InetAddr::v4(from.sin_addr.s_addr), now_ms);
    }
}

SyncDaemon::Peer& SyncDaemon::peer_of(const net::InetAddr& from, uint64_t now_ms) {
    for (auto& p : peers_)
        if (p.addr == from) return p;
    Peer p;
    p.addr = from;
    p.last_seen_ms = now_ms;
    peers_.push_back(p);
    log_info("sync: peer " + addr_text(from) + " heard");
    return peers_.back();
}

void SyncDaemon::handle(std::span<const uint8_t> d, const net::InetAddr& from, uint64_t now_ms) {
    auto m = net::sync_decode(d);
    if (!m) {
        ++stats_.messages_dropped;
        log_limited("sync decode", LogLevel::Warning, "sync: from " + addr_text(from) + ": " + m.error());
        return;
    }
    if (defs_.syncid != 0 && m->syncid != defs_.syncid) {
        ++stats_.messages_dropped;
        log_limited("sync syncid", LogLevel::Warning,
                    "sync: from " + addr_text(from) + ": syncid " + std::to_string(m->syncid) +
                        ", this director's is " + std::to_string(defs_.syncid) + ": ignored");
        return;
    }
    if (m->has_control && m->control.node_id == node_id_) return;  // our own, looped back
    ++stats_.messages_received;
    Peer& p = peer_of(from, now_ms);
    p.last_seen_ms = now_ms;
    if (p.failed) {
        p.failed = false;
        log_info("sync: peer " + addr_text(from) + " is back");
    }
    if (m->has_control) {
        const net::SyncControl& c = m->control;
        if (p.node_id != c.node_id) {
            if (p.node_id) log_info("sync: peer " + addr_text(from) + " restarted");
            p.node_id = c.node_id;
            p.resync_asked = false;
        }
        p.announced = true;
        p.role = c.role;
        p.active = c.flags & net::kSyncControlActive;
        p.laddrs = c.laddrs;
        if (c.kind == net::SyncControlKind::resync_request) {
            serve_resync(from);
        } else if (c.kind == net::SyncControlKind::resync_end) {
            log_info("sync: resync from " + addr_text(from) + " done: " +
                     std::to_string(p.conns_received) + " conns received from it so far");
        }
        // The peer answers for its own local addresses again: give back what we claimed.
        if (p.active && !claimed_.empty()) {
            const size_t before = claimed_.size();
            std::erase_if(claimed_, [&](const net::InetAddr& a) {
                return std::find(p.laddrs.begin(), p.laddrs.end(), a) != p.laddrs.end();
            });
            if (claimed_.size() != before) {
                log_info("sync: peer " + addr_text(from) + " is active again: its local addresses given back");
                apply_claims(false);
            }
        }
        // A master back in charge pre-empts a backup that took over (as VRRP priority does).
        if (p.active && p.role == net::SyncRole::master && defs_.role == SyncRoleDef::Backup && active_)
            (void)release("master " + addr_text(from) + " is active");
        if (defs_.resync && !p.resync_asked) {
            p.resync_asked = true;
            ++stats_.resyncs_requested;
            log_info("sync: asking " + addr_text(from) + " for a full resync");
            send_control(net::SyncControlKind::resync_request, &from);
        }
    }
    stats_.conns_skipped += m->conns_skipped;
    if (!m->conns.empty()) {
        stats_.conns_received += m->conns.size();
        p.conns_received += m->conns.size();
        import(m->conns);
    }
}

void SyncDaemon::import(const std::vector<net::SyncConn>& conns) {
    const unsigned n = static_cast<unsigned>(workers_.size());
    std::vector<std::vector<lb::SyncRecord>> per(n);
    for (const auto& c : conns) {
        auto r = sync_record_of(c);
        if (!r) {
            ++stats_.conns_skipped;
            continue;
        }
        per[lb::sync_owner(*r, n)].push_back(*r);
    }
    for (unsigned w = 0; w < n; ++w) {
        if (per[w].empty()) continue;
        auto r = workers_[w]->import_conns(std::move(per[w]), kCommandTimeoutMs);
        if (!r) {
            log_limited("sync import", LogLevel::Warning, "sync: import: " + r.error());
            continue;
        }
        stats_.conns_imported += r->imported;
        stats_.conns_import_failed += r->failed;
    }
}

void SyncDaemon::send_to(std::span<const uint8_t> bytes, const net::InetAddr* to) {
    auto one = [&](const net::InetAddr& dst) {
        const sockaddr_in a = sockaddr_of(dst, defs_.port);
        if (::sendto(sock_.get(), bytes.data(), bytes.size(), MSG_DONTWAIT,
                     reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0) {
            ++stats_.send_errors;
            log_limited("sync send", LogLevel::Warning,
                        "sync: send to " + addr_text(dst) + ": " + std::strerror(errno));
        } else {
            ++stats_.messages_sent;
        }
    };
    if (to)
        one(*to);
    else if (defs_.peers.empty())
        one(defs_.mcast_group);
    else
        for (const auto& p : defs_.peers) one(p);
}

void SyncDaemon::flush(const net::InetAddr* to) {
    if (enc_.empty()) return;
    send_to(enc_.bytes(), to);
    stats_.conns_sent += enc_.count();
    enc_.reset();
}

void SyncDaemon::drain_and_send() {
    for (auto& ring : rings_) {
        uint32_t got;
        while ((got = ring->pop(drained_.data(), static_cast<uint32_t>(drained_.size()))) > 0) {
            for (uint32_t i = 0; i < got; ++i) {
                const net::SyncConn c = sync_conn_of(drained_[i]);
                if (!enc_.add(c)) {
                    flush(nullptr);
                    enc_.add(c);
                }
            }
        }
    }
    flush(nullptr);
}

void SyncDaemon::send_control(net::SyncControlKind kind, const net::InetAddr* to) {
    net::SyncControl c;
    c.kind = kind;
    c.role = wire_role(defs_.role);
    c.flags = active_ ? net::kSyncControlActive : 0;
    c.node_id = node_id_;
    c.seq = ++seq_;
    c.laddrs = own_laddrs();
    const auto bytes = net::sync_encode_control(static_cast<uint8_t>(defs_.syncid), c);
    send_to(bytes, to);
}

void SyncDaemon::serve_resync(const net::InetAddr& to) {
    flush(nullptr);
    uint64_t sent = 0;
    for (auto* w : workers_) {
        auto r = w->export_conns(kCommandTimeoutMs,
                                 [&](const std::vector<lb::SyncRecord>& recs, bool truncated) {
                                     for (const auto& rec : recs) {
                                         const net::SyncConn c = sync_conn_of(rec);
                                         if (!enc_.add(c)) {
                                             flush(&to);
                                             enc_.add(c);
                                         }
                                         ++sent;
                                     }
                                     if (truncated)
                                         log_warning("sync: resync for " + addr_text(to) +
                                                     ": conns created during the copy left out");
                                 });
        if (!r) log_warning("sync: resync for " + addr_text(to) + ": " + r.error());
    }
    flush(&to);
    send_control(net::SyncControlKind::resync_end, &to);
    ++stats_.resyncs_served;
    stats_.resync_conns_sent += sent;
    log_info("sync: full resync for " + addr_text(to) + ": " + std::to_string(sent) + " conns");
}

void SyncDaemon::check_peers(uint64_t now_ms) {
    bool changed = false;
    for (auto& p : peers_) {
        if (p.failed || now_ms - p.last_seen_ms <= defs_.peer_timeout_ms) continue;
        p.failed = true;
        p.resync_asked = false;
        ++stats_.takeovers;
        changed = true;
        log_warning("sync: peer " + addr_text(p.addr) + " silent for " +
                    std::to_string((now_ms - p.last_seen_ms) / 1000) + " s: failed; taking over " +
                    std::to_string(p.laddrs.size()) + " local addresses" +
                    (defs_.role == SyncRoleDef::Backup && !active_ ? " and the VIPs" : ""));
        for (const auto& a : p.laddrs)
            if (std::find(claimed_.begin(), claimed_.end(), a) == claimed_.end()) claimed_.push_back(a);
    }
    if (!changed) return;
    if (defs_.role == SyncRoleDef::Backup) {
        active_ = true;
        director_.vip_arp_set(true);
    }
    apply_claims(true);
}

void SyncDaemon::apply_claims(bool garp) {
    std::vector<lb::Director::ClaimedAddr> want;
    if (!claim_port_.empty()) {
        const auto own = own_laddrs();
        for (const auto& a : claimed_)
            if (std::find(own.begin(), own.end(), a) == own.end()) want.push_back({a, claim_port_});
    }
    if (auto r = director_.claimed_set(want); !r) log_warning("sync: claiming local addresses: " + r.error());
    if (garp) director_.garp_request();
    director_.commit();
}

Result<std::string> SyncDaemon::takeover(const std::string& why) {
    for (const auto& p : peers_)
        if (p.failed || !p.active)
            for (const auto& a : p.laddrs)
                if (std::find(claimed_.begin(), claimed_.end(), a) == claimed_.end())
                    claimed_.push_back(a);
    active_ = true;
    director_.vip_arp_set(true);
    ++stats_.takeovers;
    apply_claims(true);
    send_control(net::SyncControlKind::heartbeat, nullptr);  // peers learn it at once
    log_warning("sync: takeover (" + why + "): answering for the VIPs, " +
                std::to_string(claimed_.size()) + " claimed local addresses");
    return "active: VIPs answered, " + std::to_string(claimed_.size()) + " peer local addresses claimed";
}

Result<std::string> SyncDaemon::release(const std::string& why) {
    claimed_.clear();
    if (defs_.role == SyncRoleDef::Backup) {
        active_ = false;
        director_.vip_arp_set(false);
    }
    ++stats_.releases;
    apply_claims(false);
    send_control(net::SyncControlKind::heartbeat, nullptr);
    log_warning("sync: release (" + why + ")" +
                (defs_.role == SyncRoleDef::Backup ? ": VIPs silent" : ": role " +
                 std::string(role_name(defs_.role)) + " keeps answering for the VIPs"));
    return std::string(active_ ? "active" : "backup") + ": claimed local addresses given back";
}

nlohmann::json SyncDaemon::show(uint64_t now_ms) const {
    nlohmann::json peers = nlohmann::json::array();
    for (const auto& p : peers_) {
        nlohmann::json la = nlohmann::json::array();
        for (const auto& a : p.laddrs) la.push_back(addr_text(a));
        peers.push_back(
            {{"addr", addr_text(p.addr)},
             {"node_id", p.node_id},
             {"announced", p.announced},
             {"role", p.announced ? role_name(p.role) : "unknown"},
             {"active", p.active},  // false until announced: only control messages set it
             {"state", p.failed ? "failed" : "alive"},
             {"last_seen_ms", now_ms - p.last_seen_ms},
             {"conns_received", p.conns_received},
             {"laddrs", la}});
    }
    nlohmann::json claimed = nlohmann::json::array();
    for (const auto& a : claimed_) claimed.push_back(addr_text(a));
    uint64_t lost = 0;
    for (auto* w : workers_) lost += w->counters().get(stack::Counter::sync_ring_full);
    const SyncStats& s = stats_;
    return {{"syncid", defs_.syncid},
            {"role", role_name(defs_.role)},
            {"active", active_},
            {"node_id", node_id_},
            {"port", defs_.port},
            {"claim_dev", claim_port_},
            {"peers", peers},
            {"claimed", claimed},
            {"stats",
             {{"messages_sent", s.messages_sent},
              {"messages_received", s.messages_received},
              {"messages_dropped", s.messages_dropped},
              {"send_errors", s.send_errors},
              {"conns_sent", s.conns_sent},
              {"conns_received", s.conns_received},
              {"conns_imported", s.conns_imported},
              {"conns_import_failed", s.conns_import_failed},
              {"conns_skipped", s.conns_skipped},
              {"conns_lost_ring_full", lost},
              {"resyncs_served", s.resyncs_served},
              {"resync_conns_sent", s.resync_conns_sent},
              {"resyncs_requested", s.resyncs_requested},
              {"takeovers", s.takeovers},
              {"releases", s.releases}}}};
}

std::string SyncDaemon::metrics(uint64_t now_ms) const {
    const SyncStats& s = stats_;
    std::string out;
    auto family = [&](const char* name, const char* type, const char* help) {
        out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    };
    auto line = [&](const std::string& name, uint64_t v) {
        out += name + " " + std::to_string(v) + "\n";
    };
    family("xvs_sync_messages_total", "counter", "Session sync datagrams, by what happened to them.");
    line("xvs_sync_messages_total{what=\"sent\"}", s.messages_sent);
    line("xvs_sync_messages_total{what=\"received\"}", s.messages_received);
    line("xvs_sync_messages_total{what=\"dropped\"}", s.messages_dropped);
    line("xvs_sync_messages_total{what=\"send_error\"}", s.send_errors);
    family("xvs_sync_conns_total", "counter", "Synced conn entries, by what happened to them.");
    line("xvs_sync_conns_total{what=\"sent\"}", s.conns_sent);
    line("xvs_sync_conns_total{what=\"received\"}", s.conns_received);
    line("xvs_sync_conns_total{what=\"imported\"}", s.conns_imported);
    line("xvs_sync_conns_total{what=\"import_failed\"}", s.conns_import_failed);
    line("xvs_sync_conns_total{what=\"skipped\"}", s.conns_skipped);
    family("xvs_sync_resyncs_total", "counter", "Full resyncs served to restarted peers.");
    line("xvs_sync_resyncs_total", s.resyncs_served);
    family("xvs_sync_takeovers_total", "counter", "Takeovers (a peer failed, or a command).");
    line("xvs_sync_takeovers_total", s.takeovers);
    family("xvs_sync_active", "gauge", "1 when this director answers ARP for its VIPs.");
    line("xvs_sync_active", active_ ? 1 : 0);
    family("xvs_sync_peers", "gauge", "Sync peers by state.");
    uint64_t alive = 0, failed = 0;
    for (const auto& p : peers_) (p.failed ? failed : alive)++;
    line("xvs_sync_peers{state=\"alive\"}", alive);
    line("xvs_sync_peers{state=\"failed\"}", failed);
    family("xvs_sync_claimed_addresses", "gauge", "Failed peers' local addresses this director answers for.");
    line("xvs_sync_claimed_addresses", claimed_.size());
    (void)now_ms;
    return out;
}

}  // namespace xvs::ctl
