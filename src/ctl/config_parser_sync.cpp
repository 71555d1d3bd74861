// sync_defs { ... }: session sync between directors (ctl/sync/sync_daemon.h). Every keyword is
// applied by the sync daemon at start (restart to change).
#include <array>
#include <string>

#include "ctl/config_parser_impl.h"

namespace xvs::ctl::parser_detail {

void Parser::sync_defs(const Token& kw) {
    if (classified(kw, "sync_defs")) return;
    SyncDefs& s = cfg_.sync;
    const std::string& k = kw.text;
    if (k == "syncid") {
        if (auto n = number_value(kw, 0, 255)) s.syncid = *n;
    } else if (k == "source") {
        if (auto a = inet_value(kw)) {
            if (!a->is_v4())
                error(kw, "source: session sync runs over IPv4 (give the director's IPv4 kernel address)");
            else
                s.source = *a;
        }
    } else if (k == "mcast_group") {
        if (auto a = inet_value(kw)) {
            const uint32_t first = a->is_v4() ? (net::ntoh32(a->v4_be()) >> 28) : 0;
            if (!a->is_v4() || first != 0xe)
                error(kw, "mcast_group: not an IPv4 multicast address (224.0.0.0/4)");
            else
                s.mcast_group = *a;
        }
    } else if (k == "port") {
        if (auto p = port_value(kw)) {
            if (*p == 0)
                error(kw, "port: 0 is not a port (default 8848)");
            else
                s.port = *p;
        }
    } else if (k == "peer") {
        if (auto a = inet_value(kw)) {
            if (!a->is_v4())
                error(kw, "peer: session sync runs over IPv4 (give the peer's IPv4 kernel address)");
            else
                s.peers.push_back(*a);
        }
    } else if (k == "role") {
        static constexpr std::array<std::pair<std::string_view, SyncRoleDef>, 3> kRoles = {
            {{"master", SyncRoleDef::Master},
             {"backup", SyncRoleDef::Backup},
             {"both", SyncRoleDef::Both}}};
        if (auto r = choice(kw, kRoles)) s.role = *r;
    } else if (k == "peer_timeout") {
        if (auto n = number_value(kw, 1, 3600)) s.peer_timeout_ms = *n * 1000;
    } else if (k == "heartbeat") {
        if (auto n = number_value(kw, 1, 60)) s.heartbeat_ms = *n * 1000;
    } else if (k == "resync") {
        if (auto on = switch_value(kw)) s.resync = *on;
    } else if (k == "max_message") {
        if (auto n = number_value(kw, 256, 9000)) s.max_message = *n;
    } else if (k == "ring_size") {
        if (auto n = number_value(kw, 256, 1u << 20)) s.ring_size = *n;
    } else if (k == "claim_dev") {
        if (const Token* v = value(kw)) {
            s.claim_dev = v->text;
            s.claim_dev_loc = loc(kw);
            ref_port(*v, "sync_defs claim_dev");
        }
    } else {
        unknown(kw, "sync_defs");
    }
    if (s.heartbeat_ms >= s.peer_timeout_ms && (k == "heartbeat" || k == "peer_timeout"))
        error(kw, k + ": peer_timeout (" + std::to_string(s.peer_timeout_ms / 1000) +
                      " s) must be longer than heartbeat (" + std::to_string(s.heartbeat_ms / 1000) +
                      " s), or a live peer is declared failed");
}

}  // namespace xvs::ctl::parser_detail
