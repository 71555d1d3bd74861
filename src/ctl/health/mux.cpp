// Shared UDP and ICMP sockets of the checks; see mux.h.
#include "ctl/health/mux.h"

#include <linux/errqueue.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace xvs::ctl::health {

namespace {

std::tuple<uint64_t, uint64_t, uint16_t> ep_key(const net::InetEndpoint& ep) {
    return {ep.addr.word(0), ep.addr.word(1), ep.port};
}

uint16_t icmp_checksum(const uint8_t* p, size_t n) {
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(p[i]) << 8 | p[i + 1];
    if (n & 1) sum += uint32_t(p[n - 1]) << 8;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

}  // namespace

// ---- UDP ------------------------------------------------------------------------------------

UdpMux::~UdpMux() {
    for (auto& [k, s] : sockets_) {
        loop_.unwatch(s.fd);
        close(s.fd);
    }
}

Result<UdpMux::Sock*> UdpMux::socket_for(const ProbeTarget& target) {
    const bool v4 = target.dst.addr.is_v4();
    const net::InetAddr src = target.bindto.value_or(net::InetAddr{});
    const SockKey key{v4, src.word(0), src.word(1)};
    auto it = sockets_.find(key);
    if (it != sockets_.end()) return &it->second;
    auto fd = socket_open(v4, SOCK_DGRAM, 0, target.bindto);
    if (!fd) return make_error(fd.error());
    const int on = 1;
    if (v4)
        setsockopt(*fd, IPPROTO_IP, IP_RECVERR, &on, sizeof on);
    else
        setsockopt(*fd, IPPROTO_IPV6, IPV6_RECVERR, &on, sizeof on);
    Sock& s = sockets_[key];
    s.fd = *fd;
    if (auto r = loop_.watch(s.fd, EPOLLIN, [this, &s](uint32_t ev) { on_readable(s, ev); }); !r) {
        close(s.fd);
        sockets_.erase(key);
        return make_error(r.error());
    }
    return &s;
}

Result<void> UdpMux::send(MuxWaiter* w, const ProbeTarget& target, std::string_view payload) {
    auto s = socket_for(target);
    if (!s) return make_error(s.error());
    sockaddr_storage ss{};
    const socklen_t len = sockaddr_of(target.dst, ss);
    if (::sendto((*s)->fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&ss),
                 len) < 0)
        return make_error(std::string("sendto: ") + strerror(errno));
    (*s)->waiters.emplace(ep_key(target.dst), w);
    return {};
}

void UdpMux::forget(MuxWaiter* w) {
    for (auto& [k, s] : sockets_)
        std::erase_if(s.waiters, [w](const auto& kv) { return kv.second == w; });
}

void UdpMux::on_readable(Sock& s, uint32_t events) {
    char buf[65536];
    for (int n = 0; n < 256; ++n) {
        sockaddr_storage from{};
        socklen_t flen = sizeof from;
        ssize_t len = recvfrom(s.fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
        if (len < 0) break;
        const auto key = ep_key(endpoint_of(from));
        auto [lo, hi] = s.waiters.equal_range(key);
        for (auto it = lo; it != hi; ++it) {
            MuxWaiter* w = it->second;
            if (w->on_reply(std::string_view(buf, static_cast<size_t>(len)))) {
                s.waiters.erase(it);  // w may be gone now: touch nothing of it
                break;
            }
        }
    }
    (void)events;
    // ICMP errors (port unreachable, ...) queued by IP_RECVERR, about the datagram we sent.
    for (int n = 0; n < 256; ++n) {
        sockaddr_storage dst{};
        char data[512];
        char control[512];
        iovec iov{data, sizeof data};
        msghdr msg{};
        msg.msg_name = &dst;
        msg.msg_namelen = sizeof dst;
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        if (recvmsg(s.fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) break;
        int err = 0;
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR) ||
                (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR)) {
                sock_extended_err ee{};
                std::memcpy(&ee, CMSG_DATA(c), sizeof ee);
                err = static_cast<int>(ee.ee_errno);
            }
        }
        if (!err) continue;
        const auto key = ep_key(endpoint_of(dst));
        std::vector<MuxWaiter*> hit;
        auto [lo, hi] = s.waiters.equal_range(key);
        for (auto it = lo; it != hi; ++it) hit.push_back(it->second);
        s.waiters.erase(lo, hi);
        for (MuxWaiter* w : hit) w->on_error(std::string("ICMP error: ") + strerror(err));
    }
}

// ---- ICMP echo ------------------------------------------------------------------------------

IcmpMux::~IcmpMux() {
    for (auto& [k, s] : sockets_) {
        loop_.unwatch(s.fd);
        close(s.fd);
    }
}

