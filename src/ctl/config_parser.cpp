// Parser for xvs.conf. Keepalived's grammar is keyword-driven: a keyword's values are the
// tokens that follow it on the same line (never on the next one), a `{ }` block may follow.
// Parsing never stops at the first problem: a bad statement is reported and skipped, and the
// cross-reference checks (config_validate.cpp) run on whatever was parsed.
#include "ctl/config_parser.h"

#include <grp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <exception>
#include <set>

#include "ctl/config_keywords.h"
#include "ctl/config_lexer.h"
#include "ctl/config_validate.h"
#include "net/prefix_set.h"

namespace xvs::ctl {

namespace {

using namespace keywords;

constexpr uint32_t kMaxTimeout = 2678400;  // 31 days, ipvsadm's -p limit; also for timeouts
constexpr uint32_t kMaxWorkers = 16;

std::string upper(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return out;
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

// "A.B.C.D" or "A.B.C.D-E" or "A.B.C.D-A.B.C.E": a range in the last octet of one /24.
std::optional<std::pair<net::Ipv4, net::Ipv4>> parse_last_octet_range(std::string_view text) {
    size_t dash = text.find('-');
    auto first = net::parse_ipv4(text.substr(0, dash));
    if (!first) return std::nullopt;
    if (dash == std::string_view::npos) return std::make_pair(*first, *first);
    std::string_view rest = text.substr(dash + 1);
    net::Ipv4 last;
    if (rest.find('.') != std::string_view::npos) {
        auto addr = net::parse_ipv4(rest);
        if (!addr) return std::nullopt;
        last = *addr;
    } else {
        unsigned octet = 0;
        auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), octet);
        if (rest.empty() || rest.size() > 3 || ec != std::errc() ||
            p != rest.data() + rest.size() || octet > 255)
            return std::nullopt;
        last = net::Ipv4::from_host((first->host() & 0xffffff00u) | octet);
    }
    if ((last.host() & 0xffffff00u) != (first->host() & 0xffffff00u)) return std::nullopt;
    if (last.host() < first->host()) return std::nullopt;
    return std::make_pair(*first, last);
}

// The id of group `name` from the system's group database, if it has one.
std::optional<uint32_t> group_id(const std::string& name) {
    long hint = sysconf(_SC_GETGR_R_SIZE_MAX);
    std::vector<char> buf(hint > 0 ? static_cast<size_t>(hint) : 4096);
    for (;;) {
        group grp{};
        group* found = nullptr;
        int rc = getgrnam_r(name.c_str(), &grp, buf.data(), buf.size(), &found);
        if (rc == ERANGE && buf.size() < (size_t{1} << 20)) {
            buf.resize(buf.size() * 2);
            continue;
        }
        if (rc != 0 || !found) return std::nullopt;
        return static_cast<uint32_t>(found->gr_gid);
    }
}

std::string endpoint_text(net::Ipv4 addr, uint16_t port) {
    return net::to_string(addr) + ":" + std::to_string(port);
}
class Parser {
  public:
    Parser(const TokenStream& ts, Diagnostics& diag) : ts_(ts), diag_(diag) {}

    ParsedConfig run() {
        while (const Token* tok = peek()) {
            if (tok->kind == TokenKind::RBrace) {
                error(*tok, "unexpected '}'");
                ++pos_;
                continue;
            }
            if (tok->kind == TokenKind::LBrace) {
                error(*tok, "unexpected '{'");
                skip_block();
                continue;
            }
            const Token& kw = take();
            top_level(kw);
        }
        return ParsedConfig{std::move(cfg_), std::move(pending_), std::move(port_refs_),
                            std::move(laddr_locs_)};
    }

  private:
    // ---- token helpers ------------------------------------------------------------------
    const Token* peek() const { return pos_ < ts_.tokens.size() ? &ts_.tokens[pos_] : nullptr; }
    const Token& take() { return ts_.tokens[pos_++]; }
    SourceLoc loc(const Token& tok) const { return SourceLoc{ts_.file_of(tok), tok.line}; }
    static bool same_line(const Token& a, const Token& b) {
        return a.file == b.file && a.line == b.line;
    }
    static bool is_value(const Token& tok) {
        return tok.kind == TokenKind::Word || tok.kind == TokenKind::String;
    }

    void error(const Token& tok, std::string_view message) {
        diag_.error(ts_.file_of(tok), tok.line, message);
    }
    void error(const SourceLoc& at, std::string_view message) {
        diag_.error(at.file, at.line, message);
    }
    void warning(const Token& tok, std::string_view message) {
        diag_.warning(ts_.file_of(tok), tok.line, message);
    }
    void warning(const SourceLoc& at, std::string_view message) {
        diag_.warning(at.file, at.line, message);
    }

    // Is there another value of `kw`'s statement (same line, not a brace)?
    bool has_value(const Token& kw) const {
        const Token* next = peek();
        return next && is_value(*next) && same_line(*next, kw);
    }

    // The next value of `kw`'s statement, or an error "KW: missing value".
    const Token* value(const Token& kw) {
        if (!has_value(kw)) {
            error(kw, kw.text + ": missing value");
            return nullptr;
        }
        return &take();
    }

    // Skips a `{ ... }` block starting at the current `{`.
    void skip_block() {
        const Token& open = take();
        int depth = 1;
        while (const Token* tok = peek()) {
            ++pos_;
            if (tok->kind == TokenKind::LBrace) ++depth;
            if (tok->kind == TokenKind::RBrace && --depth == 0) return;
        }
        error(open, "missing '}' at end of file");
    }

    // Skips the rest of `kw`'s statement: its values and a block that follows.
    void skip_statement(const Token& kw) {
        while (has_value(kw)) ++pos_;
        const Token* next = peek();
        if (next && next->kind == TokenKind::LBrace) skip_block();
    }

