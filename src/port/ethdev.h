// Ports: opened from vdev strings (net_af_xdp0,iface=X / net_af_packet / net_pcap / net_ring /
// net_null) or from in-memory rings, configured with one RX and one TX queue per worker.
// The only header of xvs that talks to rte_ethdev; the data plane calls the burst wrappers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <linux/if_xdp.h>

#include "common/result.h"
#include "net/headers.h"

struct rte_mbuf;
struct rte_mempool;
struct rte_ring;

namespace xvs::port {

struct PortParams {
    unsigned queues = 1;      // one RX and one TX queue per worker
    uint16_t rx_desc = 0;     // descriptors per queue; 0 = port_default_desc(driver)
    uint16_t tx_desc = 0;
    uint16_t mtu = 1500;
};

// Descriptors per RX/TX queue when PortParams leaves them 0: 2048 for net_af_xdp (its RX and
// TX rings: the kernel fills the RX ring from softirq while the worker may be inside a long
// TX syscall, and 1024 overflowed under bulk TCP on veth, see bench/e2e/README.md), 1024 for
// the others (net_af_packet sizes its rings by its framecnt devarg instead).
uint16_t port_default_desc(const std::string& driver);

struct PortInfo {
    uint16_t id = 0;
    net::MacAddr mac{};
    std::string name;
};

// The value of `key` in a devargs string ("net_af_packet0,iface=x,framesz=4096", "framesz"
// -> "4096"); "" when absent.
std::string devarg_value(const std::string& devargs, const std::string& key);

// Probes a virtual device ("net_af_xdp0,iface=lb-wan"), configures and starts it.
Result<PortInfo> port_open_vdev(const std::string& devargs, const PortParams& params,
                                rte_mempool* pool);
// With net_af_packet the kernel reassembles IPv4 fragments before the PMD sees them (DPDK's
// af_packet PMD joins a PACKET_FANOUT group with PACKET_FANOUT_FLAG_DEFRAG, which it offers
// no way to turn off), so a fragmented datagram would be forwarded where other PMDs drop it.
// Returns a warning for the log when that is the case here, i.e. this namespace's
// net.ipv4.ipfrag_high_thresh is not 0 (at 0 the kernel drops fragments instead).
// The warning also says how large a reassembled frame can be (the PMD's framesz devarg).
std::optional<std::string> port_defrag_warning(const std::string& devargs);
// What a port's RX mbufs must hold. net_af_packet copies each frame whole into one mbuf and
// refuses a frame size (`framesz`, 2048 by default) that does not fit, so a port whose
// devargs set framesz=N (to receive the kernel's reassembled datagrams, or jumbo frames)
// needs mbufs of N bytes beside the headroom, and receives Ethernet frames of up to N - 66
// bytes (the kernel puts the frame after its TPACKET2 header and sockaddr_ll, 16-aligned).
// Zeros (the default mbuf, the MTU's frames) for other devices and for framesz up to the
// default. Error: framesz is not a number or larger than an mbuf holds.
struct RxFrame {
    uint16_t data_room = 0;  // for mbuf_pool_create; 0 = RTE_MBUF_DEFAULT_BUF_SIZE
    uint16_t max_frame = 0;  // largest frame the PMD delivers; 0 = the MTU's
};
Result<RxFrame> port_rx_frame(const std::string& devargs);
// The exception path's TAP for a port (DPDK net_tap: the kernel sees interface `iface`),
// given the port's MAC so the kernel's frames leave as the port's and frames to that MAC
// reach both. vdev_name must be unique ("net_tap_x0"). Same queues as the port.
Result<PortInfo> port_open_tap(const std::string& vdev_name, const std::string& iface,
                               const net::MacAddr& mac, const PortParams& params,
                               rte_mempool* pool);

Result<PortInfo> port_open_rings(const std::string& name, rte_ring* rx, rte_ring* tx,
                                 const PortParams& params, rte_mempool* pool);
// A ring port of params.queues queues: rx[q] feeds RX queue q, TX queue q writes tx[q]
// (packet tests of several workers).
Result<PortInfo> port_open_rings(const std::string& name, std::vector<rte_ring*> rx,
                                 std::vector<rte_ring*> tx, const PortParams& params,
                                 rte_mempool* pool);
void port_close(uint16_t port_id);

uint16_t port_rx_burst(uint16_t port_id, uint16_t queue, rte_mbuf** pkts, uint16_t n);
uint16_t port_tx_burst(uint16_t port_id, uint16_t queue, rte_mbuf** pkts, uint16_t n);

struct PortStats {
    uint64_t ipackets = 0, opackets = 0, ibytes = 0, obytes = 0;
    uint64_t imissed = 0, ierrors = 0, oerrors = 0, rx_nombuf = 0;
    // net_af_xdp: frames the PMD handed to its AF_XDP sockets (and counted in opackets) that
    // the kernel refused as invalid descriptors and sent nowhere (XDP_STATISTICS
    // tx_invalid_descs, summed over the port's sockets). 0 for other devices.
    uint64_t tx_refused = 0;
};
PortStats port_stats(uint16_t port_id);

// The AF_XDP sockets of this process (file descriptors whose XDP_STATISTICS can be read),
// ascending. port_open_vdev tells a port's own by the ones its setup added.
std::vector<int> xsk_sockets();
// The kernel's counters of one AF_XDP socket (getsockopt XDP_STATISTICS), as the uapi
// struct gives them.
Result<xdp_statistics> xsk_statistics(int fd);
bool port_link_up(uint16_t port_id);
void port_stats_reset(uint16_t port_id);

}  // namespace xvs::port
