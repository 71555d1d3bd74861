// What the health checks say of one real server of one service, for the status page
// (Controller::status_json): its state, its checkers' last results, and whether the checks
// took it out of the Director (down without inhibit_on_failure). Plain data, one per
// (service key, real server): a virtual_server_group's real server appears once per VIP.
#pragma once

#include <cstdint>
#include <string>

#include "lb/service.h"
#include "net/addr.h"

namespace xvs::ctl::health {

struct DestHealth {
    lb::ServiceKey key;
    net::InetAddr addr;
    uint16_t port = 0;  // host order
    // "up", "down" (removed from the service) or "inhibited" (kept at weight 0).
    std::string state = "up";
    bool checked = false;  // has at least one checker (else always "up")
    // Every checker as "TYPE: last result" ("TCP_CHECK: connection refused"), "; " between.
    std::string last;
    int64_t last_time = 0;  // unix seconds of the newest result, 0 never
    uint32_t weight = 0;    // the configured (or misc_dynamic / feedback) weight
};

}  // namespace xvs::ctl::health
