// Tests lb/tcp_state.{h,cpp} against shared/reference/lvs-conventions.md: the transition table
// is pasted below exactly as the reference prints it and every one of its 3x4x11 cells is
// checked, under every flag combination that selects that row.
#include "lb/proto/tcp.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "net/headers.h"

namespace xvs::lb {
namespace {

// Verbatim from "TCP state transitions (IPVS, current mainline)".
constexpr const char* kReferenceTable = R"(
          NO  ES  SS  SR  FW  TW  CL  CW  LA  LI  SA
IN  syn   SR  ES  ES  SR  SR  SR  SR  SR  SR  SR  SR
IN  fin   CL  CW  SS  TW  TW  TW  CL  CW  LA  LI  TW
IN  ack   ES  ES  SS  ES  FW  TW  CL  CW  CL  LI  ES
IN  rst   CL  CL  CL  SR  CL  CL  CL  CL  LA  LI  SR
OUT syn   SS  ES  SS  SR  SS  SS  SS  SS  SS  LI  SR
OUT fin   TW  FW  SS  TW  FW  TW  CL  TW  LA  LI  TW
OUT ack   ES  ES  SS  ES  FW  TW  CL  CW  LA  ES  ES
OUT rst   CL  CL  SS  CL  CL  TW  CL  CL  CL  CL  CL
IO  syn   SR  ES  ES  SR  SR  SR  SR  SR  SR  SR  SR
IO  fin   CL  FW  SS  TW  FW  TW  CL  CW  LA  LI  TW
IO  ack   ES  ES  SS  ES  FW  TW  CL  CW  CL  LI  ES
IO  rst   CL  CL  CL  SR  CL  CL  CL  CL  LA  LI  CL
)";

// The reference's abbreviations, mapped by name rather than by enum position so a reordered
// enum cannot line up by accident.
const std::map<std::string, TcpState> kAbbrev{
    {"NO", TcpState::None},     {"ES", TcpState::Established}, {"SS", TcpState::SynSent},
    {"SR", TcpState::SynRecv},  {"FW", TcpState::FinWait},     {"TW", TcpState::TimeWait},
    {"CL", TcpState::Close},    {"CW", TcpState::CloseWait},   {"LA", TcpState::LastAck},
    {"LI", TcpState::Listen},   {"SA", TcpState::SynAck},
};

const std::map<std::string, FlowDir> kDirs{
    {"IN", FlowDir::Input}, {"OUT", FlowDir::Output}, {"IO", FlowDir::InputOnly}};

using net::kTcpAck, net::kTcpFin, net::kTcpPsh, net::kTcpRst, net::kTcpSyn, net::kTcpUrg;

// Every flag combination that must select a row: the row's own flag plus any lower-priority
// flags (priority RST > SYN > FIN > ACK), with PSH/URG noise.
const std::map<std::string, std::vector<uint8_t>> kRowFlags{
    {"rst",
     {kTcpRst, kTcpRst | kTcpAck, kTcpRst | kTcpSyn, kTcpRst | kTcpFin,
      kTcpRst | kTcpSyn | kTcpFin | kTcpAck | kTcpPsh}},
    {"syn", {kTcpSyn, kTcpSyn | kTcpAck, kTcpSyn | kTcpFin, kTcpSyn | kTcpFin | kTcpAck}},
    {"fin", {kTcpFin, kTcpFin | kTcpAck, kTcpFin | kTcpPsh | kTcpAck}},
    {"ack", {kTcpAck, kTcpAck | kTcpPsh, kTcpAck | kTcpUrg}},
};

struct Cell {
    std::string dir;
    std::string event;
    std::string from;
    std::string to;
};

std::vector<Cell> parse_reference() {
    std::istringstream in(kReferenceTable);
    std::string line;
    std::vector<std::string> columns;
    std::vector<Cell> cells;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::vector<std::string> tokens;
        for (std::string token; words >> token;) tokens.push_back(token);
        if (tokens.empty()) continue;
        if (columns.empty()) {
            columns = tokens;
            continue;
        }
        EXPECT_EQ(tokens.size(), columns.size() + 2) << line;
        for (size_t i = 2; i < tokens.size() && i - 2 < columns.size(); ++i) {
            cells.push_back({tokens[0], tokens[1], columns[i - 2], tokens[i]});
        }
    }
    return cells;
}