    static std::string refusal(std::string_view name, const Keyword& row) {
        return quoted(name) + " is not supported yet (" + std::string(row.note) + "): remove it";
    }

    // `block` is the keyword table's block name (config_keywords.h).
    void unknown(const Token& kw, std::string_view block) {
        const Keyword* row = keyword_find(block, kw.text);
        if (row && row->cls == KeywordClass::Applied) {
            // The table and the grammar disagree: a bug of xvs, not of the configuration.
            error(kw, "internal error: " + quoted(kw.text) + " is listed as applied in " +
                          std::string(block) + " but the parser does not handle it");
        } else {
            error(kw, "unknown keyword " + quoted(kw.text) +
                          (block == "top" ? " at top level" : " in " + std::string(block)));
        }
        skip_statement(kw);
    }

    // The table decides: refused and ignored keywords are reported and skipped, never
    // stored; so is a keyword it does not list (unknown), even where the grammar below would
    // know it, so that a keyword cannot exist without its row. Returns false for applied ones
    // (the grammar handles them). `entries`: the block holds entries, not only keywords
    // (virtual_server_group), so an unlisted word is left to the grammar.
    bool classified(const Token& kw, std::string_view block, bool entries = false) {
        const Keyword* row = keyword_find(block, kw.text);
        if (!row) {
            if (entries) return false;
            unknown(kw, block);
            return true;
        }
        if (row->cls == KeywordClass::Applied) return false;
        if (row->cls == KeywordClass::Refused) {
            error(kw, refusal(kw.text, *row));
        } else if (warned_.insert(kw.text).second) {
            warning(kw, quoted(kw.text) + " ignored: " + std::string(row->note) +
                            " (keepalived setting; warned once)");
        }
        skip_statement(kw);
        return true;
    }

    bool open_block(const Token& kw) {
        const Token* next = peek();
        if (next && next->kind == TokenKind::LBrace) {
            ++pos_;
            return true;
        }
        error(kw, kw.text + ": expected '{'");
        skip_statement(kw);
        return false;
    }

    // Runs `on_keyword` for each statement of the block opened by `opener` (the `{` already
    // consumed) until its `}`.
    template <typename F>
    void block_body(const Token& opener, F&& on_keyword) {
        while (const Token* tok = peek()) {
            if (tok->kind == TokenKind::RBrace) {
                ++pos_;
                return;
            }
            if (tok->kind == TokenKind::LBrace) {
                error(*tok, "unexpected '{'");
                skip_block();
                continue;
            }
            on_keyword(take());
        }
        error(opener, opener.text + ": missing '}' at end of file");
    }

    template <typename F>
    void block(const Token& opener, F&& on_keyword) {
        if (open_block(opener)) block_body(opener, on_keyword);
    }

    std::optional<uint32_t> number(const Token& kw, const Token& val, uint64_t min, uint64_t max) {
        uint64_t n = 0;
        const std::string& s = val.text;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
        if (s.empty() || p != s.data() + s.size() ||
            (ec != std::errc() && ec != std::errc::result_out_of_range)) {
            error(val, kw.text + ": " + quoted(s) + " is not a number");
            return std::nullopt;
        }
        if (ec == std::errc::result_out_of_range || n < min || n > max) {
            error(val, kw.text + ": " + s + " out of range " + std::to_string(min) + ".." +
                           std::to_string(max));
            return std::nullopt;
        }
        return static_cast<uint32_t>(n);
    }

    std::optional<uint32_t> number_value(const Token& kw, uint64_t min, uint64_t max) {
        const Token* val = value(kw);
        return val ? number(kw, *val, min, max) : std::nullopt;
    }

    std::optional<net::Ipv4> ipv4_value(const Token& kw) {
        const Token* val = value(kw);
        if (!val) return std::nullopt;
        auto addr = net::parse_ipv4(val->text);
        if (!addr) error(*val, kw.text + ": bad IPv4 address " + quoted(val->text));
        return addr;
    }

    std::optional<uint16_t> port_value(const Token& kw) {
        const Token* val = value(kw);
        if (!val) return std::nullopt;
        uint32_t port = 0;
        auto [p, ec] = std::from_chars(val->text.data(), val->text.data() + val->text.size(), port);
        if (val->text.empty() || ec != std::errc() || p != val->text.data() + val->text.size() ||
            port > 65535) {
            error(*val, kw.text + ": bad port " + quoted(val->text) + " (0..65535)");
            return std::nullopt;
        }
        return static_cast<uint16_t>(port);
    }

    // Value from a fixed list of words; reports "KW: bad value 'X' (a|b|c)".
    template <typename T, size_t N>
    std::optional<T> choice(const Token& kw,
                            const std::array<std::pair<std::string_view, T>, N>& options,
                            bool ignore_case = false) {
        const Token* val = value(kw);
        if (!val) return std::nullopt;
        std::string text = ignore_case ? upper(val->text) : val->text;
        std::string names;
        for (const auto& [name, result] : options) {
            if ((ignore_case ? upper(name) : std::string(name)) == text) return result;
            names += (names.empty() ? "" : "|") + std::string(name);
        }
        error(*val, kw.text + ": bad value " + quoted(val->text) + " (" + names + ")");
        return std::nullopt;
    }

    void ref_port(const Token& val, std::string context) {
        port_refs_.push_back(PortRef{val.text, std::move(context), loc(val)});
    }

