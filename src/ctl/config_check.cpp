// config_load / config_check: the one configuration verdict of xvsd (-t, start, reload).
// The exit status of -t is the contract (0 ok, 1 errors), the text is for people.
#include "ctl/config_check.h"

#include <exception>

#include "ctl/config_apply.h"
#include "lb/director.h"

namespace xvs::ctl {

namespace {

void split_lines(const std::string& text, std::vector<std::string>& out) {
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
}

ParseOutcome checked(ParseOutcome out) {
    if (!out.config) return out;
    std::vector<std::string> errors = config_check(*out.config);
    if (errors.empty()) return out;
    out.errors.insert(out.errors.end(), errors.begin(), errors.end());
    out.config.reset();
    return out;
}

}  // namespace

std::vector<std::string> config_check(const Config& cfg) {
    std::vector<std::string> errors;
    if (auto r = config_supported(cfg); !r) split_lines(r.error(), errors);
    if (cfg.netif.ports.empty())
        errors.push_back(cfg.file + ": no port defined in netif_defs (xvsd needs at least one)");
    if (!errors.empty()) return errors;
    // Dry run: what the Director itself refuses (addresses, routes, services, dests, local
    // addresses) is found here rather than after the EAL and the ports are up. Port ids and
    // MACs are placeholders; the Director only needs the names to resolve.
    try {
        lb::Director scratch(cfg.worker.workers);
        uint16_t id = 0;
        for (const PortDef& pd : cfg.netif.ports) {
            lb::PortEntry entry;
            entry.name = pd.name;
            entry.port_id = id++;
            entry.mac = net::MacAddr{{0x02, 0, 0, 0, uint8_t(id >> 8), uint8_t(id)}};
            entry.mtu = static_cast<uint16_t>(pd.mtu);
            if (auto r = scratch.port_add(entry); !r)
                errors.push_back(pd.loc.file + ":" + std::to_string(pd.loc.line) + ": port " +
                                 pd.name + ": " + r.error());
        }
        // Sorry servers are dests too once a quorum is lost (ctl/health/): checked now, at
        // their own line, rather than refused the first time the checkers add one.
        Config with_sorry = cfg;
        for (VirtualServer& vs : with_sorry.virtual_servers) {
            if (!vs.health.sorry) continue;
            RealServer sorry;
            sorry.addr = vs.health.sorry->addr;
            sorry.port = vs.health.sorry->port;
            sorry.loc = SourceLoc{vs.health.sorry->file, vs.health.sorry->line};
            vs.real_servers.push_back(sorry);
        }
        if (errors.empty())
            if (auto r = config_apply(scratch, with_sorry); !r) split_lines(r.error(), errors);
    } catch (const std::exception& e) {
        errors.push_back(cfg.file +
                         ": internal error while checking the configuration: " + e.what());
    }
    return errors;
}

ParseOutcome config_load(const std::string& path) {
    return checked(parse_config_path(path));
}

ParseOutcome config_load_text(std::string_view text, const std::string& name) {
    return checked(parse_config(text, name));
}

int config_check_main(const std::string& path, std::ostream& out, std::ostream& err) {
    ParseOutcome outcome = config_load(path);
    if (!outcome.errors.empty()) {
        for (const std::string& line : outcome.errors) err << line << '\n';
        err << "configuration file " << path << " has " << outcome.errors.size()
            << (outcome.errors.size() == 1 ? " error" : " errors") << '\n';
        return 1;
    }
    for (const std::string& line : outcome.warnings) err << "warning: " << line << '\n';
    out << "configuration file " << path << " is ok\n";
    return 0;
}

}  // namespace xvs::ctl
