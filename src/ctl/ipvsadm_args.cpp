// ipvsadm argv parsing. The command/option compatibility check is a table (kCommandOptions),
// read exactly like ipvsadm's: '+' required, 'x' illegal, '1' at most one of the group,
// ' ' optional. Checks run in ipvsadm's order so the first message printed is the same.
#include "ctl/ipvsadm_args.h"

#include "net/prefix_set.h"

#include <netdb.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cstring>

namespace xvs::ctl {

namespace {

// Option bits, in the column order of kCommandOptions; kOptionNames gives the names used in
// messages ("Illegal 'weight' option with the 'add-service' command").
enum Opt : int {
    kOptNumeric,
    kOptConnection,
    kOptService,
    kOptScheduler,
    kOptPersistent,
    kOptNetmask,
    kOptServer,
    kOptForward,
    kOptWeight,
    kOptUThreshold,
    kOptLThreshold,
    kOptTimeout,
    kOptStats,
    kOptRate,
    kOptThresholds,
    kOptPersistentConn,
    kOptNoSort,
    kOptExact,
    kOptOps,
    kOptPe,
    kOptSchedFlags,
    kOptTunType,
    kOptTunPort,
    kOptSynproxy,
    kOptToa,
    kOptProxyProtocol,
    kOptUoa,
    kOptLaddr,
    kOptIfname,
    kOptBlacklist,
    kOptWhitelist,
    kOptConnRate,
    kOptHashTarget,
    kOptCount,
};

constexpr std::array<const char*, kOptCount> kOptionNames = {
    "numeric",     "connection",  "service-address", "scheduler",  "persistent",
    "netmask",     "real-server", "forwarding-method", "weight",   "u-threshold",
    "l-threshold", "timeout",     "stats",           "rate",       "thresholds",
    "persistent-conn", "nosort",  "exact",           "ops",        "pe",
    "sched-flags", "tun-type",    "tun-port",        "synproxy",   "toa",
    "proxy-protocol", "uoa",      "laddr",    "ifname",
    "blklst-address", "whtlst-address", "conn-rate", "hash-target",
};

// Rows in CommandKind order (Help and Version never reach the check).
struct CommandRow {
    const char* name;
    const char* options;  // kOptCount characters
};
// clang-format off
//                                                      n c S s p M r f w x y T st rt th pc ns ex o pe b tt tp j toa pp uoa z F k 2 cr ht
constexpr std::array<CommandRow, 22> kCommandOptions = {{
    {"add-service",    "xx+   xxxxxxxxxxxx   xx    xxxx  "},
    {"edit-service",   "xx+   xxxxxxxxxxxx   xx    xxxx  "},
    {"delete-service", "xx+xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
    {"flush",          "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
    {"list",           " 1 xxxxxxxx1      xxxxxxxxxxxxxxx"},
    {"add-server",     "xx+xxx+    xxxxxxxxxx  xxxxxxxxxx"},
    {"delete-server",  "xx+xxx+xxxxxxxxxxxxxxxxxxxxxxxxxx"},
    {"edit-server",    "xx+xxx+    xxxxxxxxxx  xxxxxxxxxx"},
    {"timeout",        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
    {"restore",        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
    {"save",           " xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
    {"zero",           "xx xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
    {"add-laddr",      "xx+xxxxxxxxxxxxxxxxxxxxxxxx++xxxx"},
    {"del-laddr",      "xx+xxxxxxxxxxxxxxxxxxxxxxxx+ xxxx"},
    {"get-laddr",      " x+xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
    {"reload",         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
    {"add-blklst",     "xx+xxxxxxxxxxxxxxxxxxxxxxxxxx+xxx"},
    {"del-blklst",     "xx+xxxxxxxxxxxxxxxxxxxxxxxxxx+xxx"},
    {"get-blklst",     " x xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
    {"add-whtlst",     "xx+xxxxxxxxxxxxxxxxxxxxxxxxxxx+xx"},
    {"del-whtlst",     "xx+xxxxxxxxxxxxxxxxxxxxxxxxxxx+xx"},
    {"get-whtlst",     " x xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
}};
// clang-format on
static_assert(static_cast<int>(CommandKind::GetWhitelist) + 1 == kCommandOptions.size());

constexpr bool rows_have_all_columns() {
    for (const auto& row : kCommandOptions) {
        if (std::char_traits<char>::length(row.options) != kOptCount) return false;
    }
    return true;
}
static_assert(rows_have_all_columns());

enum class ArgKind { None, Required, Optional };

// What an option does when met: set a command, or set an option bit (with an argument).
struct OptionSpec {
    char short_name;  // 0 = long only
    const char* long_name;
    ArgKind arg;
    bool is_command;
    int id;  // CommandKind or Opt; -1 = accepted no-op (--sort), -2 = --socket
};

constexpr int kNoOp = -1;
constexpr int kSocket = -2;
// Extra ids for options that share a bit with others (forwarding methods, service kinds).
constexpr int kTcpService = 100, kUdpService = 101, kFwmarkService = 102, kMatchService = 103,
              kIpv6 = 104;  // -6: with -f, the mark's IPv6 service (no option bit of its own)
constexpr int kFwdDr = 110, kFwdTun = 111, kFwdMasq = 112, kFwdFullNat = 113, kFwdSnat = 114,
              kFwdNatTun = 115;

constexpr int cmd(CommandKind k) { return static_cast<int>(k); }

constexpr OptionSpec kOptions[] = {
    {'A', "add-service", ArgKind::None, true, cmd(CommandKind::AddService)},
    {'E', "edit-service", ArgKind::None, true, cmd(CommandKind::EditService)},
    {'D', "delete-service", ArgKind::None, true, cmd(CommandKind::DelService)},
    {'C', "clear", ArgKind::None, true, cmd(CommandKind::Clear)},
    {'L', "list", ArgKind::None, true, cmd(CommandKind::List)},
    {'l', nullptr, ArgKind::None, true, cmd(CommandKind::List)},
    {'Z', "zero", ArgKind::None, true, cmd(CommandKind::Zero)},
    {'a', "add-server", ArgKind::None, true, cmd(CommandKind::AddDest)},
    {'e', "edit-server", ArgKind::None, true, cmd(CommandKind::EditDest)},
    {'d', "delete-server", ArgKind::None, true, cmd(CommandKind::DelDest)},
    {0, "set", ArgKind::None, true, cmd(CommandKind::SetTimeout)},
    {'R', "restore", ArgKind::None, true, cmd(CommandKind::Restore)},
    {'S', "save", ArgKind::None, true, cmd(CommandKind::Save)},
    {'P', "add-laddr", ArgKind::None, true, cmd(CommandKind::AddLaddr)},
    {'Q', "del-laddr", ArgKind::None, true, cmd(CommandKind::DelLaddr)},
    {'G', "get-laddr", ArgKind::None, true, cmd(CommandKind::GetLaddr)},
    {0, "reload", ArgKind::None, true, cmd(CommandKind::Reload)},
    {'U', "add-blklst", ArgKind::None, true, cmd(CommandKind::AddBlacklist)},
    {'V', "del-blklst", ArgKind::None, true, cmd(CommandKind::DelBlacklist)},
    {'B', "get-blklst", ArgKind::None, true, cmd(CommandKind::GetBlacklist)},
    {'O', "add-whtlst", ArgKind::None, true, cmd(CommandKind::AddWhitelist)},
    {'Y', "del-whtlst", ArgKind::None, true, cmd(CommandKind::DelWhitelist)},
    {'W', "get-whtlst", ArgKind::None, true, cmd(CommandKind::GetWhitelist)},
    {'h', "help", ArgKind::None, true, cmd(CommandKind::Help)},
    {'v', "version", ArgKind::None, true, cmd(CommandKind::Version)},
    {'t', "tcp-service", ArgKind::Required, false, kTcpService},
    {'u', "udp-service", ArgKind::Required, false, kUdpService},
    {'f', "fwmark-service", ArgKind::Required, false, kFwmarkService},
    {'H', "match", ArgKind::Required, false, kMatchService},
    {'6', "ipv6", ArgKind::None, false, kIpv6},
    {'s', "scheduler", ArgKind::Required, false, kOptScheduler},
    {'p', "persistent", ArgKind::Optional, false, kOptPersistent},
    {'M', "netmask", ArgKind::Required, false, kOptNetmask},
    {'r', "real-server", ArgKind::Required, false, kOptServer},
    {'g', "gatewaying", ArgKind::None, false, kFwdDr},
    {'i', "ipip", ArgKind::None, false, kFwdTun},
    {'m', "masquerading", ArgKind::None, false, kFwdMasq},
    {0, "fullnat", ArgKind::None, false, kFwdFullNat},
    {'J', "snat", ArgKind::None, false, kFwdSnat},
    {'w', "weight", ArgKind::Required, false, kOptWeight},
    {'x', "u-threshold", ArgKind::Required, false, kOptUThreshold},
    {'y', "l-threshold", ArgKind::Required, false, kOptLThreshold},
    {'c', "connection", ArgKind::None, false, kOptConnection},
    {'n', "numeric", ArgKind::None, false, kOptNumeric},
    {0, "timeout", ArgKind::None, false, kOptTimeout},
    {0, "stats", ArgKind::None, false, kOptStats},
    {0, "rate", ArgKind::None, false, kOptRate},
    {0, "thresholds", ArgKind::None, false, kOptThresholds},
    {0, "persistent-conn", ArgKind::None, false, kOptPersistentConn},
    {0, "nosort", ArgKind::None, false, kOptNoSort},
    {0, "sort", ArgKind::None, false, kNoOp},
    {'X', "exact", ArgKind::None, false, kOptExact},
    {'o', "ops", ArgKind::None, false, kOptOps},
    {0, "pe", ArgKind::Required, false, kOptPe},
    {'b', "sched-flags", ArgKind::Required, false, kOptSchedFlags},
    {0, "nat-tunnel", ArgKind::None, false, kFwdNatTun},
    {0, "tun-type", ArgKind::Required, false, kOptTunType},
    {0, "tun-port", ArgKind::Required, false, kOptTunPort},
    {'j', "synproxy", ArgKind::None, false, kOptSynproxy},
    {0, "toa", ArgKind::Required, false, kOptToa},
    {0, "proxy-protocol", ArgKind::Required, false, kOptProxyProtocol},
    {0, "uoa", ArgKind::Required, false, kOptUoa},
    {'z', "laddr", ArgKind::Required, false, kOptLaddr},
    {'F', "ifname", ArgKind::Required, false, kOptIfname},
    {'k', "blklst", ArgKind::Required, false, kOptBlacklist},
    {'2', "whtlst", ArgKind::Required, false, kOptWhitelist},
    {0, "conn-rate", ArgKind::Required, false, kOptConnRate},
    {0, "hash-target", ArgKind::Required, false, kOptHashTarget},
    {0, "socket", ArgKind::Required, false, kSocket},
};

constexpr uint32_t kMaxPersistTimeout = 2678400;  // 31 days, ipvsadm's MAX_TIMEOUT

const OptionSpec* find_short(char c) {
    for (const auto& o : kOptions)
        if (o.short_name == c) return &o;
    return nullptr;
}

const OptionSpec* find_long(std::string_view name) {
    for (const auto& o : kOptions)
        if (o.long_name && name == o.long_name) return &o;
    return nullptr;
}

// strtol-like full-string decimal in [min, max] (ipvsadm's string_to_number).
std::optional<long> to_number(std::string_view s, long min, long max) {
    if (s.empty()) return std::nullopt;
    long v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < min || v > max) return std::nullopt;
    return v;
}

Error fail(std::string msg) { return make_error(std::move(msg)); }

// "host[:port]" with a numeric host: A.B.C.D, or an IPv6 address in brackets as ipvsadm
// writes it ("[2001:db8::1]:80", "[2001:db8::1]"); the port may be a name from /etc/services
// (no DNS). Returns the endpoint and whether a port was given.
std::optional<std::pair<net::InetEndpoint, bool>> parse_address(std::string_view text,
                                                                Proto proto) {
    std::optional<net::InetAddr> addr;
    size_t colon = std::string_view::npos;
    if (!text.empty() && text.front() == '[') {
        const size_t close = text.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        addr = net::parse_inet(text.substr(1, close - 1));
        if (!addr || addr->is_v4()) return std::nullopt;
        if (close + 1 < text.size()) {
            if (text[close + 1] != ':') return std::nullopt;
            colon = close + 1;
        }
    } else {
        colon = text.rfind(':');
        // An IPv6 host needs its brackets: in "2001:db8::1:80" the port is not knowable.
        if (colon != std::string_view::npos && text.find(':') != colon) return std::nullopt;
        addr = net::parse_inet(text.substr(0, colon));
        if (!addr) return std::nullopt;
    }
    if (colon == std::string_view::npos) return std::make_pair(net::InetEndpoint{*addr, 0}, false);
    std::string_view port_text = text.substr(colon + 1);
    if (auto port = to_number(port_text, 0, 65535)) {
        return std::make_pair(net::InetEndpoint{*addr, static_cast<uint16_t>(*port)}, true);
    }
    if (port_text.empty()) return std::nullopt;
    std::string name(port_text);
    servent entry{};
    servent* found = nullptr;
    char buf[1024];
    getservbyname_r(name.c_str(), proto == Proto::Tcp ? "tcp" : "udp", &entry, buf, sizeof buf,
                    &found);
    if (!found) return std::nullopt;
    return std::make_pair(net::InetEndpoint{*addr, ntohs(static_cast<uint16_t>(found->s_port))},
                          true);
}

// Scheduler flags: validated against the scheduler and normalised to its names.
Result<std::vector<std::string>> parse_sched_flags(std::string_view sched, std::string_view text) {
    bool bits[3] = {false, false, false};
    while (true) {
        size_t comma = text.find(',');
        std::string_view flag = text.substr(0, comma);
        int bit = -1;
        std::string_view needs;
        if (flag == "flag-1") bit = 0;
        else if (flag == "flag-2") bit = 1;
        else if (flag == "flag-3") bit = 2;
        else if (flag == "sh-fallback") bit = 0, needs = "sh";
        else if (flag == "sh-port") bit = 1, needs = "sh";
        else if (flag == "mh-fallback") bit = 0, needs = "mh";
        else if (flag == "mh-port") bit = 1, needs = "mh";
        if (bit < 0) return fail("invalid scheduler flag `" + std::string(flag) + "'");
        if (!needs.empty() && sched != needs)
            return fail("incompatible scheduler flag `" + std::string(flag) + "'");
        bits[bit] = true;
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    std::vector<std::string> out;
    bool named = sched == "sh" || sched == "mh";
    std::string prefix(sched);
    if (bits[0]) out.push_back(named ? prefix + "-fallback" : "flag-1");
    if (bits[1]) out.push_back(named ? prefix + "-port" : "flag-2");
    if (bits[2]) out.push_back("flag-3");
    return out;
}

std::string try_help(std::string_view program) {
    std::string p(program);
    return "Try `" + p + " -h' or '" + p + " --help' for more information.";
}

// One option occurrence with its argument (if any), after splitting short bundles and "=".
struct Occurrence {
    const OptionSpec* spec;
    std::string spelled;  // as the user wrote it, for messages
    std::optional<std::string> arg;
};

}  // namespace

std::string_view proto_name(Proto proto) { return proto == Proto::Tcp ? "tcp" : "udp"; }

std::string_view uoa_name(Uoa uoa) {
    switch (uoa) {
        case Uoa::Off: return "off";
        case Uoa::Opp: return "opp";
        case Uoa::Ipo: return "ipo";
    }
    return "off";
}

std::string_view proxy_protocol_name(ProxyProtocol pp) {
    switch (pp) {
        case ProxyProtocol::Off: return "off";
        case ProxyProtocol::V1: return "v1";
        case ProxyProtocol::V2: return "v2";
    }
    return "off";
}

Result<Command> parse_ipvsadm_args(const std::vector<std::string>& args, std::string_view program) {
    Command c;
    if (args.empty()) return c;  // bare "xvsadm" lists the table, as ipvsadm does

    // Pass 1: tokenise into option occurrences and positional arguments (popt-like: short
    // options bundle, "-sARG" and "--long=ARG" work, optional arguments are taken from the next
    // word only when it does not start with '-').
    std::vector<Occurrence> occs;
    std::vector<std::string> positionals;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto take_next = [&](const OptionSpec* spec) -> std::optional<std::string> {
            if (i + 1 < args.size()) {
                const std::string& next = args[i + 1];
                if (spec->arg == ArgKind::Required || next.empty() || next[0] != '-') {
                    ++i;
                    return next;
                }
            }
            return std::nullopt;
        };
        if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
            std::string_view body(a);
            body.remove_prefix(2);
            size_t eq = body.find('=');
            const OptionSpec* spec = find_long(body.substr(0, eq));
            std::string spelled = "--" + std::string(body.substr(0, eq));
            if (!spec) return fail(spelled + ": unknown option\n" + try_help(program));
            Occurrence occ{spec, spelled, std::nullopt};
            if (eq != std::string_view::npos) {
                if (spec->arg == ArgKind::None)
                    return fail(spelled + ": option does not take an argument\n" +
                                try_help(program));
                occ.arg = std::string(body.substr(eq + 1));
            } else if (spec->arg != ArgKind::None) {
                occ.arg = take_next(spec);
                if (!occ.arg && spec->arg == ArgKind::Required)
                    return fail(spelled + ": missing argument\n" + try_help(program));
            }
            occs.push_back(std::move(occ));
        } else if (a.size() > 1 && a[0] == '-' && a != "--") {
            for (size_t k = 1; k < a.size(); ++k) {
                const OptionSpec* spec = find_short(a[k]);
                std::string spelled = std::string("-") + a[k];
                if (!spec) return fail(spelled + ": unknown option\n" + try_help(program));
                Occurrence occ{spec, spelled, std::nullopt};
                if (spec->arg != ArgKind::None) {
                    if (k + 1 < a.size()) {
                        occ.arg = a.substr(k + 1);
                    } else {
                        occ.arg = take_next(spec);
                        if (!occ.arg && spec->arg == ArgKind::Required)
                            return fail(spelled + ": missing argument\n" + try_help(program));
                    }
                    occs.push_back(std::move(occ));
                    break;
                }
                occs.push_back(std::move(occ));
            }
        } else {
            positionals.push_back(a);
        }
    }

    // Pass 2: apply occurrences in order, failing on the first bad one (ipvsadm's order).
    std::optional<CommandKind> kind;
    uint64_t options = 0;
    static_assert(kOptCount <= 64);
    auto set_option = [&](int bit) -> Result<void> {
        if (options & (uint64_t{1} << bit))
            return fail(std::string("multiple '") + kOptionNames[bit] + "' options specified");
        options |= uint64_t{1} << bit;
        return {};
    };
    std::optional<std::string> sched_flags_text;
    bool dest_port_given = false;
    std::string dest_text;
    std::string netmask_text;  // -M: its form depends on the service's family, known at the end
    bool ipv6 = false;         // -6, applied to -f's key at the end (either order, as -M)

    for (const auto& occ : occs) {
        const OptionSpec& o = *occ.spec;
        if (o.is_command) {
            auto k = static_cast<CommandKind>(o.id);
            if (kind) return fail("multiple commands specified");
            // -h and -v act at once, like ipvsadm's usage_exit/version_exit.
            if (k == CommandKind::Help || k == CommandKind::Version) {
                Command done;
                done.kind = k;
                return done;
            }
            kind = k;
            continue;
        }
        const std::string arg = occ.arg.value_or("");
        Result<void> r;
        switch (o.id) {
            case kNoOp: break;
            case kIpv6:
                ipv6 = true;
                break;
            case kSocket: c.socket_path = arg; break;
            case kTcpService:
            case kUdpService: {
                if (!(r = set_option(kOptService))) return fail(r.error());
                Proto proto = o.id == kTcpService ? Proto::Tcp : Proto::Udp;
                auto ep = parse_address(arg, proto);
                if (!ep) return fail("illegal virtual server address[:port] specified");
                c.service = ServiceKey{proto, ep->first.addr, ep->first.port, 0};
                break;
            }
            case kFwmarkService: {
                if (!(r = set_option(kOptService))) return fail(r.error());
                auto mark = to_number(arg, 1, UINT32_MAX);
                if (!mark) return fail("invalid fwmark value `" + arg + "' specified");
                c.service = ServiceKey{Proto::Tcp, {}, 0, static_cast<uint32_t>(*mark)};
                break;
            }
            case kMatchService: {
                if (!(r = set_option(kOptService))) return fail(r.error());
                auto m = lb::parse_match(arg);
                if (!m) return fail("illegal match specified: " + m.error());
                c.service = ServiceKey{Proto::Tcp, {}, 0, 0, false, *m};
                break;
            }
            case kOptScheduler:
                if (!(r = set_option(kOptScheduler))) return fail(r.error());
                // IP_VS_SCHEDNAME_MAXLEN is 16 including the terminator.
                c.svc.sched = arg.substr(0, 15);
                break;
            case kOptPersistent: {
                if (!(r = set_option(kOptPersistent))) return fail(r.error());
                if (!occ.arg) {
                    c.svc.persistent = 360;  // ipvsadm's default persistence timeout
                } else {
                    auto t = to_number(arg, 1, kMaxPersistTimeout);
                    if (!t) return fail("invalid timeout value `" + arg + "' specified");
                    c.svc.persistent = static_cast<uint32_t>(*t);
                }
                break;
            }
            case kOptNetmask: {
                if (!(r = set_option(kOptNetmask))) return fail(r.error());
                netmask_text = arg;
                break;
            }
            case kOptServer:
                if (!(r = set_option(kOptServer))) return fail(r.error());
                dest_text = arg;  // resolved after all options: the service may come later
                break;
            case kFwdDr:
            case kFwdTun:
            case kFwdMasq:
            case kFwdFullNat:
            case kFwdSnat:
            case kFwdNatTun:
                if (!(r = set_option(kOptForward))) return fail(r.error());
                c.dest.fwd = o.id == kFwdDr        ? lb::FwdMode::Dr
                             : o.id == kFwdTun     ? lb::FwdMode::Tun
                             : o.id == kFwdMasq    ? lb::FwdMode::Nat
                             : o.id == kFwdFullNat ? lb::FwdMode::FullNat
                             : o.id == kFwdNatTun  ? lb::FwdMode::NatTun
                                                   : lb::FwdMode::Snat;
                break;
            case kOptWeight: {
                if (!(r = set_option(kOptWeight))) return fail(r.error());
                auto w = to_number(arg, 0, 65535);
                if (!w) return fail("illegal weight specified");
                c.dest.weight = static_cast<uint32_t>(*w);
                break;
            }
            case kOptUThreshold:
            case kOptLThreshold: {
                if (!(r = set_option(o.id))) return fail(r.error());
                auto t = to_number(arg, 0, INT32_MAX);
                bool upper = o.id == kOptUThreshold;
                if (!t) return fail(upper ? "illegal u_threshold specified"
                                          : "illegal l_threshold specified");
                (upper ? c.dest.u_threshold : c.dest.l_threshold) = static_cast<uint32_t>(*t);
                break;
            }
            case kOptHashTarget:  // DPVS's ipvsadm: sip (the client address) or qid (QUIC)
                if (!(r = set_option(kOptHashTarget))) return fail(r.error());
                if (arg != "sip" && arg != "qid") return fail("hash target not support");
                c.svc.hash_qid = arg == "qid";
                break;
            case kOptPe:
                if (!(r = set_option(kOptPe))) return fail(r.error());
                c.svc.pe = arg;
                break;
            case kOptSchedFlags:
                if (!(r = set_option(kOptSchedFlags))) return fail(r.error());
                sched_flags_text = arg;
                break;
            case kOptTunType:
                if (!(r = set_option(kOptTunType))) return fail(r.error());
                if (arg == "gre")
                    return fail("GRE tunnels are not supported: use --tun-type ipip or gue");
                if (arg != "ipip" && arg != "gue")
                    return fail("illegal tunnel type `" + arg + "' specified");
                c.dest.tun_type = arg;
                break;
            case kOptTunPort: {
                if (!(r = set_option(kOptTunPort))) return fail(r.error());
                auto p = to_number(arg, 1, 65535);
                if (!p) return fail("illegal tunnel port `" + arg + "' specified");
                c.dest.tun_port = static_cast<uint16_t>(*p);
                break;
            }
            case kOptToa:
                if (!(r = set_option(kOptToa))) return fail(r.error());
                if (arg != "on" && arg != "off") return fail("toa must be on or off");
                c.svc.toa = arg == "on";
                break;
            case kOptProxyProtocol:
                if (!(r = set_option(kOptProxyProtocol))) return fail(r.error());
                if (arg == "v1") c.svc.proxy_protocol = ProxyProtocol::V1;
                else if (arg == "v2") c.svc.proxy_protocol = ProxyProtocol::V2;
                else if (arg == "off") c.svc.proxy_protocol = ProxyProtocol::Off;
                else return fail("proxy-protocol must be v1, v2 or off");
                break;
            case kOptUoa:
                if (!(r = set_option(kOptUoa))) return fail(r.error());
                if (arg == "opp") c.svc.uoa = Uoa::Opp;
                else if (arg == "ipo") c.svc.uoa = Uoa::Ipo;
                else if (arg == "off") c.svc.uoa = Uoa::Off;
                else return fail("uoa must be opp, ipo or off");
                break;
            case kOptLaddr: {
                if (!(r = set_option(kOptLaddr))) return fail(r.error());
                auto a = net::parse_inet(net::strip_brackets(arg));
                if (!a) return fail("illegal local address");
                c.laddr = *a;
                break;
            }
            case kOptIfname:
                if (!(r = set_option(kOptIfname))) return fail(r.error());
                c.ifname = arg;
                break;
            case kOptBlacklist:
            case kOptWhitelist: {
                if (!(r = set_option(o.id))) return fail(r.error());
                auto p = net::parse_acl_prefix(arg);
                if (!p)
                    return fail(std::string(o.id == kOptBlacklist ? "illegal blacklist entry: "
                                                                  : "illegal whitelist entry: ") +
                                p.error());
                c.acl = *p;
                break;
            }
            case kOptConnRate: {
                if (!(r = set_option(kOptConnRate))) return fail(r.error());
                auto n = to_number(arg, 0, UINT32_MAX);
                if (!n) return fail("illegal conn-rate `" + arg + "' specified (0..4294967295 per second, 0 = no cap)");
                c.svc.conn_rate = static_cast<uint32_t>(*n);
                break;
            }
            default:  // plain flags
                if (!(r = set_option(o.id))) return fail(r.error());
                break;
        }
    }

    if (!kind) return fail(try_help(program));  // options but no command
    c.kind = *kind;
    auto has = [&](int bit) { return (options & (uint64_t{1} << bit)) != 0; };

    // -6 names the IPv6 firewall-mark service of -f N (ipvsadm: only with -f).
    if (ipv6) {
        if (!c.service || !c.service->fwmark)
            return fail("-6 must follow -f (it selects the IPv6 service of a firewall mark)");
        c.service->fwmark_v6 = true;
    }

    // -M: an IPv4 netmask, or for an IPv6 service a prefix length (ipvsadm's two forms and
    // messages; ipvsadm reads the family from a -t/-u given before -M, xvsadm from either order).
    if (has(kOptNetmask)) {
        const bool v6 = c.service && !c.service->match &&
                        (c.service->fwmark ? c.service->fwmark_v6 : !c.service->vip.is_v4());
        if (v6) {
            auto len = to_number(netmask_text, 1, 128);
            if (!len) return fail("illegal ipv6 netmask specified");
            c.svc.netmask6 = static_cast<uint8_t>(*len);
        } else {
            auto mask = net::parse_ipv4(netmask_text);
            if (!mask) return fail("illegal virtual server persistent mask specified");
            c.svc.netmask = *mask;
        }
    }

    if (!dest_text.empty() || has(kOptServer)) {
        Proto proto = c.service ? c.service->proto : Proto::Tcp;
        auto ep = parse_address(dest_text, proto);
        if (!ep) return fail("illegal real server address[:port] specified");
        c.dest.addr = ep->first;
        dest_port_given = ep->second;
    }

    if (c.kind == CommandKind::SetTimeout) {
        if (positionals.size() < 3) return fail("--set option requires 3 timeout values");
        uint32_t* slots[3] = {&c.timeouts.tcp, &c.timeouts.tcpfin, &c.timeouts.udp};
        for (int k = 0; k < 3; ++k) {
            auto t = to_number(positionals[k], 0, kMaxPersistTimeout);
            if (!t) return fail("invalid timeout value `" + positionals[k] + "' specified");
            *slots[k] = static_cast<uint32_t>(*t);
        }
        positionals.erase(positionals.begin(), positionals.begin() + 3);
    }
    if (!positionals.empty()) return fail("unexpected argument " + positionals.front());

    // The command/option table.
    const CommandRow& row = kCommandOptions[static_cast<size_t>(c.kind)];
    int one_of = -1;
    for (int j = 0; j < kOptCount; ++j) {
        char rule = row.options[j];
        if (!has(j)) {
            if (rule == '+')
                return fail(std::string("You need to supply the '") + kOptionNames[j] +
                            "' option for the '" + row.name + "' command");
            continue;
        }
        if (rule == 'x')
            return fail(std::string("Illegal '") + kOptionNames[j] + "' option with the '" +
                        row.name + "' command");
        if (rule == '1') {
            if (one_of >= 0)
                return fail(std::string("The option '") + kOptionNames[j] +
                            "' is not allowed with the option '" + kOptionNames[one_of] + "'");
            one_of = j;
        }
    }

    c.svc.ops = has(kOptOps);
    c.svc.synproxy = has(kOptSynproxy);
    if (c.kind == CommandKind::AddService || c.kind == CommandKind::EditService) {
        const ServiceKey& s = *c.service;
        if (!s.fwmark && !s.match && s.port == 0 && !has(kOptPersistent))
            return fail("Zero port specified for non-persistent service");
        if (c.svc.ops && !s.fwmark && s.proto != Proto::Udp)
            return fail("One-Packet Scheduling is only for UDP virtual services");
        if (c.svc.sched.empty()) c.svc.sched = "wlc";
        // DPVS's ipvsadm messages (it checks -s and -t/-u given before --hash-target; here
        // the whole command line counts).
        if (has(kOptHashTarget) && c.svc.sched != "conhash")
            return fail("hash target can only be set when schedule is conhash");
        if (c.svc.hash_qid && (s.fwmark || s.match || s.proto != Proto::Udp))
            return fail("qid hash can only be set in udp service");
        if (sched_flags_text) {
            auto flags = parse_sched_flags(c.svc.sched, *sched_flags_text);
            if (!flags) return fail(flags.error());
            c.svc.sched_flags = std::move(*flags);
        }
    }

    if (c.kind == CommandKind::DelDest && !dest_port_given) c.dest.addr.port = c.service->port;
    if (c.kind == CommandKind::AddDest || c.kind == CommandKind::EditDest) {
        // Port omitted = service port; DR and tunnels cannot map ports (ipvsadm forces it).
        bool no_port_mapping = c.dest.fwd == lb::FwdMode::Dr || c.dest.fwd == lb::FwdMode::Tun;
        if (!c.service->fwmark && (!dest_port_given || no_port_mapping))
            c.dest.addr.port = c.service->port;
        const bool tunnel = c.dest.fwd == lb::FwdMode::Tun || c.dest.fwd == lb::FwdMode::NatTun;
        if (has(kOptTunType) && !tunnel)
            return fail("--tun-type is only for the tunneling (-i, --nat-tunnel) forwarding methods");
        if (tunnel && c.dest.tun_type.empty()) c.dest.tun_type = "ipip";
        if (has(kOptTunPort) && c.dest.tun_type != "gue")
            return fail("--tun-port is only for GUE tunnels (--tun-type gue)");
        if (c.dest.tun_type == "gue" && c.dest.tun_port == 0)
            return fail("GUE tunnels need a destination port (--tun-port)");
    }

    if (c.kind == CommandKind::List) {
        bool conn_like = has(kOptConnection) || has(kOptTimeout);
        if ((conn_like && (has(kOptStats) || has(kOptRate) || has(kOptThresholds))) ||
            (has(kOptTimeout) && has(kOptPersistentConn)))
            return fail("options conflicts in the list command");
        // xvs: -c and --timeout list everything; a service there would be silently ignored.
        if (conn_like && c.service)
            return fail(std::string("The option 'service-address' is not allowed with the "
                                    "option '") +
                        (has(kOptConnection) ? "connection" : "timeout") + "'");
    }

    c.format.numeric = has(kOptNumeric);
    c.format.connections = has(kOptConnection);
    c.format.timeout = has(kOptTimeout);
    c.format.stats = has(kOptStats);
    c.format.rate = has(kOptRate);
    c.format.thresholds = has(kOptThresholds);
    c.format.persistent_conn = has(kOptPersistentConn);
    c.format.exact = has(kOptExact);
    c.format.nosort = has(kOptNoSort);
    return c;
}

std::vector<std::string> split_restore_line(std::string_view line) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        if (i >= line.size()) break;
        if (out.empty() && line[i] == '#') break;
        size_t start = i;
        while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        out.emplace_back(line.substr(start, i - start));
    }
    if (!out.empty()) {
        std::string_view first = out.front();
        size_t slash = first.rfind('/');
        if (slash != std::string_view::npos) first.remove_prefix(slash + 1);
        if (first == "ipvsadm" || first == "xvsadm") out.erase(out.begin());
    }
    return out;
}

std::string usage_text(std::string_view program) {
    std::string p(program);
    std::string s;
    s += "Usage:\n";
    s += "  " + p + " -A|E virtual-service [-s scheduler] [-p [timeout]] [-M netmask] [--pe persistence_engine] [-b sched-flags]\n";
    s += "        [-j|--synproxy] [--toa on|off] [--proxy-protocol v1|v2|off] [--uoa opp|ipo|off]\n";
    s += "        [--conn-rate N]\n";
    s += "  " + p + " -D virtual-service\n";
    s += "  " + p + " -C\n";
    s += "  " + p + " -R\n";
    s += "  " + p + " -S [-n]\n";
    s += "  " + p + " -a|e virtual-service -r server-address [options]\n";
    s += "  " + p + " -d virtual-service -r server-address\n";
    s += "  " + p + " -L|l [virtual-service] [options]\n";
    s += "  " + p + " -Z [virtual-service]\n";
    s += "  " + p + " --set tcp tcpfin udp\n";
    s += "  " + p + " -P|Q virtual-service -z local-address -F ifname\n";
    s += "  " + p + " -G virtual-service\n";
    s += "  " + p + " -U|V virtual-service -k address[/len]\n";
    s += "  " + p + " -O|Y virtual-service --whtlst address[/len]\n";
    s += "  " + p + " -B|W [virtual-service]\n";
    s += "  " + p + " --reload\n";
    s += "  " + p + " -h\n\n";
    s += "Commands:\n";
    s += "Either long or short options are allowed.\n";
    s += "  --add-service     -A        add virtual service with options\n";
    s += "  --edit-service    -E        edit virtual service with options\n";
    s += "  --delete-service  -D        delete virtual service\n";
    s += "  --clear           -C        clear the whole table\n";
    s += "  --restore         -R        restore rules from stdin\n";
    s += "  --save            -S        save rules to stdout\n";
    s += "  --add-server      -a        add real server with options\n";
    s += "  --edit-server     -e        edit real server with options\n";
    s += "  --delete-server   -d        delete real server\n";
    s += "  --list            -L|-l     list the table\n";
    s += "  --zero            -Z        zero counters in a service or all services\n";
    s += "  --set tcp tcpfin udp        set connection timeout values (0 = unchanged)\n";
    s += "  --add-laddr       -P        add a local (FULLNAT/SNAT source) address\n";
    s += "  --del-laddr       -Q        delete a local address\n";
    s += "  --get-laddr       -G        show local addresses\n";
    s += "  --add-blklst      -U        add a client address or prefix to a service's blacklist\n";
    s += "  --del-blklst      -V        delete a blacklist entry\n";
    s += "  --get-blklst      -B        show blacklists\n";
    s += "  --add-whtlst      -O        add a client address or prefix to a service's whitelist\n";
    s += "  --del-whtlst      -Y        delete a whitelist entry\n";
    s += "  --get-whtlst      -W        show whitelists\n";
    s += "  --reload                    make xvsd re-read its configuration\n";
    s += "  --help            -h        display this help message\n";
    s += "  --version         -v        display the version\n\n";
    s += "virtual-service:\n";
    s += "  --tcp-service|-t  service-address   service-address is host[:port]\n";
    s += "  --udp-service|-u  service-address   service-address is host[:port]\n";
    s += "                                      (an IPv6 host in brackets: [2001:db8::1]:80)\n";
    s += "  --fwmark-service|-f fwmark          fwmark is an integer greater than zero\n";
    s += "  --ipv6         -6                   with -f: the mark's IPv6 service\n";
    s += "  --match|-H     match                SNAT service: proto=tcp|udp|icmp,src-range=A-B,\n";
    s += "                                      dst-range=A-B[:P-Q],iif=PORT,oif=PORT\n\n";
    s += "Options:\n";
    s += "  --scheduler    -s scheduler         one of rr|wrr|lc|wlc|lblc|lblcr|dh|sh|sed|nq|fo|ovf|mh|twos|conhash,\n";
    s += "                                      the default scheduler is wlc.\n";
    s += "  --pe            engine              alternate persistence engine, not set by default.\n";
    s += "  --persistent   -p [timeout]         persistent service (default 360 seconds)\n";
    s += "  --netmask      -M netmask           persistent granularity mask\n";
    s += "  --sched-flags  -b flags             scheduler flags (comma-separated)\n";
    s += "  --hash-target  hashtag              conhash: sip (client address) or qid (UDP: QUIC connection ID)\n";
    s += "  --real-server  -r server-address    server-address is host (and port)\n";
    s += "  --gatewaying   -g                   gatewaying (direct routing) (default)\n";
    s += "  --ipip         -i                   ipip encapsulation (tunneling)\n";
    s += "  --masquerading -m                   masquerading (NAT)\n";
    s += "  --fullnat                           full NAT (source and destination)\n";
    s += "  --snat         -J                   source NAT (match services, DPVS)\n";
    s += "  --tun-type      type                one of ipip|gue|gre, the default tunnel type is ipip.\n";
    s += "  --tun-port      port                tunnel destination port (gue)\n";
    s += "  --weight       -w weight            capacity of real server\n";
    s += "  --u-threshold  -x uthreshold        upper threshold of connections\n";
    s += "  --l-threshold  -y lthreshold        lower threshold of connections\n";
    s += "  --synproxy     -j                   SYN proxy (SYN cookies) for the service\n";
    s += "  --toa          on|off               pass the client address in a TCP option\n";
    s += "  --proxy-protocol v1|v2|off          pass the client address in a PROXY header\n";
    s += "  --uoa          opp|ipo|off          pass the client address in UOA (UDP)\n";
    s += "  --laddr        -z local-address     local address (FULLNAT/SNAT)\n";
    s += "  --ifname       -F ifname            port that owns the local address\n";
    s += "  --blklst       -k address[/len]     blacklist entry (dropped before any state)\n";
    s += "  --whtlst       -2 address[/len]     whitelist entry (non-empty list: only these)\n";
    s += "  --conn-rate    N                    new connections per second, 0 = no cap\n";
    s += "  --connection   -c                   output of current connections\n";
    s += "  --timeout                           output of timeout (tcp tcpfin udp)\n";
    s += "  --stats                             output of statistics information\n";
    s += "  --rate                              output of rate information\n";
    s += "  --exact                             expand numbers (display exact values)\n";
    s += "  --thresholds                        output of thresholds information\n";
    s += "  --persistent-conn                   output of persistent connection info\n";
    s += "  --nosort                            disable sorting output of service/server entries\n";
    s += "  --sort                              does nothing, for backwards compatibility\n";
    s += "  --ops          -o                   one-packet scheduling\n";
    s += "  --numeric      -n                   numeric output (always: xvsadm does no DNS)\n";
    s += "  --socket       path                 xvsd control socket (default $XVS_SOCKET or\n";
    s += "                                      /run/xvs/xvs.sock)\n";
    return s;
}

}  // namespace xvs::ctl