    // ---- sections -----------------------------------------------------------------------
    void top_level(const Token& kw) {
        const std::string& k = kw.text;
        if (classified(kw, "top")) return;
        if (k == "global_defs")
            block(kw, [&](const Token& t) { global_defs(t); });
        else if (k == "netif_defs")
            block(kw, [&](const Token& t) { netif_defs(t); });
        else if (k == "worker_defs")
            block(kw, [&](const Token& t) { worker_defs(t); });
        else if (k == "ip_defs")
            block(kw, [&](const Token& t) { ip_defs(t); });
        else if (k == "ipvs_defs")
            block(kw, [&](const Token& t) { ipvs_defs(t); });
        else if (k == "local_address_group")
            local_address_group(kw);
        else if (k == "virtual_server_group")
            virtual_server_group(kw);
        else if (k == "deny_address_group")
            deny_address_group(kw);
        else if (k == "virtual_server")
            virtual_server(kw);
        else
            unknown(kw, "top");
    }

    void global_defs(const Token& kw) {
        const std::string& k = kw.text;
        if (classified(kw, "global_defs")) return;
        if (k == "log_level") {
            static constexpr std::array<std::pair<std::string_view, LogLevel>, 4> kLevels = {
                {{"debug", LogLevel::Debug},
                 {"info", LogLevel::Info},
                 {"warning", LogLevel::Warning},
                 {"error", LogLevel::Error}}};
            if (auto level = choice(kw, kLevels)) cfg_.global.log_level = *level;
        } else if (k == "control_socket") {
            if (const Token* val = value(kw)) {
                if (val->text.starts_with('/'))
                    cfg_.global.control_socket = val->text;
                else
                    error(*val, k + ": " + quoted(val->text) + " is not an absolute path");
            }
        } else if (k == "control_socket_group") {
            if (const Token* val = value(kw)) {
                if (auto gid = group_id(val->text)) {
                    cfg_.global.control_socket_group = val->text;
                    cfg_.global.control_socket_gid = *gid;
                } else {
                    error(*val, k + ": no group " + quoted(val->text) +
                                    " on this system (getent group lists them)");
                }
            }
        } else if (k == "lvs_timeouts") {
            // keepalived's global form of ipvsadm --set: `lvs_timeouts tcp N tcpfin N udp N`.
            if (!has_value(kw)) error(kw, k + ": missing value");
            while (has_value(kw)) timeout_setting(take());
        } else {
            unknown(kw, "global_defs");
        }
    }

    void netif_defs(const Token& kw) {
        if (classified(kw, "netif_defs")) return;
        if (kw.text == "eal_args") {
            if (const Token* val = value(kw)) cfg_.netif.eal_args = val->text;
        } else if (kw.text == "mbufs_per_port") {
            // The lower bound depends on `workers` (maybe not parsed yet): config_validate.
            if (auto n = number_value(kw, 1, kMbufsPerPortMax)) {
                cfg_.netif.mbufs_per_port = *n;
                cfg_.netif.mbufs_per_port_loc = loc(kw);
            }
        } else if (kw.text == "port") {
            const Token* name = value(kw);
            PortDef port;
            port.loc = loc(kw);
            if (name) port.name = name->text;
            bool dev_seen = false;
            block(kw, [&](const Token& t) {
                if (classified(t, "port")) return;
                if (t.text == "dev") {
                    if (const Token* val = value(t)) {
                        port.dev = val->text;
                        dev_seen = true;
                    }
                } else if (t.text == "mtu") {
                    if (auto mtu = number_value(t, 68, 9216)) port.mtu = *mtu;
                } else {
                    unknown(t, "port");
                }
            });
            if (!name) return;
            if (const PortDef* prev = cfg_.find_port(port.name)) {
                error(kw, "port " + quoted(port.name) + " already defined at " + prev->loc.file +
                              ":" + std::to_string(prev->loc.line));
                return;
            }
            if (!dev_seen) error(kw, "port " + quoted(port.name) + ": dev missing");
            cfg_.netif.ports.push_back(std::move(port));
        } else {
            unknown(kw, "netif_defs");
        }
    }

    void worker_defs(const Token& kw) {
        if (classified(kw, "worker_defs")) return;
        if (kw.text == "workers") {
            if (auto n = number_value(kw, 1, kMaxWorkers)) {
                cfg_.worker.workers = *n;
                cfg_.worker.workers_loc = loc(kw);
            }
        } else if (kw.text == "poll_mode") {
            static constexpr std::array<std::pair<std::string_view, PollMode>, 2> kModes = {
                {{"busy", PollMode::Busy}, {"adaptive", PollMode::Adaptive}}};
            if (auto mode = choice(kw, kModes)) cfg_.worker.poll_mode = *mode;
        } else {
            unknown(kw, "worker_defs");
        }
    }

    // `dev PORT` (and `via GW` for routes) options after the prefix of address/route.
    void ip_options(const Token& kw, std::optional<std::string>& dev, std::optional<net::Ipv4>* via,
                    bool& ok) {
        while (has_value(kw)) {
            const Token& opt = take();
            if (opt.text == "dev") {
                if (const Token* val = value(opt)) {
                    dev = val->text;
                    ref_port(*val, kw.text);
                } else
                    ok = false;
            } else if (opt.text == "via" && via) {
                if (auto gw = ipv4_value(opt))
                    *via = gw;
                else
                    ok = false;
            } else {
                error(opt, kw.text + ": unexpected " + quoted(opt.text));
                ok = false;
            }
        }
        if (!dev) {
            error(kw, kw.text + ": missing 'dev PORT'");
            ok = false;
        }
    }

