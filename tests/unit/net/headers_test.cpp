// net/headers.h: the IPv4 multicast group test and its Ethernet address (RFC 1112 6.4).
#include "net/headers.h"

#include <gtest/gtest.h>

namespace xvs::net {
namespace {

TEST(Ipv4Multicast, GroupsAre224Slash4) {
    const uint8_t first[4] = {224, 0, 0, 0};
    const uint8_t last[4] = {239, 255, 255, 255};
    const uint8_t below[4] = {223, 255, 255, 255};
    const uint8_t above[4] = {240, 0, 0, 0};
    const uint8_t broadcast[4] = {255, 255, 255, 255};
    EXPECT_TRUE(ipv4_is_multicast(first));
    EXPECT_TRUE(ipv4_is_multicast(last));
    EXPECT_FALSE(ipv4_is_multicast(below));
    EXPECT_FALSE(ipv4_is_multicast(above));
    EXPECT_FALSE(ipv4_is_multicast(broadcast));
}

TEST(Ipv4Multicast, MacKeepsTheLow23Bits) {
    const uint8_t ospf[4] = {224, 0, 0, 5};
    EXPECT_EQ(ipv4_multicast_mac(ospf), (MacAddr{{0x01, 0x00, 0x5e, 0x00, 0x00, 0x05}}));
    const uint8_t group[4] = {239, 129, 130, 7};  // bit 23 (the 0x80 of 129) is dropped
    EXPECT_EQ(ipv4_multicast_mac(group), (MacAddr{{0x01, 0x00, 0x5e, 0x01, 0x82, 0x07}}));
    const uint8_t alias[4] = {224, 1, 130, 7};  // one of the 32 groups sharing that MAC
    EXPECT_EQ(ipv4_multicast_mac(alias), ipv4_multicast_mac(group));
    static constexpr uint8_t kVrrp[4] = {224, 0, 0, 18};
    static_assert(ipv4_multicast_mac(kVrrp) == MacAddr{{0x01, 0x00, 0x5e, 0x00, 0x00, 0x12}});
}

}  // namespace
}  // namespace xvs::net
