// EAL start/stop. rte_eal_init keeps pointers into argv, so the strings live for the process.
#include "port/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memzone.h>

#include <unistd.h>

#include <deque>
#include <memory>

namespace xvs::port {

namespace {
bool g_running = false;
std::deque<std::string> g_arg_storage;  // stable addresses for argv
}  // namespace

std::vector<std::string> split_args(const std::string& text) {
    std::vector<std::string> out;
    std::string cur;
    bool in_quotes = false, have = false;
    for (char c : text) {
        if (c == '"') {
            in_quotes = !in_quotes;
            have = true;
        } else if (!in_quotes && (c == ' ' || c == '\t' || c == '\n')) {
            if (have) out.push_back(cur);
            cur.clear();
            have = false;
        } else {
            cur += c;
            have = true;
        }
    }
    if (have) out.push_back(cur);
    return out;
}

Result<void> eal_start(const std::vector<std::string>& args) {
    if (g_running) return make_error("EAL already started");
    std::vector<char*> argv;
    g_arg_storage.emplace_back("xvs");
    argv.push_back(g_arg_storage.back().data());
    for (const auto& a : args) {
        g_arg_storage.push_back(a);
        argv.push_back(g_arg_storage.back().data());
    }
    argv.push_back(nullptr);
    int rc = rte_eal_init(static_cast<int>(argv.size() - 1), argv.data());
    if (rc < 0) {
        return make_error(std::string("EAL initialisation failed: ") + rte_strerror(rte_errno));
    }
    g_running = true;
    return {};
}

void eal_stop() {
    if (!g_running) return;
    rte_eal_cleanup();
    g_running = false;
}

bool eal_running() { return g_running; }

std::vector<MempoolUse> mempools_use() {
    std::vector<MempoolUse> out;
    if (!g_running) return out;
    rte_mempool_walk(
        [](rte_mempool* mp, void* arg) {
            static_cast<std::vector<MempoolUse>*>(arg)->push_back(
                {mp->name, mp->size, rte_mempool_avail_count(mp)});
        },
        &out);
    return out;
}

size_t mempool_memory_bytes(const rte_mempool* mp) {
    size_t bytes = 0;
    const rte_mempool_memhdr* hdr = nullptr;
    STAILQ_FOREACH(hdr, &mp->mem_list, next) bytes += hdr->len;
    return bytes;
}

MempoolUse mempool_use(const rte_mempool* mp) {
    return {mp->name, mp->size, rte_mempool_avail_count(mp)};
}

Result<rte_mempool*> mbuf_pool_create(const std::string& name, unsigned n_mbufs,
                                      unsigned cache_size, uint16_t data_room) {
    rte_mempool* mp = rte_pktmbuf_pool_create(name.c_str(), n_mbufs, cache_size, 0,
                                              data_room ? data_room : RTE_MBUF_DEFAULT_BUF_SIZE,
                                              static_cast<int>(rte_socket_id()));
    if (!mp) {
        return make_error("cannot create mbuf pool '" + name + "' of " + std::to_string(n_mbufs) +
                          " mbufs: " + rte_strerror(rte_errno));
    }
    return mp;
}

unsigned umem_outside(const rte_mempool* mp) {
    const rte_mempool_memhdr* first = STAILQ_FIRST(&mp->mem_list);
    if (!first) return mp->size;
    struct Span {
        uintptr_t base = 0;
        uint64_t bytes = 0;
        uint32_t object = 0, header = 0;
        unsigned outside = 0;
    } span;
    // As net_af_xdp computes it: the first chunk's address rounded down to its page, and
    // the pool's objects times the object size, plus that rounding.
    const auto page = static_cast<uintptr_t>(getpagesize());
    const auto start = reinterpret_cast<uintptr_t>(first->addr);
    span.base = start & ~(page - 1);
    span.object = mp->header_size + mp->elt_size + mp->trailer_size;
    span.header = mp->header_size;
    span.bytes = uint64_t(mp->populated_size) * span.object + (start - span.base);
    rte_mempool_obj_iter(
        const_cast<rte_mempool*>(mp),
        [](rte_mempool*, void* arg, void* obj, unsigned) {
            auto* s = static_cast<Span*>(arg);
            const uintptr_t frame = reinterpret_cast<uintptr_t>(obj) - s->header;
            if (frame < s->base || frame - s->base + s->object > s->bytes) ++s->outside;
        },
        &span);
    return span.outside;
}

Result<rte_mempool*> umem_pool_create(const std::string& name, unsigned n_mbufs,
                                      unsigned cache_size) {
    const std::string what = "mbuf pool '" + name + "' of " + std::to_string(n_mbufs) + " mbufs";
    // No IOVA: the kernel reaches UMEM frames by virtual address (and maps them for a
    // zero-copy driver itself); no spreading pad, which would make the objects 4,160 bytes.
    constexpr unsigned kFlags = RTE_MEMPOOL_F_NO_SPREAD | RTE_MEMPOOL_F_NO_IOVA_CONTIG;
    rte_mempool_objsz sz{};
    rte_mempool_calc_obj_size(0, kFlags, &sz);
    const uint32_t elt = kUmemObjectBytes - sz.header_size - sz.trailer_size;
    if (rte_mempool_calc_obj_size(elt, kFlags, &sz) != kUmemObjectBytes || elt <= sizeof(rte_mbuf))
        return make_error(what + ": this DPDK's mempool objects cannot be made " +
                          std::to_string(kUmemObjectBytes) + " bytes (header " +
                          std::to_string(sz.header_size) + ", trailer " +
                          std::to_string(sz.trailer_size) + ")");
    std::unique_ptr<rte_mempool, decltype(&rte_mempool_free)> mp(
        rte_mempool_create_empty(name.c_str(), n_mbufs, elt, cache_size,
                                 sizeof(rte_pktmbuf_pool_private),
                                 static_cast<int>(rte_socket_id()), kFlags),
        &rte_mempool_free);
    if (!mp) return make_error("cannot create " + what + ": " + rte_strerror(rte_errno));
    if (int rc = rte_mempool_set_ops_byname(mp.get(), rte_mbuf_best_mempool_ops(), nullptr); rc != 0)
        return make_error(what + ": mempool ops: " + rte_strerror(-rc));
    rte_pktmbuf_pool_private priv{};
    priv.mbuf_data_room_size = static_cast<uint16_t>(elt - sizeof(rte_mbuf));
    priv.mbuf_priv_size = 0;
    rte_pktmbuf_pool_init(mp.get(), &priv);
    // One page-aligned piece of memory, objects from its first byte: the span the PMD
    // computes from the piece's page is then exactly the objects (rte_mempool_populate_default
    // starts them at the first page boundary inside a piece that need not begin on one, which
    // left the last mbuf outside).
    const size_t bytes = size_t(n_mbufs) * kUmemObjectBytes;
    const rte_memzone* mz = rte_memzone_reserve_aligned((name + "_umem").c_str(), bytes,
                                                        static_cast<int>(rte_socket_id()), 0,
                                                        kUmemObjectBytes);
    if (!mz)
        return make_error("cannot reserve " + std::to_string(bytes >> 20) + " MiB for " + what +
                          ": " + rte_strerror(rte_errno) + "; give the EAL more memory (-m)");
    const int added = rte_mempool_populate_iova(
        mp.get(), static_cast<char*>(mz->addr), RTE_BAD_IOVA, bytes,
        [](rte_mempool_memhdr*, void* zone) { rte_memzone_free(static_cast<const rte_memzone*>(zone)); },
        const_cast<rte_memzone*>(mz));
    if (added < 0) {
        rte_memzone_free(mz);
        return make_error("cannot populate " + what + ": " + rte_strerror(-added));
    }
    rte_mempool_obj_iter(mp.get(), rte_pktmbuf_init, nullptr);
    if (mp->populated_size != n_mbufs)
        return make_error(what + ": only " + std::to_string(mp->populated_size) +
                          " fit in its memory");
    if (unsigned out = umem_outside(mp.get()); out != 0)
        return make_error(what + ": " + std::to_string(out) +
                          " mbufs lie outside the UMEM net_af_xdp registers");
    return mp.release();
}

}  // namespace xvs::port