    void ip_defs(const Token& kw) {
        const std::string& k = kw.text;
        if (classified(kw, "ip_defs")) return;
        if (k != "address" && k != "route") return unknown(kw, "ip_defs");
        const Token* val = value(kw);
        if (!val) return skip_statement(kw);
        bool ok = true;
        auto prefix = net::parse_ipv4_prefix(val->text);
        std::optional<net::Ipv4> addr;
        if (k == "address") {
            addr =
                val->text == "default"
                    ? std::nullopt
                    : net::parse_ipv4(std::string_view(val->text).substr(0, val->text.find('/')));
        }
        if (!prefix || (k == "address" && !addr)) {
            error(*val, k + ": bad prefix " + quoted(val->text));
            ok = false;
        }
        std::optional<std::string> dev;
        std::optional<net::Ipv4> via;
        ip_options(kw, dev, k == "route" ? &via : nullptr, ok);
        if (!ok) return;
        if (k == "address")
            cfg_.ip.addresses.push_back(AddressDef{*addr, *prefix, *dev, loc(kw)});
        else
            cfg_.ip.routes.push_back(RouteDef{*prefix, via, *dev, loc(kw)});
    }

    // One `name seconds` pair of ipvs_defs timeouts / lvs_timeouts.
    void timeout_setting(const Token& key) {
        static constexpr std::array<std::pair<std::string_view, lb::TcpState>, 11> kStates = {
            {{"none", lb::TcpState::None},
             {"established", lb::TcpState::Established},
             {"syn_sent", lb::TcpState::SynSent},
             {"syn_recv", lb::TcpState::SynRecv},
             {"fin_wait", lb::TcpState::FinWait},
             {"time_wait", lb::TcpState::TimeWait},
             {"close", lb::TcpState::Close},
             {"close_wait", lb::TcpState::CloseWait},
             {"last_ack", lb::TcpState::LastAck},
             {"listen", lb::TcpState::Listen},
             {"synack", lb::TcpState::SynAck}}};
        static_assert(kStates.size() == lb::kTcpStateCount);
        lb::Timeouts& t = cfg_.ipvs.timeouts;
        uint32_t* slot = nullptr;
        // As ipvsadm --set: tcp = ESTABLISHED, tcpfin = FIN_WAIT.
        if (key.text == "tcp")
            slot = &t.tcp[static_cast<size_t>(lb::TcpState::Established)];
        else if (key.text == "tcpfin")
            slot = &t.tcp[static_cast<size_t>(lb::TcpState::FinWait)];
        else if (key.text == "udp")
            slot = &t.udp;
        for (const auto& [name, state] : kStates)
            if (key.text == name) slot = &t.tcp[static_cast<size_t>(state)];
        if (!slot) return unknown(key, "timeouts");
        if (auto n = number_value(key, 1, kMaxTimeout)) *slot = *n;
    }

    // A switch: bare (on) or followed by on|off on its line.
    std::optional<bool> switch_value(const Token& kw) {
        const Token* next = peek();
        if (!next || !is_value(*next) || !same_line(*next, kw) ||
            (next->text != "on" && next->text != "off"))
            return true;
        return take().text == "on";
    }

    // ipvs_defs { synproxy { ... } }: DPVS's dpvs.conf names (the synack_options block may be
    // written out or its keys given directly), plus the short forms `defer` and `syn_retry`.
    void synproxy_setting(const Token& t) {
        lb::SynProxyConf& c = cfg_.ipvs.synproxy;
        const std::string& k = t.text;
        if (classified(t, "synproxy")) return;
        if (k == "synack_options") {
            block(t, [&](const Token& o) { synproxy_setting(o); });
        } else if (k == "mss") {
            if (auto n = number_value(t, 536, 65535)) c.mss = static_cast<uint16_t>(*n);
        } else if (k == "ttl") {
            if (auto n = number_value(t, 1, 255)) c.ttl = static_cast<uint8_t>(*n);
        } else if (k == "sack") {
            if (auto on = switch_value(t)) c.sack = *on;
        } else if (k == "timestamp") {
            if (auto on = switch_value(t)) c.timestamp = *on;
        } else if (k == "wscale") {
            const Token* val = value(t);
            if (!val) return;
            if (val->text == "off")
                c.wscale = lb::kSynProxyNoWscale;
            else if (auto n = number(t, *val, 0, 14))  // RFC 7323 §2.3: at most 14
                c.wscale = static_cast<uint8_t>(*n);
        } else if (k == "defer_rs_syn" || k == "defer") {
            if (auto on = switch_value(t)) c.defer_rs_syn = *on;
        } else if (k == "rs_syn_max_retry" || k == "syn_retry") {
            if (auto n = number_value(t, 0, lb::kSynProxyMaxRetry)) c.rs_syn_max_retry = static_cast<uint8_t>(*n);
        } else if (k == "max_ack_saved") {
            if (auto n = number_value(t, 1, lb::kSynProxyMaxAckSaved)) c.max_ack_saved = static_cast<uint8_t>(*n);
        } else if (k == "ack_storm_thresh") {
            if (auto n = number_value(t, 1, 255)) c.ack_storm_thresh = static_cast<uint8_t>(*n);
        } else {
            unknown(t, "synproxy");
        }
    }

    void ipvs_defs(const Token& kw) {
        if (classified(kw, "ipvs_defs")) return;
        if (kw.text == "timeouts") {
            block(kw, [&](const Token& t) { timeout_setting(t); });
        } else if (kw.text == "conn_table_size") {
            if (auto n = number_value(kw, IpvsDefs::kConnTableSizeMin, IpvsDefs::kConnTableSizeMax))
                cfg_.ipvs.conn_table_size = *n;
        } else if (kw.text == "uoa_max_trail") {
            // DPVS's name (its `udp` block); a uint8 per connection counts it down.
            if (auto n = number_value(kw, 0, 255)) cfg_.ipvs.uoa_max_trail = *n;
        } else if (kw.text == "synproxy") {
            cfg_.ipvs.synproxy_set = true;
            block(kw, [&](const Token& t) { synproxy_setting(t); });
        } else {
            unknown(kw, "ipvs_defs");
        }
    }

