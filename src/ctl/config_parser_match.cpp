// Parser section of xvs.conf for SNAT match services (DPVS keepalived's `virtual_server
// match NAME { protocol; lb_algo; lb_kind SNAT; src-range; dst-range; oif; iif; real_server
// WAN 0 }`, config.h MatchServer), and the scheduler value shared with virtual_server.
#include <algorithm>

#include "ctl/config_parser_impl.h"

namespace xvs::ctl::parser_detail {

void Parser::sched_value(const Token& t, std::string& sched) {
    const Token* val = value(t);
    if (!val) return;
    if (sched_name_supported(val->text))
        sched = val->text;
    else if (sched_name_known(val->text))
        error(*val, "scheduler " + quoted(val->text) + " not supported yet");
    else
        error(*val, t.text + ": unknown scheduler " + quoted(val->text));
}

// DPVS keepalived's SNAT service: `virtual_server match NAME { ... }` (config.h).
void Parser::match_server(const Token& kw, const Token& match_tok) {
    MatchServer m;
    m.loc = loc(kw);
    const Token* name = value(match_tok);
    if (name) m.name = name->text;
    if (has_value(kw)) {
        error(*peek(), "virtual_server match: unexpected " + quoted(peek()->text));
        while (has_value(kw)) ++pos_;
    }
    const std::string what = "virtual_server match " + quoted(m.name);
    VirtualServer carrier;  // lb_kind and real_server fill a VirtualServer
    carrier.fwd = lb::FwdMode::Snat;
    bool proto_set = false;
    std::optional<SourceLoc> kind_loc;
    block(kw, [&](const Token& t) {
        const std::string& k = t.text;
        if (classified(t, "virtual_server")) return;
        if (k == "protocol") {
            const Token* val = value(t);
            if (!val) return;
            proto_set = true;  // a bad value is its own error, not also "missing"
            auto proto = lb::match_proto_from_name(lower(val->text));
            if (!proto)
                return error(*val, "protocol: bad value " + quoted(val->text) + " (TCP|UDP|ICMP)");
            m.key.proto = *proto;
        } else if (k == "lb_algo" || k == "lvs_sched") {
            sched_value(t, m.sched);
        } else if (k == "lb_kind" || k == "lvs_method") {
            lb_kind(t, carrier);
            kind_loc = loc(t);
        } else if (k == "src-range" || k == "dst-range") {
            const Token* val = value(t);
            if (!val) return;
            auto r = lb::parse_addr_range(val->text);
            if (!r) return error(*val, k + ": " + r.error());
            (k == "src-range" ? m.key.src : m.key.dst) = *r;
        } else if (k == "oif" || k == "iif") {
            const Token* val = value(t);
            if (!val) return;
            (k == "oif" ? m.key.oif : m.key.iif) = val->text;
            ref_port(*val, what + " " + k);
        } else if (k == "real_server") {
            real_server(t, carrier);
        } else if (keyword_find("virtual_server", k)) {
            error(t, quoted(k) +
                         " is not for SNAT match services (it is about real servers "
                         "behind a VIP): remove it");
            skip_statement(t);
        } else {
            unknown(t, "virtual_server");
        }
    });
    if (!name) return;
    bool ok = true;
    if (!proto_set) {
        error(kw, what + ": protocol missing (TCP, UDP or ICMP)");
        ok = false;
    }
    if (carrier.fwd != lb::FwdMode::Snat) {
        error(kind_loc ? *kind_loc : m.loc,
              what + ": lb_kind must be SNAT (a match service only masquerades; for " +
                  std::string(lb::fwd_names(carrier.fwd).keepalived) +
                  " write `virtual_server VIP PORT`)");
        ok = false;
    }
    if (m.key.oif.empty()) {
        error(kw, what +
                      ": oif missing (the port whose address inside hosts are hidden "
                      "behind, e.g. `oif wan0`)");
        ok = false;
    }
    // The family of the packets it translates: its ranges', else its WAN addresses'.
    if (auto f = lb::match_family(m.key, 0); !f) {
        error(kw, what + ": " + f.error());
        ok = false;
    } else {
        const bool ranges = !m.key.src.any_addr() || !m.key.dst.any_addr();
        m.key.family = ranges || carrier.real_servers.empty()
                           ? *f
                           : carrier.real_servers.front().addr.is_v4() ? uint8_t{4} : uint8_t{6};
        const auto other = std::find_if(
            carrier.real_servers.begin(), carrier.real_servers.end(),
            [&](const RealServer& rs) { return rs.addr.is_v4() != (m.key.family == 4); });
        if (other != carrier.real_servers.end()) {
            error(kw, what + ": WAN address " + net::to_string(other->addr) + " (" +
                          other->loc.file + ":" + std::to_string(other->loc.line) + ") is IPv" +
                          (other->addr.is_v4() ? "4" : "6") + " but the service translates IPv" +
                          std::to_string(m.key.family) +
                          " packets (its ranges' or first WAN's family): one family per match "
                          "service");
            ok = false;
        }
    }
    m.fwd = carrier.fwd;
    m.real_servers = std::move(carrier.real_servers);
    for (const MatchServer& prev : cfg_.match_servers) {
        if (prev.name == m.name || prev.key == m.key) {
            error(kw, (prev.name == m.name
                           ? what + " already defined"
                           : what + " matches the same packets as " + quoted(prev.name)) +
                          " at " + prev.loc.file + ":" + std::to_string(prev.loc.line));
            ok = false;
            break;
        }
    }
    if (ok) cfg_.match_servers.push_back(std::move(m));
}

}  // namespace xvs::ctl::parser_detail
