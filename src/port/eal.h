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
// How full a mempool is: "free" is rte_mempool_avail_count (its ring and the per-lcore
// caches, O(lcores), never a walk of the objects); what is not free is in use.
struct MempoolUse {
    std::string name;
    unsigned size = 0;
    unsigned free = 0;
    unsigned in_use() const { return size - free; }
};
// Every mempool of the process (rte_mempool_walk); empty while the EAL is not running.
std::vector<MempoolUse> mempools_use();
// One pool (the status page's mbufs per port).
MempoolUse mempool_use(const rte_mempool* mp);
// data_room 0: RTE_MBUF_DEFAULT_BUF_SIZE (a standard frame); larger for reassembled datagrams.
Result<rte_mempool*> mbuf_pool_create(const std::string& name, unsigned n_mbufs,
                                      unsigned cache_size = 256, uint16_t data_room = 0);

}  // namespace xvs::port