    void local_address_group(const Token& kw) {
        const Token* name = value(kw);
        LocalAddressGroup group;
        group.loc = loc(kw);
        if (name) group.name = name->text;
        std::string context = "local_address_group " + quoted(group.name);
        std::vector<SourceLoc> locs;
        block(kw, [&](const Token& entry) {
            // Several `RANGE PORT` pairs may share a line.
            const Token* port = has_value(entry) ? &take() : nullptr;
            auto range = parse_last_octet_range(entry.text);
            if (!range) {
                error(entry, context + ": bad address range " + quoted(entry.text) +
                                 " (A.B.C.D or A.B.C.D-E within one /24)");
            }
            if (port)
                ref_port(*port, context);
            else
                error(entry, context + ": missing port name after " + quoted(entry.text));
            if (!range || !port) return;
            // uint64_t: a range ending at 255.255.255.255 must not wrap around.
            for (uint64_t h = range->first.host(); h <= range->second.host(); ++h) {
                group.addrs.push_back(
                    LocalAddress{net::Ipv4::from_host(static_cast<uint32_t>(h)), port->text});
                locs.push_back(loc(entry));
            }
        });
        if (!name) return;
        if (const LocalAddressGroup* prev = cfg_.find_laddr_group(group.name)) {
            error(kw, "local_address_group " + quoted(group.name) + " already defined at " +
                          prev->loc.file + ":" + std::to_string(prev->loc.line));
            return;
        }
        if (group.addrs.empty()) error(kw, context + ": no address");
        cfg_.laddr_groups.push_back(std::move(group));
        laddr_locs_.push_back(std::move(locs));
    }

    void virtual_server_group(const Token& kw) {
        const Token* name = value(kw);
        VirtualServerGroup group;
        group.loc = loc(kw);
        if (name) group.name = name->text;
        block(kw, [&](const Token& entry) {
            if (classified(entry, "virtual_server_group", /*entries=*/true)) return;
            auto range = parse_last_octet_range(entry.text);
            if (!range) {
                error(entry, "virtual_server_group " + quoted(group.name) + ": bad address range " +
                                 quoted(entry.text) + " (A.B.C.D or A.B.C.D-E within one /24)");
            }
            auto port = port_value(entry);  // several `RANGE PORT` pairs may share a line
            if (range && port)
                group.entries.push_back(
                    VsGroupEntry{range->first, range->second, *port, loc(entry)});
        });
        if (!name) return;
        for (const VirtualServerGroup& prev : cfg_.vs_groups) {
            if (prev.name == group.name) {
                error(kw, "virtual_server_group " + quoted(group.name) + " already defined at " +
                              prev.loc.file + ":" + std::to_string(prev.loc.line));
                return;
            }
        }
        cfg_.vs_groups.push_back(std::move(group));
    }

    void virtual_server(const Token& kw) {
        PendingVs p;
        p.vs.loc = loc(kw);
        const Token* first = value(kw);
        if (!first) {
            p.kind = PendingVs::Kind::Invalid;
        } else if (first->text == "group") {
            p.kind = PendingVs::Kind::Group;
            if (const Token* name = value(*first))
                p.group_name = name->text;
            else
                p.kind = PendingVs::Kind::Invalid;
        } else if (first->text == "match") {
            return match_server(kw, *first);
        } else if (first->text == "fwmark") {
            error(kw, refusal("fwmark", *keyword_find("virtual_server_group", "fwmark")));
            p.kind = PendingVs::Kind::Invalid;
            (void)number_value(*first, 1, UINT32_MAX);
        } else {
            auto vip = net::parse_ipv4(first->text);
            if (!vip) error(*first, "virtual_server: bad IPv4 address " + quoted(first->text));
            auto port = port_value(kw);
            if (vip && port) {
                p.vs.vip = *vip;
                p.vs.port = *port;
            } else {
                p.kind = PendingVs::Kind::Invalid;
            }
        }
        if (has_value(kw)) {
            error(peek() ? *peek() : kw, "virtual_server: unexpected " + quoted(peek()->text));
            while (has_value(kw)) ++pos_;
        }
        std::optional<SourceLoc> toa_loc;
        std::optional<SourceLoc> pp_loc;
        std::optional<SourceLoc> uoa_loc;
        block(kw, [&](const Token& t) { vs_keyword(t, p, toa_loc, pp_loc, uoa_loc); });

        VirtualServer& vs = p.vs;
        if (!p.proto_set) warning(kw, "protocol not set, using TCP");
        if (vs.toa && vs.proxy_protocol != ProxyProtocol::Off) {
            SourceLoc at = std::max(*toa_loc, *pp_loc, [](const SourceLoc& a, const SourceLoc& b) {
                return a.line < b.line;
            });
            error(at, "toa on cannot be combined with proxy_protocol " +
                          std::string(to_string(vs.proxy_protocol)));
        }
        if (vs.proxy_protocol == ProxyProtocol::V1 && p.proto_set && vs.proto != Proto::Tcp)
            error(*pp_loc, "proxy_protocol v1 has no UDP form (use v2)");
        if (vs.uoa != Uoa::Off && vs.proto != Proto::Udp) {
            error(*uoa_loc, "uoa " + std::string(to_string(vs.uoa)) +
                                " needs protocol UDP (TCP clients get toa or proxy_protocol)");
        } else if (vs.uoa != Uoa::Off && vs.proxy_protocol != ProxyProtocol::Off) {
            SourceLoc at = std::max(*uoa_loc, *pp_loc, [](const SourceLoc& a, const SourceLoc& b) {
                return a.line < b.line;
            });
            error(at, "uoa " + std::string(to_string(vs.uoa)) +
                          " cannot be combined with proxy_protocol " +
                          std::string(to_string(vs.proxy_protocol)));
        }
        if (vs.fwd == lb::FwdMode::FullNat && vs.laddr_group.empty() && !p.laddr_loc)
            error(kw, "virtual_server: laddr_group_name missing (required for lb_kind FNAT)");
        pending_.push_back(std::move(p));
    }

