// One immutable configuration snapshot: what a worker reads for a burst. Published by the
// Director with a release store; reclaimed once every worker has announced a later generation.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/flat_map.h"
#include "lb/fwmark.h"
#include "lb/proto/tcp.h"
#include "lb/service.h"
#include "lb/synproxy/synproxy.h"
#include "net/syncookie.h"
#include "net/uoa.h"
#include "stack/view.h"

namespace xvs::lb {

struct Snapshot {
    uint64_t generation = 0;
    stack::StackView stack;
    FlatMap<ServiceKey, const ServiceView*> services;
    // Owns the views: a VIP service's view is shared with the previous snapshot when nothing
    // it is built from changed (Director::ViewInputs).
    std::vector<std::shared_ptr<const ServiceView>> service_views;
    // SNAT match services in configuration order (the first that matches a packet wins);
    // their views are owned by service_views.
    std::vector<const ServiceView*> matches;
    Timeouts timeouts;
    uint8_t uoa_max_trail = net::kUoaDefaultMaxTrail;  // 0 = UOA services send none
    SynProxyConf synproxy;  // ipvs_defs synproxy: global SYN proxy settings
    // IPVS's sysctl: a client packet of a conn whose dest was removed is dropped; when set the
    // conn is also expired at once (and the control thread flushes the dest's conns) and a
    // datagram scheduled anew. A pure SYN is scheduled anew either way (lb/pipeline.cpp).
    bool expire_nodest_conn = false;
    // IPVS's sysctl: a persistence template to a quiesced dest (weight 0) is expired when a new
    // conn looks it up, so that client is scheduled anew; off (the default): the quiesced dest
    // keeps its persistent clients (lb/persist.h).
    bool expire_quiescent_template = false;
    // xvs's own (ipvs_defs reschedule_refused, default on): a FULLNAT/NAT real server that
    // answers a client's SYN with a RST, in a service with other real servers, does not pass
    // the refusal on; the client's retransmitted SYN is scheduled again, away from that server
    // (lb/pipeline.cpp). A second refusal reaches the client.
    bool reschedule_refused = true;
    // Whether a service of port 0 ("all ports", persistent only) exists: conn_create then
    // tries (proto, VIP, 0) after an exact miss, as IPVS does.
    bool has_port0 = false;
    // The firewall-mark classifier (lb/fwmark.h): rules in configuration order, each with the
    // view of its mark's service (marks without a service are left out).
    std::vector<FwmarkRule> fwmark_rules;
    // SYN-cookie keys (the SYN proxy mints and checks with these; Director rotates them).
    net::CookieSecrets cookie;
    // Keeps persistent objects referenced by this snapshot alive until it is reclaimed.
    std::vector<std::shared_ptr<Service>> keep_services;
    std::vector<std::shared_ptr<Dest>> keep_dests;
    std::vector<std::shared_ptr<LocalAddr>> keep_laddrs;

    const ServiceView* service(uint8_t proto, const net::InetAddr& vip, uint16_t port) const {
        const ServiceView* const* v = services.find(ServiceKey{vip, port, proto});
        return v ? *v : nullptr;
    }
};

}  // namespace xvs::lb
