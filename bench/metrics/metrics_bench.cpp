// bench/metrics: the cost of one /metrics scrape (Controller::metrics, ctl/controller_metrics.cpp)
// as services and real servers grow: 10, 100 and 1000 NAT (masq) services with 2 real
// servers each, no workers (the per-worker counter series add counters x workers lines on
// top). Prints time per scrape and the body's size; a scrape walks services and dests only,
// never a connection table, so the figure must grow linearly with services. The same for the
// status page's document (/status.json) and its HTML, with a full 5-minute history.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/controller.h"
#include "ctl/status_page.h"

namespace {

using nlohmann::json;

struct Setup {
    xvs::lb::Director director;
    std::unique_ptr<xvs::ctl::Controller> ctl;

    explicit Setup(int services) {
        xvs::lb::PortEntry p;
        p.name = "lan0";
        (void)director.port_add(p);
        xvs::ctl::PortInfoForCtl info;
        info.name = "lan0";
        info.has_stats = false;
        ctl = std::make_unique<xvs::ctl::Controller>(director, std::vector<xvs::lb::Worker*>{},
                                                     std::vector<xvs::ctl::PortInfoForCtl>{info},
                                                     [] { return xvs::Result<void>{}; });
        for (int i = 0; i < services; ++i) {
            const json svc{{"proto", "tcp"},
                           {"vip", "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1)},
                           {"port", 80}};
            ctl->handle(json{{"cmd", "add_service"}, {"service", svc}, {"sched", "wrr"}});
            for (int d = 0; d < 2; ++d)
                ctl->handle(json{{"cmd", "add_dest"},
                                 {"service", svc},
                                 {"dest", {{"addr", "192.168.1." + std::to_string(d + 2)},
                                           {"port", 8080},
                                           {"weight", 1},
                                           {"fwd", "masq"}}}});
        }
    }
};

void BM_Scrape(benchmark::State& state) {
    Setup s(static_cast<int>(state.range(0)));
    size_t bytes = 0;
    for (auto _ : state) {
        std::string text = s.ctl->metrics();
        bytes = text.size();
        benchmark::DoNotOptimize(text);
    }
    state.counters["services"] = static_cast<double>(s.director.services().size());
    state.counters["body_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Scrape)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

// The status page (ctl/status_page.h) with a full history (150 points per service): building
// the document, and serving it as /status.json or as the page.
void BM_Status(benchmark::State& state, bool page) {
    Setup s(static_cast<int>(state.range(0)));
    auto t = std::chrono::steady_clock::now();
    for (size_t i = 0; i <= xvs::ctl::StatusHistory::kSamples; ++i, t += std::chrono::seconds(2))
        s.ctl->estimate_rates(t);
    size_t bytes = 0;
    for (auto _ : state) {
        const json st = s.ctl->status_json();
        std::string text = page ? xvs::ctl::status_page_html(st) : st.dump();
        bytes = text.size();
        benchmark::DoNotOptimize(text);
    }
    state.counters["services"] = static_cast<double>(s.director.services().size());
    state.counters["body_bytes"] = static_cast<double>(bytes);
}
BENCHMARK_CAPTURE(BM_Status, json, false)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Status, page, true)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