    // `lb_kind|lvs_method NAT|DR|TUN|FNAT|SNAT`, TUN with `[type ipip|gue] [port N]` after it
    // (keepalived's syntax; GUE needs the port, as IPVS does).
    void lb_kind(const Token& t, VirtualServer& vs) {
        static constexpr auto kMethods = [] {
            std::array<std::pair<std::string_view, lb::FwdMode>, lb::kFwdModeCount> a{};
            for (unsigned i = 0; i < lb::kFwdModeCount; ++i)
                a[i] = {lb::kFwdModeNames[i].keepalived, lb::kFwdModeNames[i].mode};
            return a;
        }();
        auto fwd = choice(t, kMethods, /*ignore_case=*/true);
        if (!fwd) return;
        vs.fwd = *fwd;
        bool port_given = false;
        while (has_value(t)) {
            const Token& opt = take();
            if (vs.fwd != lb::FwdMode::Tun) {
                error(opt, t.text + " " + std::string(lb::fwd_names(vs.fwd).keepalived) +
                               ": unexpected " + quoted(opt.text) + " (type and port are for TUN)");
                continue;
            }
            if (opt.text == "type") {
                static constexpr std::array<std::pair<std::string_view, lb::TunType>, 2> kTypes = {
                    {{"ipip", lb::TunType::Ipip}, {"gue", lb::TunType::Gue}}};
                const Token* val = peek();
                if (val && same_line(*val, t) && val->text == "gre") {
                    ++pos_;
                    error(*val, t.text + " TUN type gre is not supported: use type ipip or gue");
                    continue;
                }
                if (auto ty = choice(opt, kTypes)) vs.tun_type = *ty;
            } else if (opt.text == "port") {
                if (auto n = number_value(opt, 1, 65535)) {
                    vs.tun_port = static_cast<uint16_t>(*n);
                    port_given = true;
                }
            } else if (opt.text == "nocsum" || opt.text == "csum" || opt.text == "remcsum") {
                error(opt, t.text + " TUN " + opt.text +
                               " is not supported: xvs sends GUE with UDP checksum 0; remove it");
            } else {
                error(opt, t.text + " TUN: unexpected " + quoted(opt.text) +
                               " (type ipip|gue, port N)");
            }
        }
        if (vs.fwd == lb::FwdMode::Tun && vs.tun_type == lb::TunType::Gue && !port_given)
            error(t, t.text + " TUN type gue needs a port (keepalived: `port 6080`)");
        if (port_given && vs.tun_type != lb::TunType::Gue)
            error(t, t.text + " TUN: port is only for type gue");
    }

    void vs_keyword(const Token& t, PendingVs& p, std::optional<SourceLoc>& toa_loc,
                    std::optional<SourceLoc>& pp_loc, std::optional<SourceLoc>& uoa_loc) {
        VirtualServer& vs = p.vs;
        const std::string& k = t.text;
        if (classified(t, "virtual_server")) return;
        if (k == "protocol") {
            const Token* val = value(t);
            if (!val) return;
            std::string proto = upper(val->text);
            if (proto == "TCP")
                vs.proto = Proto::Tcp;
            else if (proto == "UDP")
                vs.proto = Proto::Udp;
            else if (proto == "SCTP")
                return error(*val, "protocol SCTP not supported");
            else if (proto == "ICMP")
                return error(*val,
                             "protocol ICMP is only for SNAT match services "
                             "(`virtual_server match NAME`)");
            else
                return error(*val, "protocol: bad value " + quoted(val->text) + " (TCP|UDP)");
            p.proto_set = true;
        } else if (k == "lb_algo" || k == "lvs_sched") {
            sched_value(t, vs.sched);
        } else if (k == "src-range" || k == "dst-range" || k == "oif" || k == "iif") {
            error(t, quoted(k) + " is only for SNAT match services (`virtual_server match NAME`)");
            skip_statement(t);
        } else if (k == "lb_kind" || k == "lvs_method") {
            lb_kind(t, vs);
        } else if (k == "laddr_group_name") {
            if (const Token* val = value(t)) {
                vs.laddr_group = val->text;
                p.laddr_loc = loc(*val);
            }
        } else if (k == "syn_proxy") {
            vs.syn_proxy = true;
        } else if (k == "toa") {
            static constexpr std::array<std::pair<std::string_view, bool>, 2> kOnOff = {
                {{"on", true}, {"off", false}}};
            if (auto on = choice(t, kOnOff)) {
                vs.toa = *on;
                toa_loc = loc(t);
            }
        } else if (k == "proxy_protocol") {
            static constexpr std::array<std::pair<std::string_view, ProxyProtocol>, 3> kPp = {
                {{"v1", ProxyProtocol::V1},
                 {"v2", ProxyProtocol::V2},
                 {"off", ProxyProtocol::Off}}};
            if (auto pp = choice(t, kPp)) {
                vs.proxy_protocol = *pp;
                pp_loc = loc(t);
            }
        } else if (k == "uoa") {
            static constexpr std::array<std::pair<std::string_view, Uoa>, 3> kUoa = {
                {{"opp", Uoa::Opp}, {"ipo", Uoa::Ipo}, {"off", Uoa::Off}}};
            if (auto uoa = choice(t, kUoa)) {
                vs.uoa = *uoa;
                uoa_loc = loc(t);
            }
        } else if (k == "blacklist" || k == "whitelist") {
            acl_list(t, k == "blacklist" ? vs.blacklist : vs.whitelist);
        } else if (k == "daddr_group_name") {
            if (const Token* val = value(t)) {
                p.deny_group = val->text;
                p.deny_loc = loc(*val);
            }
        } else if (k == "conn_rate_limit") {
            if (auto n = number_value(t, 0, UINT32_MAX)) vs.conn_rate_limit = *n;
        } else if (k == "real_server") {
            real_server(t, vs);
        } else {
            unknown(t, "virtual_server");
        }
    }

