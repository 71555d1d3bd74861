// The keepalived-grammar parser behind ctl/config_parser.h, shared by its two source files:
// config_parser.cpp (token helpers, top level, global/netif/worker/ip/ipvs sections, the API)
// and config_parser_vs.cpp (local_address_group, virtual_server(_group), deny_address_group,
// real_server). Internal to ctl.
#pragma once

#include <grp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <exception>
#include <map>
#include <set>

#include "ctl/config_keywords.h"
#include "ctl/config_lexer.h"
#include "ctl/config_parser.h"
#include "ctl/config_validate.h"
#include "lb/conn.h"
#include "net/prefix_set.h"

namespace xvs::ctl::parser_detail {

using namespace keywords;

constexpr uint32_t kMaxTimeout =
    lb::kMaxTimeoutS;  // 31 days, ipvsadm's -p limit; also for timeouts
using lb::kMaxWorkers;  // `workers N` up to the per-worker arrays' size (lb/dest.h)

inline std::string upper(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return out;
}

inline std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

inline std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

// An address range as keepalived writes it, in the address's last part: for IPv4
// "A.B.C.D", "A.B.C.D-E" or "A.B.C.D-A.B.C.E" (the last octet, E decimal, within one /24); for
// IPv6 "X::Y", "X::Y-Z" or "X::Y-X::Z" (the last 16-bit group, Z hex as the group is written,
// so "ae00::2-9" is ae00::2 .. ae00::9 and "2001:db8::a-1f" ten to thirty-one). An IPv6
// address may be written in brackets when it is alone ("[2001:db8::1]").
inline std::optional<std::pair<net::InetAddr, net::InetAddr>> parse_addr_range(
    std::string_view text) {
    size_t dash = text.find('-');
    auto first = net::parse_inet(dash == std::string_view::npos ? net::strip_brackets(text)
                                                                : text.substr(0, dash));
    if (!first) return std::nullopt;
    if (dash == std::string_view::npos) return std::make_pair(*first, *first);
    std::string_view rest = text.substr(dash + 1);
    const bool v4 = first->is_v4();
    net::InetAddr last;
    if (rest.find(v4 ? '.' : ':') != std::string_view::npos) {
        auto addr = net::parse_inet(rest);
        if (!addr || addr->is_v4() != v4) return std::nullopt;
        last = *addr;
    } else {
        unsigned part = 0;
        const int base = v4 ? 10 : 16;
        auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), part, base);
        if (rest.empty() || rest.size() > (v4 ? 3u : 4u) || ec != std::errc() ||
            p != rest.data() + rest.size() || part > (v4 ? 0xffu : 0xffffu))
            return std::nullopt;
        last = range_with_last_part(*first, part);
    }
    // Same address but for the last part, and not backwards.
    if (!(range_with_last_part(last, 0) == range_with_last_part(*first, 0))) return std::nullopt;
    if (range_last_part(last) < range_last_part(*first)) return std::nullopt;
    return std::make_pair(*first, last);
}
inline constexpr const char* kRangeForms =
    "A.B.C.D or A.B.C.D-E within one /24, or an IPv6 X::Y or X::Y-Z within its last 16-bit "
    "group, Z hex";

// The id of group `name` from the system's group database, if it has one.
inline std::optional<uint32_t> group_id(const std::string& name) {
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

// "a.b.c.d:port" / "[v6]:port", as messages name a service or a real server.
inline std::string endpoint_text(const net::InetAddr& addr, uint16_t port) {
    return net::to_string(net::InetEndpoint{addr, port});
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

    // An IPv4 or IPv6 address; IPv6 also in brackets ("[2001:db8::10]"), as keepalived
    // configurations sometimes write real servers.
    std::optional<net::InetAddr> inet_value(const Token& kw) {
        const Token* val = value(kw);
        if (!val) return std::nullopt;
        auto addr = net::parse_inet(net::strip_brackets(val->text));
        if (!addr) error(*val, kw.text + ": bad IP address " + quoted(val->text));
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
    void top_level(const Token& kw);
    void global_defs(const Token& kw);
    void netif_defs(const Token& kw);
    void worker_defs(const Token& kw);
    void frag_defs(const Token& kw);
    void ip_options(const Token& kw, std::optional<std::string>& dev,
                    std::optional<net::InetAddr>* via, bool& ok);
    void ip_defs(const Token& kw);
    void tunnel_source(const Token& kw);
    void timeout_setting(const Token& key);
    std::optional<bool> switch_value(const Token& kw);
    void synproxy_setting(const Token& t);
    void ipvs_defs(const Token& kw);
    void sync_defs(const Token& kw);  // config_parser_sync.cpp
    void local_address_group(const Token& kw);
    void virtual_server_group(const Token& kw);
    void virtual_server(const Token& kw);
    void lb_kind(const Token& t, VirtualServer& vs);
    void nat_tunnel(const Token& t, PendingVs& p);
    void sched_value(const Token& t, std::string& sched);
    // `virtual_server match NAME { ... }`: SNAT (config_parser_match.cpp).
    void match_server(const Token& kw, const Token& match_tok);
    void sched_flags_check(const PendingVs& p);
    void fwmark_family(PendingVs& p);
    void vs_keyword(const Token& t, PendingVs& p, std::optional<SourceLoc>& toa_loc,
                    std::optional<SourceLoc>& pp_loc, std::optional<SourceLoc>& uoa_loc);
    void acl_list(const Token& kw, std::vector<net::InetPrefix>& list);
    void acl_entry(const Token& kw, const Token& tok, std::vector<net::InetPrefix>& list);
    void acl_block(const Token& kw, std::vector<net::InetPrefix>& list);
    void deny_address_group(const Token& kw);
    bool open_block_at(const Token& kw);
    void real_server(const Token& kw, VirtualServer& vs);
    void fwmark_defs(const Token& kw);
    void rs_keyword(const Token& t, RealServer& rs);
    // Health checking (config_parser_health.cpp). The *_keyword ones return false for a
    // keyword that is not theirs.
    bool health_vs_keyword(const Token& t, VirtualServer& vs);
    bool health_rs_keyword(const Token& t, RealServer& rs);
    bool check_times_keyword(const Token& t, CheckTimes& times);
    void checker_block(const Token& kw, RealServer& rs, CheckType type);
    void checker_keyword(const Token& t, CheckerConf& c);
    void url_block(const Token& kw, CheckerConf& c);
    void passive_block(const Token& kw, std::optional<PassiveConf>& out);
    void feedback_block(const Token& kw, VirtualServer& vs);
    std::optional<uint32_t> seconds_value(const Token& kw, uint32_t min_ms);
    std::vector<std::string> script_value(const Token& kw);
    void health_resolve(VirtualServer& vs);
    // Routing through BIRD (ctl/bgp/config_parser_bgp.cpp).
    void routing_section(const Token& kw, bool bgp);
    bool routing_shared(const Token& t);
    void bgp_keyword(const Token& t);
    void bgp_neighbor(const Token& t);
    void ospf_keyword(const Token& t);

    const TokenStream& ts_;
    Diagnostics& diag_;
    size_t pos_ = 0;
    Config cfg_;
    std::vector<PendingVs> pending_;
    std::vector<PortRef> port_refs_;
    std::vector<std::vector<SourceLoc>> laddr_locs_;  // parallel to cfg_.laddr_groups[].addrs
    std::set<std::string> warned_;                    // ignored keywords already warned about
    bool status_allow_given_ = false;  // the first status_allow replaces the default list
    std::map<std::string, SourceLoc> routing_seen_;  // bgp_defs/ospf_defs settings given once
};

}  // namespace xvs::ctl::parser_detail
