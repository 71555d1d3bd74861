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
// Objects of the pool handed out (rte_mempool_in_use_count: those in lcore caches count as
// in use) and its size; the status page's mbuf use. O(lcores), no lock.
struct MempoolUse {
    unsigned in_use = 0;
    unsigned size = 0;
};
MempoolUse mempool_use(const rte_mempool* mp);
// data_room 0: RTE_MBUF_DEFAULT_BUF_SIZE (a standard frame); larger for reassembled datagrams.
Result<rte_mempool*> mbuf_pool_create(const std::string& name, unsigned n_mbufs,
                                      unsigned cache_size = 256, uint16_t data_room = 0);

}  // namespace xvs::port
