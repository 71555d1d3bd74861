// Cross-reference checks of xvs.conf; see config_validate.h.
#include "ctl/config_validate.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace xvs::ctl {

namespace {

std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

std::string endpoint_text(const net::InetAddr& addr, uint16_t port) {
    return net::to_string(net::InetEndpoint{addr, port});
}

const char* family_name(const net::InetAddr& a) {
    return a.is_v4() ? "IPv4" : "IPv6";
}

// "virtual_server 10.0.0.1:80", or "virtual_server fwmark 1 (IPv6)" (its vip is its family).
std::string vs_text(const VirtualServer& vs) {
    if (vs.fwmark)
        return "virtual_server fwmark " + std::to_string(vs.fwmark) + " (" + family_name(vs.vip) +
               ")";
    return "virtual_server " + endpoint_text(vs.vip, vs.port);
}

// Map keys for addresses (the two words of the InetAddr).
using AddrKey = std::pair<uint64_t, uint64_t>;
AddrKey addr_key(const net::InetAddr& a) {
    return {a.word(0), a.word(1)};
}

std::string loc_text(const SourceLoc& at) {
    return at.file + ":" + std::to_string(at.line);
}

class Validator {
  public:
    Validator(ParsedConfig& parsed, Diagnostics& diag)
        : parsed_(parsed), cfg_(parsed.cfg), diag_(diag) {}

