#include "lb/command.h"

#include <algorithm>

#include "lb/conn_table.h"
#include "lb/persist.h"

namespace xvs::lb {

namespace {

template <typename T>
bool push_bounded(std::vector<T>& v, const T& e) {
    if (v.size() == v.capacity()) return false;  // never grow: the worker does not allocate
    v.push_back(e);
    return true;
}

}  // namespace

bool command_serve_chunk(Command& cmd, const ConnTable& conns, const stack::Neighbours& neigh,
                         uint64_t now_ms) {
    const size_t total = cmd.kind == Command::dump_conns ? conns.capacity() : neigh.slot_count();
    const size_t end = std::min<size_t>(total, size_t(cmd.cursor) + kCommandChunk);
    for (size_t i = cmd.cursor; i < end; ++i) {
        if (cmd.kind == Command::dump_conns) {
            const Conn* cp = conns.live(static_cast<uint32_t>(i));
            if (!cp) continue;
            const Conn& c = *cp;
            const uint64_t expires = c.expires(now_ms);
            const uint64_t left = expires > now_ms ? (expires - now_ms + 999) / 1000 : 0;
            ConnDumpEntry e{c.caddr(), c.vaddr(), c.laddr_ip(), c.daddr(), c.cport, c.vport,
                            c.lport,   c.dport,   c.proto,      c.state,   left};
            if (conn_is_template(c)) {
                e.proto = c.tpl_proto;
                e.tpl = true;
            }
            if (!push_bounded(cmd.conns, e)) cmd.truncated = true;
        } else {
            const stack::NeighEntry& n = neigh.slot(i);
            if (n.state == stack::NeighState::Empty) continue;
            if (!push_bounded(cmd.neighbours, NeighDumpEntry{n.addr, n.mac, n.port, n.state}))
                cmd.truncated = true;
        }
    }
    cmd.cursor = static_cast<uint32_t>(end);
    return end == total;
}

bool command_flush_chunk(Command& cmd, ConnTable& conns, ConnExpireFn expire, void* ctx) {
    const uint32_t total = conns.capacity();
    const uint32_t end =
        static_cast<uint32_t>(std::min<uint64_t>(total, uint64_t(cmd.cursor) + kCommandChunk));
    const Dest* dest = cmd.dest.get();
    for (uint32_t i = cmd.cursor; i < end; ++i) {
        Conn* c = conns.live(i);
        if (!c || c->dest != dest) continue;
        expire(ctx, c);
        ++cmd.flushed;
    }
    cmd.cursor = end;
    return end == total;
}

}  // namespace xvs::lb
