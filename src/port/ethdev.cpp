// rte_ethdev glue. Errors carry rte_strerror text and the device string so an operator can
// tell which port failed and why.
#include "port/ethdev.h"

#include <rte_bus_vdev.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace xvs::port {

namespace {

std::string errtext(int rc) { return rte_strerror(rc < 0 ? -rc : rc); }

// Each port's AF_XDP sockets (net_af_xdp: one per queue), set once by port_open_vdev on the
// control thread before any reader starts.
std::array<std::vector<int>, RTE_MAX_ETHPORTS> g_port_xsks;

Result<PortInfo> port_setup(uint16_t id, const std::string& name, const PortParams& params,
                            rte_mempool* pool) {
    rte_eth_dev_info info{};
    int rc = rte_eth_dev_info_get(id, &info);
    if (rc != 0) return make_error(name + ": cannot read device info: " + errtext(rc));
    unsigned queues = params.queues;
    if (queues > info.max_rx_queues || queues > info.max_tx_queues) {
        return make_error(name + ": " + std::to_string(queues) +
                          " queues requested but the device supports " +
                          std::to_string(std::min(info.max_rx_queues, info.max_tx_queues)));
    }
    rte_eth_conf conf{};
    // Several queues: RSS over addresses and ports, with a key whose 16-bit period makes the
    // Toeplitz hash symmetric (both directions of a tuple on one queue) where the PMD takes
    // a key. PMDs without RSS offloads (af_packet's fanout, tap) spread queues themselves.
    std::array<uint8_t, 52> symmetric_key;
    for (size_t i = 0; i < symmetric_key.size(); ++i) symmetric_key[i] = i % 2 ? 0x5a : 0x6d;
    const uint64_t rss_want = RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP;
    const uint64_t rss_hf = rss_want & info.flow_type_rss_offloads;
    if (queues > 1 && rss_hf) {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_hf = rss_hf;
        if (info.hash_key_size && info.hash_key_size <= symmetric_key.size()) {
            conf.rx_adv_conf.rss_conf.rss_key = symmetric_key.data();
            conf.rx_adv_conf.rss_conf.rss_key_len = info.hash_key_size;
        }
    }
    rc = rte_eth_dev_configure(id, queues, queues, &conf);
    if (rc != 0) return make_error(name + ": configure failed: " + errtext(rc));
    const std::string driver = info.driver_name ? info.driver_name : "";
    uint16_t rxd = params.rx_desc ? params.rx_desc : port_default_desc(driver);
    uint16_t txd = params.tx_desc ? params.tx_desc : port_default_desc(driver);
    rte_eth_dev_adjust_nb_rx_tx_desc(id, &rxd, &txd);
    int socket = rte_eth_dev_socket_id(id);
    if (socket < 0) socket = 0;
    for (unsigned q = 0; q < queues; ++q) {
        rc = rte_eth_rx_queue_setup(id, q, rxd, socket, nullptr, pool);
        if (rc != 0) return make_error(name + ": RX queue setup failed: " + errtext(rc));
        rc = rte_eth_tx_queue_setup(id, q, txd, socket, nullptr);
        if (rc != 0) return make_error(name + ": TX queue setup failed: " + errtext(rc));
    }
    // MTU is advisory on virtual devices; a failure is not fatal (xvs enforces it in software).
    rte_eth_dev_set_mtu(id, params.mtu);
    rc = rte_eth_dev_start(id);
    if (rc != 0) return make_error(name + ": start failed: " + errtext(rc));
    // IPv6 neighbour solicitations arrive at solicited-node multicast MACs (33:33:ff:..):
    // a NIC filtering multicast would hide them. Advisory too (virtual devices pass them).
    rte_eth_allmulticast_enable(id);
    PortInfo out;
    out.id = id;
    out.name = name;
    rte_ether_addr mac{};
    rte_eth_macaddr_get(id, &mac);
    std::memcpy(out.mac.b, mac.addr_bytes, 6);
    return out;
}

}  // namespace

