// Config -> Director, as a diff. Order matters: removals first (so an address can move from
// one role to another in one reload), then additions and edits, then one commit.
#include "ctl/config_apply.h"

#include <algorithm>
#include <set>

#include "ctl/worker_placement.h"
#include "lb/service_check.h"

namespace xvs::ctl {

namespace {

std::string where(const SourceLoc& loc) {
    return loc.file + ":" + std::to_string(loc.line) + ": ";
}

uint8_t proto_num(Proto p) {
    return p == Proto::Tcp ? 6 : 17;
}

std::string svc_name(const lb::ServiceKey& k) {
    if (k.fwmark) return "FWM " + std::to_string(k.fwmark) + (k.vip.is_v4() ? "" : " IPv6");
    return std::string(k.proto == 6 ? "TCP " : "UDP ") +
           net::to_string(net::InetEndpoint{k.vip, net::ntoh16(k.port)});
}

// " (sh-fallback,sh-port)" / " table 251" after a scheduler name in a change line.
std::string sched_detail(const lb::ServiceSpec& spec) {
    std::string out;
    for (const std::string& name : lb::sched_flag_names(spec.sched, spec.sched_flags))
        out += (out.empty() ? " (" : ",") + name;
    if (!out.empty()) out += ")";
    if (spec.mh_table_size != 0) out += " table " + std::to_string(spec.mh_table_size);
    if (spec.flags & lb::kSvcFlagHashQid) {
        out += " hash_target qid";
        if (spec.quic_cid_len != 0) out += " quic_cid_len " + std::to_string(spec.quic_cid_len);
    }
    return out;
}

// The kSvcFlag* bits of a virtual server's options.
uint32_t service_flags(const VirtualServer& vs) {
    uint32_t flags = 0;
    if (vs.toa) flags |= lb::kSvcFlagToa;
    if (vs.syn_proxy) flags |= lb::kSvcFlagSynProxy;
    if (vs.ops) flags |= lb::kSvcFlagOps;
    if (vs.pe_sip) flags |= lb::kSvcFlagPeSip;
    if (vs.hash_qid) flags |= lb::kSvcFlagHashQid;
    if (vs.proxy_protocol == ProxyProtocol::V1) flags |= lb::kSvcFlagPpV1;
    if (vs.proxy_protocol == ProxyProtocol::V2) flags |= lb::kSvcFlagPpV2;
    if (vs.uoa == Uoa::Opp) flags |= lb::kSvcFlagUoaOpp;
    if (vs.uoa == Uoa::Ipo) flags |= lb::kSvcFlagUoaIpo;
    return flags;
}

std::string match_name(const MatchServer& m) {
    return "SNAT service '" + m.name + "' (" + lb::to_string(m.key) + ")";
}

std::string match_name(const lb::Service& s) {
    return "SNAT service " + lb::to_string(*s.match);
}

const MatchServer* match_wanted(const Config& cfg, const lb::MatchKey& key) {
    for (const auto& m : cfg.match_servers)
        if (m.key == key) return &m;
    return nullptr;
}

void match_remove_stale(lb::Director& d, const Config& cfg, ApplyReport& rep) {
    std::vector<lb::MatchKey> gone;
    for (const auto& s : d.matches())
        if (!match_wanted(cfg, *s->match)) gone.push_back(*s->match);
    for (const auto& k : gone) {
        rep.changes.push_back("removed " + match_name(*d.match_find(k)));
        (void)d.match_del(k);
    }
    for (const auto& s : d.matches()) {
        const MatchServer* m = match_wanted(cfg, *s->match);
        std::vector<net::InetAddr> drop;
        for (const auto& dest : s->dests)
            if (std::none_of(m->real_servers.begin(), m->real_servers.end(),
                             [&](const auto& rs) { return rs.addr == dest->addr; }))
                drop.push_back(dest->addr);
        for (auto a : drop) {
            (void)d.match_dest_del(*s->match, a);
            rep.changes.push_back("removed WAN address " + net::to_string(a) + " from " +
                                  match_name(*m));
        }
    }
}

Result<void> match_apply(lb::Director& d, const Config& cfg, ApplyReport& rep) {
    auto fail = [](const SourceLoc& loc, const std::string& what, const std::string& err) {
        return make_error(where(loc) + what + ": " + err);
    };
    for (const auto& m : cfg.match_servers) {
        lb::MatchSpec spec{m.key, m.name, m.sched};
        auto svc = d.match_find(m.key);
        if (!svc) {
            if (auto r = d.match_add(spec); !r)
                return fail(m.loc, "virtual_server match", r.error());
            rep.changes.push_back("added " + match_name(m));
            svc = d.match_find(m.key);
        } else if (svc->sched_name != m.sched || svc->match_name != m.name) {
            if (auto r = d.match_edit(spec); !r)
                return fail(m.loc, "virtual_server match", r.error());
            rep.changes.push_back(match_name(m) + " scheduler " + m.sched);
        }
        for (const auto& rs : m.real_servers) {
            lb::DestSpec ds;
            ds.addr = rs.addr;
            ds.port = rs.port;
            ds.weight = static_cast<int32_t>(rs.weight);
            ds.upper_threshold = rs.upper_threshold;
            ds.lower_threshold = rs.lower_threshold;
            ds.fwd = m.fwd;
            auto it = std::find_if(svc->dests.begin(), svc->dests.end(),
                                   [&](const auto& x) { return x->addr == rs.addr; });
            const std::string wan = "WAN address " + net::to_string(rs.addr);
            if (it == svc->dests.end()) {
                if (auto r = d.match_dest_add(m.key, ds); !r)
                    return fail(rs.loc, "real_server", r.error());
                rep.changes.push_back("added " + wan + " to " + match_name(m));
            } else if ((*it)->weight != ds.weight || (*it)->upper_threshold != ds.upper_threshold ||
                       (*it)->lower_threshold != ds.lower_threshold) {
                if (auto r = d.match_dest_edit(m.key, ds); !r)
                    return fail(rs.loc, "real_server", r.error());
                rep.changes.push_back(wan + " weight " + std::to_string(rs.weight));
            }
        }
    }
    return {};
}

}  // namespace

Result<void> config_supported(const Config& cfg) {
    std::string errors;
    // Worker CPUs and the port queues N workers poll (ctl/worker_placement.h).
    if (std::string w = workers_errors(cfg, cpus_available()); !w.empty()) errors += w + "\n";
    for (const auto& vs : cfg.virtual_servers) {
        if (auto r = lb::service_check(vs.fwmark ? uint8_t{0} : proto_num(vs.proto), vs.fwd,
                                       service_flags(vs));
            !r)
            errors += where(vs.loc) + r.error() + "\n";
        const bool laddrs = vs.fwd == lb::FwdMode::FullNat || vs.fwd == lb::FwdMode::NatTun;
        if (!laddrs && !vs.laddr_group.empty()) {
            errors += where(vs.loc) + "laddr_group_name is for lb_kind FNAT and nat_tunnel only (" +
                      std::string(lb::fwd_names(vs.fwd).keepalived) +
                      " uses no local addresses): remove it\n";
        }
        if (vs.fwd == lb::FwdMode::FullNat && vs.laddr_group.empty()) {
            errors += where(vs.loc) + "FNAT virtual server needs laddr_group_name\n";
        }
        if (vs.fwd == lb::FwdMode::NatTun && vs.laddr_group.empty()) {
            errors += where(vs.loc) +
                      "nat_tunnel needs laddr_group_name (the tunnel's local addresses)\n";
        }
    }
    for (const auto& m : cfg.match_servers)
        if (auto r = lb::match_service_check(m.key.proto, m.fwd, 0); !r)
            errors += where(m.loc) + r.error() + "\n";
    if (!errors.empty()) {
        errors.pop_back();
        return make_error(errors);
    }
    return {};
}

lb::ServiceKey vs_key(const VirtualServer& vs) {
    return vs.fwmark ? lb::make_fwmark_key(vs.fwmark, !vs.vip.is_v4())
                     : lb::make_service_key(proto_num(vs.proto), vs.vip, vs.port);
}

lb::DestSpec dest_spec(const VirtualServer& vs, const RealServer& rs) {
    lb::DestSpec ds;
    ds.addr = rs.addr;
    ds.port = rs.port;
    ds.weight = static_cast<int32_t>(rs.weight);
    ds.upper_threshold = rs.upper_threshold;
    ds.lower_threshold = rs.lower_threshold;
    ds.fwd = vs.fwd;
    ds.tun_type = vs.tun_type;
    ds.tun_port = vs.tun_port;
    return ds;
}

Result<ApplyReport> config_apply(lb::Director& d, const Config& cfg) {
    if (auto r = config_supported(cfg); !r) return make_error(r.error());
    ApplyReport rep;
    auto fail = [](const SourceLoc& loc, const std::string& what, const std::string& err) {
        return make_error(where(loc) + what + ": " + err);
    };

    // --- services: remove those gone from the config.
    std::set<std::tuple<uint8_t, uint64_t, uint64_t, uint16_t, uint32_t>> wanted;
    auto key_tuple = [](const lb::ServiceKey& k) {
        return std::make_tuple(k.proto, k.vip.word(0), k.vip.word(1), k.port, k.fwmark);
    };
    for (const auto& vs : cfg.virtual_servers) wanted.insert(key_tuple(vs_key(vs)));
    std::vector<lb::ServiceKey> gone;
    for (const auto& s : d.services())
        if (!wanted.count(key_tuple(s->key))) gone.push_back(s->key);
    for (const auto& k : gone) {
        (void)d.service_del(k);
        rep.changes.push_back("removed service " + svc_name(k));
    }

    // --- local addresses leaving a kept service, all of them before anything is added, so a
    // LIP can move to another port or become a director address in one reload.
    for (const auto& vs : cfg.virtual_servers) {
        const lb::ServiceKey key = vs_key(vs);
        auto svc = d.service_find(key);
        if (!svc) continue;
        // Only FNAT has local addresses (config_supported refuses a group elsewhere): none
        // is an empty group, so a service that changed mode loses the ones it had.
        static const LocalAddressGroup kNoGroup;
        const LocalAddressGroup* group =
            vs.laddr_group.empty() ? &kNoGroup : cfg.find_laddr_group(vs.laddr_group);
        if (!group)
            return fail(vs.loc, "laddr_group_name",
                        "unknown local_address_group '" + vs.laddr_group + "'");
        std::vector<net::InetAddr> stale;
        for (const auto& l : svc->laddrs) {
            bool keep = std::any_of(group->addrs.begin(), group->addrs.end(), [&](const auto& g) {
                return g.addr == l->addr && g.port == l->port_name;
            });
            if (!keep) stale.push_back(l->addr);
        }
        for (auto a : stale) {
            (void)d.laddr_del(key, a);
            rep.changes.push_back("removed local address " + net::to_string(a) + " from " +
                                  svc_name(key));
        }
    }

    // --- SNAT match services and WAN addresses leaving, before any address goes (a WAN
    // address in use cannot be removed).
    match_remove_stale(d, cfg, rep);

    // --- tunnel sources go back to the default first, so their addresses may leave or move
    // below; the wanted ones are set again (and checked) once the addresses are in.
    std::vector<std::pair<std::string, std::optional<net::InetAddr>>> tunnel_before;
    for (const auto& p : d.ports()) {
        tunnel_before.emplace_back(p.name, d.tunnel_source(p.name));
        (void)d.tunnel_source_set(p.name, std::nullopt);
    }

    // --- addresses and routes.
    for (const auto& a : std::vector<lb::AddressEntry>(d.addresses())) {
        bool keep =
            std::any_of(cfg.ip.addresses.begin(), cfg.ip.addresses.end(), [&](const auto& c) {
                return c.addr == a.addr && c.prefix.len == a.prefix_len && c.port == a.port;
            });
        if (!keep) {
            (void)d.address_del(a.addr);
            rep.changes.push_back("removed address " + net::to_string(a.addr));
        }
    }
    for (const auto& r : std::vector<lb::RouteSpec>(d.routes())) {
        if (r.connected) continue;
        bool keep = std::any_of(cfg.ip.routes.begin(), cfg.ip.routes.end(), [&](const auto& c) {
            return c.prefix == r.prefix && c.gateway == r.gateway && c.port == r.port;
        });
        if (!keep) {
            (void)d.route_del(r.prefix);
            rep.changes.push_back("removed route " + net::to_string(r.prefix));
        }
    }
    for (const auto& a : cfg.ip.addresses) {
        bool have = std::any_of(d.addresses().begin(), d.addresses().end(),
                                [&](const auto& x) { return x.addr == a.addr; });
        if (have) continue;
        if (auto r = d.address_add(a.addr, a.prefix.len, a.port); !r)
            return fail(a.loc, "address " + net::to_string(a.addr), r.error());
        rep.changes.push_back("added address " + net::to_string(a.addr) + "/" +
                              std::to_string(a.prefix.len) + " dev " + a.port);
    }
    for (const auto& rt : cfg.ip.routes) {
        bool have = std::any_of(d.routes().begin(), d.routes().end(),
                                [&](const auto& x) { return x.prefix == rt.prefix; });
        if (have) continue;
        if (auto r = d.route_add(rt.prefix, rt.gateway, rt.port); !r)
            return fail(rt.loc, "route " + net::to_string(rt.prefix), r.error());
        rep.changes.push_back("added route " + net::to_string(rt.prefix));
    }
    for (const auto& t : cfg.ip.tunnel_sources) {
        const std::string what = "tunnel_source " + net::to_string(t.addr) + " dev " + t.port;
        if (auto r = d.tunnel_source_set(t.port, t.addr); !r) return fail(t.loc, what, r.error());
    }
    for (const auto& [port, before] : tunnel_before) {
        const auto now = d.tunnel_source(port);
        if (now != before)
            rep.changes.push_back("tunnel source of " + port + ": " +
                                  (now ? net::to_string(*now) : "default (first address)"));
    }

    // --- the firewall-mark classifier (its addresses must not be director addresses, so after
    // those; before the services that serve the marks).
    if (d.fwmarks() != cfg.fwmark.marks) {
        if (auto r = d.fwmark_set(cfg.fwmark.marks); !r)
            return fail(cfg.fwmark.locs.empty() ? SourceLoc{cfg.file, 0} : cfg.fwmark.locs.front(),
                        "fwmark_defs", r.error());
        rep.changes.push_back("fwmark_defs: " + std::to_string(cfg.fwmark.marks.size()) + " marks");
    }

    // --- services: add or edit, then their dests and local addresses.
    for (const auto& vs : cfg.virtual_servers) {
        lb::ServiceSpec spec;
        spec.proto = proto_num(vs.proto);
        spec.vip = vs.vip;
        spec.port = vs.port;
        spec.fwmark = vs.fwmark;
        spec.fwmark_v6 = vs.fwmark && !vs.vip.is_v4();
        spec.persistence_s = vs.persistence_timeout;
        spec.persist_prefix = vs.persist_prefix;
        const uint8_t full = vs.vip.is_v4() ? 32 : 128;  // a fwmark service's vip: its family
        const uint8_t prefix =
            vs.persist_prefix == lb::ServiceSpec::kPersistFull ? full : vs.persist_prefix;
        spec.sched = vs.sched;
        spec.sched_flags = vs.sched_flags;
        spec.mh_table_size = vs.mh_table_size;
        spec.quic_cid_len = vs.quic_cid_len;
        spec.fwd = vs.fwd;
        spec.flags = service_flags(vs);
        spec.conn_rate = vs.conn_rate_limit;
        const lb::ServiceKey key = vs_key(vs);
        auto svc = d.service_find(key);
        if (!svc) {
            if (auto r = d.service_add(spec); !r) return fail(vs.loc, "virtual_server", r.error());
            rep.changes.push_back("added service " + svc_name(key));
            svc = d.service_find(key);
        } else if (svc->sched_name != spec.sched || svc->flags != spec.flags ||
                   svc->conn_rate != spec.conn_rate || svc->sched_flags != spec.sched_flags ||
                   svc->mh_table_size != spec.mh_table_size ||
                   svc->quic_cid_len != spec.quic_cid_len ||
                   svc->persistence_s != spec.persistence_s || svc->persist_prefix != prefix) {
            if (svc->persistence_s != spec.persistence_s || svc->persist_prefix != prefix)
                rep.changes.push_back("service " + svc_name(key) + " persistence " +
                                      std::to_string(spec.persistence_s) + " s /" +
                                      std::to_string(prefix));
            if (svc->conn_rate != spec.conn_rate)
                rep.changes.push_back("service " + svc_name(key) + " conn_rate_limit " +
                                      std::to_string(spec.conn_rate));
            const bool sched_changed = svc->sched_name != spec.sched ||
                                       svc->sched_flags != spec.sched_flags ||
                                       svc->mh_table_size != spec.mh_table_size ||
                                       svc->quic_cid_len != spec.quic_cid_len ||
                                       ((svc->flags ^ spec.flags) & lb::kSvcFlagHashQid) != 0;
            const bool flags_changed = svc->flags != spec.flags;
            const uint32_t old_flags = svc->flags;
            if (auto r = d.service_edit(spec); !r) return fail(vs.loc, "virtual_server", r.error());
            if (sched_changed)
                rep.changes.push_back("service " + svc_name(key) + " scheduler " + spec.sched +
                                      sched_detail(spec));
            if (flags_changed) {
                const uint32_t pp = lb::kSvcFlagPpV1 | lb::kSvcFlagPpV2;
                if ((old_flags ^ spec.flags) & lb::kSvcFlagToa)
                    rep.changes.push_back(
                        "service " + svc_name(key) +
                        ((spec.flags & lb::kSvcFlagToa) ? " toa on" : " toa off"));
                if ((old_flags ^ spec.flags) & lb::kSvcFlagPeSip)
                    rep.changes.push_back("service " + svc_name(key) +
                                          ((spec.flags & lb::kSvcFlagPeSip)
                                               ? " persistence_engine sip"
                                               : " persistence_engine none"));
                if ((old_flags ^ spec.flags) & lb::kSvcFlagOps)
                    rep.changes.push_back(
                        "service " + svc_name(key) +
                        ((spec.flags & lb::kSvcFlagOps) ? " ops on" : " ops off"));
                if ((old_flags ^ spec.flags) & lb::kSvcFlagSynProxy)
                    rep.changes.push_back(
                        "service " + svc_name(key) +
                        ((spec.flags & lb::kSvcFlagSynProxy) ? " syn_proxy on" : " syn_proxy off"));
                if ((old_flags ^ spec.flags) & pp)
                    rep.changes.push_back("service " + svc_name(key) + " proxy_protocol " +
                                          std::string(to_string(vs.proxy_protocol)));
                if ((old_flags ^ spec.flags) & (lb::kSvcFlagUoaOpp | lb::kSvcFlagUoaIpo))
                    rep.changes.push_back("service " + svc_name(key) + " uoa " +
                                          std::string(to_string(vs.uoa)));
            }
        }

        // Client lists: replaced as a whole when the config's differ (a reload also drops
        // entries added with xvsadm -U/-O, like every other attribute).
        for (const lb::AclKind kind : {lb::AclKind::Black, lb::AclKind::White}) {
            const bool black = kind == lb::AclKind::Black;
            const auto& listed = black ? vs.blacklist : vs.whitelist;
            const std::vector<net::InetPrefix> want(listed.begin(), listed.end());
            if ((black ? svc->blacklist : svc->whitelist) == want) continue;
            if (auto r = d.acl_set(key, kind, want); !r)
                return fail(vs.loc, black ? "blacklist" : "whitelist", r.error());
            rep.changes.push_back("service " + svc_name(key) +
                                  (black ? " blacklist" : " whitelist") + " now " +
                                  std::to_string(want.size()) + " entries");
        }

        // Dests: remove, then add or reweight.
        std::vector<std::pair<net::InetAddr, uint16_t>> drop;
        for (const auto& dest : svc->dests) {
            bool keep = std::any_of(
                vs.real_servers.begin(), vs.real_servers.end(),
                [&](const auto& rs) { return rs.addr == dest->addr && rs.port == dest->port; });
            if (!keep) drop.push_back({dest->addr, dest->port});
        }
        for (const auto& [addr, port] : drop) {
            (void)d.dest_del(key, addr, port);
            rep.changes.push_back("removed real server " +
                                  net::to_string(net::InetEndpoint{addr, port}) + " from " +
                                  svc_name(key));
        }
        for (const auto& rs : vs.real_servers) {
            const lb::DestSpec ds = dest_spec(vs, rs);
            auto it = std::find_if(svc->dests.begin(), svc->dests.end(), [&](const auto& x) {
                return x->addr == rs.addr && x->port == rs.port;
            });
            if (it == svc->dests.end()) {
                if (auto r = d.dest_add(key, ds); !r) return fail(rs.loc, "real_server", r.error());
                rep.changes.push_back("added real server " +
                                      net::to_string(net::InetEndpoint{rs.addr, rs.port}) + " to " +
                                      svc_name(key));
            } else if ((*it)->weight != ds.weight || (*it)->upper_threshold != ds.upper_threshold ||
                       (*it)->lower_threshold != ds.lower_threshold || (*it)->fwd != ds.fwd ||
                       (*it)->tun_type != ds.tun_type || (*it)->tun_port != ds.tun_port) {
                if (auto r = d.dest_edit(key, ds); !r)
                    return fail(rs.loc, "real_server", r.error());
                rep.changes.push_back("real server " +
                                      net::to_string(net::InetEndpoint{rs.addr, rs.port}) +
                                      " weight " + std::to_string(rs.weight));
            }
        }

        // Local addresses of the service's group (stale ones were removed above).
        if (vs.laddr_group.empty()) continue;
        const LocalAddressGroup* group = cfg.find_laddr_group(vs.laddr_group);
        if (!group)
            return fail(vs.loc, "laddr_group_name",
                        "unknown local_address_group '" + vs.laddr_group + "'");
        for (const auto& g : group->addrs) {
            bool have = std::any_of(svc->laddrs.begin(), svc->laddrs.end(),
                                    [&](const auto& l) { return l->addr == g.addr; });
            if (have) continue;
            if (auto r = d.laddr_add(key, g.addr, g.port); !r)
                return fail(group->loc, "local_address_group " + group->name, r.error());
            rep.changes.push_back("added local address " + net::to_string(g.addr) + " to " +
                                  svc_name(key));
        }
    }

    if (auto r = match_apply(d, cfg, rep); !r) return make_error(r.error());

    const lb::Timeouts& old_t = d.timeouts();
    const lb::Timeouts& new_t = cfg.ipvs.timeouts;
    for (size_t i = 0; i < lb::kTcpStateCount; ++i) {
        if (old_t.tcp[i] != new_t.tcp[i])
            rep.changes.push_back("timeout " + std::string(lb::tcp_state_name(lb::TcpState(i))) +
                                  " " + std::to_string(new_t.tcp[i]));
    }
    if (old_t.udp != new_t.udp) rep.changes.push_back("timeout UDP " + std::to_string(new_t.udp));
    if (old_t.icmp != new_t.icmp)
        rep.changes.push_back("timeout ICMP " + std::to_string(new_t.icmp));
    d.timeouts_set(new_t);
    if (d.uoa_max_trail() != cfg.ipvs.uoa_max_trail) {
        rep.changes.push_back("uoa_max_trail " + std::to_string(cfg.ipvs.uoa_max_trail));
        d.uoa_max_trail_set(static_cast<uint8_t>(cfg.ipvs.uoa_max_trail));
    }
    if (d.reschedule_refused() != cfg.ipvs.reschedule_refused) {
        rep.changes.push_back(std::string("reschedule_refused ") +
                              (cfg.ipvs.reschedule_refused ? "on" : "off"));
        d.reschedule_refused_set(cfg.ipvs.reschedule_refused);
    }
    if (d.expire_nodest_conn() != cfg.ipvs.expire_nodest_conn) {
        rep.changes.push_back(std::string("expire_nodest_conn ") +
                              (cfg.ipvs.expire_nodest_conn ? "on" : "off"));
        d.expire_nodest_conn_set(cfg.ipvs.expire_nodest_conn);
    }
    if (d.expire_quiescent_template() != cfg.ipvs.expire_quiescent_template) {
        rep.changes.push_back(std::string("expire_quiescent_template ") +
                              (cfg.ipvs.expire_quiescent_template ? "on" : "off"));
        d.expire_quiescent_template_set(cfg.ipvs.expire_quiescent_template);
    }
    if (!(d.synproxy() == cfg.ipvs.synproxy)) {
        rep.changes.push_back("synproxy settings");
        d.synproxy_set(cfg.ipvs.synproxy);
    }
    d.commit();
    return rep;
}

}  // namespace xvs::ctl
