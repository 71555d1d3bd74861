// port::xsk_sockets and port::xsk_statistics: how xvsd finds a net_af_xdp port's AF_XDP
// sockets (the ones its setup added) and reads the kernel's counters of each, among them
// tx_invalid_descs, frames the kernel refused and sent nowhere (PortStats::tx_refused).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "port/ethdev.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

namespace xvs::port {
namespace {

bool has(const std::vector<int>& v, int fd) { return std::find(v.begin(), v.end(), fd) != v.end(); }

TEST(XskSockets, FindsThisProcesssAfXdpSocketsOnly) {
    const int xsk = socket(AF_XDP, SOCK_RAW, 0);
    ASSERT_GE(xsk, 0) << "AF_XDP socket: " << std::strerror(errno);
    const int udp = socket(AF_INET, SOCK_DGRAM, 0);
    ASSERT_GE(udp, 0);
    const std::vector<int> found = xsk_sockets();
    EXPECT_TRUE(std::is_sorted(found.begin(), found.end()));
    EXPECT_TRUE(has(found, xsk));
    EXPECT_FALSE(has(found, udp));
    EXPECT_FALSE(has(found, 0));  // stdin: no socket at all

    auto st = xsk_statistics(xsk);  // unbound: every counter 0
    ASSERT_TRUE(st) << st.error();
    EXPECT_EQ(st->tx_invalid_descs, 0u);
    EXPECT_EQ(st->rx_dropped, 0u);
    EXPECT_EQ(st->rx_fill_ring_empty_descs, 0u);
    auto not_xsk = xsk_statistics(udp);
    ASSERT_FALSE(not_xsk);
    EXPECT_NE(not_xsk.error().find("XDP_STATISTICS"), std::string::npos) << not_xsk.error();

    close(xsk);
    close(udp);
    EXPECT_FALSE(has(xsk_sockets(), xsk));
}

}  // namespace
}  // namespace xvs::port
