// xvsctl capture, see ctl/xvsctl_capture.h and docs/control-protocol.md "capture".
#include "ctl/xvsctl_capture.h"

#include <pcap/pcap.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ctl/control_client.h"

namespace xvs::ctl {

namespace {

using nlohmann::json;

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

// SIGINT and SIGTERM end the capture cleanly (the file complete, xvsd disarmed) instead of
// killing xvsctl; the previous handlers come back when this goes.
class InterruptScope {
  public:
    InterruptScope() {
        struct sigaction sa {};
        sa.sa_handler = on_interrupt;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
        g_interrupted = 0;
    }
    ~InterruptScope() {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;

  private:
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
};

std::optional<std::vector<uint8_t>> unhex(const std::string& s) {
    if (s.size() % 2 != 0) return std::nullopt;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    std::vector<uint8_t> out(s.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) {
        const int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return out;
}

// The reply, or an error text (xvsd unreachable, or its refusal).
struct Reply {
    std::optional<json> ok;
    std::string error;
    bool refused = false;
};

Reply ask(const std::string& socket, const json& req) {
    auto r = control_request(control_socket_path(socket), req);
    if (!r) return {std::nullopt, r.error(), false};
    if (!(*r)["ok"].get<bool>()) {
        auto e = r->find("error");
        return {std::nullopt, e != r->end() && e->is_string() ? e->get<std::string>() : "Unknown error",
                true};
    }
    return {std::move(*r), "", false};
}

}  // namespace

int xvsctl_capture(const CtlCommand& c, std::ostream& err) {
    const CaptureArgs& a = c.capture;
    // The file first: a path that cannot be written must not leave a capture armed.
    std::unique_ptr<pcap_t, void (*)(pcap_t*)> dead(pcap_open_dead(DLT_EN10MB, 65535), pcap_close);
    if (!dead) {
        err << "xvsctl: libpcap could not make a handle to write with\n";
        return 1;
    }
    std::unique_ptr<pcap_dumper_t, void (*)(pcap_dumper_t*)> dump(
        pcap_dump_open(dead.get(), a.file.c_str()), pcap_dump_close);
    if (!dump) {
        err << "xvsctl: " << pcap_geterr(dead.get()) << "\n";
        return 1;
    }

    json start = {{"cmd", "capture_start"}, {"point", a.point}};
    if (!a.reason.empty()) start["reason"] = a.reason;
    if (!a.ifname.empty()) start["ifname"] = a.ifname;
    if (!a.filter.empty()) start["filter"] = a.filter;
    InterruptScope interrupts;
    Reply started = ask(c.socket_path, start);
    if (!started.ok) {
        err << started.error << "\n";
        return started.refused ? 255 : 1;
    }
    const uint64_t id = (*started.ok)["id"].get<uint64_t>();

    using Clock = std::chrono::steady_clock;
    const auto deadline = a.seconds ? std::optional(Clock::now() + std::chrono::seconds(*a.seconds))
                                    : std::nullopt;
    uint64_t written = 0;
    int rc = 0;
    while (!g_interrupted && (!a.count || written < *a.count) &&
           (!deadline || Clock::now() < *deadline)) {
        Reply got = ask(c.socket_path, {{"cmd", "capture_read"}, {"id", id}});
        if (!got.ok) {
            err << got.error << "\n";
            rc = got.refused ? 255 : 1;
            break;
        }
        const json& packets = (*got.ok)["packets"];
        if (!packets.is_array()) {
            err << "Malformed reply from xvsd: 'packets' is not an array\n";
            rc = 1;
            break;
        }
        for (const json& p : packets) {
            if (!p.is_object() || !p.contains("data") || !p["data"].is_string() ||
                !p.contains("ts_ns") || !p["ts_ns"].is_number_unsigned() ||
                !p.contains("wire_len") || !p["wire_len"].is_number_unsigned())
                continue;
            if (a.count && written >= *a.count) break;
            auto bytes = unhex(p.at("data").get<std::string>());
            if (!bytes) continue;
            const uint64_t ts = p.at("ts_ns").get<uint64_t>();
            pcap_pkthdr h{};
            h.ts.tv_sec = static_cast<time_t>(ts / 1'000'000'000u);
            h.ts.tv_usec = static_cast<suseconds_t>(ts % 1'000'000'000u / 1000u);
            h.caplen = static_cast<bpf_u_int32>(bytes->size());
            h.len = p.at("wire_len").get<bpf_u_int32>();
            pcap_dump(reinterpret_cast<u_char*>(dump.get()), &h, bytes->data());
            ++written;
        }
        if (packets.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    pcap_dump_flush(dump.get());
    Reply stopped = ask(c.socket_path, {{"cmd", "capture_stop"}, {"id", id}});
    if (stopped.ok && (*stopped.ok)["matched"].is_number_unsigned() &&
        (*stopped.ok)["lost"].is_number_unsigned()) {
        err << "xvsctl: " << written << " frames written to " << a.file << " ("
            << (*stopped.ok)["matched"].get<uint64_t>() << " matched, "
            << (*stopped.ok)["lost"].get<uint64_t>() << " lost to a full ring)\n";
    } else if (rc == 0 && !stopped.ok) {
        err << stopped.error << "\n";
        rc = stopped.refused ? 255 : 1;
    }
    return rc;
}

}  // namespace xvs::ctl
