// `xvsctl capture`'s daemon half: one capture at a time, armed on every worker as a
// stack::CaptureTap (stack/capture.h) and drained by the client's capture_read requests.
// The client writes the pcap file (it knows where it runs; xvsd's /tmp may be private).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "lb/worker.h"
#include "stack/capture.h"

namespace xvs::ctl {

// The tcpdump-language expression compiled by libpcap for Ethernet frames; an empty
// expression is no filter. The error is libpcap's message about the expression.
Result<std::vector<bpf_insn>> capture_compile_filter(const std::string& expr);

// A drop reason by name, refused when it is not a drop counter or when its frames cannot be
// captured exactly (stack::capture_drop_exact), with what to do instead.
Result<stack::Counter> capture_drop_reason(const std::string& name);

class CaptureSession {
  public:
    // A session is ended by the client (capture_stop) or dropped when no client has read it
    // for this long (xvsctl died): capture must not stay armed forever.
    static constexpr std::chrono::seconds kIdleLimit{5};

    // Arms every worker with its own tap of spec (a ring each); on a worker's failure the
    // others are disarmed again.
    static Result<std::unique_ptr<CaptureSession>> start(std::vector<lb::Worker*> workers,
                                                         const stack::CaptureSpec& spec,
                                                         uint64_t id);
    ~CaptureSession();  // disarms (stop) if still armed
    CaptureSession(const CaptureSession&) = delete;
    CaptureSession& operator=(const CaptureSession&) = delete;

    uint64_t id() const { return id_; }
    // Up to max frames, oldest first per worker, as JSON (hex data): the capture_read reply.
    nlohmann::json read(size_t max);
    // Disarms every worker; the taps are freed once each worker has let go of its tap.
    Result<void> stop();
    uint64_t matched() const;
    uint64_t lost() const;
    bool idle(std::chrono::steady_clock::time_point now) const {
        return now - last_read_ > kIdleLimit;
    }

  private:
    CaptureSession(std::vector<lb::Worker*> workers, uint64_t id);

    std::vector<lb::Worker*> workers_;
    std::vector<std::shared_ptr<stack::CaptureTap>> taps_;  // one per worker, same order
    uint64_t id_;
    bool armed_ = false;
    std::chrono::steady_clock::time_point last_read_;
};

}  // namespace xvs::ctl