TEST(TcpState, ReferenceTableParsesToEveryCell) {
    const std::vector<Cell> cells = parse_reference();
    EXPECT_EQ(cells.size(), 3u * 4u * kTcpStateCount);
    for (const Cell& cell : cells) {
        EXPECT_TRUE(kDirs.count(cell.dir)) << cell.dir;
        EXPECT_TRUE(kRowFlags.count(cell.event)) << cell.event;
        EXPECT_TRUE(kAbbrev.count(cell.from)) << cell.from;
        EXPECT_TRUE(kAbbrev.count(cell.to)) << cell.to;
    }
}

TEST(TcpState, EveryCellMatchesTheReference) {
    size_t checked = 0;
    for (const Cell& cell : parse_reference()) {
        const TcpState from = kAbbrev.at(cell.from);
        const TcpState want = kAbbrev.at(cell.to);
        for (uint8_t flags : kRowFlags.at(cell.event)) {
            const TcpState got = tcp_state_next(from, kDirs.at(cell.dir), flags);
            EXPECT_EQ(got, want) << cell.dir << " " << cell.event << " (flags 0x" << std::hex
                                 << int(flags) << std::dec << ") from " << cell.from
                                 << ": got " << tcp_state_name(got) << ", want "
                                 << tcp_state_name(want);
            ++checked;
        }
    }
    EXPECT_GT(checked, 3u * 4u * kTcpStateCount);
}

TEST(TcpState, FlagPrioritySpotChecks) {
    // Each case starts from a state where the two competing rows lead to different states.
    // RST+SYN: rst row (NONE -> CLOSE), not syn (-> SYN_RECV).
    EXPECT_EQ(tcp_state_next(TcpState::None, FlowDir::Input, kTcpRst | kTcpSyn), TcpState::Close);
    // SYN+FIN: syn row (NONE -> SYN_RECV), not fin (-> CLOSE).
    EXPECT_EQ(tcp_state_next(TcpState::None, FlowDir::Input, kTcpSyn | kTcpFin),
              TcpState::SynRecv);
    // FIN+ACK: fin row (ESTABLISHED -> CLOSE_WAIT), not ack (-> ESTABLISHED).
    EXPECT_EQ(tcp_state_next(TcpState::Established, FlowDir::Input, kTcpFin | kTcpAck),
              TcpState::CloseWait);
    // SYN+ACK from the RS: syn row (NONE -> SYN_SENT), not ack (-> ESTABLISHED).
    EXPECT_EQ(tcp_state_next(TcpState::None, FlowDir::Output, kTcpSyn | kTcpAck),
              TcpState::SynSent);
}

TEST(TcpState, NoRelevantFlagKeepsState) {
    for (size_t s = 0; s < kTcpStateCount; ++s) {
        const auto state = static_cast<TcpState>(s);
        for (FlowDir dir : {FlowDir::Input, FlowDir::Output, FlowDir::InputOnly}) {
            for (uint8_t flags : {uint8_t{0}, kTcpPsh, kTcpUrg, uint8_t(kTcpPsh | kTcpUrg),
                                  uint8_t{0xc0} /* ECE|CWR */}) {
                EXPECT_EQ(tcp_state_next(state, dir, flags), state)
                    << tcp_state_name(state) << " flags 0x" << std::hex << int(flags);
            }
        }
    }
}

TEST(TcpState, TypicalConnectionThroughTheDirector) {
    // Client SYN, RS SYN+ACK, client ACK, client FIN, RS FIN, client ACK (FULLNAT/NAT).
    TcpState s = TcpState::None;
    s = tcp_state_next(s, FlowDir::Input, kTcpSyn);
    EXPECT_EQ(s, TcpState::SynRecv);
    s = tcp_state_next(s, FlowDir::Output, kTcpSyn | kTcpAck);
    EXPECT_EQ(s, TcpState::SynRecv);
    s = tcp_state_next(s, FlowDir::Input, kTcpAck);
    EXPECT_EQ(s, TcpState::Established);
    s = tcp_state_next(s, FlowDir::Input, kTcpFin | kTcpAck);
    EXPECT_EQ(s, TcpState::CloseWait);
    s = tcp_state_next(s, FlowDir::Output, kTcpFin | kTcpAck);
    EXPECT_EQ(s, TcpState::TimeWait);
    s = tcp_state_next(s, FlowDir::Input, kTcpAck);
    EXPECT_EQ(s, TcpState::TimeWait);
}

