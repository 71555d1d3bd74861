// xvsctl output. Replies are checked field by field (types and ranges) before anything is
// printed, so a daemon bug shows as "Malformed reply from xvsd: ..." rather than as garbage.
#include "ctl/xvsctl_format.h"

#include <algorithm>
#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

#include "ctl/ipvsadm_format.h"
#include "ctl/reply_decode.h"

namespace xvs::ctl {

namespace {

using nlohmann::json;

using reply::decode;
using reply::DecodeError;

const json& field(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key)) throw DecodeError{std::string("missing '") + key + "'"};
    return j.at(key);
}

std::string get_string(const json& j, const char* key) {
    const json& v = field(j, key);
    if (!v.is_string()) throw DecodeError{std::string("'") + key + "' is not a string"};
    return v.get<std::string>();
}

// nlohmann parses non-negative integers as number_unsigned; anything else is refused instead
// of being converted (a negative value would otherwise wrap).
uint64_t get_uint(const json& j, const char* key,
                  uint64_t max = std::numeric_limits<uint64_t>::max()) {
    const json& v = field(j, key);
    if (!v.is_number_unsigned() || v.get<uint64_t>() > max)
        throw DecodeError{std::string("'") + key + "' is not an integer in 0.." +
                          std::to_string(max)};
    return v.get<uint64_t>();
}

bool get_bool(const json& j, const char* key) {
    const json& v = field(j, key);
    if (!v.is_boolean()) throw DecodeError{std::string("'") + key + "' is not a boolean"};
    return v.get<bool>();
}

net::InetAddr get_inet(const json& j, const char* key) {
    std::string text = get_string(j, key);
    auto a = net::parse_inet(text);
    if (!a) throw DecodeError{"bad address '" + text + "' in '" + key + "'"};
    return *a;
}

const json& get_array(const json& j, const char* key) {
    const json& v = field(j, key);
    if (!v.is_array()) throw DecodeError{std::string("'") + key + "' is not an array"};
    return v;
}

std::string prefix_text(const net::InetPrefix& p) {
    if (p.len == 0) return "default";  // ip(8) says default for ::/0 too
    if (p.len == net::family_bits(p.addr))
        return net::to_string(p.addr);  // a host route, as ip(8) prints it
    return net::to_string(p);
}