Result<IcmpMux::Sock*> IcmpMux::socket_for(const ProbeTarget& target) {
    const bool v4 = target.dst.addr.is_v4();
    const net::InetAddr src = target.bindto.value_or(net::InetAddr{});
    const SockKey key{v4, src.word(0), src.word(1)};
    auto it = sockets_.find(key);
    if (it != sockets_.end()) return &it->second;
    const int proto = v4 ? int{IPPROTO_ICMP} : int{IPPROTO_ICMPV6};
    // A ping socket (net.ipv4.ping_group_range) needs no privilege; else a raw one (root).
    bool raw = false;
    auto fd = socket_open(v4, SOCK_DGRAM, proto, target.bindto);
    if (!fd) {
        raw = true;
        fd = socket_open(v4, SOCK_RAW, proto, target.bindto);
    }
    if (!fd) return make_error("PING_CHECK: no ICMP socket (" + fd.error() + ")");
    Sock& s = sockets_[key];
    s.fd = *fd;
    s.v4 = v4;
    s.raw = raw;
    s.id = static_cast<uint16_t>(getpid() ^ (sockets_.size() << 11));
    if (raw && !v4) {
        icmp6_filter filter;
        ICMP6_FILTER_SETBLOCKALL(&filter);
        ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
        setsockopt(s.fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter);
    }
    if (auto r = loop_.watch(s.fd, EPOLLIN, [this, &s](uint32_t) { on_readable(s); }); !r) {
        close(s.fd);
        sockets_.erase(key);
        return make_error(r.error());
    }
    return &s;
}

Result<void> IcmpMux::send(MuxWaiter* w, const ProbeTarget& target) {
    auto sp = socket_for(target);
    if (!sp) return make_error(sp.error());
    Sock& s = **sp;
    uint16_t seq = s.next_seq++;
    for (int i = 0; i < 65536 && s.waiters.count(seq); ++i) seq = s.next_seq++;
    uint8_t pkt[8 + 16] = {};
    pkt[0] = s.v4 ? uint8_t{ICMP_ECHO} : uint8_t{ICMP6_ECHO_REQUEST};
    pkt[4] = static_cast<uint8_t>(s.id >> 8);
    pkt[5] = static_cast<uint8_t>(s.id);
    pkt[6] = static_cast<uint8_t>(seq >> 8);
    pkt[7] = static_cast<uint8_t>(seq);
    std::memcpy(pkt + 8, "xvs-health-check", 16);
    if (s.v4) {  // the kernel sums ICMPv6 (and ping sockets) itself; a raw IPv4 one does not
        const uint16_t sum = icmp_checksum(pkt, sizeof pkt);
        pkt[2] = static_cast<uint8_t>(sum >> 8);
        pkt[3] = static_cast<uint8_t>(sum);
    }
    sockaddr_storage ss{};
    const socklen_t len = sockaddr_of(net::InetEndpoint{target.dst.addr, 0}, ss);
    if (::sendto(s.fd, pkt, sizeof pkt, 0, reinterpret_cast<sockaddr*>(&ss), len) < 0)
        return make_error(std::string("PING_CHECK: sendto: ") + strerror(errno));
    s.waiters[seq] = {w, target.dst.addr};
    return {};
}

void IcmpMux::forget(MuxWaiter* w) {
    for (auto& [k, s] : sockets_)
        std::erase_if(s.waiters, [w](const auto& kv) { return kv.second.first == w; });
}

void IcmpMux::on_readable(Sock& s) {
    uint8_t buf[2048];
    for (int n = 0; n < 256; ++n) {
        sockaddr_storage from{};
        socklen_t flen = sizeof from;
        ssize_t len = recvfrom(s.fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
        if (len < 0) break;
        const uint8_t* p = buf;
        size_t left = static_cast<size_t>(len);
        if (s.raw && s.v4) {  // raw IPv4 sockets deliver the IP header
            if (left < 20) continue;
            const size_t ihl = size_t(p[0] & 0x0f) * 4;
            if (left < ihl + 8) continue;
            p += ihl;
            left -= ihl;
        }
        if (left < 8) continue;
        const uint8_t want = s.v4 ? uint8_t{ICMP_ECHOREPLY} : uint8_t{ICMP6_ECHO_REPLY};
        if (p[0] != want) continue;
        const uint16_t id = static_cast<uint16_t>(p[4] << 8 | p[5]);
        const uint16_t seq = static_cast<uint16_t>(p[6] << 8 | p[7]);
        if (s.raw && id != s.id) continue;  // someone else's ping
        auto it = s.waiters.find(seq);
        if (it == s.waiters.end() || !(it->second.second == endpoint_of(from).addr)) continue;
        MuxWaiter* w = it->second.first;
        s.waiters.erase(it);
        w->on_reply(std::string_view(reinterpret_cast<const char*>(p), left));
    }
}

}  // namespace xvs::ctl::health
