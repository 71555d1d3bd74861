// DPDK EAL lifetime: started once per process from an argument list, cleaned up on exit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

struct rte_mempool;

namespace xvs::port {

// Starts the EAL with args (without argv[0]). Fails with rte_strerror's text.
Result<void> eal_start(const std::vector<std::string>& args);
void eal_stop();
bool eal_running();

// Splits "--no-huge -m 512" (shell-like, double quotes honoured) into arguments.
std::vector<std::string> split_args(const std::string& text);

// A packet mbuf pool on the caller's NUMA socket; nullptr with an error message on failure.
// Bytes a pool's objects occupy (header + element + trailer, times its size).
size_t mempool_memory_bytes(const rte_mempool* mp);
// How full each mempool of the process is (rte_mempool_walk; "free" counts the per-lcore
// caches too, so it costs O(lcores) per pool, never a walk of the objects). Empty while the
// EAL is not running.
struct MempoolUse {
    std::string name;
    unsigned size = 0;
    unsigned free = 0;
};
std::vector<MempoolUse> mempools_use();
// data_room 0: RTE_MBUF_DEFAULT_BUF_SIZE (a standard frame); larger for reassembled datagrams.
Result<rte_mempool*> mbuf_pool_create(const std::string& name, unsigned n_mbufs,
                                      unsigned cache_size = 256, uint16_t data_room = 0);

}  // namespace xvs::port