    void sched_value(const Token& t, std::string& sched) {
        const Token* val = value(t);
        if (!val) return;
        if (sched_name_supported(val->text))
            sched = val->text;
        else if (sched_name_known(val->text))
            error(*val, "scheduler " + quoted(val->text) + " not supported yet");
        else
            error(*val, t.text + ": unknown scheduler " + quoted(val->text));
    }

    // DPVS keepalived's SNAT service: `virtual_server match NAME { ... }` (config.h).
    void match_server(const Token& kw, const Token& match_tok) {
        MatchServer m;
        m.loc = loc(kw);
        const Token* name = value(match_tok);
        if (name) m.name = name->text;
        if (has_value(kw)) {
            error(*peek(), "virtual_server match: unexpected " + quoted(peek()->text));
            while (has_value(kw)) ++pos_;
        }
        const std::string what = "virtual_server match " + quoted(m.name);
        VirtualServer carrier;  // lb_kind and real_server fill a VirtualServer
        carrier.fwd = lb::FwdMode::Snat;
        bool proto_set = false;
        std::optional<SourceLoc> kind_loc;
        block(kw, [&](const Token& t) {
            const std::string& k = t.text;
            if (classified(t, "virtual_server")) return;
            if (k == "protocol") {
                const Token* val = value(t);
                if (!val) return;
                proto_set = true;  // a bad value is its own error, not also "missing"
                auto proto = lb::match_proto_from_name(lower(val->text));
                if (!proto)
                    return error(*val,
                                 "protocol: bad value " + quoted(val->text) + " (TCP|UDP|ICMP)");
                m.key.proto = *proto;
            } else if (k == "lb_algo" || k == "lvs_sched") {
                sched_value(t, m.sched);
            } else if (k == "lb_kind" || k == "lvs_method") {
                lb_kind(t, carrier);
                kind_loc = loc(t);
            } else if (k == "src-range" || k == "dst-range") {
                const Token* val = value(t);
                if (!val) return;
                auto r = lb::parse_addr_range(val->text);
                if (!r) return error(*val, k + ": " + r.error());
                (k == "src-range" ? m.key.src : m.key.dst) = *r;
            } else if (k == "oif" || k == "iif") {
                const Token* val = value(t);
                if (!val) return;
                (k == "oif" ? m.key.oif : m.key.iif) = val->text;
                ref_port(*val, what + " " + k);
            } else if (k == "real_server") {
                real_server(t, carrier);
            } else if (keyword_find("virtual_server", k)) {
                error(t, quoted(k) +
                             " is not for SNAT match services (it is about real servers "
                             "behind a VIP): remove it");
                skip_statement(t);
            } else {
                unknown(t, "virtual_server");
            }
        });
        if (!name) return;
        bool ok = true;
        if (!proto_set) {
            error(kw, what + ": protocol missing (TCP, UDP or ICMP)");
            ok = false;
        }
        if (carrier.fwd != lb::FwdMode::Snat) {
            error(kind_loc ? *kind_loc : m.loc,
                  what + ": lb_kind must be SNAT (a match service only masquerades; for " +
                      std::string(lb::fwd_names(carrier.fwd).keepalived) +
                      " write `virtual_server VIP PORT`)");
            ok = false;
        }
        if (m.key.oif.empty()) {
            error(kw, what +
                          ": oif missing (the port whose address inside hosts are hidden "
                          "behind, e.g. `oif wan0`)");
            ok = false;
        }
        m.fwd = carrier.fwd;
        m.real_servers = std::move(carrier.real_servers);
        for (const MatchServer& prev : cfg_.match_servers) {
            if (prev.name == m.name || prev.key == m.key) {
                error(kw, (prev.name == m.name
                               ? what + " already defined"
                               : what + " matches the same packets as " + quoted(prev.name)) +
                              " at " + prev.loc.file + ":" + std::to_string(prev.loc.line));
                ok = false;
                break;
            }
        }
        if (ok) cfg_.match_servers.push_back(std::move(m));
    }

    // `blacklist { 10.0.0.0/8 192.0.2.7 }` (entries may share lines) or, for short lists,
    // `blacklist 10.0.0.0/8 192.0.2.7`. Each entry is A.B.C.D or A.B.C.D/LEN without host bits.
    void acl_list(const Token& kw, std::vector<net::Ipv4Prefix>& list) {
        bool given = false;
        while (has_value(kw)) {
            acl_entry(kw, take(), list);
            given = true;
        }
        const Token* next = peek();
        if (next && next->kind == TokenKind::LBrace) {
            acl_block(kw, list);
            given = true;
        }
        if (!given) error(kw, kw.text + ": expected addresses or prefixes, or a '{ }' block of them");
    }

    void acl_entry(const Token& kw, const Token& tok, std::vector<net::Ipv4Prefix>& list) {
        auto prefix = net::parse_acl_prefix(tok.text);
        if (!prefix) return error(tok, kw.text + ": " + prefix.error());
        if (std::find(list.begin(), list.end(), *prefix) != list.end())
            return warning(tok, kw.text + ": " + tok.text + " listed twice");
        list.push_back(*prefix);
    }

