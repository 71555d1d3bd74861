// ipvsadm 1.31 output layouts, written with the same printf widths so columns line up exactly
// as operators (and their scripts) expect. Reply decoding lives here too: it is the only place
// that needs the reply's shape.
#include "ctl/ipvsadm_format.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <tuple>

#include "ctl/match_json.h"
#include "ctl/reply_decode.h"

namespace xvs::ctl {

namespace {

using nlohmann::json;

__attribute__((format(printf, 1, 2))) std::string sfmt(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return {};
    if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
    std::string big(static_cast<size_t>(n) + 1, '\0');
    va_start(ap, fmt);
    std::vsnprintf(big.data(), big.size(), fmt, ap);
    va_end(ap);
    big.resize(static_cast<size_t>(n));
    return big;
}

using ull = unsigned long long;

// A list entry as operators write it: a plain address for /32, else CIDR.
std::string acl_entry(const net::InetPrefix& p) {
    return p.len == net::family_bits(p.addr) ? net::to_string(p.addr) : net::to_string(p);
}

// --- decoding -------------------------------------------------------------------------------

using reply::decode;
using reply::DecodeError;

net::Ipv4 get_ipv4(const json& j, const char* key) {
    auto a = net::parse_ipv4(j.at(key).get<std::string>());
    if (!a) throw DecodeError{std::string("bad address in '") + key + "'"};
    return *a;
}

net::InetAddr get_inet(const json& j, const char* key) {
    auto a = net::parse_inet(j.at(key).get<std::string>());
    if (!a) throw DecodeError{std::string("bad address in '") + key + "'"};
    return *a;
}

Stats get_stats(const json& j) {
    Stats s;
    if (!j.contains("stats")) return s;
    const json& st = j.at("stats");
    s.conns = st.value("conns", uint64_t{0});
    s.inpkts = st.value("inpkts", uint64_t{0});
    s.outpkts = st.value("outpkts", uint64_t{0});
    s.inbytes = st.value("inbytes", uint64_t{0});
    s.outbytes = st.value("outbytes", uint64_t{0});
    s.cps = st.value("cps", uint64_t{0});
    s.inpps = st.value("inpps", uint64_t{0});
    s.outpps = st.value("outpps", uint64_t{0});
    s.inbps = st.value("inbps", uint64_t{0});
    s.outbps = st.value("outbps", uint64_t{0});
    return s;
}

ServiceKey get_key(const json& j) {
    ServiceKey k;
    k.fwmark = j.value("fwmark", uint32_t{0});
    if (k.fwmark) {
        k.fwmark_v6 = j.value("af", std::string("ipv4")) == "ipv6";
        return k;
    }
    if (j.contains("match")) {
        auto m = match_from_json(j.at("match"));
        if (!m) throw DecodeError{m.error()};
        k.match = *m;
        return k;
    }
    std::string proto = j.at("proto").get<std::string>();
    if (proto == "tcp") k.proto = Proto::Tcp;
    else if (proto == "udp") k.proto = Proto::Udp;
    else throw DecodeError{"bad proto '" + proto + "'"};
    k.vip = get_inet(j, "vip");
    k.port = j.at("port").get<uint16_t>();
    return k;
}

LaddrEntry get_laddr(const json& j) {
    LaddrEntry l;
    l.addr = get_inet(j, "addr");
    l.ifname = j.value("ifname", std::string());
    l.conflicts = j.value("conflicts", uint64_t{0});
    l.conns = j.value("conns", uint64_t{0});
    return l;
}

ServiceEntry get_service(const json& j) {
    ServiceEntry s;
    s.key = get_key(j);
    s.opts.sched = j.value("sched", std::string("wlc"));
    s.opts.persistent = j.value("persistent", uint32_t{0});
    // An IPv4 service's granularity is a netmask ("255.255.255.0"), an IPv6 one's a prefix
    // length ("64"), as ipvsadm shows them.
    if (j.contains("netmask")) {
        const std::string mask = j.at("netmask").get<std::string>();
        if (mask.find('.') != std::string::npos) {
            s.opts.netmask = get_ipv4(j, "netmask");
        } else {
            unsigned len = 0;
            const auto [end, ec] = std::from_chars(mask.data(), mask.data() + mask.size(), len);
            if (ec != std::errc{} || end != mask.data() + mask.size() || len < 1 || len > 128)
                throw DecodeError{"bad netmask '" + mask + "'"};
            s.opts.netmask6 = static_cast<uint8_t>(len);
        }
    }
    s.opts.sched_flags = j.value("sched_flags", std::vector<std::string>{});
    s.opts.ops = j.value("ops", false);
    s.opts.pe = j.value("pe", std::string());
    s.opts.hash_qid = j.value("hash_target", std::string()) == "qid";
    s.opts.synproxy = j.value("synproxy", false);
    s.opts.toa = j.value("toa", false);
    std::string pp = j.value("proxy_protocol", std::string("off"));
    s.opts.proxy_protocol = pp == "v1"   ? ProxyProtocol::V1
                            : pp == "v2" ? ProxyProtocol::V2
                                         : ProxyProtocol::Off;
    const std::string uoa = j.value("uoa", std::string("off"));
    s.opts.uoa = uoa == "opp" ? Uoa::Opp : uoa == "ipo" ? Uoa::Ipo : Uoa::Off;
    s.opts.conn_rate = j.value("conn_rate", uint32_t{0});
    for (const char* name : {"blacklist", "whitelist"}) {
        if (!j.contains(name)) continue;
        auto& list = name[0] == 'b' ? s.opts.blacklist : s.opts.whitelist;
        for (const json& e : j.at(name)) {
            auto p = net::parse_inet_prefix(e.get<std::string>());
            if (!p) throw DecodeError{std::string("bad prefix in '") + name + "'"};
            list.push_back(*p);
        }
    }
    s.stats = get_stats(j);
    if (j.contains("dests")) {
        for (const json& d : j.at("dests")) {
            DestEntry e;
            e.opts.addr = net::InetEndpoint{get_inet(d, "addr"), d.at("port").get<uint16_t>()};
            std::string fwd = d.value("fwd", std::string("dr"));
            auto f = lb::fwd_from_api(fwd);
            if (!f) throw DecodeError{"bad fwd '" + fwd + "'"};
            e.opts.fwd = *f;
            e.opts.weight = d.value("weight", uint32_t{0});
            e.opts.u_threshold = d.value("u_threshold", uint32_t{0});
            e.opts.l_threshold = d.value("l_threshold", uint32_t{0});
            e.opts.tun_type = d.value("tun_type", std::string());
            e.opts.tun_port = d.value("tun_port", uint16_t{0});
            e.active = d.value("active", uint64_t{0});
            e.inactive = d.value("inactive", uint64_t{0});
            e.persistconns = d.value("persistconns", uint64_t{0});
            e.inhibited = d.value("inhibited", false);
            e.stats = get_stats(d);
            s.dests.push_back(std::move(e));
        }
    }
    if (j.contains("laddrs")) {
        for (const json& l : j.at("laddrs")) s.laddrs.push_back(get_laddr(l));
    }
    return s;
}


// --- rendering helpers ----------------------------------------------------------------------

std::string upper(std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return s;
}

// "TCP  1.2.3.4:80" / "FWM  7" / "FWM  7 IPv6" (list) or "-t 1.2.3.4:80" / "-f 7" /
// "-f 7 -6" (save), ipvsadm's forms.
// SNAT match services as DPVS's ipvsadm: "MATCH tcp,from=A-B,to=C-D,iif=P,oif=Q" (list; the
// any-range is left out, and ",af=ipv6" says the family of an IPv6 service without ranges,
// which DPVS's list leaves to guess) or "-H proto=tcp,src-range=A-B,..." (save).
std::string service_name(const ServiceKey& k, bool rule) {
    if (k.fwmark && k.fwmark_v6) return sfmt(rule ? "-f %u -6" : "FWM  %u IPv6", k.fwmark);
    if (k.fwmark) return sfmt(rule ? "-f %u" : "FWM  %u", k.fwmark);
    if (k.match) {
        const lb::MatchKey& m = *k.match;
        if (rule) return "-H " + lb::to_string(m);
        std::string name = "MATCH " + std::string(lb::match_proto_name(m.proto));
        if (!m.src.any()) name += ",from=" + lb::to_string(m.src);
        if (!m.dst.any()) name += ",to=" + lb::to_string(m.dst);
        if (m.family == 6 && m.src.any_addr() && m.dst.any_addr()) name += ",af=ipv6";
        if (!m.iif.empty()) name += ",iif=" + m.iif;
        if (!m.oif.empty()) name += ",oif=" + m.oif;
        return name;
    }
    // IPv6 as "[addr]:port", ipvsadm's form.
    std::string addr = net::to_string(net::InetEndpoint{k.vip, k.port});
    if (rule) return std::string(k.proto == Proto::Tcp ? "-t " : "-u ") + addr;
    std::string name = std::string(k.proto == Proto::Tcp ? "TCP" : "UDP") + "  " + addr;
    // ipvsadm truncates IPv4 names at 33 characters, IPv6 ones not at all (the columns after
    // a long IPv6 name shift right, as ipvsadm's do).
    return k.vip.is_v4() ? name.substr(0, 33) : name;
}

std::string join_flags(const std::vector<std::string>& flags) {
    std::string out;
    for (const auto& f : flags) out += (out.empty() ? "" : ",") + f;
    return out;
}

// Sort key of an address: IPv4 before IPv6, each in numeric order (the wire bytes, big-endian,
// compared as a string).
std::string addr_order(const net::InetAddr& a) {
    return std::string(a.is_v4() ? "4" : "6") + std::string(std::begin(a.b), std::end(a.b));
}

void sort_entries(std::vector<ServiceEntry>& services) {
    // ipvsadm's order: fwmark (plain services, mark 0, first) and a mark's IPv4 service before
    // its IPv6 one, protocol, address, port; SNAT match services last, in the daemon's order
    // (the order they are matched in).
    std::stable_sort(services.begin(), services.end(), [](const auto& a, const auto& b) {
        auto key = [](const ServiceEntry& s) {
            if (s.key.match) return std::make_tuple(true, 0u, false, 0, std::string(), uint16_t{0});
            return std::make_tuple(false, s.key.fwmark, s.key.fwmark_v6,
                                   s.key.proto == Proto::Tcp ? 6 : 17, addr_order(s.key.vip),
                                   s.key.port);
        };
        return key(a) < key(b);
    });
    for (auto& s : services) {
        std::stable_sort(s.dests.begin(), s.dests.end(), [](const auto& a, const auto& b) {
            return std::make_pair(addr_order(a.opts.addr.addr), a.opts.addr.port) <
                   std::make_pair(addr_order(b.opts.addr.addr), b.opts.addr.port);
        });
    }
}

std::string title(const ListFormat& fmt) {
    const char* prot = "Prot LocalAddress:Port";
    if (fmt.stats)
        return sfmt("%-33s %8s %8s %8s %8s %8s\n  -> RemoteAddress:Port\n", prot, "Conns",
                    "InPkts", "OutPkts", "InBytes", "OutBytes");
    if (fmt.rate)
        return sfmt("%-33s %8s %8s %8s %8s %8s\n  -> RemoteAddress:Port\n", prot, "CPS", "InPPS",
                    "OutPPS", "InBPS", "OutBPS");
    if (fmt.thresholds)
        return sfmt("%-33s %-10s %-10s %-10s %-10s\n  -> RemoteAddress:Port\n", prot,
                    "Uthreshold", "Lthreshold", "ActiveConn", "InActConn");
    if (fmt.persistent_conn)
        return sfmt("%-33s %-9s %-11s %-10s %-10s\n  -> RemoteAddress:Port\n", prot, "Weight",
                    "PersistConn", "ActiveConn", "InActConn");
    return "Prot LocalAddress:Port Scheduler Flags\n"
           "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n";
}

std::string service_line(const ServiceEntry& s, const ListFormat& fmt) {
    std::string name = service_name(s.key, false);
    const Stats& st = s.stats;
    if (fmt.stats) {
        return sfmt("%-33s", name.c_str()) + format_largenum(st.conns, fmt.exact) +
               format_largenum(st.inpkts, fmt.exact) + format_largenum(st.outpkts, fmt.exact) +
               format_largenum(st.inbytes, fmt.exact) + format_largenum(st.outbytes, fmt.exact) +
               "\n";
    }
    if (fmt.rate) {
        return sfmt("%-33s %8llu %8llu %8llu", name.c_str(), ull(st.cps), ull(st.inpps),
                    ull(st.outpps)) +
               format_largenum(st.inbps, fmt.exact) + format_largenum(st.outbps, fmt.exact) +
               "\n";
    }
    std::string line = name + " " + s.opts.sched;
    if (!s.opts.sched_flags.empty()) line += " (" + join_flags(s.opts.sched_flags) + ")";
    if (s.opts.hash_qid) line += " qid";  // DPVS's ipvsadm prints its hash target here
    if (s.opts.persistent) {
        line += sfmt(" persistent %u", s.opts.persistent);
        if (s.opts.netmask.be != 0xffffffff) line += " mask " + net::to_string(s.opts.netmask);
        if (s.opts.netmask6 != 128) line += sfmt(" mask %u", unsigned{s.opts.netmask6});
    }
    if (!s.opts.pe.empty()) line += " pe " + s.opts.pe;
    if (s.opts.ops) line += " ops";
    // DPVS/xvs service flags, after ipvsadm's.
    if (s.opts.synproxy) line += " synproxy";
    if (s.opts.toa) line += " toa";
    if (s.opts.proxy_protocol != ProxyProtocol::Off)
        line += " proxy-protocol " + std::string(proxy_protocol_name(s.opts.proxy_protocol));
    if (s.opts.uoa != Uoa::Off) line += " uoa " + std::string(uoa_name(s.opts.uoa));
    if (s.opts.conn_rate) line += sfmt(" conn-rate %u", s.opts.conn_rate);
    return line + "\n";
}

std::string dest_line(const DestEntry& d, const ListFormat& fmt) {
    // ipvsadm cuts IPv4 real-server names at 28 characters, never IPv6 ones.
    std::string name = net::to_string(d.opts.addr);
    if (d.opts.addr.addr.is_v4()) name = name.substr(0, 28);
    const char* n = name.c_str();
    const Stats& st = d.stats;
    if (fmt.stats) {
        return sfmt("  -> %-28s", n) + format_largenum(st.conns, fmt.exact) +
               format_largenum(st.inpkts, fmt.exact) + format_largenum(st.outpkts, fmt.exact) +
               format_largenum(st.inbytes, fmt.exact) + format_largenum(st.outbytes, fmt.exact) +
               "\n";
    }
    if (fmt.rate) {
        return sfmt("  -> %-28s %8llu %8llu %8llu", n, ull(st.cps), ull(st.inpps),
                    ull(st.outpps)) +
               format_largenum(st.inbps, fmt.exact) + format_largenum(st.outbps, fmt.exact) +
               "\n";
    }
    if (fmt.thresholds)
        return sfmt("  -> %-28s %-10u %-10u %-10llu %-10llu\n", n, d.opts.u_threshold,
                    d.opts.l_threshold, ull(d.active), ull(d.inactive));
    if (fmt.persistent_conn)
        return sfmt("  -> %-28s %-9u %-11llu %-10llu %-10llu\n", n, d.opts.weight,
                    ull(d.persistconns), ull(d.active), ull(d.inactive));
    // ipvsadm has no inhibited servers (keepalived just sets weight 0): xvs appends a word
    // to their line only, so every other line stays byte for byte ipvsadm's.
    return sfmt("  -> %-28s %-7s %-6u %-10llu %-10llu%s\n", n,
                std::string(lb::fwd_names(d.opts.fwd).label).c_str(), d.opts.weight, ull(d.active),
                ull(d.inactive), d.inhibited ? " inhibited" : "");
}

}  // namespace

// --- public ---------------------------------------------------------------------------------

Result<std::vector<ServiceEntry>> decode_services(const json& reply) {
    return decode([&] {
        std::vector<ServiceEntry> out;
        for (const json& s : reply.at("services")) out.push_back(get_service(s));
        return out;
    });
}

Result<std::vector<ConnEntry>> decode_conns(const json& reply) {
    return decode([&] {
        std::vector<ConnEntry> out;
        for (const json& c : reply.at("conns")) {
            ConnEntry e;
            e.proto = c.at("proto").get<std::string>();
            e.expire_seconds = c.at("expire_seconds").get<uint64_t>();
            e.state = c.at("state").get<std::string>();
            e.client = c.at("client").get<std::string>();
            e.vip = c.at("vip").get<std::string>();
            e.dest = c.at("dest").get<std::string>();
            e.lip = c.value("lip", std::string());
            out.push_back(std::move(e));
        }
        return out;
    });
}

Result<Timeouts> decode_timeouts(const json& reply) {
    return decode([&] {
        return Timeouts{reply.at("tcp").get<uint32_t>(), reply.at("tcpfin").get<uint32_t>(),
                        reply.at("udp").get<uint32_t>()};
    });
}

Result<std::vector<LaddrEntry>> decode_laddrs(const json& reply) {
    return decode([&] {
        std::vector<LaddrEntry> out;
        for (const json& l : reply.at("laddrs")) out.push_back(get_laddr(l));
        return out;
    });
}

std::string format_largenum(uint64_t v, bool exact) {
    if (exact) {
        std::string digits = std::to_string(v);
        int width = digits.size() <= 8 ? 9 : static_cast<int>(digits.size()) + 1;
        return sfmt("%*llu", width, ull(v));
    }
    if (v < 100000000ULL) return sfmt("%9llu", ull(v));
    if (v < 1000000000ULL) return sfmt("%8lluK", ull(v / 1000));
    if (v < 100000000000ULL) return sfmt("%8lluM", ull(v / 1000000));
    if (v < 100000000000000ULL) return sfmt("%8lluG", ull(v / 1000000000ULL));
    return sfmt("%8lluT", ull(v / 1000000000000ULL));
}

uint64_t decode_conn_table_size(const json& reply) {
    if (!reply.is_object() || !reply.contains("conn_table_size")) return 0;
    const json& size = reply.at("conn_table_size");
    return size.is_number_unsigned() ? size.get<uint64_t>() : 0;
}

std::string format_list(std::vector<ServiceEntry> services, const ListFormat& fmt,
                        std::optional<uint64_t> banner_size) {
    if (!fmt.nosort) sort_entries(services);
    std::string out;
    // The IPVS interface version xvs emulates, and its connection table size.
    if (banner_size)
        out += "IP Virtual Server version 1.2.1 (size=" + std::to_string(*banner_size) + ")\n";
    out += title(fmt);
    for (const auto& s : services) {
        out += service_line(s, fmt);
        for (const auto& d : s.dests) out += dest_line(d, fmt);
    }
    return out;
}

std::string format_save(std::vector<ServiceEntry> services, const ListFormat& fmt) {
    if (!fmt.nosort) sort_entries(services);
    std::string out;
    for (const auto& s : services) {
        std::string name = service_name(s.key, true);
        out += "-A " + name + " -s " + s.opts.sched;
        if (s.opts.persistent) {
            out += sfmt(" -p %u", s.opts.persistent);
            if (s.opts.netmask.be != 0xffffffff) out += " -M " + net::to_string(s.opts.netmask);
            if (s.opts.netmask6 != 128) out += sfmt(" -M %u", unsigned{s.opts.netmask6});
        }
        if (!s.opts.pe.empty()) out += " --pe " + s.opts.pe;
        if (s.opts.ops) out += " -o";
        if (!s.opts.sched_flags.empty()) out += " -b " + join_flags(s.opts.sched_flags);
        if (s.opts.hash_qid) out += " --hash-target qid";
        if (s.opts.synproxy) out += " -j";
        if (s.opts.toa) out += " --toa on";
        if (s.opts.proxy_protocol != ProxyProtocol::Off)
            out += " --proxy-protocol " + std::string(proxy_protocol_name(s.opts.proxy_protocol));
        if (s.opts.uoa != Uoa::Off) out += " --uoa " + std::string(uoa_name(s.opts.uoa));
        if (s.opts.conn_rate) out += sfmt(" --conn-rate %u", s.opts.conn_rate);
        out += "\n";
        for (const auto& d : s.dests) {
            out += "-a " + name + " -r " + net::to_string(d.opts.addr) + " " +
                   std::string(lb::fwd_names(d.opts.fwd).ipvsadm) + sfmt(" -w %u", d.opts.weight);
            if (d.opts.fwd == lb::FwdMode::Tun || d.opts.fwd == lb::FwdMode::NatTun) {
                out += " --tun-type " + (d.opts.tun_type.empty() ? "ipip" : d.opts.tun_type);
                if (d.opts.tun_port) out += sfmt(" --tun-port %u", unsigned(d.opts.tun_port));
            }
            if (d.opts.u_threshold) out += sfmt(" -x %u", d.opts.u_threshold);
            if (d.opts.l_threshold) out += sfmt(" -y %u", d.opts.l_threshold);
            out += "\n";
        }
        for (const auto& l : s.laddrs) {
            out += "-P " + name + " -z " + net::to_string(l.addr);
            if (!l.ifname.empty()) out += " -F " + l.ifname;
            out += "\n";
        }
        for (const auto& p : s.opts.blacklist) out += "-U " + name + " -k " + acl_entry(p) + "\n";
        for (const auto& p : s.opts.whitelist)
            out += "-O " + name + " --whtlst " + acl_entry(p) + "\n";
    }
    return out;
}

std::string format_acl(std::vector<ServiceEntry> services, bool whitelist) {
    sort_entries(services);
    std::string out = sfmt("%-8s %-30s %-30s\n", "PROTO", "VIP:VPORT", whitelist ? "WHITELIST" : "BLACKLIST");
    for (const auto& s : services) {
        const auto& list = whitelist ? s.opts.whitelist : s.opts.blacklist;
        const char* proto = s.key.fwmark ? "FWM" : s.key.proto == Proto::Tcp ? "TCP" : "UDP";
        const std::string vip = s.key.fwmark
                                    ? sfmt(s.key.fwmark_v6 ? "%u IPv6" : "%u", s.key.fwmark)
                                    : net::to_string(net::InetEndpoint{s.key.vip, s.key.port});
        for (const auto& p : list)
            out += sfmt("%-8s %-30s %-30s\n", proto, vip.c_str(), acl_entry(p).c_str());
    }
    return out;
}

std::string format_conns(const std::vector<ConnEntry>& conns) {
    bool with_local = std::any_of(conns.begin(), conns.end(),
                                  [](const ConnEntry& c) { return !c.lip.empty(); });
    std::string out = "IPVS connection entries\n";
    if (with_local)
        out += sfmt("pro expire %-11s %-18s %-18s %-18s %s\n", "state", "source", "virtual",
                    "local", "destination");
    else
        out += sfmt("pro expire %-11s %-18s %-18s %s\n", "state", "source", "virtual",
                    "destination");
    for (const auto& c : conns) {
        std::string expire = sfmt("%02llu:%02llu", ull(c.expire_seconds / 60),
                                  ull(c.expire_seconds % 60));
        std::string proto = upper(c.proto);
        if (with_local)
            out += sfmt("%-3s %-6s %-11s %-18s %-18s %-18s %s\n", proto.c_str(), expire.c_str(),
                        c.state.c_str(), c.client.c_str(), c.vip.c_str(),
                        c.lip.empty() ? "-" : c.lip.c_str(), c.dest.c_str());
        else
            out += sfmt("%-3s %-6s %-11s %-18s %-18s %s\n", proto.c_str(), expire.c_str(),
                        c.state.c_str(), c.client.c_str(), c.vip.c_str(), c.dest.c_str());
    }
    return out;
}

std::string format_timeout(const Timeouts& t) {
    return sfmt("Timeout (tcp tcpfin udp): %u %u %u\n", t.tcp, t.tcpfin, t.udp);
}

std::string format_laddrs(const ServiceKey& key, const std::vector<LaddrEntry>& laddrs) {
    std::string out = sfmt("%-20s %-8s %-20s %-10s %-10s\n", "VIP:VPORT", "TOTAL", "LADDR",
                           "CONFLICTS", "CONNS");
    std::string vip = key.fwmark ? sfmt(key.fwmark_v6 ? "FWM %u IPv6" : "FWM %u", key.fwmark)
                                 : net::to_string(net::InetEndpoint{key.vip, key.port});
    out += sfmt("%-20s %-8zu \n", vip.c_str(), laddrs.size());
    for (const auto& l : laddrs) {
        out += sfmt("%-20s %-8s %-20s %-10llu %-10llu\n", "", "", net::to_string(l.addr).c_str(),
                    ull(l.conflicts), ull(l.conns));
    }
    return out;
}

Result<std::string> render_reply(const Command& cmd, const json& reply) {
    switch (cmd.kind) {
        case CommandKind::List:
            if (cmd.format.connections) {
                auto conns = decode_conns(reply);
                if (!conns) return make_error(conns.error());
                return format_conns(*conns);
            }
            if (cmd.format.timeout) {
                auto t = decode_timeouts(reply);
                if (!t) return make_error(t.error());
                return format_timeout(*t);
            }
            [[fallthrough]];
        case CommandKind::Save: {
            auto services = decode_services(reply);
            if (!services) return make_error(services.error());
            if (cmd.kind == CommandKind::Save) return format_save(std::move(*services), cmd.format);
            std::optional<uint64_t> banner;
            if (!cmd.service) banner = decode_conn_table_size(reply);
            return format_list(std::move(*services), cmd.format, banner);
        }
        case CommandKind::GetBlacklist:
        case CommandKind::GetWhitelist: {
            auto services = decode_services(reply);
            if (!services) return make_error(services.error());
            return format_acl(std::move(*services), cmd.kind == CommandKind::GetWhitelist);
        }
        case CommandKind::GetLaddr: {
            auto laddrs = decode_laddrs(reply);
            if (!laddrs) return make_error(laddrs.error());
            return format_laddrs(*cmd.service, *laddrs);
        }
        default:
            return std::string();
    }
}

}  // namespace xvs::ctl
