// Sockets UDP_CHECK, DNS_CHECK and PING_CHECK share: one unconnected UDP socket per family and
// source address (bindto) for every UDP and DNS check, one ICMP echo socket per family and
// source for every PING_CHECK, so thousands of checks cost a handful of descriptors. Replies
// are handed to the waiters registered for their source endpoint (UDP) or echo sequence
// (ICMP); ICMP errors about a UDP datagram (IP_RECVERR) to the waiters of its destination.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/result.h"
#include "ctl/health/loop.h"
#include "ctl/health/probe.h"

namespace xvs::ctl::health {

struct MuxWaiter {
    // Returns true when the datagram was the one awaited (the waiter is then removed).
    std::function<bool(std::string_view)> on_reply;
    std::function<void(std::string)> on_error;  // an ICMP error about our datagram
};

class UdpMux {
  public:
    explicit UdpMux(Loop& loop) : loop_(loop) {}
    ~UdpMux();
    UdpMux(const UdpMux&) = delete;
    UdpMux& operator=(const UdpMux&) = delete;

    // Sends `payload` to target.dst from target.bindto and registers w until forget(w).
    Result<void> send(MuxWaiter* w, const ProbeTarget& target, std::string_view payload);
    void forget(MuxWaiter* w);
    size_t socket_count() const { return sockets_.size(); }

  private:
    struct Sock {
        int fd = -1;
        std::multimap<std::tuple<uint64_t, uint64_t, uint16_t>, MuxWaiter*> waiters;
    };
    using SockKey = std::tuple<bool, uint64_t, uint64_t>;  // v4, bindto words
    Result<Sock*> socket_for(const ProbeTarget& target);
    void on_readable(Sock& s, uint32_t events);

    Loop& loop_;
    std::map<SockKey, Sock> sockets_;
};

class IcmpMux {
  public:
    explicit IcmpMux(Loop& loop) : loop_(loop) {}
    ~IcmpMux();
    IcmpMux(const IcmpMux&) = delete;
    IcmpMux& operator=(const IcmpMux&) = delete;

    // Sends an echo request to target.dst; w gets the reply's payload.
    Result<void> send(MuxWaiter* w, const ProbeTarget& target);
    void forget(MuxWaiter* w);
    size_t socket_count() const { return sockets_.size(); }

  private:
    struct Sock {
        int fd = -1;
        bool v4 = true;
        bool raw = false;  // SOCK_RAW (no ping socket allowed): filter by our echo id
        uint16_t id = 0;
        uint16_t next_seq = 1;
        std::map<uint16_t, std::pair<MuxWaiter*, net::InetAddr>> waiters;  // by sequence
    };
    using SockKey = std::tuple<bool, uint64_t, uint64_t>;
    Result<Sock*> socket_for(const ProbeTarget& target);
    void on_readable(Sock& s);

    Loop& loop_;
    std::map<SockKey, Sock> sockets_;
};

}  // namespace xvs::ctl::health
