// The control socket's capture requests (docs/control-protocol.md "capture"): capture_start
// arms a CaptureSession (ctl/capture_session.h) on every worker, capture_read drains it,
// capture_stop ends it. One capture at a time; a session nobody reads for 5 s is ended.
#include <algorithm>

#include "ctl/controller.h"
#include "ctl/controller_request.h"
#include "ctl/log.h"

namespace xvs::ctl {

using nlohmann::json;
using namespace request;

namespace {

json capture_err(const std::string& text) {
    return json{{"ok", false}, {"error", text}};
}

constexpr size_t kReadMax = 256;  // frames per capture_read reply (about 1 MB of hex at most)

}  // namespace

json Controller::capture_request(const std::string& cmd, const json& req) {
    if (cmd == "capture_start") {
        if (capture_)
            return capture_err("Device or resource busy: a capture is running (id " +
                               std::to_string(capture_->id()) + "); one at a time");
        stack::CaptureSpec spec;
        const std::string point = req.contains("point") ? get_str(req, "point") : "rx";
        if (point == "rx")
            spec.point = stack::CapturePoint::Rx;
        else if (point == "tx")
            spec.point = stack::CapturePoint::Tx;
        else if (point == "drop")
            spec.point = stack::CapturePoint::Drop;
        else
            throw BadRequest{"'point' must be rx, tx or drop, not '" + point + "'"};
        if (req.contains("reason")) {
            if (spec.point != stack::CapturePoint::Drop)
                throw BadRequest{"'reason' goes with point drop"};
            auto reason = capture_drop_reason(get_str(req, "reason"));
            if (!reason) return capture_err(reason.error());
            spec.reason = *reason;
        }
        if (req.contains("ifname")) {
            const std::string name = get_str(req, "ifname");
            const auto& ports = director_.snapshot()->stack.ports;
            auto it = std::find_if(ports.begin(), ports.end(),
                                   [&](const stack::PortView& p) { return p.name == name; });
            if (it == ports.end()) return capture_err("No such device: " + name);
            spec.port = static_cast<int>(it - ports.begin());
        }
        auto filter = capture_compile_filter(req.contains("filter") ? get_str(req, "filter") : "");
        if (!filter) return capture_err(filter.error());
        spec.filter = std::move(*filter);
        auto session = CaptureSession::start(workers_, spec, ++capture_seq_);
        if (!session) return capture_err(session.error());
        capture_ = std::move(*session);
        log_info("capture " + std::to_string(capture_seq_) + " started: " + point +
                 (req.contains("reason") ? " " + get_str(req, "reason") : "") +
                 (req.contains("ifname") ? " on " + get_str(req, "ifname") : "") +
                 (req.contains("filter") ? " filter '" + get_str(req, "filter") + "'" : ""));
        return json{{"ok", true}, {"id", capture_seq_}};
    }
    const uint64_t id = get_uint(req, "id", UINT64_MAX);
    if (!capture_ || capture_->id() != id)
        return capture_err("No such capture " + std::to_string(id) +
                           " (ended, or stopped after 5 s without a read)");
    if (cmd == "capture_read") {
        json packets = capture_->read(kReadMax);
        return json{{"ok", true},
                    {"packets", std::move(packets)},
                    {"matched", capture_->matched()},
                    {"lost", capture_->lost()}};
    }
    if (cmd == "capture_stop") {
        auto r = capture_->stop();
        json out = {{"ok", r.ok()}, {"matched", capture_->matched()}, {"lost", capture_->lost()}};
        if (!r) out["error"] = r.error();
        log_info("capture " + std::to_string(id) + " stopped: " +
                 std::to_string(capture_->matched()) + " frames matched, " +
                 std::to_string(capture_->lost()) + " lost");
        capture_.reset();
        return out;
    }
    throw BadRequest{"unknown capture command '" + cmd + "'"};
}

void Controller::capture_expire(std::chrono::steady_clock::time_point now) {
    if (!capture_ || !capture_->idle(now)) return;
    log_warning("capture " + std::to_string(capture_->id()) +
                " stopped: no client read it for 5 s (its xvsctl ended?)");
    capture_.reset();
}

}  // namespace xvs::ctl
