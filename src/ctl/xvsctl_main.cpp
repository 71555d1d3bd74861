// xvsctl's driver: argv -> CtlCommand -> one request -> reply -> iproute2-style text and an
// exit code. Nothing is sent unless the whole command line parsed.
#include "ctl/xvsctl_main.h"

#include <string>
#include <vector>

#include "ctl/control_client.h"
#include "ctl/xvsctl_capture.h"
#include "ctl/xvsctl_format.h"

namespace xvs::ctl {

namespace {

using nlohmann::json;

constexpr int kExitOk = 0;
constexpr int kExitClient = 1;
constexpr int kExitUsage = 2;
constexpr int kExitDaemon = 255;

std::string program_name(int argc, char** argv) {
    if (argc < 1 || !argv[0] || !*argv[0]) return "xvsctl";
    std::string p = argv[0];
    size_t slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

}  // namespace

json build_xvsctl_request(const CtlCommand& c) {
    json req;
    switch (c.kind) {
        case CtlCommandKind::LinkShow: req["cmd"] = "link_show"; break;
        case CtlCommandKind::AddrShow: req["cmd"] = "addr_show"; break;
        case CtlCommandKind::AddrAdd:
        case CtlCommandKind::AddrDel:
            req["cmd"] = c.kind == CtlCommandKind::AddrAdd ? "addr_add" : "addr_del";
            req["addr"] = net::to_string(c.addr);
            if (c.prefix_len) req["prefix_len"] = *c.prefix_len;
            req["ifname"] = c.ifname;
            break;
        case CtlCommandKind::RouteShow: req["cmd"] = "route_show"; break;
        case CtlCommandKind::RouteAdd:
            req["cmd"] = "route_add";
            req["prefix"] = net::to_string(c.prefix);
            if (c.gateway) req["gateway"] = net::to_string(*c.gateway);
            req["ifname"] = c.ifname;
            break;
        case CtlCommandKind::RouteDel:
            req["cmd"] = "route_del";
            req["prefix"] = net::to_string(c.prefix);
            break;
        case CtlCommandKind::NeighShow: req["cmd"] = "neigh_show"; break;
        case CtlCommandKind::Stats: req["cmd"] = "stats"; break;
        case CtlCommandKind::ConnShow: {
            req["cmd"] = "conn_show";
            const ConnFilter& f = c.filter;
            if (!f.proto.empty()) req["proto"] = f.proto;
            if (!f.client.empty()) req["client"] = f.client;
            if (!f.vip.empty()) req["vip"] = f.vip;
            if (!f.dest.empty()) req["dest"] = f.dest;
            if (!f.state.empty()) req["state"] = f.state;
            if (f.limit) req["limit"] = *f.limit;
            break;
        }
        case CtlCommandKind::CheckShow: req["cmd"] = "check_show"; break;
        case CtlCommandKind::FeedbackShow: req["cmd"] = "feedback_show"; break;
        case CtlCommandKind::SyncShow:
            req["cmd"] = "sync";
            req["action"] = "show";
            break;
        case CtlCommandKind::SyncTakeover:
            req["cmd"] = "sync";
            req["action"] = "takeover";
            break;
        case CtlCommandKind::SyncRelease:
            req["cmd"] = "sync";
            req["action"] = "release";
            break;
        case CtlCommandKind::AnnounceShow: req["cmd"] = "announce_show"; break;
        case CtlCommandKind::ConnFlush:
            req["cmd"] = "flush_dest";
            req["dest"] = c.filter.dest;
            break;
        case CtlCommandKind::Capture:  // a conversation of its own (xvsctl_capture)
        case CtlCommandKind::Help:
        case CtlCommandKind::Version: break;
    }
    return req;
}

int xvsctl_main(int argc, char** argv, std::istream& /*in*/, std::ostream& out,
                std::ostream& err) {
    std::string program = program_name(argc, argv);
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i] ? argv[i] : "");

    auto cmd = parse_xvsctl_args(args);
    if (!cmd) {
        err << program << ": " << cmd.error() << "\n"
            << "Try '" << program << " --help' for more information.\n";
        return kExitUsage;
    }
    if (cmd->kind == CtlCommandKind::Help) {
        out << xvsctl_usage_text();
        return kExitOk;
    }
    if (cmd->kind == CtlCommandKind::Version) {
        out << "xvsctl v" << kXvsctlVersion << "\n";
        return kExitOk;
    }

    if (cmd->kind == CtlCommandKind::Capture) return xvsctl_capture(*cmd, err);

    auto reply = control_request(control_socket_path(cmd->socket_path), build_xvsctl_request(*cmd));
    if (!reply) {
        err << reply.error() << "\n";
        return kExitClient;
    }
    const json& r = *reply;
    if (!r["ok"].get<bool>()) {  // control_request checked that "ok" is a boolean
        auto e = r.find("error");
        err << (e != r.end() && e->is_string() ? e->get<std::string>() : "Unknown error") << "\n";
        return kExitDaemon;
    }
    auto text = render_xvsctl_reply(*cmd, r);
    if (!text) {
        err << text.error() << "\n";
        return kExitClient;
    }
    out << *text;
    return kExitOk;
}

}  // namespace xvs::ctl