    // The `{ ... }` of a list, at the current `{`.
    void acl_block(const Token& kw, std::vector<net::Ipv4Prefix>& list) {
        ++pos_;
        block_body(kw, [&](const Token& entry) {
            acl_entry(kw, entry, list);
            while (has_value(entry)) acl_entry(kw, take(), list);
        });
    }

    // DPVS keepalived: `deny_address_group NAME { PREFIX ... }`.
    void deny_address_group(const Token& kw) {
        DenyAddressGroup group;
        group.loc = loc(kw);
        const Token* name = value(kw);
        if (name) group.name = name->text;
        if (!open_block_at(kw)) return;
        acl_block(kw, group.prefixes);
        if (!name) return;
        for (const DenyAddressGroup& prev : cfg_.deny_groups) {
            if (prev.name == group.name) {
                error(kw, "deny_address_group " + quoted(group.name) + " already defined at " +
                              prev.loc.file + ":" + std::to_string(prev.loc.line));
                return;
            }
        }
        cfg_.deny_groups.push_back(std::move(group));
    }

    // Like open_block, without consuming the `{` (acl_block does).
    bool open_block_at(const Token& kw) {
        const Token* next = peek();
        if (next && next->kind == TokenKind::LBrace) return true;
        error(kw, kw.text + ": expected '{'");
        skip_statement(kw);
        return false;
    }

    void real_server(const Token& kw, VirtualServer& vs) {
        RealServer rs;
        rs.loc = loc(kw);
        auto addr = ipv4_value(kw);
        auto port = addr ? port_value(kw) : std::nullopt;
        const Token* next = peek();
        if (next && next->kind == TokenKind::LBrace) {
            block(kw, [&](const Token& t) { rs_keyword(t, rs); });
        } else {
            skip_statement(kw);
        }
        if (!addr || !port) return;
        rs.addr = *addr;
        rs.port = *port;
        // IPVS refuses this (ERANGE) whether or not an upper threshold is set.
        if (rs.lower_threshold > rs.upper_threshold)
            error(kw, "real_server " + endpoint_text(rs.addr, rs.port) + ": lthreshold " +
                          std::to_string(rs.lower_threshold) + " is higher than uthreshold " +
                          std::to_string(rs.upper_threshold));
        for (const RealServer& prev : vs.real_servers) {
            if (prev.addr == rs.addr && prev.port == rs.port) {
                error(kw, "duplicate real_server " + endpoint_text(rs.addr, rs.port) +
                              " (first at " + prev.loc.file + ":" + std::to_string(prev.loc.line) +
                              ")");
                return;
            }
        }
        vs.real_servers.push_back(std::move(rs));
    }

    void rs_keyword(const Token& t, RealServer& rs) {
        const std::string& k = t.text;
        if (classified(t, "real_server")) return;
        if (k == "weight") {
            if (auto n = number_value(t, 0, 65535)) rs.weight = *n;
        } else if (k == "upper_threshold" || k == "uthreshold") {
            if (auto n = number_value(t, 0, UINT32_MAX)) rs.upper_threshold = *n;
        } else if (k == "lower_threshold" || k == "lthreshold") {
            if (auto n = number_value(t, 0, UINT32_MAX)) rs.lower_threshold = *n;
        } else {
            unknown(t, "real_server");
        }
    }

    const TokenStream& ts_;
    Diagnostics& diag_;
    size_t pos_ = 0;
    Config cfg_;
    std::vector<PendingVs> pending_;
    std::vector<PortRef> port_refs_;
    std::vector<std::vector<SourceLoc>> laddr_locs_;  // parallel to cfg_.laddr_groups[].addrs
    std::set<std::string> warned_;                    // ignored keywords already warned about
};

ParseOutcome finish(const TokenStream& ts, Diagnostics& diag) {
    ParseOutcome out;
    ParsedConfig parsed = Parser(ts, diag).run();
    config_validate(parsed, diag);
    Config cfg = std::move(parsed.cfg);
    cfg.file = ts.files.empty() ? std::string() : ts.files.front();
    out.errors = std::move(diag.errors);
    out.warnings = std::move(diag.warnings);
    if (out.errors.empty()) {
        cfg.warnings = out.warnings;
        out.config = std::move(cfg);
    }
    return out;
}

Result<Config> to_result(ParseOutcome out) {
    if (out.config) return std::move(*out.config);
    std::string text;
    for (const std::string& line : out.errors) text += (text.empty() ? "" : "\n") + line;
    return make_error(std::move(text));
}

// No exception may leave the API (bad_alloc on absurd input, glob/regex surprises).
template <typename F>
ParseOutcome guarded(const std::string& name, F&& body) {
    try {
        return body();
    } catch (const std::exception& e) {
        ParseOutcome out;
        out.errors.push_back(name + ": internal error while parsing: " + e.what());
        return out;
    }
}

}  // namespace

bool sched_name_supported(std::string_view name) {
    return contains(kSupportedScheds, name);
}
bool sched_name_known(std::string_view name) {
    return sched_name_supported(name) || contains(kKnownScheds, name);
}

ParseOutcome parse_config(std::string_view text, const std::string& name) {
    return guarded(name, [&] {
        TokenStream ts;
        Diagnostics diag;
        config_lex(text, name, 0, ts, diag);
        return finish(ts, diag);
    });
}

ParseOutcome parse_config_path(const std::string& path) {
    return guarded(path, [&] {
        TokenStream ts;
        Diagnostics diag;
        if (!config_lex_file(path, ts, diag)) {
            ParseOutcome out;
            out.errors = std::move(diag.errors);
            return out;
        }
        return finish(ts, diag);
    });
}

Result<Config> parse_config_string(std::string_view text, std::string name) {
    return to_result(parse_config(text, name));
}

Result<Config> parse_config_file(const std::string& path) {
    return to_result(parse_config_path(path));
}

}  // namespace xvs::ctl