    void validate() {
        for (const PortRef& ref : parsed_.port_refs) {
            if (!cfg_.find_port(ref.port))
                error(ref.loc, ref.context + ": unknown port " + quoted(ref.port) +
                                   " (not defined in netif_defs)");
        }
        if (cfg_.netif.mbufs_per_port &&
            cfg_.netif.mbufs_per_port < mbufs_per_port_min(cfg_.worker.workers))
            error(cfg_.netif.mbufs_per_port_loc,
                  "mbufs_per_port " + std::to_string(cfg_.netif.mbufs_per_port) +
                      " cannot fill the RX/TX rings of " + std::to_string(cfg_.worker.workers) +
                      " worker(s): use at least " +
                      std::to_string(mbufs_per_port_min(cfg_.worker.workers)));
        if (cfg_.netif.xdp_offload &&
            std::none_of(cfg_.netif.ports.begin(), cfg_.netif.ports.end(), [](const PortDef& p) {
                return p.exception_kind() == ExceptionKind::Xdp;
            }))
            error(cfg_.netif.xdp_offload_loc,
                  "xdp_offload: no port runs xvs's XDP program (a net_af_xdp port with the "
                  "default `exception xdp`): nothing to offload to; remove it or use net_af_xdp");
        if (!parsed_.pending.empty() && cfg_.netif.ports.empty())
            error(parsed_.pending.front().vs.loc, "no port defined in netif_defs");

        std::map<std::tuple<Proto, AddrKey, uint16_t>, SourceLoc> seen;
        std::map<std::pair<uint32_t, bool>, SourceLoc> seen_marks;  // (mark, IPv4)
        for (PendingVs& p : parsed_.pending) {
            if (p.laddr_loc && !cfg_.find_laddr_group(p.vs.laddr_group))
                error(*p.laddr_loc,
                      "laddr_group_name: unknown local_address_group " + quoted(p.vs.laddr_group));
            if (p.deny_loc) {
                auto group = std::find_if(cfg_.deny_groups.begin(), cfg_.deny_groups.end(),
                                          [&](const auto& g) { return g.name == p.deny_group; });
                if (group == cfg_.deny_groups.end()) {
                    error(*p.deny_loc,
                          "daddr_group_name: unknown deny_address_group " + quoted(p.deny_group));
                } else {
                    for (const net::InetPrefix& prefix : group->prefixes)
                        if (std::find(p.vs.blacklist.begin(), p.vs.blacklist.end(), prefix) ==
                            p.vs.blacklist.end())
                            p.vs.blacklist.push_back(prefix);
                }
            }
            validate_health(p.vs);
            std::vector<VirtualServer> expanded;
            if (p.kind == PendingVs::Kind::Address) {
                expanded.push_back(p.vs);
            } else if (p.kind == PendingVs::Kind::Group) {
                auto it = std::find_if(cfg_.vs_groups.begin(), cfg_.vs_groups.end(),
                                       [&](const auto& g) { return g.name == p.group_name; });
                if (it == cfg_.vs_groups.end()) {
                    error(p.vs.loc,
                          "virtual_server: unknown virtual_server_group " + quoted(p.group_name));
                    continue;
                }
                for (const VsGroupEntry& e : it->entries) {
                    range_for_each(e.first, e.last, [&](const net::InetAddr& vip) {
                        VirtualServer vs = p.vs;
                        vs.vip = vip;
                        vs.port = e.port;
                        vs.group = p.group_name;
                        expanded.push_back(std::move(vs));
                    });
                }
            }
            for (VirtualServer& vs : expanded) {
                // ipvsadm: "Zero port specified for non-persistent service".
                if (vs.port == 0 && !vs.fwmark && vs.persistence_timeout == 0) {
                    error(vs.loc, "virtual_server " + endpoint_text(vs.vip, vs.port) +
                                      ": port 0 (all ports) needs persistence_timeout, as "
                                      "ipvsadm's: give the service's port or make it persistent");
                    continue;
                }
                if (vs.fwmark) {
                    const auto& marks = cfg_.fwmark.marks;
                    const auto m =
                        std::find_if(marks.begin(), marks.end(),
                                     [&](const lb::FwmarkDef& d) { return d.mark == vs.fwmark; });
                    if (m == marks.end()) {
                        error(vs.loc, "virtual_server fwmark " + std::to_string(vs.fwmark) +
                                          ": no `mark " + std::to_string(vs.fwmark) +
                                          "` in fwmark_defs (xvs marks packets itself: define "
                                          "which VIPs and ports carry the mark there)");
                        continue;
                    }
                    // A mark has a service per family (IPVS -f N, -f N -6): this one gets the
                    // packets of the mark's entries of its own family, so it needs one.
                    const bool v4 = vs.vip.is_v4();
                    if (std::none_of(
                            m->entries.begin(), m->entries.end(),
                            [&](const lb::FwmarkEntry& e) { return e.dst.is_v4() == v4; })) {
                        const SourceLoc& def_at =
                            cfg_.fwmark.locs[static_cast<size_t>(m - marks.begin())];
                        error(vs.loc, vs_text(vs) + ": mark " + std::to_string(vs.fwmark) +
                                          " of fwmark_defs (at " + loc_text(def_at) + ") has no " +
                                          family_name(vs.vip) +
                                          " entry, so no packet would reach it: add one there, "
                                          "or set `ip_family " +
                                          (v4 ? "inet6" : "inet") +
                                          "` (the family comes from ip_family, else the first "
                                          "real server)");
                        continue;
                    }
                    auto [it, inserted] = seen_marks.emplace(std::pair{vs.fwmark, v4}, vs.loc);
                    if (!inserted) {
                        error(vs.loc, "duplicate " + vs_text(vs) + " (first at " +
                                          loc_text(it->second) + ")");
                        continue;
                    }
                    cfg_.virtual_servers.push_back(std::move(vs));
                    continue;
                }
                auto key = std::make_tuple(vs.proto, addr_key(vs.vip), vs.port);
                auto [it, inserted] = seen.emplace(key, vs.loc);
                if (!inserted) {
                    error(vs.loc, "duplicate virtual_server " + std::string(to_string(vs.proto)) +
                                      " " + endpoint_text(vs.vip, vs.port) + " (first at " +
                                      loc_text(it->second) + ")");
                    continue;
                }
                cfg_.virtual_servers.push_back(std::move(vs));
            }
        }
        validate_local_addresses();
        validate_families();
        validate_ip();
        validate_feedback();
    }

