// rte_flow rules by local port, see port/flow_steer.h.
#include "port/flow_steer.h"

#include <rte_byteorder.h>
#include <rte_flow.h>

#include <cstring>

namespace xvs::port {

namespace {
bool power_of_two(unsigned n) { return n && (n & (n - 1)) == 0; }
}  // namespace

FlowSteer::~FlowSteer() { remove_all(); }

// eth / ipv4|ipv6 dst=addr / tcp|udp dst port = queue under mask queues-1 -> queue.
Result<rte_flow*> FlowSteer::rule(const net::InetAddr& addr, uint8_t proto, uint16_t queue,
                                  bool validate_only) const {
    rte_flow_attr attr{};
    attr.ingress = 1;
    rte_flow_item_ipv4 ip4{}, ip4_mask{};
    rte_flow_item_ipv6 ip6{}, ip6_mask{};
    rte_flow_item_tcp tcp{}, tcp_mask{};
    rte_flow_item_udp udp{}, udp_mask{};
    rte_flow_item items[4]{};
    items[0].type = RTE_FLOW_ITEM_TYPE_ETH;
    if (addr.is_v4()) {
        const uint32_t be = addr.v4_be();
        std::memcpy(&ip4.hdr.dst_addr, &be, 4);
        ip4_mask.hdr.dst_addr = UINT32_MAX;
        items[1] = {RTE_FLOW_ITEM_TYPE_IPV4, &ip4, nullptr, &ip4_mask};
    } else {
        std::memcpy(ip6.hdr.dst_addr, addr.b, 16);
        std::memset(ip6_mask.hdr.dst_addr, 0xff, 16);
        items[1] = {RTE_FLOW_ITEM_TYPE_IPV6, &ip6, nullptr, &ip6_mask};
    }
    const uint16_t port_be = rte_cpu_to_be_16(queue);
    const uint16_t mask_be = rte_cpu_to_be_16(static_cast<uint16_t>(queues_ - 1));
    if (proto == 6) {
        tcp.hdr.dst_port = port_be;
        tcp_mask.hdr.dst_port = mask_be;
        items[2] = {RTE_FLOW_ITEM_TYPE_TCP, &tcp, nullptr, &tcp_mask};
    } else {
        udp.hdr.dst_port = port_be;
        udp_mask.hdr.dst_port = mask_be;
        items[2] = {RTE_FLOW_ITEM_TYPE_UDP, &udp, nullptr, &udp_mask};
    }
    items[3].type = RTE_FLOW_ITEM_TYPE_END;
    rte_flow_action_queue to{queue};
    rte_flow_action actions[2]{};
    actions[0] = {RTE_FLOW_ACTION_TYPE_QUEUE, &to};
    actions[1].type = RTE_FLOW_ACTION_TYPE_END;
    rte_flow_error err{};
    if (validate_only) {
        if (rte_flow_validate(port_id_, &attr, items, actions, &err) == 0) return nullptr;
    } else if (rte_flow* f = rte_flow_create(port_id_, &attr, items, actions, &err)) {
        return f;
    }
    return make_error(std::string("rte_flow ") + (validate_only ? "validate" : "create") + ": " +
                      (err.message ? err.message : "refused") + " (type " +
                      std::to_string(int(err.type)) + ")");
}

Result<void> FlowSteer::validate() const {
    if (queues_ < 2) return make_error("one queue: nothing to steer");
    if (!power_of_two(queues_))
        return make_error(std::to_string(queues_) +
                          " queues: rules match the port's low bits, so the worker count must be "
                          "a power of two");
    for (const net::InetAddr& a : {net::InetAddr::v4(0x0100000a), *net::parse_inet("fd00::1")}) {
        for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
            auto r = rule(a, proto, static_cast<uint16_t>(queues_ - 1), true);
            if (!r) return make_error(r.error());
        }
    }
    return {};
}

Result<void> FlowSteer::install(const std::vector<net::InetAddr>& addrs) {
    remove_all();
    for (const net::InetAddr& a : addrs) {
        for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
            for (unsigned q = 0; q < queues_; ++q) {
                auto f = rule(a, proto, static_cast<uint16_t>(q), false);
                if (!f) return make_error(net::to_string(a) + ": " + f.error());
                flows_.push_back(*f);
            }
        }
    }
    return {};
}

void FlowSteer::remove_all() {
    for (rte_flow* f : flows_) {
        rte_flow_error err{};
        rte_flow_destroy(port_id_, f, &err);
    }
    flows_.clear();
}

}  // namespace xvs::port
