// libFuzzer target: the control socket's request decoder. The input is split at '\n' into
// request lines, each handed to Controller::handle_line on a Director built like
// tests/unit/ctl/controller_test.cpp's (two ports, no workers) with one TCP and one UDP service
// already present, so edits and deletes are reachable. Every reply must be one line of valid
// JSON (UTF-8 clean) with a boolean "ok" and, when false, a string "error"; nothing may throw.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "ctl/controller.h"

namespace {

using namespace xvs;
using nlohmann::json;

[[noreturn]] void fail(const char* what, const std::string& detail) {
    std::fprintf(stderr, "control_json_fuzz: %s: %.300s\n", what, detail.c_str());
    std::fflush(stderr);
    __builtin_trap();
}

void setup(lb::Director& director, std::vector<ctl::PortInfoForCtl>& ports) {
    uint16_t id = 0;
    for (const char* name : {"wan0", "lan0"}) {
        lb::PortEntry p;
        p.name = name;
        p.port_id = id;
        p.mac = net::MacAddr{{0x02, 0, 0, 0, 0, uint8_t(id + 1)}};
        if (!director.port_add(p)) fail("setup", "port_add");
        ctl::PortInfoForCtl info;
        info.name = name;
        info.dev = std::string("net_ring") + std::to_string(id);
        info.port_id = id;
        info.mac = p.mac;
        info.has_stats = false;
        ports.push_back(info);
        ++id;
    }
    auto ip = [](const char* t) { return *net::parse_ipv4(t); };
    bool ok = director.address_add(ip("10.10.1.1"), 24, "wan0") &&
              director.address_add(ip("10.10.2.1"), 24, "lan0");
    for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
        lb::ServiceSpec spec{proto, ip("10.10.1.100"), 80, "wrr"};
        const auto key = lb::make_service_key(proto, ip("10.10.1.100"), 80);
        ok = ok && director.service_add(spec) &&
             director.dest_add(key, lb::DestSpec{ip("10.10.2.2"), 8080, 1}) &&
             director.laddr_add(key, ip("10.10.2.100"), "lan0");
    }
    if (!ok) fail("setup", "director configuration refused");
    director.commit();
}

void check_reply(const std::string& line, const std::string& reply) {
    if (reply.find('\n') != std::string::npos) fail("reply is not one line", line);
    json r = json::parse(reply, nullptr, false);  // strict: invalid UTF-8 fails the parse
    if (r.is_discarded()) fail("reply is not valid JSON", reply);
    if (!r.is_object() || !r.contains("ok") || !r["ok"].is_boolean())
        fail("reply has no boolean ok", reply);
    if (r["ok"] == false && !(r.contains("error") && r["error"].is_string()))
        fail("error reply without an error string", reply);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    lb::Director director(1);
    std::vector<ctl::PortInfoForCtl> ports;
    setup(director, ports);
    const std::string input(reinterpret_cast<const char*>(data), size);
    size_t start = 0;
    // A first line starting with '#' stands for configuration text, which reaches replies
    // without passing the JSON parser's UTF-8 check (issue 10: a 0xFF byte in the config made
    // `xvsadm --reload` and `xvsctl addr show` abort xvsd): it names a third port and is the
    // error text of a failing reload.
    std::string config_text;
    if (!input.empty() && input[0] == '#') {
        const size_t end = std::min(input.find('\n'), input.size());
        config_text = input.substr(1, end - 1);
        start = end + 1;
        lb::PortEntry p;
        p.name = config_text;
        p.port_id = 2;
        if (director.port_add(p)) {
            ctl::PortInfoForCtl info;
            info.name = config_text;
            info.dev = "net_ring2";
            info.port_id = 2;
            info.has_stats = false;
            ports.push_back(info);
            (void)director.address_add(*net::parse_ipv4("10.10.3.1"), 24, config_text);
            director.commit();
        }
    }
    ctl::Controller controller(director, {}, ports, [&]() -> Result<void> {
        if (config_text.empty()) return {};
        return make_error("xvs.conf:1: unknown keyword '" + config_text + "'");
    });
    for (int n = 0; n < 32 && start <= input.size(); ++n) {
        size_t end = input.find('\n', start);
        if (end == std::string::npos) end = input.size();
        const std::string line = input.substr(start, end - start);
        start = end + 1;
        std::string reply;
        try {
            reply = controller.handle_line(line);
        } catch (const std::exception& e) {
            fail("handle_line threw", e.what());
        } catch (...) {
            fail("handle_line threw", "a non-std exception");
        }
        check_reply(line, reply);
    }
    return 0;
}
