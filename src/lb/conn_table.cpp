// ConnTable on rte_hash. Hash memory is measured from the EAL heap around creation so that the
// per-connection figure is real, not an estimate.
#include "lb/conn_table.h"

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

namespace xvs::lb {

namespace {
size_t heap_allocated() {
    rte_malloc_socket_stats st{};
    size_t total = 0;
    for (int s = 0; s < RTE_MAX_NUMA_NODES; ++s)
        if (rte_malloc_get_socket_stats(s, &st) == 0) total += st.heap_allocsz_bytes;
    return total;
}
}  // namespace

Result<std::unique_ptr<ConnTable>> ConnTable::create(const std::string& name, uint32_t max_conns) {
    if (max_conns == 0) return make_error("connection table size must be positive");
    std::unique_ptr<ConnTable> t(new ConnTable());
    size_t before = heap_allocated();
    rte_hash_parameters params{};
    params.name = name.c_str();
    params.entries = max_conns * 2;  // two keys per connection
    params.key_len = sizeof(ConnKey);
    params.hash_func = rte_hash_crc;
    params.hash_func_init_val = 0x9e3779b9;
    params.socket_id = 0;
    params.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;  // inserts never fail below capacity
    t->hash_ = rte_hash_create(&params);
    if (!t->hash_) {
        return make_error("cannot create connection table '" + name + "' for " +
                          std::to_string(max_conns) + " connections: " + rte_strerror(rte_errno) +
                          " (raise the EAL memory, -m)");
    }
    size_t hash_bytes = heap_allocated() - before;
    t->pool_ = static_cast<Conn*>(
        rte_malloc_socket("xvs_conn_pool", sizeof(Conn) * size_t(max_conns), 64, SOCKET_ID_ANY));
    if (!t->pool_) {
        return make_error("cannot allocate " + std::to_string(max_conns) +
                          " connections (" + std::to_string(sizeof(Conn) * size_t(max_conns) >> 20) +
                          " MiB): raise the EAL memory (-m)");
    }
    t->capacity_ = max_conns;
    for (uint32_t i = 0; i < max_conns; ++i) new (&t->pool_[i]) Conn{};
    t->free_.reserve(max_conns);
    for (uint32_t i = max_conns; i-- > 0;) t->free_.push_back(i);
    t->memory_bytes_ = hash_bytes + size_t(max_conns) * sizeof(Conn) +
                       t->free_.capacity() * sizeof(uint32_t);
    return t;
}

ConnTable::~ConnTable() {
    if (hash_) rte_hash_free(hash_);
    rte_free(pool_);
}

Conn* ConnTable::alloc() {
    if (free_.empty()) return nullptr;
    Conn* c = &pool_[free_.back()];
    free_.pop_back();
    *c = Conn{};
    return c;
}

void ConnTable::release(Conn* conn) {
    conn->proto = 0;
    free_.push_back(static_cast<uint32_t>(conn - pool_));
}

bool ConnTable::insert(Conn* conn, const ConnKey& in, const ConnKey& out) {
    auto tag = [&](ConnDir d) {
        return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(conn) | uintptr_t(d));
    };
    if (rte_hash_add_key_data(hash_, &in, tag(ConnDir::In)) != 0) return false;
    if (rte_hash_add_key_data(hash_, &out, tag(ConnDir::Out)) != 0) {
        rte_hash_del_key(hash_, &in);
        return false;
    }
    return true;
}

void ConnTable::remove(const ConnKey& in, const ConnKey& out) {
    rte_hash_del_key(hash_, &in);
    rte_hash_del_key(hash_, &out);
}

namespace {
ConnRef untag(void* data) {
    auto v = reinterpret_cast<uintptr_t>(data);
    return ConnRef{reinterpret_cast<Conn*>(v & ~uintptr_t(1)), static_cast<ConnDir>(v & 1)};
}
}  // namespace

ConnRef ConnTable::lookup(const ConnKey& key) const {
    void* data = nullptr;
    if (rte_hash_lookup_data(hash_, &key, &data) < 0) return ConnRef{};
    return untag(data);
}

void ConnTable::lookup_bulk(const ConnKey* const* keys, unsigned n, ConnRef* refs) const {
    void* data[64];
    uint64_t hits = 0;
    rte_hash_lookup_bulk_data(hash_, reinterpret_cast<const void**>(const_cast<const ConnKey**>(keys)),
                              n, &hits, data);
    for (unsigned i = 0; i < n; ++i) refs[i] = (hits >> i) & 1 ? untag(data[i]) : ConnRef{};
}

}  // namespace xvs::lb
