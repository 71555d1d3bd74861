// EAL start/stop. rte_eal_init keeps pointers into argv, so the strings live for the process.
#include "port/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <deque>

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
    return size_t(mp->header_size + mp->elt_size + mp->trailer_size) * mp->size;
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

}  // namespace xvs::port
