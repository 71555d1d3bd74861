// What a DR or TUN real server needs from its kernel: each VIP on lo as a /32, so the inner
// packet is local, and ARP kept quiet about it (arp_ignore=1, arp_announce=2) with reverse-path
// filtering off (rp_filter=0), because replies leave from the VIP on a device the VIP is not on.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"

namespace xvs::rs {

struct RsSysctlRequest {
    std::vector<uint32_t> vips_be;  // network byte order
    std::string dev;                // optional: the device facing the director
    bool dry_run = false;
};

// The sysctl settings the request implies, in the order they are applied.
struct SysctlSetting {
    std::string name;  // dotted, e.g. net.ipv4.conf.all.arp_ignore
    std::string value;
};
std::vector<SysctlSetting> rs_sysctl_settings(const std::string& dev);

// Applies (or with dry_run only prints) the settings and the lo addresses; one line per item
// on `out` saying what changed or that it was already so.
Result<void> rs_sysctl_apply(const RsSysctlRequest& req, std::ostream& out);

}  // namespace xvs::rs