  private:
    // Load feedback: services that share a UDP port share its socket, so they share its key
    // and listen address; and the reports go to the director's kernel, so `listen` is not an
    // address xvs itself owns.
    void validate_feedback() {
        struct Seen {
            const FeedbackConf* fb;
        };
        std::map<uint16_t, Seen> ports;
        for (const VirtualServer& vs : cfg_.virtual_servers) {
            const auto& fb = vs.health.feedback;
            if (!fb) continue;
            const SourceLoc at{fb->file, fb->line};
            auto [it, inserted] = ports.emplace(fb->port, Seen{&*fb});
            const FeedbackConf& first = *it->second.fb;
            if (!inserted && first.line == fb->line && first.file == fb->file) continue;
            if (!inserted && (first.secret != fb->secret || first.listen != fb->listen ||
                              first.max_skew_ms != fb->max_skew_ms))
                error(at, "feedback: port " + std::to_string(fb->port) + " is also used at " +
                              first.file + ":" + std::to_string(first.line) +
                              " with another key, listen or max_skew: give each key its own port");
            if (fb->listen)
                for (const AddressDef& a : cfg_.ip.addresses)
                    if (a.addr == *fb->listen)
                        error(at, "feedback: listen " + net::to_string(*fb->listen) +
                                      " is an address of xvs (ip_defs at " + loc_text(a.loc) +
                                      "): reports go to an address of the director's kernel");
        }
    }

    // Health checking (ctl/health/): where checks go and leave from is of one family, a
    // PING_CHECK has no port, and the sorry server is none of the real servers. Checked once
    // per virtual_server statement (a group's expansion shares the block).
    void validate_health(const VirtualServer& vs) {
        const std::string name = vs_text(vs);
        for (const RealServer& rs : vs.real_servers) {
            for (const CheckerConf& c : rs.health.checkers) {
                const SourceLoc at{c.file, c.line};
                const net::InetAddr target = c.connect_ip ? *c.connect_ip : rs.addr;
                const std::string what = std::string(to_string(c.type)) + " of real_server " +
                                         endpoint_text(rs.addr, rs.port);
                if (c.bindto && c.bindto->is_v4() != target.is_v4())
                    error(at, what + ": bindto " + net::to_string(*c.bindto) + " is " +
                                  family_name(*c.bindto) + " but the check goes to " +
                                  net::to_string(target) + " (" + family_name(target) +
                                  "): give a source of the target's family");
                if (c.type == CheckType::Ping && c.connect_port)
                    error(at, what + ": connect_port has no meaning for an ICMP echo: remove it");
                if (c.type == CheckType::Udp && !c.require_reply &&
                    (c.min_reply_length || c.max_reply_length || !c.reply.empty()))
                    error(at, what + ": min/max_reply_length need require_reply");
            }
        }
        if (const auto& sorry = vs.health.sorry) {
            const SourceLoc at{sorry->file, sorry->line};
            for (const RealServer& rs : vs.real_servers) {
                if (rs.addr == sorry->addr && rs.port == sorry->port)
                    error(at, name + ": sorry_server " + endpoint_text(sorry->addr, sorry->port) +
                                  " is also a real_server (at " + loc_text(rs.loc) +
                                  "): a sorry server stands in for the real servers");
            }
            if (!vs.real_servers.empty() &&
                vs.real_servers.front().addr.is_v4() != sorry->addr.is_v4())
                error(at, name + ": sorry_server " + endpoint_text(sorry->addr, sorry->port) +
                              " is " + family_name(sorry->addr) + " but the real servers are " +
                              family_name(vs.real_servers.front().addr));
        }
    }

    // The Director keys addresses by address and routes by prefix: a second one would be
    // skipped by config_apply, so it is an error here.
    void validate_ip() {
        std::map<AddrKey, SourceLoc> addrs;
        for (const AddressDef& a : cfg_.ip.addresses) {
            auto [it, inserted] = addrs.emplace(addr_key(a.addr), a.loc);
            if (!inserted)
                error(a.loc, "address " + net::to_string(a.addr) + " already defined at " +
                                 loc_text(it->second));
        }
        std::map<std::pair<AddrKey, uint8_t>, SourceLoc> routes;
        for (const RouteDef& r : cfg_.ip.routes) {
            auto [it, inserted] =
                routes.emplace(std::make_pair(addr_key(r.prefix.addr), r.prefix.len), r.loc);
            if (!inserted)
                error(r.loc, "route " + net::to_string(r.prefix) + " already defined at " +
                                 loc_text(it->second));
        }
    }