std::string pad_right(const std::string& s, size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string pad_left(const std::string& s, size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// Two lines: "    RX: head1 head2 ..." and the values right-aligned under each heading.
std::string counter_block(const char* label, const std::vector<std::string>& heads,
                          const std::vector<uint64_t>& values) {
    std::string top = std::string("    ") + label + ":";
    std::string bottom(top.size(), ' ');
    for (size_t i = 0; i < heads.size(); ++i) {
        std::string v = std::to_string(values[i]);
        size_t width = std::max(heads[i].size(), v.size());
        top += " " + pad_left(heads[i], width);
        bottom += " " + pad_left(v, width);
    }
    return top + "\n" + bottom + "\n";
}

int kind_rank(const std::string& kind) {
    if (kind == "director") return 0;
    if (kind == "vip") return 1;
    return 2;
}

}  // namespace

Result<std::vector<LinkEntry>> decode_links(const json& reply) {
    return decode([&] {
        std::vector<LinkEntry> out;
        for (const json& l : get_array(reply, "links")) {
            LinkEntry e;
            e.name = get_string(l, "name");
            e.dev = get_string(l, "dev");
            e.mac = get_string(l, "mac");
            e.mtu = static_cast<uint32_t>(get_uint(l, "mtu", UINT32_MAX));
            e.port_id = static_cast<uint32_t>(get_uint(l, "port_id", UINT16_MAX));
            e.up = get_bool(l, "up");
            const json& s = field(l, "stats");
            e.stats = LinkStats{get_uint(s, "ipackets"), get_uint(s, "opackets"),
                                get_uint(s, "ibytes"),   get_uint(s, "obytes"),
                                get_uint(s, "imissed"),  get_uint(s, "ierrors"),
                                get_uint(s, "oerrors"),  get_uint(s, "rx_nombuf"),
                                get_uint(s, "tx_refused")};
            out.push_back(std::move(e));
        }
        return out;
    });
}

Result<std::vector<AddrEntry>> decode_addrs(const json& reply) {
    return decode([&] {
        std::vector<AddrEntry> out;
        for (const json& a : get_array(reply, "addrs")) {
            AddrEntry e;
            e.addr = get_inet(a, "addr");
            e.prefix_len =
                static_cast<uint8_t>(get_uint(a, "prefix_len", net::family_bits(e.addr)));
            e.ifname = get_string(a, "ifname");
            e.kind = get_string(a, "kind");
            if (e.kind != "director" && e.kind != "vip" && e.kind != "lip")
                throw DecodeError{"bad kind '" + e.kind + "'"};
            out.push_back(std::move(e));
        }
        return out;
    });
}

Result<std::vector<RouteEntry>> decode_routes(const json& reply) {
    return decode([&] {
        std::vector<RouteEntry> out;
        for (const json& r : get_array(reply, "routes")) {
            RouteEntry e;
            std::string prefix = get_string(r, "prefix");
            // The protocol always writes the length; a bare address is not a valid prefix here.
            auto p = prefix.find('/') == std::string::npos ? std::nullopt
                                                           : net::parse_inet_prefix(prefix);
            if (!p) throw DecodeError{"bad prefix '" + prefix + "'"};
            e.prefix = *p;
            if (!field(r, "gateway").is_null()) e.gateway = get_inet(r, "gateway");
            e.ifname = get_string(r, "ifname");
            e.connected = get_bool(r, "connected");
            out.push_back(std::move(e));
        }
        return out;
    });
}

Result<std::vector<NeighDisplay>> decode_neighbours(const json& reply) {
    return decode([&] {
        std::vector<NeighDisplay> out;
        for (const json& n : get_array(reply, "neighbours")) {
            NeighDisplay e;
            e.addr = get_inet(n, "addr");
            if (!field(n, "mac").is_null()) e.mac = get_string(n, "mac");
            e.ifname = get_string(n, "ifname");
            e.state = get_string(n, "state");
            e.worker = static_cast<uint32_t>(get_uint(n, "worker", UINT32_MAX));
            out.push_back(std::move(e));
        }
        return out;
    });
}

Result<StatsReply> decode_stats(const json& reply) {
    return decode([&] {
        StatsReply out;
        out.workers = static_cast<uint32_t>(get_uint(reply, "workers", UINT32_MAX));
        for (const json& c : get_array(reply, "counters")) {
            CounterEntry e{get_string(c, "name"), get_uint(c, "value"), get_bool(c, "drop"),
                           get_string(c, "description"), {}};
            if (c.contains("per_worker"))
                for (const json& v : get_array(c, "per_worker")) {
                    if (!v.is_number_unsigned())
                        throw DecodeError{"'per_worker' of " + e.name + " holds a non-count"};
                    e.per_worker.push_back(v.get<uint64_t>());
                }
            out.counters.push_back(std::move(e));
        }
        return out;
    });
}

std::string format_links(std::vector<LinkEntry> links, bool with_stats) {
    std::stable_sort(links.begin(), links.end(),
                     [](const LinkEntry& a, const LinkEntry& b) { return a.port_id < b.port_id; });
    std::string out;
    for (const auto& l : links) {
        out += std::to_string(l.port_id) + ": " + l.name + ": " +
               (l.up ? "<UP>" : "<NO-CARRIER>") + " mtu " + std::to_string(l.mtu) + " dev " +
               l.dev + "\n";
        out += "    link/ether " + l.mac + "\n";
        if (!with_stats) continue;
        const LinkStats& s = l.stats;
        out += counter_block("RX", {"bytes", "packets", "errors", "missed", "nombuf"},
                             {s.ibytes, s.ipackets, s.ierrors, s.imissed, s.rx_nombuf});
        out += counter_block("TX", {"bytes", "packets", "errors", "refused"},
                             {s.obytes, s.opackets, s.oerrors, s.tx_refused});
    }
    return out;
}

std::string format_addrs(std::vector<AddrEntry> addrs) {
    std::stable_sort(addrs.begin(), addrs.end(), [](const AddrEntry& a, const AddrEntry& b) {
        if (a.ifname != b.ifname) return a.ifname < b.ifname;
        if (kind_rank(a.kind) != kind_rank(b.kind)) return kind_rank(a.kind) < kind_rank(b.kind);
        return net::addr_less(a.addr, b.addr);
    });
    size_t width = 0;
    for (const auto& a : addrs) width = std::max(width, a.ifname.size());
    std::string out;
    for (const auto& a : addrs) {
        out += pad_right(a.ifname, width) + (a.addr.is_v4() ? "  inet " : "  inet6 ") +
               net::to_string(a.addr) + "/" + std::to_string(a.prefix_len) + " " + a.kind + "\n";
    }
    return out;
}

std::string format_routes(std::vector<RouteEntry> routes) {
    std::stable_sort(routes.begin(), routes.end(), [](const RouteEntry& a, const RouteEntry& b) {
        if (!(a.prefix.addr == b.prefix.addr)) return net::addr_less(a.prefix.addr, b.prefix.addr);
        return a.prefix.len < b.prefix.len;
    });
    std::string out;
    for (const auto& r : routes) {
        out += prefix_text(r.prefix);
        if (r.gateway) out += " via " + net::to_string(*r.gateway);
        out += " dev " + r.ifname;
        if (r.connected) out += " proto kernel scope link";
        else if (!r.gateway) out += " scope link";
        out += "\n";
    }
    return out;
}

std::string format_neighbours(std::vector<NeighDisplay> neighbours) {
    std::stable_sort(neighbours.begin(), neighbours.end(),
                     [](const NeighDisplay& a, const NeighDisplay& b) {
                         if (!(a.addr == b.addr)) return net::addr_less(a.addr, b.addr);
                         return a.worker < b.worker;
                     });
    // Workers keep separate caches; say which one only when that tells entries apart.
    bool several_workers = std::any_of(neighbours.begin(), neighbours.end(), [&](const auto& n) {
        return n.worker != neighbours.front().worker;
    });
    std::string out;
    for (const auto& n : neighbours) {
        out += net::to_string(n.addr) + " dev " + n.ifname;
        if (!n.mac.empty()) out += " lladdr " + n.mac;
        out += " " + n.state;
        if (several_workers) out += " worker " + std::to_string(n.worker);
        out += "\n";
    }
    return out;
}

Result<std::string> format_checks(const nlohmann::json& checks, int64_t now_unix) {
    struct Row {
        std::string cols[6];
    };
    std::vector<Row> rows;
    rows.push_back({{"SERVICE", "DEST", "CHECK", "STATE", "WEIGHT", "LAST RESULT"}});
    for (const auto& c : checks) {
        auto str = [&](const char* k) -> std::string {
            return c.contains(k) && c[k].is_string() ? c[k].get<std::string>() : "";
        };
        if (!c.is_object() || !c.contains("time") || !c["time"].is_number_integer())
            return make_error("Malformed reply from xvsd: a check without 'time'");
        const int64_t t = c["time"].get<int64_t>();
        std::string last = str("last");
        if (t > 0) last += " (" + std::to_string(std::max<int64_t>(now_unix - t, 0)) + "s ago)";
        std::string state = str("state");
        const std::string dest_state = str("dest_state");
        if (dest_state == "inhibited") state += " (inhibited)";
        const std::string weight = c.contains("weight") && c["weight"].is_number()
                                       ? std::to_string(c["weight"].get<int64_t>())
                                       : "-";
        rows.push_back({{str("service"), str("dest"), str("type"), state, weight, last}});
    }
    size_t width[6] = {};
    for (const Row& r : rows)
        for (int i = 0; i < 6; ++i) width[i] = std::max(width[i], r.cols[i].size());
    std::string out;
    for (const Row& r : rows) {
        std::string line;
        for (int i = 0; i < 6; ++i) {
            line += r.cols[i];
            if (i < 5) line += std::string(width[i] - r.cols[i].size() + 2, ' ');
        }
        out += line + "\n";
    }
    return out;
}

Result<std::string> format_sync(const nlohmann::json& s) {
    try {
        std::string out = "sync: syncid " + std::to_string(s.at("syncid").get<uint64_t>()) +
                          ", role " + s.at("role").get<std::string>() + ", " +
                          (s.at("active").get<bool>() ? "active" : "backup") + ", port " +
                          std::to_string(s.at("port").get<uint64_t>()) + "\n";
        std::string claimed;
        for (const auto& a : s.at("claimed")) claimed += " " + a.get<std::string>();
        out += "claimed local addresses:" + (claimed.empty() ? std::string(" none") : claimed) + "\n";
        out += "peers:\n";
        if (s.at("peers").empty()) out += "  none heard\n";
        for (const auto& p : s.at("peers")) {
            std::string laddrs;
            for (const auto& a : p.at("laddrs")) laddrs += " " + a.get<std::string>();
            // A peer heard only by its conn updates has not said its role or whether it is
            // active yet (an xvsd before "announced" always had).
            const std::string role =
                p.value("announced", true)
                    ? ", role " + p.at("role").get<std::string>() +
                          (p.at("active").get<bool>() ? ", active" : ", backup")
                    : ", role not announced yet";
            out += "  " + p.at("addr").get<std::string>() + " " + p.at("state").get<std::string>() +
                   role + ", last heard " + std::to_string(p.at("last_seen_ms").get<uint64_t>()) +
                   " ms ago, " + std::to_string(p.at("conns_received").get<uint64_t>()) +
                   " conns received" + (laddrs.empty() ? "" : ", local addresses" + laddrs) + "\n";
        }
        out += "counters:\n";
        for (const auto& [k, v] : s.at("stats").items())
            out += "  " + k + " " + std::to_string(v.get<uint64_t>()) + "\n";
        return out;
    } catch (const nlohmann::json::exception& e) {
        return make_error(std::string("Malformed sync reply from xvsd: ") + e.what());
    }
}

Result<std::string> format_announce(const nlohmann::json& a) {
    if (a.is_null()) return std::string("routing not configured (no bgp_defs or ospf_defs)\n");
    try {
        std::string protocols;
        for (const auto& p : a.at("protocols")) protocols += " " + p.get<std::string>();
        std::string out = "BIRD " + a.at("bird_socket").get<std::string>() + ", file " +
                          a.at("bird_config").get<std::string>() + ", liveness interface " +
                          a.at("liveness_interface").get<std::string>() +
                          (a.at("liveness_up").get<bool>() ? " (up)" : " (down)") + ";" +
                          protocols + "\n";
        out += std::string(a.at("bird_pending").get<bool>() ? "BIRD not told yet: " : "BIRD: ") +
               a.at("bird").get<std::string>() + "\n";
        char line[256];
        std::snprintf(line, sizeof line, "%-40s %-10s %-8s %s\n", "VIP", "STATE", "IN BIRD", "WHY");
        out += line;
        for (const auto& v : a.at("vips")) {
            std::snprintf(line, sizeof line, "%-40s %-10s %-8s %s\n",
                          v.at("vip").get<std::string>().c_str(),
                          v.at("announce").get<bool>() ? "announced" : "withdrawn",
                          v.at("in_bird").get<bool>() ? "yes" : "no",
                          v.at("why").get<std::string>().c_str());
            out += line;
        }
        return out;
    } catch (const nlohmann::json::exception& e) {
        return make_error(std::string("Malformed reply from xvsd: 'announce': ") + e.what());
    }
}

Result<std::string> format_feedback(const nlohmann::json& fb) {
    if (!fb.is_object() || !fb.contains("listeners") || !fb["listeners"].is_array() ||
        !fb.contains("servers") || !fb["servers"].is_array())
        return make_error("Malformed reply from xvsd: 'feedback' lacks listeners or servers");
    auto num = [](const nlohmann::json& j, const char* k) -> std::string {
        if (!j.contains(k) || !j[k].is_number()) return "-";
        if (j[k].is_number_float()) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.3g", j[k].get<double>());
            return buf;
        }
        return std::to_string(j[k].get<int64_t>());
    };
    auto str = [](const nlohmann::json& j, const char* k) -> std::string {
        return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : "";
    };
    std::string out;
    for (const auto& l : fb["listeners"]) {
        out += "listener " + str(l, "listen") + ":" + num(l, "port");
        if (l.contains("error")) out += " (" + str(l, "error") + ")";
        out += ": received " + num(l, "received") + " accepted " + num(l, "accepted") +
               " rejected " + num(l, "rejected") + " (bad_size " + num(l, "bad_size") +
               " bad_magic " + num(l, "bad_magic") + " bad_version " + num(l, "bad_version") +
               " bad_mac " + num(l, "bad_mac") + " replayed " + num(l, "replayed") + " stale " +
               num(l, "stale") + " unknown_source " + num(l, "unknown_source") + ")\n";
    }
    constexpr int kCols = 12;
    std::vector<std::array<std::string, kCols>> rows;
    rows.push_back({"SERVICE", "DEST", "STATE", "CONF", "WEIGHT", "LOAD", "CPU%", "MEM%", "LOADAVG",
                    "ESTAB", "CUSTOM%", "AGE"});
    for (const auto& s : fb["servers"]) {
        std::string age = num(s, "age_ms");
        if (age != "-") age += "ms";
        rows.push_back({str(s, "service"), str(s, "dest"), str(s, "state"), num(s, "configured"),
                        num(s, "weight"), num(s, "load"), num(s, "cpu"), num(s, "mem"),
                        num(s, "loadavg"), num(s, "established"), num(s, "custom"), age});
    }
    std::array<size_t, kCols> width{};
    for (const auto& r : rows)
        for (int i = 0; i < kCols; ++i) width[i] = std::max(width[i], r[i].size());
    for (const auto& r : rows) {
        std::string line;
        for (int i = 0; i < kCols; ++i) {
            line += r[i];
            if (i < kCols - 1) line += std::string(width[i] - r[i].size() + 2, ' ');
        }
        out += line + "\n";
    }
    return out;
}

