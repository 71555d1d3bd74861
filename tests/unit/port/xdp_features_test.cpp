// port::XdpFeatures against the running kernel: a veth takes XDP frames (NDO_XMIT) only while
// its peer runs NAPI, which GRO on the peer turns on. The veth pair lives in a network
// namespace of the test thread's own (unshare(CLONE_NEWNET) moves the calling thread alone),
// so nothing outside the test sees it and it goes when the thread ends.
#include "port/xdp_features.h"

#include <gtest/gtest.h>
#include <net/if.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

namespace xvs::port {
namespace {

TEST(XdpFeatures, AsksTheKernel) {
    auto f = XdpFeatures::open();
    ASSERT_TRUE(f) << f.error();
    auto lo = f->of(if_nametoindex("lo"));
    ASSERT_TRUE(lo) << lo.error();
    EXPECT_FALSE(*lo & kXdpActNdoXmit);  // the loopback device has no XDP of its own
    auto none = f->of(0x7ffffff0u);
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().find("ifindex 2147483632"), std::string::npos) << none.error();
}

struct VethResult {
    std::string error;
    uint64_t before = 0, after = 0, peer_after = 0;
};

VethResult veth_features() {
    VethResult r;
    if (unshare(CLONE_NEWNET) != 0) {
        r.error = "unshare(CLONE_NEWNET) failed";
        return r;
    }
    // Commands run by system() inherit this thread's namespace.
    if (std::system("ip link add xf0 type veth peer name xf1 && ip link set xf0 up && "
                    "ip link set xf1 up && ethtool -K xf1 gro off >/dev/null 2>&1 && "
                    "ethtool -K xf0 gro off >/dev/null 2>&1") != 0) {
        r.error = "creating the veth pair failed (ip, ethtool)";
        return r;
    }
    auto f = XdpFeatures::open();
    if (!f) {
        r.error = f.error();
        return r;
    }
    const uint32_t xf0 = if_nametoindex("xf0"), xf1 = if_nametoindex("xf1");
    auto before = f->of(xf0);
    if (std::system("ethtool -K xf1 gro on >/dev/null") != 0) {
        r.error = "ethtool -K xf1 gro on failed";
        return r;
    }
    auto after = f->of(xf0);
    auto peer_after = f->of(xf1);
    if (!before || !after || !peer_after) {
        r.error = !before ? before.error() : !after ? after.error() : peer_after.error();
        return r;
    }
    r.before = *before;
    r.after = *after;
    r.peer_after = *peer_after;
    return r;
}

TEST(XdpFeatures, VethTakesFramesOnlyWhileItsPeerRunsNapi) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root for a network namespace";
    VethResult r;
    std::thread([&] { r = veth_features(); }).join();
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_TRUE(r.before & kXdpActBasic) << std::hex << r.before;  // veth runs XDP programs
    EXPECT_TRUE(r.before & kXdpActRedirect);
    EXPECT_FALSE(r.before & kXdpActNdoXmit) << std::hex << r.before;
    EXPECT_TRUE(r.after & kXdpActNdoXmit) << std::hex << r.after;
    EXPECT_FALSE(r.peer_after & kXdpActNdoXmit) << std::hex << r.peer_after;  // xf0: GRO off
}

}  // namespace
}  // namespace xvs::port
