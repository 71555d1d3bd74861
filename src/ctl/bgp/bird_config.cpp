// BIRD 2's configuration for the announced VIPs (bird_config.h). The grammar is BIRD 2.0's
// (doc/bird.sgml of bird2 2.0.12, Debian 12): static device routes `via "IFNAME"` are up only
// while the interface is, which is what makes a killed xvsd's routes go (liveness.h).
#include "ctl/bgp/bird_config.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/fd.h"

namespace xvs::ctl::bgp {

namespace {

std::string prefix_text(const net::InetAddr& vip) {
    return net::to_string(vip) + (vip.is_v4() ? "/32" : "/128");
}

void static_protocol(std::string& out, const char* name, bool v4, const std::string& ifname,
                     const std::vector<net::InetAddr>& vips) {
    out += "protocol static ";
    out += name;
    out += " {\n    ";
    out += v4 ? "ipv4" : "ipv6";
    out += ";\n";
    for (const net::InetAddr& vip : vips) {
        if (vip.is_v4() != v4) continue;
        out += "    route " + prefix_text(vip) + " via \"" + ifname + "\";\n";
    }
    out += "}\n\n";
}

}  // namespace

std::string bird_config_text(const RoutingDefs& conf, std::span<const net::InetAddr> vips_in) {
    std::vector<net::InetAddr> vips(vips_in.begin(), vips_in.end());
    std::sort(vips.begin(), vips.end(), net::addr_less);
    vips.erase(std::unique(vips.begin(), vips.end()), vips.end());

    std::string out =
        "# Written by xvsd (bgp_defs/ospf_defs of xvs.conf); replaced whole on every change.\n"
        "# bird.conf includes it; do not edit.\n\n";
    if (conf.router_id) out += "router id " + net::to_string(*conf.router_id) + ";\n\n";
    // Tells BIRD about the liveness interface coming and going.
    out += "protocol device xvs_device {\n}\n\n";
    static_protocol(out, kStatic4, true, conf.liveness_interface, vips);
    static_protocol(out, kStatic6, false, conf.liveness_interface, vips);
    const std::string only_vips = std::string("    if proto != \"") + kStatic4 +
                                  "\" && proto != \"" + kStatic6 + "\" then reject;\n";

    const BgpDefs& bgp = conf.bgp;
    if (bgp.present) {
        out += "filter xvs_bgp_export {\n" + only_vips;
        if (bgp.med) out += "    bgp_med = " + std::to_string(*bgp.med) + ";\n";
        for (const BgpCommunity& c : bgp.communities)
            out += "    bgp_community.add((" + std::to_string(c.asn) + ", " +
                   std::to_string(c.value) + "));\n";
        out += "    accept;\n}\n\n";
        if (std::any_of(bgp.neighbors.begin(), bgp.neighbors.end(),
                        [](const BgpNeighbor& n) { return n.bfd; }))
            out += "protocol bfd xvs_bfd {\n}\n\n";
        for (size_t i = 0; i < bgp.neighbors.size(); ++i) {
            const BgpNeighbor& n = bgp.neighbors[i];
            out += "protocol bgp xvs_bgp" + std::to_string(i + 1) + " {\n";
            out += "    local as " + std::to_string(bgp.local_as) + ";\n";
            out += "    neighbor " + net::to_string(n.addr) + " port " + std::to_string(n.port) +
                   " as " + std::to_string(n.remote_as) + ";\n";
            if (bgp.source_address)
                out += "    source address " + net::to_string(*bgp.source_address) + ";\n";
            if (n.hold_time) out += "    hold time " + std::to_string(n.hold_time) + ";\n";
            if (n.multihop) out += "    multihop " + std::to_string(n.multihop) + ";\n";
            if (n.bfd) out += "    bfd on;\n";
            if (!n.password.empty()) out += "    password \"" + n.password + "\";\n";
            out += std::string("    ") + (n.addr.is_v4() ? "ipv4" : "ipv6") + " {\n";
            out += "        import none;\n";
            out += "        export filter xvs_bgp_export;\n";
            if (bgp.next_hop)
                out += "        next hop address " + net::to_string(*bgp.next_hop) + ";\n";
            out += "    };\n}\n\n";
        }
    }
    const OspfDefs& ospf = conf.ospf;
    if (ospf.present) {
        out += "filter xvs_ospf_export {\n" + only_vips;
        if (ospf.metric) out += "    ospf_metric2 = " + std::to_string(*ospf.metric) + ";\n";
        out += "    accept;\n}\n\n";
        out += "protocol ospf v2 xvs_ospf {\n";
        out += "    ipv4 {\n        import none;\n        export filter xvs_ospf_export;\n    };\n";
        out += "    area " + ospf.area + " {\n";
        for (const OspfInterface& ifc : ospf.interfaces) {
            out += "        interface \"" + ifc.name + "\" {\n";
            if (ifc.cost) out += "            cost " + std::to_string(*ifc.cost) + ";\n";
            if (ifc.hello) out += "            hello " + std::to_string(*ifc.hello) + ";\n";
            if (ifc.dead) out += "            dead " + std::to_string(*ifc.dead) + ";\n";
            out += "        };\n";
        }
        out += "    };\n}\n\n";
    }
    return out;
}

Result<void> file_write_atomic(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0)
        return make_error("cannot write " + tmp + ": " + std::strerror(errno) +
                          " (does its directory exist, may xvsd write there?)");
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<size_t>(n);
    }
    if (done < text.size() || ::fsync(fd.get()) != 0 || ::close(fd.release()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        return make_error("cannot write " + tmp + ": " + why);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        return make_error("cannot rename " + tmp + " to " + path + ": " + why);
    }
    return {};
}

}  // namespace xvs::ctl::bgp
