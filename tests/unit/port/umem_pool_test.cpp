// port::umem_pool_create: the mbuf pool a net_af_xdp port registers as its UMEM. The PMD gives
// the kernel [first memory chunk's page, + objects x object size), so every mbuf must lie
// inside that span; one outside was a frame the kernel refused (tx_invalid_descs), which under
// load wedged a port's transmit for good. Runs its own EAL in 4 KiB pages (--no-huge, as the
// e2e tests run xvsd), where rte_pktmbuf_pool_create's layout leaves ~40% of mbufs outside.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "port/eal.h"

namespace xvs::port {
namespace {

class Eal : public ::testing::Environment {
  public:
    void SetUp() override {
        auto r = eal_start({"--no-huge", "-m", "128", "--no-pci", "--no-shconf", "-l", "0",
                            "--file-prefix", "xvs-umem-" + std::to_string(getpid()),
                            "--log-level", "lib.eal:error", "--no-telemetry"});
        ASSERT_TRUE(r.ok()) << r.error();
    }
    void TearDown() override { eal_stop(); }
};
const auto* const g_env = ::testing::AddGlobalTestEnvironment(new Eal);

std::vector<uintptr_t> frames(rte_mempool* mp) {
    std::vector<uintptr_t> out;
    rte_mempool_obj_iter(
        mp,
        [](rte_mempool* m, void* arg, void* obj, unsigned) {
            static_cast<std::vector<uintptr_t>*>(arg)->push_back(reinterpret_cast<uintptr_t>(obj) -
                                                                 m->header_size);
        },
        &out);
    return out;
}

TEST(UmemPool, ObjectsLieEndToEndInsideTheSpan) {
    constexpr unsigned kMbufs = 1000;
    auto pool = umem_pool_create("t_umem", kMbufs, 0);
    ASSERT_TRUE(pool.ok()) << pool.error();
    rte_mempool* mp = *pool;
    EXPECT_EQ(mp->populated_size, kMbufs);
    EXPECT_EQ(mp->header_size + mp->elt_size + mp->trailer_size, kUmemObjectBytes);
    EXPECT_EQ(mempool_memory_bytes(mp), size_t(kMbufs) * kUmemObjectBytes);
    EXPECT_EQ(umem_outside(mp), 0u);
    auto f = frames(mp);
    ASSERT_EQ(f.size(), kMbufs);
    for (size_t i = 0; i < f.size(); ++i) {
        ASSERT_EQ(f[i] % kUmemObjectBytes, 0u) << "frame " << i << " not on a page";
        if (i > 0) {
            ASSERT_EQ(f[i] - f[i - 1], kUmemObjectBytes) << "gap before frame " << i;
        }
    }
    // An mbuf from it holds a 1500-byte MTU's frame with room to spare, and goes back.
    EXPECT_EQ(rte_pktmbuf_data_room_size(mp), kUmemObjectBytes - mp->header_size - sizeof(rte_mbuf));
    rte_mbuf* m = rte_pktmbuf_alloc(mp);
    ASSERT_NE(m, nullptr);
    EXPECT_GE(rte_pktmbuf_tailroom(m), 1518u);
    ASSERT_NE(rte_pktmbuf_append(m, 1514), nullptr);
    rte_pktmbuf_free(m);
    EXPECT_EQ(rte_mempool_avail_count(mp), kMbufs);
    // The pool owns its memory: freeing it frees the memzone.
    ASSERT_NE(rte_memzone_lookup("t_umem_umem"), nullptr);
    rte_mempool_free(mp);
    EXPECT_EQ(rte_memzone_lookup("t_umem_umem"), nullptr);
}

TEST(UmemPool, TheStandardLayoutIsSeenOutside) {
    // What xvsd gave net_af_xdp before: 2,368-byte mbufs one to a 4 KiB page.
    rte_mempool* mp = nullptr;
    {
        auto pool = mbuf_pool_create("t_std", 1000, 0);
        ASSERT_TRUE(pool.ok()) << pool.error();
        mp = *pool;
    }
    EXPECT_GT(umem_outside(mp), 300u);
    EXPECT_LT(umem_outside(mp), 1000u);
    rte_mempool_free(mp);
}

TEST(UmemPool, TooLargeForTheEalIsAnError) {
    auto pool = umem_pool_create("t_huge", 1u << 20, 0);  // 4 GiB in a 128 MiB EAL
    ASSERT_FALSE(pool.ok());
    EXPECT_NE(pool.error().find("t_huge"), std::string::npos) << pool.error();
    EXPECT_NE(pool.error().find("-m"), std::string::npos) << pool.error();
    EXPECT_EQ(rte_memzone_lookup("t_huge_umem"), nullptr);
}

}  // namespace
}  // namespace xvs::port