namespace {

// `stats -w`: name, total, then worker 0..N-1, right-aligned columns.
std::string format_stats_per_worker(const StatsReply& stats,
                                    const std::vector<const CounterEntry*>& shown) {
    size_t columns = stats.workers;
    for (const CounterEntry* c : shown) columns = std::max(columns, c->per_worker.size());
    std::vector<std::string> head{"", "total"};
    for (size_t i = 0; i < columns; ++i) head.push_back("w" + std::to_string(i));
    auto row_of = [&](const CounterEntry& c) {
        std::vector<std::string> row{c.name, std::to_string(c.value)};
        for (size_t i = 0; i < columns; ++i)
            row.push_back(i < c.per_worker.size() ? std::to_string(c.per_worker[i]) : "-");
        return row;
    };
    std::vector<size_t> width(head.size(), 0);
    for (size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
    for (const CounterEntry* c : shown) {
        auto row = row_of(*c);
        for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    auto line = [&](const std::vector<std::string>& row) {
        std::string out = "  " + pad_right(row[0], width[0]);
        for (size_t i = 1; i < row.size(); ++i) out += "  " + pad_left(row[i], width[i]);
        return out + "\n";
    };
    auto section = [&](const std::string& title, bool drops) {
        std::string body;
        for (const CounterEntry* c : shown)
            if (c->drop == drops) body += line(row_of(*c));
        return body.empty() ? title + " none\n" : title + "\n" + line(head) + body;
    };
    std::string workers = std::to_string(stats.workers) +
                          (stats.workers == 1 ? " worker" : " workers");
    return section("Counters (" + workers + "):", false) + section("Drops:", true);
}

}  // namespace

std::string format_stats(const StatsReply& stats, bool all, bool per_worker) {
    std::vector<const CounterEntry*> shown;
    for (const auto& c : stats.counters)
        if (all || c.value != 0) shown.push_back(&c);
    if (per_worker) return format_stats_per_worker(stats, shown);
    size_t name_width = 0, value_width = 0;
    for (const CounterEntry* c : shown) {
        name_width = std::max(name_width, c->name.size());
        value_width = std::max(value_width, std::to_string(c->value).size());
    }
    auto section = [&](const std::string& title, bool drops) {
        std::string body;
        for (const CounterEntry* c : shown) {
            if (c->drop != drops) continue;
            body += "  " + pad_right(c->name, name_width) + "  " +
                    pad_left(std::to_string(c->value), value_width) + "  # " + c->description +
                    "\n";
        }
        return body.empty() ? title + " none\n" : title + "\n" + body;
    };
    std::string workers = std::to_string(stats.workers) +
                          (stats.workers == 1 ? " worker" : " workers");
    return section("Counters (sum of " + workers + "):", false) + section("Drops:", true);
}

Result<std::string> render_xvsctl_reply(const CtlCommand& cmd, const json& reply) {
    auto render = [](auto decoded, auto format) -> Result<std::string> {
        if (!decoded) return make_error(decoded.error());
        return format(std::move(*decoded));
    };
    switch (cmd.kind) {
        case CtlCommandKind::LinkShow:
            return render(decode_links(reply),
                          [&](auto v) { return format_links(std::move(v), cmd.link_stats); });
        case CtlCommandKind::AddrShow:
            return render(decode_addrs(reply), [](auto v) { return format_addrs(std::move(v)); });
        case CtlCommandKind::RouteShow:
            return render(decode_routes(reply), [](auto v) { return format_routes(std::move(v)); });
        case CtlCommandKind::NeighShow:
            return render(decode_neighbours(reply),
                          [](auto v) { return format_neighbours(std::move(v)); });
        case CtlCommandKind::Stats:
            return render(decode_stats(reply),
                          [&](auto v) { return format_stats(v, cmd.all_counters, cmd.per_worker); });
        case CtlCommandKind::ConnShow:
            // decode_conns (shared with xvsadm) would iterate an object as happily as an array.
            if (!reply.contains("conns") || !reply["conns"].is_array())
                return make_error("Malformed reply from xvsd: 'conns' is not an array");
            return render(decode_conns(reply), [](auto v) { return format_conns(v); });
        case CtlCommandKind::CheckShow:
            if (!reply.contains("checks") || !reply["checks"].is_array())
                return make_error("Malformed reply from xvsd: 'checks' is not an array");
            return format_checks(reply["checks"], static_cast<int64_t>(std::time(nullptr)));
        case CtlCommandKind::FeedbackShow:
            if (!reply.contains("feedback"))
                return make_error("Malformed reply from xvsd: no 'feedback'");
            return format_feedback(reply["feedback"]);
        case CtlCommandKind::SyncShow:
            if (!reply.contains("sync") || !reply["sync"].is_object())
                return make_error("Malformed reply from xvsd: no 'sync'");
            return format_sync(reply["sync"]);
        case CtlCommandKind::SyncTakeover:
        case CtlCommandKind::SyncRelease:
            return reply.value("text", std::string()) + "\n";
        case CtlCommandKind::AnnounceShow:
            if (!reply.contains("announce"))
                return make_error("Malformed reply from xvsd: no 'announce'");
            return format_announce(reply["announce"]);
        case CtlCommandKind::ConnFlush:
            if (!reply.contains("flushed") || !reply["flushed"].is_number_unsigned())
                return make_error("Malformed reply from xvsd: 'flushed' is not a count");
            return std::to_string(reply["flushed"].get<uint64_t>()) + " connections expired\n";
        default:
            return std::string();
    }
}

}  // namespace xvs::ctl