uint16_t port_default_desc(const std::string& driver) {
    return driver.rfind("net_af_xdp", 0) == 0 ? 2048 : 1024;
}

Result<PortInfo> port_open_vdev(const std::string& devargs, const PortParams& params,
                                rte_mempool* pool) {
    std::string name = devargs.substr(0, devargs.find(','));
    std::string args = devargs.find(',') == std::string::npos
                           ? std::string()
                           : devargs.substr(devargs.find(',') + 1);
    uint16_t id;
    if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0) {
        int rc = rte_vdev_init(name.c_str(), args.c_str());
        if (rc != 0) {
            return make_error("cannot create device '" + devargs + "': " + errtext(rc) +
                              " (is the driver name right and the interface present?)");
        }
        if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0) {
            return make_error("device '" + name + "' created but no ethdev port found");
        }
    }
    const std::vector<int> before = xsk_sockets();
    auto info = port_setup(id, name, params, pool);
    if (info && id < g_port_xsks.size()) {
        const std::vector<int> after = xsk_sockets();
        g_port_xsks[id].clear();
        std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                            std::back_inserter(g_port_xsks[id]));
    }
    return info;
}

Result<xdp_statistics> xsk_statistics(int fd) {
    xdp_statistics st{};
    socklen_t len = sizeof st;
    if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len) != 0)
        return make_error("fd " + std::to_string(fd) + ": XDP_STATISTICS: " + std::strerror(errno));
    return st;
}