    // A local address belongs to one group and is neither a VIP nor a director address:
    // FULLNAT return traffic is matched by (LIP, lport), so sharing would mix connections.
    void validate_local_addresses() {
        std::set<AddrKey> vips;
        for (const VirtualServer& vs : cfg_.virtual_servers) vips.insert(addr_key(vs.vip));
        std::set<AddrKey> director;
        for (const AddressDef& a : cfg_.ip.addresses) director.insert(addr_key(a.addr));
        std::map<AddrKey, std::string> owner;
        for (size_t g = 0; g < cfg_.laddr_groups.size(); ++g) {
            const LocalAddressGroup& group = cfg_.laddr_groups[g];
            for (size_t i = 0; i < group.addrs.size(); ++i) {
                const net::InetAddr addr = group.addrs[i].addr;
                const SourceLoc& at = parsed_.laddr_locs[g][i];
                const std::string text = "local address " + net::to_string(addr);
                auto [it, inserted] = owner.emplace(addr_key(addr), group.name);
                if (!inserted)
                    error(at, text + " is already in local_address_group " + quoted(it->second));
                if (vips.count(addr_key(addr)))
                    error(at, text + " is also a virtual_server address");
                if (director.count(addr_key(addr)))
                    error(at, text + " is also a director address (ip_defs)");
            }
        }
    }

    // Address families of a service: the real servers (and, for FULLNAT, the local
    // addresses) are of the VIP's family, except FNAT64: an IPv6 VIP in front of IPv4 local
    // addresses and IPv4 real servers (DPVS's NAT64). Any other mix is refused where the
    // odd address is written.
    void validate_families() {
        for (const VirtualServer& vs : cfg_.virtual_servers) {
            const std::string name = vs_text(vs);
            const bool fullnat = vs.fwd == lb::FwdMode::FullNat;
            // The family of the addresses behind the director: the first real server's, or
            // else the first local address's, or else the VIP's.
            const LocalAddressGroup* group =
                vs.laddr_group.empty() ? nullptr : cfg_.find_laddr_group(vs.laddr_group);
            std::optional<bool> inner_v4;
            if (!vs.real_servers.empty())
                inner_v4 = vs.real_servers.front().addr.is_v4();
            else if (fullnat && group && !group->addrs.empty())
                inner_v4 = group->addrs.front().addr.is_v4();
            const bool vip_v4 = vs.vip.is_v4();
            if (!inner_v4) continue;
            if (*inner_v4 != vip_v4 && (!fullnat || vip_v4)) {
                const SourceLoc& at =
                    vs.real_servers.empty() ? vs.loc : vs.real_servers.front().loc;
                const char* what = vs.real_servers.empty() ? " local addresses" : " real servers";
                error(at, name + ": " + (*inner_v4 ? "IPv4" : "IPv6") + what + " behind an " +
                              family_name(vs.vip) + (vs.fwmark ? " service " : " VIP ") +
                              (vip_v4 ? "are not supported (only FNAT64 mixes families: an IPv6 "
                                        "VIP with IPv4 local addresses and real servers)"
                                      : "need lb_kind FNAT (FNAT64); " +
                                            std::string(lb::fwd_names(vs.fwd).keepalived) +
                                            " forwards in the VIP's family"));
                continue;
            }
            for (const RealServer& rs : vs.real_servers) {
                if (rs.addr.is_v4() == *inner_v4) continue;
                error(rs.loc, name + ": real_server " + endpoint_text(rs.addr, rs.port) + " is " +
                                  family_name(rs.addr) + " but the service's real servers are " +
                                  (*inner_v4 ? "IPv4" : "IPv6") + " (one family per service)");
            }
            if (!fullnat || !group) continue;
            const size_t g = static_cast<size_t>(group - cfg_.laddr_groups.data());
            for (size_t i = 0; i < group->addrs.size(); ++i) {
                const net::InetAddr& a = group->addrs[i].addr;
                if (a.is_v4() == *inner_v4) continue;
                error(parsed_.laddr_locs[g][i],
                      "local address " + net::to_string(a) + " of local_address_group " +
                          quoted(group->name) + " is " + family_name(a) + " but " + name +
                          " (laddr_group_name) forwards to " + (*inner_v4 ? "IPv4" : "IPv6") +
                          " real servers: a local address is of the real servers' family");
                break;  // one message per group and service
            }
        }
    }

    void error(const SourceLoc& at, std::string_view message) {
        diag_.error(at.file, at.line, message);
    }

    ParsedConfig& parsed_;
    Config& cfg_;
    Diagnostics& diag_;
};

}  // namespace

void config_validate(ParsedConfig& parsed, Diagnostics& diag) {
    Validator(parsed, diag).validate();
}

}  // namespace xvs::ctl
