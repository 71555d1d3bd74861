// The IPVS TCP state machine as a table (shared/reference/lvs-conventions.md) plus per-state
// timeouts. Flag priority of a packet: RST, then SYN, then FIN, then ACK.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace xvs::lb {

enum class TcpState : uint8_t {
    None,
    Established,
    SynSent,
    SynRecv,
    FinWait,
    TimeWait,
    Close,
    CloseWait,
    LastAck,
    Listen,
    SynAck,
    Count
};
inline constexpr size_t kTcpStateCount = static_cast<size_t>(TcpState::Count);

// Which way a packet travels relative to the connection.
//   Input     client -> VIP
//   Output    RS -> client (through the director)
//   InputOnly director sees only the client side (DR/TUN)
enum class FlowDir : uint8_t { Input, Output, InputOnly };

// Next state for a packet with TCP flags `flags` (net::kTcpSyn...) seen in `dir` while in `cur`.
// A packet with none of RST/SYN/FIN/ACK leaves the state unchanged.
TcpState tcp_state_next(TcpState cur, FlowDir dir, uint8_t flags);

// Upper-case name as ipvsadm -c prints it: "NONE", "ESTABLISHED", "SYN_SENT", "SYN_RECV",
// "FIN_WAIT", "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "SYNACK".
std::string_view tcp_state_name(TcpState s);

// ActiveConn counts ESTABLISHED, SYN_SENT, SYN_RECV, SYNACK; everything else is InActConn.
bool tcp_state_is_active(TcpState s);

// Per-state timeouts in seconds, plus UDP and ICMP (echo conns of SNAT, identifier mapped
// like a port). Index with static_cast<size_t>(TcpState).
struct Timeouts {
    std::array<uint32_t, kTcpStateCount> tcp{};
    uint32_t udp = 0;
    uint32_t icmp = 0;

    // DPVS's shipped values (xvs default): NONE 2, ES 90, SS 3, SR 30, FW 7, TW 7, CL 3, CW 7,
    // LA 7, LI 120, SA 30; UDP 300; ICMP 300 (DPVS's icmp NORMAL state).
    static Timeouts dpvs_defaults();
    // IPVS's kernel values: NONE 2, ES 900, SS 120, SR 60, FW 120, TW 120, CL 10, CW 60,
    // LA 30, LI 120, SA 120; UDP 300. IPVS has no ICMP conns: ICMP 300 as DPVS.
    static Timeouts ipvs_defaults();
    uint32_t of(TcpState s) const { return tcp[static_cast<size_t>(s)]; }
};

}  // namespace xvs::lb