std::vector<int> xsk_sockets() {
    std::vector<int> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        const std::string name = entry.path().filename().string();
        int fd = -1;
        auto [p, err] = std::from_chars(name.data(), name.data() + name.size(), fd);
        if (err != std::errc() || p != name.data() + name.size()) continue;
        std::error_code lec;
        if (std::filesystem::read_symlink(entry.path(), lec).string().rfind("socket:", 0) != 0)
            continue;
        if (xsk_statistics(fd)) out.push_back(fd);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string devarg_value(const std::string& devargs, const std::string& key) {
    size_t pos = devargs.find("," + key + "=");
    if (pos == std::string::npos) return {};
    pos += key.size() + 2;
    return devargs.substr(pos, devargs.find(',', pos) - pos);
}

std::optional<std::string> port_defrag_warning(const std::string& devargs) {
    if (devargs.rfind("net_af_packet", 0) != 0) return std::nullopt;
    std::ifstream in("/proc/sys/net/ipv4/ipfrag_high_thresh");
    long thresh = -1;
    in >> thresh;
    const std::string dev = devargs.substr(0, devargs.find(','));
    // DPDK 22.11's af_packet PMD joins a PACKET_FANOUT group with PACKET_FANOUT_FLAG_DEFRAG:
    // the kernel reassembles fragments for the socket, so xvs never sees them.
    if (thresh == 0)
        return dev +
               ": net.ipv4.ipfrag_high_thresh=0 here, so the kernel drops every IP "
               "fragment before xvs sees it (af_packet fanout defrag); use net_af_xdp for "
               "fragmented traffic";
    std::string frame = devarg_value(devargs, "framesz");
    if (frame.empty()) frame = "2048";
    return dev +
           ": the kernel reassembles IP fragments before xvs sees them (af_packet fanout "
           "defrag): frag_defs does not apply, and a reassembled frame larger than the "
           "af_packet frame (framesz " +
           frame +
           " bytes, less 66 of TPACKET header) is lost in the PMD; raise framesz (and blocksz) "
           "in the devargs, or use net_af_xdp for fragmented traffic";
}

Result<RxFrame> port_rx_frame(const std::string& devargs) {
    if (devargs.rfind("net_af_packet", 0) != 0) return RxFrame{};
    const std::string text = devarg_value(devargs, "framesz");
    if (text.empty()) return RxFrame{};
    unsigned long n = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    constexpr unsigned long kMax = 65535 - RTE_PKTMBUF_HEADROOM;
    constexpr unsigned long kFrameOffset = 66;  // TPACKET_ALIGN(52 + 16) - 14
    if (ec != std::errc() || p != text.data() + text.size() || n <= kFrameOffset || n > kMax)
        return make_error("framesz=" + text + ": not a frame size xvs can hold in an mbuf (" +
                          std::to_string(kFrameOffset + 1) + ".." + std::to_string(kMax) + ")");
    if (n + RTE_PKTMBUF_HEADROOM <= RTE_MBUF_DEFAULT_BUF_SIZE) return RxFrame{};
    return RxFrame{static_cast<uint16_t>(n + RTE_PKTMBUF_HEADROOM),
                   static_cast<uint16_t>(n - kFrameOffset)};
}

Result<PortInfo> port_open_tap(const std::string& vdev_name, const std::string& iface,
                               const net::MacAddr& mac, const PortParams& params,
                               rte_mempool* pool) {
    char mac_text[18];
    std::snprintf(mac_text, sizeof mac_text, "%02x:%02x:%02x:%02x:%02x:%02x", mac.b[0], mac.b[1],
                  mac.b[2], mac.b[3], mac.b[4], mac.b[5]);
    const std::string devargs = vdev_name + ",iface=" + iface + ",mac=" + mac_text;
    auto info = port_open_vdev(devargs, params, pool);
    if (!info) return make_error("exception tap " + iface + ": " + info.error());
    return info;
}

Result<PortInfo> port_open_rings(const std::string& name, rte_ring* rx, rte_ring* tx,
                                 const PortParams& params, rte_mempool* pool) {
    return port_open_rings(name, std::vector<rte_ring*>{rx}, std::vector<rte_ring*>{tx}, params,
                           pool);
}

Result<PortInfo> port_open_rings(const std::string& name, std::vector<rte_ring*> rx,
                                 std::vector<rte_ring*> tx, const PortParams& params,
                                 rte_mempool* pool) {
    if (rx.size() != params.queues || tx.size() != params.queues)
        return make_error(name + ": one RX and one TX ring per queue");
    int id = rte_eth_from_rings(name.c_str(), rx.data(), static_cast<unsigned>(rx.size()),
                                tx.data(), static_cast<unsigned>(tx.size()), 0);
    if (id < 0) return make_error(name + ": cannot create ring port: " + errtext(rte_errno));
    return port_setup(static_cast<uint16_t>(id), name, params, pool);
}

void port_close(uint16_t port_id) {
    rte_eth_dev_stop(port_id);
    rte_eth_dev_close(port_id);
}

uint16_t port_rx_burst(uint16_t port_id, uint16_t queue, rte_mbuf** pkts, uint16_t n) {
    return rte_eth_rx_burst(port_id, queue, pkts, n);
}

uint16_t port_tx_burst(uint16_t port_id, uint16_t queue, rte_mbuf** pkts, uint16_t n) {
    return rte_eth_tx_burst(port_id, queue, pkts, n);
}

PortStats port_stats(uint16_t port_id) {
    rte_eth_stats s{};
    rte_eth_stats_get(port_id, &s);
    PortStats out{s.ipackets, s.opackets, s.ibytes,  s.obytes,
                  s.imissed,  s.ierrors,  s.oerrors, s.rx_nombuf};
    if (port_id < g_port_xsks.size())
        for (int fd : g_port_xsks[port_id])
            if (auto x = xsk_statistics(fd)) out.tx_refused += x->tx_invalid_descs;
    return out;
}

bool port_link_up(uint16_t port_id) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(port_id, &link) != 0) return false;
    return link.link_status == RTE_ETH_LINK_UP;
}

void port_stats_reset(uint16_t port_id) { rte_eth_stats_reset(port_id); }

}  // namespace xvs::port
