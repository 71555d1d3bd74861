// The IPVS TCP transition table, transcribed from shared/reference/lvs-conventions.md
// (columns: current state NO ES SS SR FW TW CL CW LA LI SA).
#include "lb/proto/tcp.h"

#include "net/headers.h"

namespace xvs::lb {

namespace {

using S = TcpState;
constexpr S ES = S::Established, SS = S::SynSent, SR = S::SynRecv,
            FW = S::FinWait, TW = S::TimeWait, CL = S::Close, CW = S::CloseWait,
            LA = S::LastAck, LI = S::Listen, SA = S::SynAck;

using Row = std::array<S, kTcpStateCount>;
// [dir][event] with event 0 syn, 1 fin, 2 ack, 3 rst.
constexpr std::array<std::array<Row, 4>, 3> kTable{{
    {{
        // INPUT
        Row{SR, ES, ES, SR, SR, SR, SR, SR, SR, SR, SR},  // syn
        Row{CL, CW, SS, TW, TW, TW, CL, CW, LA, LI, TW},  // fin
        Row{ES, ES, SS, ES, FW, TW, CL, CW, CL, LI, ES},  // ack
        Row{CL, CL, CL, SR, CL, CL, CL, CL, LA, LI, SR},  // rst
    }},
    {{
        // OUTPUT
        Row{SS, ES, SS, SR, SS, SS, SS, SS, SS, LI, SR},
        Row{TW, FW, SS, TW, FW, TW, CL, TW, LA, LI, TW},
        Row{ES, ES, SS, ES, FW, TW, CL, CW, LA, ES, ES},
        Row{CL, CL, SS, CL, CL, TW, CL, CL, CL, CL, CL},
    }},
    {{
        // INPUT-ONLY
        Row{SR, ES, ES, SR, SR, SR, SR, SR, SR, SR, SR},
        Row{CL, FW, SS, TW, FW, TW, CL, CW, LA, LI, TW},
        Row{ES, ES, SS, ES, FW, TW, CL, CW, CL, LI, ES},
        Row{CL, CL, CL, SR, CL, CL, CL, CL, LA, LI, CL},
    }},
}};

constexpr std::array<std::string_view, kTcpStateCount> kNames{
    "NONE",     "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT", "TIME_WAIT",
    "CLOSE",    "CLOSE_WAIT",  "LAST_ACK", "LISTEN",   "SYNACK"};

}  // namespace

TcpState tcp_state_next(TcpState cur, FlowDir dir, uint8_t flags) {
    int event;
    if (flags & net::kTcpRst)
        event = 3;
    else if (flags & net::kTcpSyn)
        event = 0;
    else if (flags & net::kTcpFin)
        event = 1;
    else if (flags & net::kTcpAck)
        event = 2;
    else
        return cur;
    return kTable[static_cast<size_t>(dir)][event][static_cast<size_t>(cur)];
}

std::string_view tcp_state_name(TcpState s) { return kNames[static_cast<size_t>(s)]; }

bool tcp_state_is_active(TcpState s) {
    return s == ES || s == SS || s == SR || s == SA;
}

Timeouts Timeouts::dpvs_defaults() {
    Timeouts t;
    t.tcp = {2, 90, 3, 30, 7, 7, 3, 7, 7, 120, 30};
    t.udp = 300;
    t.icmp = 300;
    return t;
}

Timeouts Timeouts::ipvs_defaults() {
    Timeouts t;
    t.tcp = {2, 900, 120, 60, 120, 120, 10, 60, 30, 120, 120};
    t.udp = 300;
    t.icmp = 300;
    return t;
}

}  // namespace xvs::lb
