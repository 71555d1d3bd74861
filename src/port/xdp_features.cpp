// The kernel's "netdev" generic netlink family, asked for a device's XDP features, see
// port/xdp_features.h.
#include "port/xdp_features.h"

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

namespace xvs::port {

namespace {

// The "netdev" family's command and attributes (uapi linux/netdev.h, Linux 6.3).
constexpr uint8_t kNetdevCmdDevGet = 1;
constexpr uint16_t kNetdevAttrIfindex = 1;
constexpr uint16_t kNetdevAttrXdpFeatures = 3;
constexpr uint8_t kNetdevVersion = 1;
// libmnl's MNL_SOCKET_BUFFER_SIZE at most (it is a run-time value); the replies are small.
constexpr size_t kBufSize = 8192;

nlmsghdr* put_request(char* buf, uint16_t type, uint8_t cmd, uint8_t version, uint32_t seq) {
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = NLM_F_REQUEST;
    nlh->nlmsg_seq = seq;
    auto* g = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
    g->cmd = cmd;
    g->version = version;
    return nlh;
}

// One request, its one reply's attributes through `cb` (called with each top-level
// attribute). The kernel's error, if any, as errno's text.
template <class F>
Result<void> exchange(mnl_socket* nl, nlmsghdr* req, F&& cb) {
    if (mnl_socket_sendto(nl, req, req->nlmsg_len) < 0)
        return make_error(std::string("generic netlink send: ") + std::strerror(errno));
    alignas(nlmsghdr) std::array<char, kBufSize> buf;
    const ssize_t n = mnl_socket_recvfrom(nl, buf.data(), buf.size());
    if (n < 0) return make_error(std::string("generic netlink receive: ") + std::strerror(errno));
    struct Ctx {
        F* cb;
    } ctx{&cb};
    const auto on_msg = [](const nlmsghdr* nlh, void* data) -> int {
        const auto on_attr = [](const nlattr* a, void* d) -> int {
            (*static_cast<Ctx*>(d)->cb)(a);
            return MNL_CB_OK;
        };
        return mnl_attr_parse(nlh, sizeof(genlmsghdr), on_attr, data);
    };
    if (mnl_cb_run(buf.data(), static_cast<size_t>(n), req->nlmsg_seq, mnl_socket_get_portid(nl),
                   on_msg, &ctx) < 0)
        return make_error(std::strerror(errno));
    return {};
}

}  // namespace

void XdpFeatures::Close::operator()(mnl_socket* s) const { mnl_socket_close(s); }

Result<XdpFeatures> XdpFeatures::open() {
    std::unique_ptr<mnl_socket, Close> nl(mnl_socket_open(NETLINK_GENERIC));
    if (!nl) return make_error(std::string("cannot open generic netlink: ") + std::strerror(errno));
    if (mnl_socket_bind(nl.get(), 0, MNL_SOCKET_AUTOPID) < 0)
        return make_error(std::string("cannot bind generic netlink: ") + std::strerror(errno));
    alignas(nlmsghdr) std::array<char, kBufSize> buf;
    nlmsghdr* req = put_request(buf.data(), GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 1);
    mnl_attr_put_strz(req, CTRL_ATTR_FAMILY_NAME, "netdev");
    uint16_t family = 0;
    auto r = exchange(nl.get(), req, [&](const nlattr* a) {
        if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID && mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
            family = mnl_attr_get_u16(a);
    });
    if (!r)
        return make_error(
            "the kernel has no \"netdev\" generic netlink family (Linux 6.3 or "
            "later has it): " +
            r.error());
    if (!family) return make_error("generic netlink: no id in the \"netdev\" family's reply");
    return XdpFeatures(std::move(nl), family);
}

Result<uint64_t> XdpFeatures::of(uint32_t ifindex) {
    alignas(nlmsghdr) std::array<char, kBufSize> buf;
    nlmsghdr* req = put_request(buf.data(), family_, kNetdevCmdDevGet, kNetdevVersion, ++seq_);
    mnl_attr_put_u32(req, kNetdevAttrIfindex, ifindex);
    bool found = false;
    uint64_t features = 0;
    auto r = exchange(nl_.get(), req, [&](const nlattr* a) {
        if (mnl_attr_get_type(a) == kNetdevAttrXdpFeatures &&
            mnl_attr_validate(a, MNL_TYPE_U64) >= 0) {
            features = mnl_attr_get_u64(a);
            found = true;
        }
    });
    if (!r)
        return make_error("XDP features of ifindex " + std::to_string(ifindex) + ": " + r.error());
    if (!found)
        return make_error("XDP features of ifindex " + std::to_string(ifindex) +
                          ": no xdp-features attribute in the kernel's reply");
    return features;
}

}  // namespace xvs::port
