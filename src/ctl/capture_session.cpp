// `xvsctl capture`'s daemon half, see ctl/capture_session.h.
#include "ctl/capture_session.h"

#include <pcap/pcap.h>

#include <algorithm>

namespace xvs::ctl {

namespace {

constexpr uint64_t kArmTimeoutMs = 2000;

std::string hex(const uint8_t* p, size_t n) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out(n * 2, '0');
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = kDigits[p[i] >> 4];
        out[2 * i + 1] = kDigits[p[i] & 0xf];
    }
    return out;
}

std::string_view point_name(stack::CapturePoint p) {
    switch (p) {
        case stack::CapturePoint::Rx: return "rx";
        case stack::CapturePoint::Tx: return "tx";
        case stack::CapturePoint::Drop: return "drop";
    }
    return "?";
}

}  // namespace

Result<std::vector<bpf_insn>> capture_compile_filter(const std::string& expr) {
    if (expr.empty()) return std::vector<bpf_insn>{};
    // A dead handle: libpcap compiles for a link type without opening any device.
    std::unique_ptr<pcap_t, void (*)(pcap_t*)> dead(
        pcap_open_dead(DLT_EN10MB, static_cast<int>(stack::kCaptureSnapLen)), pcap_close);
    if (!dead) return make_error("filter: libpcap could not make a handle to compile with");
    bpf_program prog{};
    if (pcap_compile(dead.get(), &prog, expr.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0)
        return make_error("filter '" + expr + "': " + pcap_geterr(dead.get()));
    std::vector<bpf_insn> insns(prog.bf_insns, prog.bf_insns + prog.bf_len);
    pcap_freecode(&prog);
    return insns;
}

Result<stack::Counter> capture_drop_reason(const std::string& name) {
    for (size_t c = 0; c < stack::kCounterCount; ++c) {
        const stack::CounterInfo& info = stack::kCounterInfo[c];
        if (info.name != name) continue;
        if (!info.is_drop)
            return make_error("'" + name + "' is a counter, not a drop reason (xvsctl stats -a "
                              "lists the drop_* reasons)");
        const auto reason = static_cast<stack::Counter>(c);
        if (!stack::capture_drop_exact(reason))
            return make_error("'" + name + "' cannot be captured: " +
                              (reason == stack::Counter::drop_mbuf_alloc
                                   ? std::string("it counts frames never built (no buffer)")
                                   : std::string("reassembly keeps held fragments as bytes, not "
                                                 "frames; capture rx with a filter such as "
                                                 "'ip[6:2] & 0x3fff != 0' instead")));
        return reason;
    }
    return make_error("no drop reason '" + name + "' (xvsctl stats -a lists them)");
}

CaptureSession::CaptureSession(std::vector<lb::Worker*> workers, uint64_t id)
    : workers_(std::move(workers)), id_(id), last_read_(std::chrono::steady_clock::now()) {}

Result<std::unique_ptr<CaptureSession>> CaptureSession::start(std::vector<lb::Worker*> workers,
                                                              const stack::CaptureSpec& spec,
                                                              uint64_t id) {
    std::unique_ptr<CaptureSession> s(new CaptureSession(std::move(workers), id));
    for (size_t i = 0; i < s->workers_.size(); ++i)
        s->taps_.push_back(std::make_shared<stack::CaptureTap>(spec));
    s->armed_ = true;  // from here the destructor disarms whatever was armed
    for (size_t i = 0; i < s->workers_.size(); ++i) {
        if (auto r = s->workers_[i]->set_capture(s->taps_[i], kArmTimeoutMs); !r)
            return make_error("capture: " + r.error());
    }
    return s;
}

CaptureSession::~CaptureSession() {
    if (armed_) (void)stop();
}

Result<void> CaptureSession::stop() {
    std::string failed;
    for (lb::Worker* w : workers_)
        if (auto r = w->set_capture(nullptr, kArmTimeoutMs); !r) failed += r.error() + "; ";
    if (!failed.empty()) {
        // A worker that did not answer may still write into its tap: the taps are kept for
        // the life of the process rather than freed under it.
        static std::vector<std::shared_ptr<stack::CaptureTap>> orphans;
        orphans.insert(orphans.end(), taps_.begin(), taps_.end());
        armed_ = false;
        return make_error("capture stop: " + failed);
    }
    armed_ = false;
    return {};
}

nlohmann::json CaptureSession::read(size_t max) {
    last_read_ = std::chrono::steady_clock::now();
    nlohmann::json packets = nlohmann::json::array();
    std::vector<stack::CaptureRecord> recs;
    for (size_t i = 0; i < taps_.size() && recs.size() < max; ++i) {
        const size_t before = recs.size();
        taps_[i]->drain(recs, max - recs.size());
        for (size_t k = before; k < recs.size(); ++k) {
            const stack::CaptureRecord& r = recs[k];
            nlohmann::json p = {{"ts_ns", r.ts_ns},
                                {"wire_len", r.wire_len},
                                {"worker", workers_[i]->id()},
                                {"port", r.port},
                                {"point", point_name(r.point)},
                                {"data", hex(r.data, r.len)}};
            if (r.point == stack::CapturePoint::Drop)
                p["reason"] = stack::kCounterInfo[static_cast<size_t>(r.reason)].name;
            packets.push_back(std::move(p));
        }
    }
    // Workers drain in turn: sorted by time, the file reads as one capture.
    std::sort(packets.begin(), packets.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
        return a.at("ts_ns").get<uint64_t>() < b.at("ts_ns").get<uint64_t>();
    });
    return packets;
}

uint64_t CaptureSession::matched() const {
    uint64_t n = 0;
    for (const auto& t : taps_) n += t->matched();
    return n;
}

uint64_t CaptureSession::lost() const {
    uint64_t n = 0;
    for (const auto& t : taps_) n += t->lost();
    return n;
}

}  // namespace xvs::ctl
