// Decoding of control requests (docs/control-protocol.md) for the Controller: fields, keys,
// service and dest specs, with addresses of either family as strings ("10.0.0.1",
// "2001:db8::1"); and the small printers its replies share. A malformed request throws
// BadRequest (the Controller replies "Invalid argument: ..."). Internal to ctl.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "lb/director.h"
#include "lb/match.h"
#include "lb/service.h"
#include "net/addr.h"
#include "stack/neigh.h"

namespace xvs::ctl::request {

struct BadRequest {
    std::string what;
};

const nlohmann::json& field(const nlohmann::json& obj, const char* name);
std::string get_str(const nlohmann::json& obj, const char* name);
uint64_t get_uint(const nlohmann::json& obj, const char* name, uint64_t max);
uint64_t opt_uint(const nlohmann::json& obj, const char* name, uint64_t max, uint64_t dflt);
// An IPv4 or IPv6 address.
net::InetAddr get_ip(const nlohmann::json& obj, const char* name);
// "ADDR/LEN" or "ADDR" of either family (masked); "default" is 0.0.0.0/0, "default6" ::/0.
net::InetPrefix get_prefix(const nlohmann::json& obj, const char* name);
uint8_t get_proto(const nlohmann::json& obj);

bool is_match(const nlohmann::json& obj);
// The key of a SNAT match service ({"match": {...}}, see ctl/match_json.h).
lb::MatchKey get_match_key(const nlohmann::json& obj);
lb::ServiceKey get_service_key(const nlohmann::json& obj);

// The persistence granularity of a service object: "netmask" as a contiguous IPv4 netmask
// ("255.255.255.0"), or an IPv6 prefix length ("64" or 64); absent = the whole address
// (lb::ServiceSpec::kPersistFull). nullopt when malformed.
std::optional<uint8_t> persist_prefix_of(const nlohmann::json& s);
// Features the protocol carries but the data plane does not do yet: refused, never ignored.
std::optional<std::string> unsupported_service_attrs(const nlohmann::json& s);
// The flags and conn_rate of a service object (the rest of ServiceSpec left default).
lb::ServiceSpec service_spec_flags(const nlohmann::json& s);
lb::ServiceSpec service_spec(const nlohmann::json& s);
lb::DestSpec dest_spec(const nlohmann::json& d);

// "a.b.c.d:port" / "[v6]:port" from a port in network order.
std::string ip_port(const net::InetAddr& addr, uint16_t port_be);
std::string mac_string(const net::MacAddr& m);
std::string fwd_string(lb::FwdMode m);
std::string_view neigh_state_name(stack::NeighState s);

}  // namespace xvs::ctl::request
