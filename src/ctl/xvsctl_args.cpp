// xvsctl argument parsing. Keywords match on any prefix, tried in a fixed order as iproute2's
// matches() does, so `a` is address, `r` route, `n` neighbour and `s` show (or stats, as an
// object). Values are validated here so a bad command never reaches xvsd.
#include "ctl/xvsctl_args.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string_view>

namespace xvs::ctl {

namespace {

// `word` abbreviates `keyword` (iproute2's matches()).
bool matches(std::string_view word, std::string_view keyword) {
    return !word.empty() && keyword.starts_with(word);
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string lower(std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

std::string upper(std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return s;
}

// Decimal digits only (no sign, no spaces), at most `max`.
std::optional<uint64_t> parse_number(std::string_view text, uint64_t max) {
    if (text.empty()) return std::nullopt;
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v > max) return std::nullopt;
    return v;
}

// The IPVS state names a connection can show (docs/control-protocol.md, `conns`).
constexpr std::array<std::string_view, 13> kConnStates{
    "NONE",  "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT", "TIME_WAIT", "CLOSE",
    "CLOSE_WAIT", "LAST_ACK", "LISTEN", "SYNACK", "UDP", "ICMP"};

// The words after OBJECT, consumed left to right.
class Words {
public:
    Words(const std::vector<std::string>& args, size_t first) : args_(args), i_(first) {}
    bool done() const { return i_ >= args_.size(); }
    const std::string& peek() const { return args_[i_]; }
    const std::string& take() { return args_[i_++]; }
    // The value after keyword `key`, or an error naming it.
    Result<std::string> value_of(const std::string& key) {
        if (done()) return make_error("missing value after " + quoted(key));
        return take();
    }

private:
    const std::vector<std::string>& args_;
    size_t i_;
};

enum class Verb { Show, Add, Del, Help };

// The command word after OBJECT; none means show, as in iproute2.
Result<Verb> take_verb(Words& w, std::string_view object) {
    if (w.done()) return Verb::Show;
    const std::string& word = w.peek();
    if (word.starts_with("-")) return Verb::Show;  // `link -s`
    Verb verb;
    if (matches(word, "add")) verb = Verb::Add;
    else if (matches(word, "delete")) verb = Verb::Del;
    else if (matches(word, "show") || matches(word, "list") || matches(word, "lst"))
        verb = Verb::Show;
    else if (matches(word, "help")) verb = Verb::Help;
    else return make_error("unknown command " + quoted(word) + " for " + quoted(object));
    w.take();
    return verb;
}

Result<void> unknown_argument(const std::string& word, std::string_view what) {
    return make_error("unknown argument " + quoted(word) + " for " + quoted(what));
}

Result<void> no_more_words(Words& w, std::string_view what) {
    if (!w.done()) return unknown_argument(w.peek(), what);
    return {};
}

Result<void> only_verbs(Words& w, CtlCommand& c, std::string_view object, CtlCommandKind show) {
    auto verb = take_verb(w, object);
    if (!verb) return make_error(verb.error());
    if (*verb == Verb::Help) {
        c.kind = CtlCommandKind::Help;
        return {};
    }
    if (*verb != Verb::Show)
        return make_error(quoted(object) + " supports only \"show\"");
    c.kind = show;
    return {};
}

// "ADDR" or "ADDR/LEN", ADDR IPv4 or IPv6 (LEN up to 32 or 128).
struct AddrArg {
    net::InetAddr addr;
    std::optional<uint8_t> len;
};

Result<AddrArg> parse_addr_arg(const std::string& text) {
    size_t slash = text.find('/');
    auto addr = net::parse_inet(std::string_view(text).substr(0, slash));
    if (!addr) return make_error("invalid address " + quoted(text));
    AddrArg a{*addr, std::nullopt};
    if (slash != std::string::npos) {
        auto len = parse_number(std::string_view(text).substr(slash + 1), net::family_bits(*addr));
        if (!len) return make_error("invalid prefix length in " + quoted(text));
        a.len = static_cast<uint8_t>(*len);
    }
    return a;
}

// "default", "ADDR/LEN" or "ADDR" (= /32 or /128) of either family; host bits must be zero,
// as iproute2 insists. "default" is 0.0.0.0/0 here; parse_route makes it ::/0 when the
// gateway is IPv6.
Result<net::InetPrefix> parse_route_prefix(const std::string& text) {
    if (text == "default") return net::InetPrefix(net::Ipv4Prefix{});
    auto a = parse_addr_arg(text);
    if (!a) return make_error("invalid prefix " + quoted(text));
    const auto len = static_cast<uint8_t>(a->len.value_or(net::family_bits(a->addr)));
    const net::InetPrefix masked = net::InetPrefix::masked(a->addr, len);
    if (masked.addr != a->addr)
        return make_error("invalid prefix " + quoted(text) + " for its length (did you mean " +
                          net::to_string(masked) + "?)");
    return masked;
}

Result<void> parse_link(Words& w, CtlCommand& c) {
    if (auto r = only_verbs(w, c, "link", CtlCommandKind::LinkShow); !r) return r;
    while (!w.done()) {
        const std::string& word = w.take();
        if (word == "-s" || word == "-stats" || word == "--stats") c.link_stats = true;
        else return unknown_argument(word, "link show");
    }
    return {};
}

Result<void> parse_addr(Words& w, CtlCommand& c) {
    auto verb = take_verb(w, "address");
    if (!verb) return make_error(verb.error());
    switch (*verb) {
        case Verb::Help: c.kind = CtlCommandKind::Help; return {};
        case Verb::Show: c.kind = CtlCommandKind::AddrShow; return no_more_words(w, "address show");
        case Verb::Add: c.kind = CtlCommandKind::AddrAdd; break;
        case Verb::Del: c.kind = CtlCommandKind::AddrDel; break;
    }
    const char* what = c.kind == CtlCommandKind::AddrAdd ? "address add" : "address delete";
    bool have_addr = false;
    while (!w.done()) {
        const std::string& word = w.take();
        if (word == "dev") {
            if (!c.ifname.empty()) return make_error("duplicate \"dev\"");
            auto name = w.value_of(word);
            if (!name) return make_error(name.error());
            c.ifname = *name;
        } else if (!have_addr) {
            auto a = parse_addr_arg(word);
            if (!a) return make_error(a.error());
            c.addr = a->addr;
            c.prefix_len = a->len;
            have_addr = true;
        } else {
            return unknown_argument(word, what);
        }
    }
    if (!have_addr) return make_error(std::string("missing address for ") + quoted(what));
    if (c.ifname.empty())
        return make_error("not enough information: \"dev\" argument is required");
    if (c.kind == CtlCommandKind::AddrAdd) {
        const unsigned bits = net::family_bits(c.addr);
        if (!c.prefix_len) c.prefix_len = static_cast<uint8_t>(bits);  // as `ip addr add` does
        if (*c.prefix_len == 0)
            return make_error("prefix length of an address must be 1.." + std::to_string(bits));
    }
    return {};
}

Result<void> parse_route(Words& w, CtlCommand& c) {
    auto verb = take_verb(w, "route");
    if (!verb) return make_error(verb.error());
    switch (*verb) {
        case Verb::Help: c.kind = CtlCommandKind::Help; return {};
        case Verb::Show: c.kind = CtlCommandKind::RouteShow; return no_more_words(w, "route show");
        case Verb::Add: c.kind = CtlCommandKind::RouteAdd; break;
        case Verb::Del: c.kind = CtlCommandKind::RouteDel; break;
    }
    bool add = c.kind == CtlCommandKind::RouteAdd;
    const char* what = add ? "route add" : "route delete";
    bool have_prefix = false;
    bool is_default = false;
    while (!w.done()) {
        const std::string& word = w.take();
        if (add && word == "via") {
            if (c.gateway) return make_error("duplicate \"via\"");
            auto gw = w.value_of(word);
            if (!gw) return make_error(gw.error());
            auto a = net::parse_inet(*gw);
            if (!a) return make_error("invalid gateway " + quoted(*gw));
            c.gateway = *a;
        } else if (add && word == "dev") {
            if (!c.ifname.empty()) return make_error("duplicate \"dev\"");
            auto name = w.value_of(word);
            if (!name) return make_error(name.error());
            c.ifname = *name;
        } else if (!have_prefix) {
            auto p = parse_route_prefix(word);
            if (!p) return make_error(p.error());
            c.prefix = *p;
            have_prefix = true;
            is_default = word == "default";
        } else {
            return unknown_argument(word, what);
        }
    }
    if (!have_prefix) return make_error(std::string("missing prefix for ") + quoted(what));
    if (is_default && c.gateway && !c.gateway->is_v4())
        c.prefix = net::InetPrefix(net::InetAddr{}, 0);  // ::/0, as `ip -6 route add default`
    if (c.gateway && c.gateway->is_v4() != c.prefix.is_v4())
        return make_error("gateway " + net::to_string(*c.gateway) + " is not of the family of " +
                          net::to_string(c.prefix));
    if (add && c.ifname.empty())
        return make_error("not enough information: \"dev\" argument is required");
    return {};
}

Result<void> parse_neigh(Words& w, CtlCommand& c) {
    if (auto r = only_verbs(w, c, "neigh", CtlCommandKind::NeighShow); !r) return r;
    return no_more_words(w, "neigh show");
}

Result<void> parse_check(Words& w, CtlCommand& c) {
    if (auto r = only_verbs(w, c, "check", CtlCommandKind::CheckShow); !r) return r;
    return no_more_words(w, "check show");
}

Result<void> parse_feedback(Words& w, CtlCommand& c) {
    if (auto r = only_verbs(w, c, "feedback", CtlCommandKind::FeedbackShow); !r) return r;
    return no_more_words(w, "feedback show");
}

// sync [show] | sync takeover | sync release (keepalived notify_master / notify_backup).
Result<void> parse_sync(Words& w, CtlCommand& c) {
    c.kind = CtlCommandKind::SyncShow;
    if (w.done()) return {};
    const std::string& verb = w.take();
    if (verb == "show" || verb == "list")
        c.kind = CtlCommandKind::SyncShow;
    else if (verb == "takeover")
        c.kind = CtlCommandKind::SyncTakeover;
    else if (verb == "release")
        c.kind = CtlCommandKind::SyncRelease;
    else if (verb == "help")
        c.kind = CtlCommandKind::Help;
    else
        return make_error("sync: unknown command " + quoted(verb) + " (show|takeover|release)");
    return no_more_words(w, "sync " + verb);
}

Result<void> parse_announce(Words& w, CtlCommand& c) {
    if (auto r = only_verbs(w, c, "announce", CtlCommandKind::AnnounceShow); !r) return r;
    return no_more_words(w, "announce show");
}

Result<void> parse_stats(Words& w, CtlCommand& c) {
    if (auto r = only_verbs(w, c, "stats", CtlCommandKind::Stats); !r) return r;
    while (!w.done()) {
        const std::string& word = w.take();
        if (word == "-a" || word == "-all" || word == "--all") c.all_counters = true;
        else if (word == "-w" || word == "-workers" || word == "--workers") c.per_worker = true;
        else return unknown_argument(word, "stats");
    }
    return {};
}

// client/vip/dest: "a.b.c.d", "a.b.c.d:port", an IPv6 address (bare or in brackets) or
// "[v6]:port", written back canonically.
Result<std::string> parse_conn_addr(const std::string& key, const std::string& text) {
    if (auto ep = net::parse_inet_endpoint(text)) return net::to_string(*ep);
    if (auto a = net::parse_inet(net::strip_brackets(text))) return net::to_string(*a);
    return make_error("invalid " + key + " " + quoted(text) +
                      " (expected A.B.C.D, A.B.C.D:PORT, an IPv6 address or [IPV6]:PORT)");
}

bool is_conn_filter(std::string_view word) {
    return word == "proto" || word == "client" || word == "vip" || word == "dest" ||
           word == "state" || word == "limit";
}

// `conn flush dest A.B.C.D:PORT`: expire every connection to that real server now.
Result<void> parse_conn_flush(Words& w, CtlCommand& c) {
    c.kind = CtlCommandKind::ConnFlush;
    if (w.done() || w.peek() != "dest")
        return make_error("\"conn flush\" needs \"dest A.B.C.D:PORT\" (or [IPV6]:PORT)");
    auto value = w.value_of(w.take());
    if (!value) return make_error(value.error());
    auto ep = net::parse_inet_endpoint(*value);
    if (!ep)
        return make_error("invalid dest " + quoted(*value) +
                          " (expected A.B.C.D:PORT or [IPV6]:PORT)");
    c.filter.dest = net::to_string(*ep);
    return no_more_words(w, "conn flush");
}

Result<void> parse_conn(Words& w, CtlCommand& c) {
    if (!w.done() && matches(w.peek(), "flush")) {
        w.take();
        return parse_conn_flush(w, c);
    }
    // `conn client X` means `conn show client X`: filter words are never verbs.
    if (!w.done() && is_conn_filter(w.peek())) c.kind = CtlCommandKind::ConnShow;
    else if (auto r = only_verbs(w, c, "conn", CtlCommandKind::ConnShow); !r) return r;
    ConnFilter& f = c.filter;
    while (!w.done()) {
        const std::string key = w.take();
        std::string* slot = key == "proto"    ? &f.proto
                            : key == "client" ? &f.client
                            : key == "vip"    ? &f.vip
                            : key == "dest"   ? &f.dest
                            : key == "state"  ? &f.state
                                              : nullptr;
        if (!is_conn_filter(key)) return unknown_argument(key, "conn show");
        if ((slot && !slot->empty()) || (!slot && f.limit)) return make_error("duplicate " + quoted(key));
        auto value = w.value_of(key);
        if (!value) return make_error(value.error());
        if (key == "proto") {
            f.proto = lower(*value);
            if (f.proto != "tcp" && f.proto != "udp" && f.proto != "icmp")
                return make_error("invalid proto " + quoted(*value) + " (expected tcp, udp or icmp)");
        } else if (key == "state") {
            f.state = upper(*value);
            if (std::find(kConnStates.begin(), kConnStates.end(), f.state) == kConnStates.end())
                return make_error("invalid state " + quoted(*value));
        } else if (key == "limit") {
            auto n = parse_number(*value, UINT32_MAX);
            if (!n || *n == 0) return make_error("invalid limit " + quoted(*value) + " (expected 1..4294967295)");
            f.limit = static_cast<uint32_t>(*n);
        } else {
            auto a = parse_conn_addr(key, *value);
            if (!a) return make_error(a.error());
            *slot = *a;
        }
    }
    return {};
}

// capture [rx|tx|drop [REASON]] [port|dev NAME] [filter EXPR] -w FILE [-c N] [-t SECONDS]
Result<void> parse_capture(Words& w, CtlCommand& c) {
    c.kind = CtlCommandKind::Capture;
    CaptureArgs& a = c.capture;
    bool have_point = false;
    while (!w.done()) {
        const std::string word = w.take();
        if (!have_point && (word == "rx" || word == "tx" || word == "drop")) {
            a.point = word;
            have_point = true;
            if (word == "drop" && !w.done() && w.peek().starts_with("drop_")) a.reason = w.take();
        } else if (word == "port" || word == "dev") {
            auto v = w.value_of(word);
            if (!v) return make_error(v.error());
            a.ifname = *v;
        } else if (word == "filter") {
            auto v = w.value_of(word);
            if (!v) return make_error(v.error());
            a.filter = *v;
        } else if (word == "-w") {
            auto v = w.value_of(word);
            if (!v) return make_error(v.error());
            a.file = *v;
        } else if (word == "-c" || word == "-t") {
            auto v = w.value_of(word);
            if (!v) return make_error(v.error());
            auto n = parse_number(*v, word == "-c" ? 1'000'000'000 : 86'400);
            if (!n || *n == 0)
                return make_error("invalid " + quoted(word) + " value " + quoted(*v) +
                                  (word == "-c" ? " (frames, 1 or more)" : " (seconds, 1 to 86400)"));
            (word == "-c" ? a.count : a.seconds) = *n;
        } else {
            return unknown_argument(word, "capture");
        }
    }
    if (a.file.empty()) return make_error("capture needs \"-w FILE\" (a pcap file, or - for stdout)");
    return {};
}

}  // namespace

Result<CtlCommand> parse_xvsctl_args(const std::vector<std::string>& args) {
    CtlCommand c;
    size_t i = 0;
    for (; i < args.size() && args[i].starts_with("-"); ++i) {
        const std::string& a = args[i];
        if (a == "--socket" || a.starts_with("--socket=")) {
            if (a == "--socket" && i + 1 < args.size()) c.socket_path = args[++i];
            else c.socket_path = a.substr(std::min(a.size(), std::string_view("--socket=").size()));
            if (c.socket_path.empty()) return make_error("option \"--socket\" requires a path");
        } else if (a == "-s" || a == "-stats" || a == "--stats") {
            c.link_stats = true;
        } else if (a == "-h" || a == "-help" || a == "--help") {
            c.kind = CtlCommandKind::Help;
            return c;
        } else if (a == "-v" || a == "-V" || a == "-version" || a == "--version") {
            c.kind = CtlCommandKind::Version;
            return c;
        } else {
            return make_error("unknown option " + quoted(a));
        }
    }
    if (i >= args.size()) return make_error("no object given");

    const std::string& object = args[i];
    Words w(args, i + 1);
    Result<void> r;
    // Order matters for abbreviations: `a` is address, `s` stats, `c` conn.
    if (matches(object, "address")) r = parse_addr(w, c);
    else if (matches(object, "link")) r = parse_link(w, c);
    else if (matches(object, "route")) r = parse_route(w, c);
    else if (matches(object, "neighbour") || matches(object, "neighbor")) r = parse_neigh(w, c);
    else if (matches(object, "stats")) r = parse_stats(w, c);
    else if (matches(object, "connection") || object == "conns") r = parse_conn(w, c);
    else if (object.size() >= 2 && matches(object, "check")) r = parse_check(w, c);
    else if (matches(object, "feedback")) r = parse_feedback(w, c);
    else if (object.size() >= 2 && matches(object, "sync")) r = parse_sync(w, c);
    else if (object.size() >= 2 && matches(object, "announce")) r = parse_announce(w, c);
    else if (object.size() >= 2 && matches(object, "capture")) r = parse_capture(w, c);
    else if (matches(object, "help")) c.kind = CtlCommandKind::Help;
    else return make_error("unknown object " + quoted(object));
    if (!r) return make_error(r.error());
    return c;
}

std::string xvsctl_usage_text() {
    return "Usage: xvsctl [OPTIONS] OBJECT [COMMAND [ARGUMENTS]]\n"
           "\n"
           "  xvsctl link show [-s|--stats]\n"
           "  xvsctl addr show\n"
           "  xvsctl addr add ADDR[/LEN] dev IFNAME\n"
           "  xvsctl addr del ADDR[/LEN] dev IFNAME\n"
           "  xvsctl route show\n"
           "  xvsctl route add PREFIX|default [via GATEWAY] dev IFNAME\n"
           "  xvsctl route del PREFIX|default\n"
           "  xvsctl neigh show\n"
           "  xvsctl stats [-a|--all] [-w|--workers]\n"
           "  xvsctl conn show [proto tcp|udp|icmp] [client ENDPOINT] [vip ENDPOINT]\n"
           "                   [dest ENDPOINT] [state STATE] [limit N]\n"
           "  xvsctl conn flush dest ADDR:PORT\n"
           "  xvsctl check show\n"
           "  xvsctl feedback show\n"
           "  xvsctl sync [show|takeover|release]\n"
           "  xvsctl announce show\n"
           "  xvsctl capture [rx|tx|drop [REASON]] [port IFNAME] [filter EXPR] -w FILE\n"
           "                 [-c COUNT] [-t SECONDS]\n"
           "\n"
           "ADDR is IPv4 (A.B.C.D) or IPv6 (2001:db8::1), LEN up to 32 or 128; an ENDPOINT is\n"
           "ADDR or ADDR:PORT, IPv6 in brackets with a port ([2001:db8::1]:80). default is\n"
           "0.0.0.0/0, or ::/0 with an IPv6 gateway.\n"
           "\n"
           "Objects and commands may be abbreviated as with ip(8): a, l, r, n, s, c; show\n"
           "(or list), add, del.\n"
           "\n"
           "Options:\n"
           "  --socket PATH   xvsd control socket (default $XVS_SOCKET, else /run/xvs/xvs.sock)\n"
           "  -s, --stats     with link show: RX/TX counters\n"
           "  -h, --help      this text\n"
           "  -v, --version   version\n"
           "\n"
           "stats prints the non-zero data-plane counters, drop reasons separately; -a prints\n"
           "all of them; -w adds a column per worker next to the total.\n"
           "\n"
           "capture writes the frames a worker receives on a port (rx), hands to a port (tx) or\n"
           "drops (drop, or one drop_* reason) into a pcap file (- for stdout), EXPR in\n"
           "tcpdump's filter language, until COUNT frames, SECONDS or Ctrl-C.\n"
           "\n"
           "sync shows the session sync peers and counters (sync_defs); takeover makes this\n"
           "director answer ARP for its VIPs and its failed peers' local addresses (keepalived\n"
           "notify_master), release gives that back (notify_backup).\n";
}

}  // namespace xvs::ctl