TEST(TcpState, NamesAsIpvsadmPrintsThem) {
    const std::map<TcpState, std::string_view> want{
        {TcpState::None, "NONE"},           {TcpState::Established, "ESTABLISHED"},
        {TcpState::SynSent, "SYN_SENT"},    {TcpState::SynRecv, "SYN_RECV"},
        {TcpState::FinWait, "FIN_WAIT"},    {TcpState::TimeWait, "TIME_WAIT"},
        {TcpState::Close, "CLOSE"},         {TcpState::CloseWait, "CLOSE_WAIT"},
        {TcpState::LastAck, "LAST_ACK"},    {TcpState::Listen, "LISTEN"},
        {TcpState::SynAck, "SYNACK"},
    };
    ASSERT_EQ(want.size(), kTcpStateCount);
    for (const auto& [state, name] : want) EXPECT_EQ(tcp_state_name(state), name);
}

TEST(TcpState, ActiveSetIsEstablishedAndSynStates) {
    for (size_t s = 0; s < kTcpStateCount; ++s) {
        const auto state = static_cast<TcpState>(s);
        const bool want = state == TcpState::Established || state == TcpState::SynSent ||
                          state == TcpState::SynRecv || state == TcpState::SynAck;
        EXPECT_EQ(tcp_state_is_active(state), want) << tcp_state_name(state);
    }
}

// Timeouts are keyed by the printed state name so index and name must agree.
void expect_timeouts(const Timeouts& t, const std::map<std::string_view, uint32_t>& want) {
    size_t matched = 0;
    for (size_t s = 0; s < kTcpStateCount; ++s) {
        const auto state = static_cast<TcpState>(s);
        auto it = want.find(tcp_state_name(state));
        if (it == want.end()) continue;
        EXPECT_EQ(t.of(state), it->second) << it->first;
        EXPECT_EQ(t.tcp[s], it->second) << it->first;
        ++matched;
    }
    EXPECT_EQ(matched, want.size());
}

TEST(TcpState, IpvsDefaultTimeouts) {
    const Timeouts t = Timeouts::ipvs_defaults();
    // Reference, "Timeouts (seconds)": every TCP state and UDP.
    expect_timeouts(t, {{"NONE", 2},
                        {"ESTABLISHED", 900},
                        {"SYN_SENT", 120},
                        {"SYN_RECV", 60},
                        {"FIN_WAIT", 120},
                        {"TIME_WAIT", 120},
                        {"CLOSE", 10},
                        {"CLOSE_WAIT", 60},
                        {"LAST_ACK", 30},
                        {"LISTEN", 120},
                        {"SYNACK", 120}});
    EXPECT_EQ(t.udp, 300u);
}

TEST(TcpState, DpvsDefaultTimeouts) {
    const Timeouts t = Timeouts::dpvs_defaults();
    // The reference lists these eight and UDP for DPVS.
    expect_timeouts(t, {{"ESTABLISHED", 90},
                        {"SYN_SENT", 3},
                        {"SYN_RECV", 30},
                        {"FIN_WAIT", 7},
                        {"TIME_WAIT", 7},
                        {"CLOSE", 3},
                        {"CLOSE_WAIT", 7},
                        {"LAST_ACK", 7}});
    EXPECT_EQ(t.udp, 300u);
    // The reference is silent on these three; tcp_state.h documents DPVS's shipped values.
    expect_timeouts(t, {{"NONE", 2}, {"LISTEN", 120}, {"SYNACK", 30}});
}

TEST(TcpState, EveryStateHasATimeout) {
    for (const Timeouts& t : {Timeouts::ipvs_defaults(), Timeouts::dpvs_defaults()}) {
        for (size_t s = 0; s < kTcpStateCount; ++s) EXPECT_GT(t.tcp[s], 0u) << s;
    }
}

}  // namespace
}  // namespace xvs::lb
