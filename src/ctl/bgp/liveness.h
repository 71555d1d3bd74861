// The liveness interface: a TAP that exists only while xvsd holds its descriptor (not
// persistent: the kernel deletes it when the last descriptor closes, whatever way xvsd ends,
// kill -9 included). BIRD's static routes for the VIPs go through it (bird_config.h), and BIRD
// drops a static device route the moment its interface goes, so the VIPs are withdrawn from
// every BGP and OSPF neighbour without waiting for a hold time. xvsd never reads or writes it;
// it carries no traffic (the kernel's own frames to it are dropped once its queue is full).
#pragma once

#include <string>

#include "common/fd.h"
#include "common/result.h"

namespace xvs::ctl::bgp {

class LivenessInterface {
  public:
    // Creates the TAP `name` and sets it up (IFF_UP). Fails if the name is taken (another
    // xvsd in this network namespace, or a stale persistent TAP: `ip link del NAME`).
    static Result<LivenessInterface> open(const std::string& name);
    LivenessInterface() = default;
    bool is_open() const { return fd_.get() >= 0; }
    const std::string& name() const { return name_; }
    void close() { fd_.reset(); }

  private:
    UniqueFd fd_;
    std::string name_;
};

}  // namespace xvs::ctl::bgp
