// Persistence templates (IPVS "persistent services", ipvsadm -p/-M): a template is a conn of
// its own kind in the worker's conn table, keyed (client address masked by the service's
// granularity, port 0, VIP or mark, service port or 0) -> dest. A new conn of a persistent
// service uses the template's dest without the scheduler while the template lives; the
// template lives for the persistence timeout after its last use, and as long as any conn it
// controls lives (IPVS's n_control), whatever the dest's weight (a quiesced dest keeps its
// persistent clients unless expire_quiescent_template). Allocation-free; templates are never
// returned by a packet's lookup (their key protocol is kProtoTemplate).
#pragma once

#include <cstdint>

#include "lb/conn.h"
#include "stack/counters.h"

namespace xvs::lb {

struct WorkerCtx;
struct ServiceView;

// Conn::proto of a template: no packet lookup carries it (only TCP, UDP, ICMP reach the table).
inline constexpr uint8_t kProtoTemplate = 0xff;

inline bool conn_is_template(const Conn& c) {
    return c.proto == kProtoTemplate;
}

// Per conn slot, beside the table (WorkerCtx::persist).
struct PersistSlot {
    uint32_t tpl = 0;        // a conn with kConnPersist: its template's slot + 1
    uint32_t n_control = 0;  // a template: conns it controls
    uint32_t timeout_s = 0;  // a template: its persistence timeout
    bool unhashed = false;   // a template out of the table, waiting for its conns to go
};

// The template key of a new flow to `view`'s service (mark != 0: a firewall-mark service).
ConnKey persist_key(const ServiceView& view, const ConnKey& flow, uint32_t mark);

// The live template for `key`, or nullptr: a template whose dest was removed, or is quiesced
// under expire_quiescent_template, is expired here (IPVS ip_vs_check_template) so the client
// is scheduled anew. A found template's timer is refreshed.
Conn* persist_lookup(WorkerCtx& w, const ServiceView& view, const ConnKey& key);
// A new template for `key` to dest; nullptr when the pool or the table is full (*why says
// which counter to count the dropped packet under).
Conn* persist_create(WorkerCtx& w, const ServiceView& view, const ConnKey& key, Dest* dest,
                     stack::Counter* why);
// conn is controlled by tpl from now on (sets kConnPersist).
void persist_attach(WorkerCtx& w, Conn* conn, Conn* tpl);
// conn_expire of a conn with kConnPersist: its template loses one controlled conn.
void persist_detach(WorkerCtx& w, Conn* conn);
// conn_expire of a template: out of the table now, freed once it controls no conn.
void persist_expire(WorkerCtx& w, Conn* tpl);
// The template's timer fired at now: re-armed while it controls conns or was used lately,
// else freed.
void persist_timer(WorkerCtx& w, Conn* tpl, uint64_t now);

}  // namespace xvs::lb
