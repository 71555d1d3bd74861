// The parser of `bgp_defs { ... }` and `ospf_defs { ... }` (ctl/bgp/routing_conf.h): what xvsd
// tells BIRD 2. Every value is checked here, at file:line, against what BIRD accepts, so the
// file xvsd writes (bird_config.h) never fails BIRD's parser for a value the operator gave.
#include "ctl/config_parser_impl.h"

namespace xvs::ctl::parser_detail {

namespace {

// "ASN:VALUE", both 0..65535.
std::optional<BgpCommunity> parse_community(std::string_view text) {
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    auto part = [](std::string_view s) -> std::optional<uint16_t> {
        uint32_t n = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
        if (s.empty() || ec != std::errc() || p != s.data() + s.size() || n > 65535)
            return std::nullopt;
        return static_cast<uint16_t>(n);
    };
    auto asn = part(text.substr(0, colon));
    auto value = part(text.substr(colon + 1));
    if (!asn || !value) return std::nullopt;
    return BgpCommunity{*asn, *value};
}

// An OSPF area as BIRD takes it: a number 0..4294967295 or a dotted quad.
bool valid_area(const std::string& text) {
    if (auto addr = net::parse_inet(text)) return addr->is_v4();
    uint64_t n = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    return !text.empty() && ec == std::errc() && p == text.data() + text.size() && n <= 0xffffffffu;
}

// A Linux interface name (IFNAMSIZ 16 with its zero) that needs no quoting in BIRD's string.
bool valid_ifname(const std::string& name) {
    return !name.empty() && name.size() <= 15 &&
           name.find_first_of("/ \t\"\\") == std::string::npos;
}

}  // namespace

void Parser::routing_section(const Token& kw, bool bgp) {
    RoutingDefs& r = cfg_.routing;
    if ((bgp ? r.bgp.present : r.ospf.present)) {
        error(kw, kw.text + " given twice: write one block");
        skip_statement(kw);
        return;
    }
    if (!open_block(kw)) return;
    (bgp ? r.bgp.present : r.ospf.present) = true;
    if (bgp)
        block_body(kw, [&](const Token& t) { bgp_keyword(t); });
    else
        block_body(kw, [&](const Token& t) { ospf_keyword(t); });
    if (bgp) {
        if (r.bgp.local_as == 0) error(kw, "bgp_defs: local_as missing (the director's AS number)");
        if (r.bgp.neighbors.empty())
            error(kw, "bgp_defs: no neighbor (neighbor ADDR remote_as N: the router to announce to)");
        for (const BgpNeighbor& n : r.bgp.neighbors) {
            if (r.bgp.next_hop && r.bgp.next_hop->is_v4() != n.addr.is_v4())
                error(kw, "bgp_defs: next_hop " + net::to_string(*r.bgp.next_hop) +
                              " is not of the family of neighbor " + net::to_string(n.addr));
            if (r.bgp.source_address && r.bgp.source_address->is_v4() != n.addr.is_v4())
                error(kw, "bgp_defs: source_address " + net::to_string(*r.bgp.source_address) +
                              " is not of the family of neighbor " + net::to_string(n.addr));
        }
    } else if (r.ospf.interfaces.empty()) {
        error(kw, "ospf_defs: no interface (interface NAME: a kernel interface facing the router)");
    }
}

// The settings both sections share. Returns false for a keyword that is not one of them.
bool Parser::routing_shared(const Token& t) {
    const std::string& k = t.text;
    if (k != "bird_socket" && k != "bird_config" && k != "router_id" && k != "liveness_interface")
        return false;
    const Token* val = value(t);
    if (!val) return true;
    RoutingDefs& r = cfg_.routing;
    std::string text = val->text;
    if (k == "router_id") {
        auto addr = net::parse_inet(text);
        if (!addr || !addr->is_v4()) {
            error(*val, k + ": " + quoted(text) + " is not an IPv4 address (BIRD's router id)");
            return true;
        }
    } else if (k == "liveness_interface") {
        if (!valid_ifname(text)) {
            error(*val, k + ": bad interface name " + quoted(text) +
                            " (1..15 characters, no '/', blank, quote or backslash)");
            return true;
        }
    } else if (!text.starts_with('/') || text.find_first_of("\"\\") != std::string::npos) {
        error(*val, k + ": " + quoted(text) + " is not an absolute path (without quotes)");
        return true;
    }
    // Set in both sections, the values must agree (one BIRD, one file, one router id).
    if (auto it = routing_seen_.find(k); it != routing_seen_.end()) {
        const std::string& before = k == "bird_socket"   ? r.bird_socket
                                    : k == "bird_config" ? r.bird_config
                                    : k == "router_id"   ? net::to_string(*r.router_id)
                                                         : r.liveness_interface;
        if (before != text)
            error(t, k + " " + text + " differs from " + before + " given at " + it->second.file +
                         ":" + std::to_string(it->second.line) + ": give it once");
        return true;
    }
    routing_seen_[k] = loc(t);
    if (k == "bird_socket") r.bird_socket = text;
    else if (k == "bird_config") r.bird_config = text;
    else if (k == "router_id") r.router_id = net::parse_inet(text);
    else r.liveness_interface = text;
    return true;
}

void Parser::bgp_keyword(const Token& t) {
    if (classified(t, "bgp_defs")) return;
    if (routing_shared(t)) return;
    BgpDefs& b = cfg_.routing.bgp;
    const std::string& k = t.text;
    if (k == "local_as") {
        // 4-byte AS numbers (RFC 6793); 0 is reserved.
        if (auto n = number_value(t, 1, 0xffffffffu)) b.local_as = *n;
    } else if (k == "neighbor") {
        bgp_neighbor(t);
    } else if (k == "next_hop" || k == "source_address") {
        if (auto addr = inet_value(t)) (k == "next_hop" ? b.next_hop : b.source_address) = *addr;
    } else if (k == "community") {
        if (!has_value(t)) error(t, k + ": missing value");
        while (has_value(t)) {
            const Token& val = take();
            if (auto c = parse_community(val.text))
                b.communities.push_back(*c);
            else
                error(val, k + ": " + quoted(val.text) + " is not ASN:VALUE (each 0..65535)");
        }
    } else if (k == "med") {
        if (auto n = number_value(t, 0, 0xffffffffu)) b.med = *n;
    } else {
        unknown(t, "bgp_defs");
    }
}

void Parser::bgp_neighbor(const Token& t) {
    auto addr = inet_value(t);
    BgpNeighbor n;
    bool as_seen = false;
    bool ok = addr.has_value();
    while (has_value(t)) {
        const Token& opt = take();
        const std::string& o = opt.text;
        std::optional<uint32_t> num;
        if (o == "remote_as") {
            num = number_value(opt, 1, 0xffffffffu);
            if (num) n.remote_as = *num;
            as_seen = num.has_value();
        } else if (o == "port") {
            num = number_value(opt, 1, 65535);
            if (num) n.port = static_cast<uint16_t>(*num);
        } else if (o == "hold_time") {
            // RFC 4271 4.2: zero (no keepalives) or at least three seconds.
            num = number_value(opt, 0, 65535);
            if (num && *num > 0 && *num < 3) {
                error(opt, "hold_time: " + std::to_string(*num) + " is below 3 (0 or 3..65535)");
                num.reset();
            }
            if (num) n.hold_time = *num;
        } else if (o == "bfd") {
            n.bfd = true;
            num = 1;
        } else if (o == "password") {
            if (const Token* val = value(opt)) {
                if (val->text.empty() || val->text.size() > 80 ||
                    val->text.find_first_of("\"\\") != std::string::npos) {
                    error(*val, "password: 1..80 characters without quote or backslash");
                } else {
                    n.password = val->text;
                    num = 1;
                }
            }
        } else if (o == "multihop") {
            num = number_value(opt, 1, 255);
            if (num) n.multihop = *num;
        } else {
            error(opt, "neighbor: unknown option " + quoted(o) +
                           " (remote_as N, port N, hold_time S, bfd, password X, multihop N)");
        }
        ok = ok && num.has_value();
    }
    if (addr && !as_seen && ok) error(t, "neighbor " + net::to_string(*addr) + ": remote_as N missing");
    if (!addr || !as_seen || !ok) return;
    n.addr = *addr;
    for (const BgpNeighbor& other : cfg_.routing.bgp.neighbors) {
        if (other.addr == n.addr) {
            error(t, "neighbor " + net::to_string(n.addr) + " given twice");
            return;
        }
    }
    cfg_.routing.bgp.neighbors.push_back(std::move(n));
}

void Parser::ospf_keyword(const Token& t) {
    if (classified(t, "ospf_defs")) return;
    if (routing_shared(t)) return;
    OspfDefs& o = cfg_.routing.ospf;
    const std::string& k = t.text;
    if (k == "area") {
        if (const Token* val = value(t)) {
            if (valid_area(val->text))
                o.area = val->text;
            else
                error(*val, "area: " + quoted(val->text) + " is not a number or A.B.C.D");
        }
    } else if (k == "metric") {
        // OSPF's external metric is 24 bits (RFC 2328 A.4.5); BIRD wants 1..16777214 for type 2.
        if (auto n = number_value(t, 1, 16777214)) o.metric = *n;
    } else if (k == "interface") {
        const Token* name = value(t);
        if (!name) return;
        OspfInterface ifc;
        ifc.name = name->text;
        bool ok = valid_ifname(ifc.name);
        if (!ok)
            error(*name, "interface: bad name " + quoted(ifc.name) +
                             " (1..15 characters, no '/', blank, quote or backslash)");
        while (has_value(t)) {
            const Token& opt = take();
            std::optional<uint32_t> num;
            if (opt.text == "cost" || opt.text == "hello" || opt.text == "dead") {
                num = number_value(opt, 1, 65535);
                if (num)
                    (opt.text == "cost" ? ifc.cost : opt.text == "hello" ? ifc.hello : ifc.dead) =
                        *num;
            } else {
                error(opt, "interface: unknown option " + quoted(opt.text) +
                               " (cost N, hello S, dead S)");
            }
            ok = ok && num.has_value();
        }
        if (ifc.hello && ifc.dead && *ifc.dead <= *ifc.hello) {
            error(t, "interface " + ifc.name + ": dead " + std::to_string(*ifc.dead) +
                         " must be longer than hello " + std::to_string(*ifc.hello));
            ok = false;
        }
        for (const OspfInterface& other : o.interfaces) {
            if (other.name == ifc.name) {
                error(t, "interface " + ifc.name + " given twice");
                ok = false;
            }
        }
        if (ok) o.interfaces.push_back(std::move(ifc));
    } else {
        unknown(t, "ospf_defs");
    }
}

}  // namespace xvs::ctl::parser_detail
