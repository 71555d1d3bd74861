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

// Bytes of memory a pool holds (its memory chunks: objects, and the gaps a layout that keeps
// objects inside pages leaves).
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
// A packet mbuf pool on the caller's NUMA socket, or why DPDK could not make one.
// data_room 0: RTE_MBUF_DEFAULT_BUF_SIZE (a standard frame); larger for reassembled datagrams.
Result<rte_mempool*> mbuf_pool_create(const std::string& name, unsigned n_mbufs,
                                      unsigned cache_size = 256, uint16_t data_room = 0);

// The mbuf pool of a net_af_xdp port, whose RX queues register it with the kernel as their
// UMEM. DPDK 22.11's PMD gives the kernel the span [first chunk's page, + objects x object
// size), which holds only if the objects lie end to end. rte_pktmbuf_pool_create keeps each
// object inside one page, so with 4 KiB pages (--no-huge) its 2,368-byte mbufs sit one to a
// page and the upper ~40% of the pool lay beyond that span: the kernel refused those frames
// as invalid TX descriptors (and their fill-ring entries), and a TCP flow whose mbufs came
// from there stopped for good. So these objects are exactly kUmemObjectBytes, a divisor of
// every page size, with no spreading pad: they lie end to end and never cross a page.
// Error: this DPDK cannot make such objects, the EAL has not the memory, or (checked at the
// end) some mbuf still lies outside the span (counted).
inline constexpr uint32_t kUmemObjectBytes = 4096;
Result<rte_mempool*> umem_pool_create(const std::string& name, unsigned n_mbufs,
                                      unsigned cache_size = 256);
// How many of a pool's mbufs lie outside the span net_af_xdp registers as UMEM (0: all fit).
unsigned umem_outside(const rte_mempool* mp);

}  // namespace xvs::port
