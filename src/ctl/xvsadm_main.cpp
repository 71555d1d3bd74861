// xvsadm's driver: argv -> Command -> request -> reply -> ipvsadm-style output and exit code.
// -R runs one request per input line and, like ipvsadm, stops at the first line that does not
// parse (earlier lines stay applied).
#include "ctl/xvsadm_main.h"

#include <string>
#include <vector>

#include "ctl/control_client.h"
#include "ctl/ipvsadm_format.h"
#include "ctl/match_json.h"

namespace xvs::ctl {

namespace {

using nlohmann::json;

constexpr int kExitOk = 0;
constexpr int kExitClient = 1;
constexpr int kExitDaemon = 255;

json key_json(const ServiceKey& k) {
    // An IPv4 mark's key stays {"fwmark": N}, as before IPv6 marks; -f N -6 adds "af".
    if (k.fwmark && k.fwmark_v6) return json{{"fwmark", k.fwmark}, {"af", "ipv6"}};
    if (k.fwmark) return json{{"fwmark", k.fwmark}};
    if (k.match) return json{{"match", match_json(*k.match)}};
    return json{{"proto", std::string(proto_name(k.proto))},
                {"vip", net::to_string(k.vip)},
                {"port", k.port}};
}

json service_json(const Command& c) {
    json s = key_json(*c.service);
    s["sched"] = c.svc.sched;
    s["persistent"] = c.svc.persistent;
    // An IPv6 service's granularity travels as its prefix length (controller_request.h);
    // /128, the whole address, as no netmask at all.
    const ServiceKey& k = *c.service;
    const bool v6 = k.fwmark ? k.fwmark_v6 : !k.match && !k.vip.is_v4();
    if (!v6)
        s["netmask"] = net::to_string(c.svc.netmask);
    else if (c.svc.netmask6 != 128)
        s["netmask"] = std::to_string(c.svc.netmask6);
    s["sched_flags"] = c.svc.sched_flags;
    s["ops"] = c.svc.ops;
    s["pe"] = c.svc.pe;
    s["hash_target"] = c.svc.hash_qid ? "qid" : "sip";
    s["synproxy"] = c.svc.synproxy;
    s["toa"] = c.svc.toa;
    s["proxy_protocol"] = std::string(proxy_protocol_name(c.svc.proxy_protocol));
    s["uoa"] = std::string(uoa_name(c.svc.uoa));
    // Absent means 0 (no cap), so requests without a cap read as they always did.
    if (c.svc.conn_rate) s["conn_rate"] = c.svc.conn_rate;
    return s;
}

json dest_json(const DestOptions& d) {
    return json{{"addr", net::to_string(d.addr.addr)},
                {"port", d.addr.port},
                {"fwd", std::string(lb::fwd_names(d.fwd).api)},
                {"weight", d.weight},
                {"u_threshold", d.u_threshold},
                {"l_threshold", d.l_threshold},
                {"tun_type", d.tun_type},
                {"tun_port", d.tun_port}};
}

std::string program_name(int argc, char** argv) {
    if (argc < 1 || !argv[0] || !*argv[0]) return "xvsadm";
    std::string p = argv[0];
    size_t slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string version_line() {
    return std::string("xvsadm v") + kXvsadmVersion + " (compatible with ipvsadm v1.31)\n";
}

// Sends one command and prints its result. Returns the exit code.
int run_one(const Command& cmd, const std::string& socket, std::ostream& out, std::ostream& err) {
    auto reply = control_request(socket, build_request(cmd));
    if (!reply) {
        err << reply.error() << "\n";
        return kExitClient;
    }
    const json& r = *reply;
    if (!r["ok"].get<bool>()) {
        std::string text = "Unknown error";
        if (r.contains("error") && r["error"].is_string()) text = r["error"].get<std::string>();
        err << text << "\n";
        // ipvsadm exits 1 when listing one service fails, 255 for refused changes.
        bool list_one = cmd.kind == CommandKind::List && cmd.service && !cmd.format.connections &&
                        !cmd.format.timeout;
        return list_one ? kExitClient : kExitDaemon;
    }
    auto text = render_reply(cmd, r);
    if (!text) {
        err << text.error() << "\n";
        return kExitClient;
    }
    out << *text;
    return kExitOk;
}

int restore(std::istream& in, const std::string& outer_socket, const std::string& program,
            std::ostream& out, std::ostream& err) {
    int result = kExitOk;
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> args = split_restore_line(line);
        if (args.empty()) continue;
        auto cmd = parse_ipvsadm_args(args, program);
        if (!cmd) {
            err << cmd.error() << "\n";
            return kArgsErrorExit;
        }
        if (cmd->kind == CommandKind::Restore || cmd->kind == CommandKind::Help ||
            cmd->kind == CommandKind::Version) {
            // ipvsadm refuses a nested -R (it would read the same stdin again).
            err << "Try `" << program << " -h' or '" << program
                << " --help' for more information.\n";
            return kArgsErrorExit;
        }
        std::string socket = cmd->socket_path.empty() ? outer_socket
                                                      : control_socket_path(cmd->socket_path);
        int rc = run_one(*cmd, socket, out, err);
        if (rc == kExitClient) return rc;  // xvsd gone: no point reading on
        if (rc != kExitOk) result = rc;
    }
    return result;
}

}  // namespace

json build_request(const Command& c) {
    json req;
    switch (c.kind) {
        case CommandKind::AddService:
        case CommandKind::EditService:
            req["cmd"] = c.kind == CommandKind::AddService ? "add_service" : "edit_service";
            req["service"] = service_json(c);
            break;
        case CommandKind::DelService:
            req["cmd"] = "del_service";
            req["service"] = key_json(*c.service);
            break;
        case CommandKind::Clear: req["cmd"] = "clear"; break;
        case CommandKind::AddDest:
        case CommandKind::EditDest:
            req["cmd"] = c.kind == CommandKind::AddDest ? "add_dest" : "edit_dest";
            req["service"] = key_json(*c.service);
            req["dest"] = dest_json(c.dest);
            break;
        case CommandKind::DelDest:
            req["cmd"] = "del_dest";
            req["service"] = key_json(*c.service);
            req["dest"] = json{{"addr", net::to_string(c.dest.addr.addr)},
                               {"port", c.dest.addr.port}};
            break;
        case CommandKind::List:
        case CommandKind::Save:
            if (c.kind == CommandKind::List && c.format.connections) {
                req["cmd"] = "conns";
            } else if (c.kind == CommandKind::List && c.format.timeout) {
                req["cmd"] = "get_timeout";
            } else {
                req["cmd"] = "list";
                if (c.service) req["service"] = key_json(*c.service);
            }
            break;
        case CommandKind::Zero:
            req["cmd"] = "zero";
            if (c.service) req["service"] = key_json(*c.service);
            break;
        case CommandKind::SetTimeout:
            req["cmd"] = "set_timeout";
            req["tcp"] = c.timeouts.tcp;
            req["tcpfin"] = c.timeouts.tcpfin;
            req["udp"] = c.timeouts.udp;
            break;
        case CommandKind::AddLaddr:
        case CommandKind::DelLaddr:
            req["cmd"] = c.kind == CommandKind::AddLaddr ? "add_laddr" : "del_laddr";
            req["service"] = key_json(*c.service);
            req["laddr"] = net::to_string(c.laddr);
            if (!c.ifname.empty()) req["ifname"] = c.ifname;
            break;
        case CommandKind::GetLaddr:
            req["cmd"] = "get_laddr";
            req["service"] = key_json(*c.service);
            break;
        case CommandKind::Reload: req["cmd"] = "reload"; break;
        case CommandKind::AddBlacklist:
        case CommandKind::DelBlacklist:
        case CommandKind::AddWhitelist:
        case CommandKind::DelWhitelist: {
            const bool add = c.kind == CommandKind::AddBlacklist || c.kind == CommandKind::AddWhitelist;
            const bool black = c.kind == CommandKind::AddBlacklist || c.kind == CommandKind::DelBlacklist;
            req["cmd"] = std::string(add ? "add_" : "del_") + (black ? "blacklist" : "whitelist");
            req["service"] = key_json(*c.service);
            req["prefix"] = net::to_string(c.acl);
            break;
        }
        case CommandKind::GetBlacklist:
        case CommandKind::GetWhitelist:
            req["cmd"] = "list";
            if (c.service) req["service"] = key_json(*c.service);
            break;
        case CommandKind::Restore:
        case CommandKind::Help:
        case CommandKind::Version: break;
    }
    return req;
}

int xvsadm_main(int argc, char** argv, std::istream& in, std::ostream& out, std::ostream& err) {
    std::string program = program_name(argc, argv);
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i] ? argv[i] : "");

    auto cmd = parse_ipvsadm_args(args, program);
    if (!cmd) {
        err << cmd.error() << "\n";
        return kArgsErrorExit;
    }
    switch (cmd->kind) {
        case CommandKind::Help:
            out << version_line() << usage_text(program);
            return kExitOk;
        case CommandKind::Version:
            out << version_line();
            return kExitOk;
        case CommandKind::Restore:
            return restore(in, control_socket_path(cmd->socket_path), program, out, err);
        default:
            return run_one(*cmd, control_socket_path(cmd->socket_path), out, err);
    }
}

}  // namespace xvs::ctl
