// The metrics endpoint's series (Controller::metrics, ctl/controller.h), in Prometheus text
// (ctl/metrics.h). Names follow Prometheus conventions: xvs_ prefix, _total for counters,
// base units (bytes), one label set per series; a service is labelled as ipvsadm -L -n names
// it ("TCP 10.0.0.1:80", "FWM 5", "SNAT name"), a dest by "addr:port".
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "ctl/controller.h"
#include "ctl/metrics.h"
#include "ctl/service_label.h"
#include "lb/laddr.h"
#include "lb/service.h"
#include "net/addr.h"
#include "port/eal.h"
#include "port/ethdev.h"
#include "stack/counters.h"

namespace xvs::ctl {

std::string Controller::metrics() const {
    PromText p;
    std::vector<std::string> worker_ids;
    for (const lb::Worker* w : workers_) worker_ids.push_back(std::to_string(w->id()));

    p.family("xvs_workers", "gauge", "Packet workers running.");
    p.sample({}, uint64_t{workers_.size()});

    // Packet path counters (xvsctl stats -a names them and says what each means).
    for (const bool drops : {true, false}) {
        if (drops)
            p.family("xvs_drops_total", "counter",
                     "Packets dropped by the packet path, by reason (xvsctl stats -a describes "
                     "each) and worker.");
        else
            p.family("xvs_events_total", "counter",
                     "Packet path events other than drops (forwarded, redirected, SYN proxy, "
                     "conservation, ...), by name and worker.");
        for (size_t c = 0; c < stack::kCounterCount; ++c) {
            if (stack::kCounterInfo[c].is_drop != drops) continue;
            const std::string_view name = stack::kCounterInfo[c].name;
            for (size_t i = 0; i < workers_.size(); ++i)
                p.sample({{drops ? "reason" : "event", name}, {"worker", worker_ids[i]}},
                         workers_[i]->counters().v[c]);
        }
    }

    p.family("xvs_conn_table_capacity", "gauge",
             "Connection table slots, per worker (an IPv4 conn takes one, an IPv6 or NAT64 conn two).");
    for (size_t i = 0; i < workers_.size(); ++i)
        p.sample({{"worker", worker_ids[i]}}, uint64_t{workers_[i]->conns().capacity()});
    p.family("xvs_conn_table_used", "gauge",
             "Connection table slots in use (conns and persistence templates), per worker.");
    for (size_t i = 0; i < workers_.size(); ++i)
        p.sample({{"worker", worker_ids[i]}}, uint64_t{workers_[i]->conns().slots_in_use()});

    // Poll loop iterations: idle / (idle + busy) is how much headroom a worker has; a sum
    // that stops moving is a stuck worker (the systemd watchdog goes unfed, ctl/worker_watch.h).
    p.family("xvs_worker_polls_total", "counter",
             "Worker poll loop iterations, by result: busy (received frames) or idle.");
    for (size_t i = 0; i < workers_.size(); ++i) {
        const lb::Worker::PollCounts polls = workers_[i]->poll_counts();
        p.sample({{"worker", worker_ids[i]}, {"result", "busy"}}, polls.busy);
        p.sample({{"worker", worker_ids[i]}, {"result", "idle"}}, polls.idle);
    }

    // mbuf pools (one per port, xvs_mbufs_NAME; reassembly pools per worker, xvs_reasm_N).
    const auto pools = port::mempools_use();
    p.family("xvs_mempool_size", "gauge", "Objects (mbufs) in each DPDK mempool.");
    for (const auto& mp : pools) p.sample({{"pool", mp.name}}, uint64_t{mp.size});
    p.family("xvs_mempool_free", "gauge",
             "Objects free in each DPDK mempool, per-lcore caches included.");
    for (const auto& mp : pools) p.sample({{"pool", mp.name}}, uint64_t{mp.free});
    p.family("xvs_mempool_used", "gauge", "Objects in use in each DPDK mempool.");
    for (const auto& mp : pools)
        p.sample({{"pool", mp.name}}, uint64_t{mp.size >= mp.free ? mp.size - mp.free : 0});

    // Services and their dests: totals since each was added, and the rate estimator's figures
    // (ipvsadm --rate, updated every 2 s).
    struct Row {
        const lb::Service* svc;
        std::string label;
    };
    std::vector<Row> rows;
    for (const auto* list : {&director_.services(), &director_.matches()})
        for (const auto& s : *list) rows.push_back({s.get(), service_label(*s)});
    auto estimate = [&](const void* obj) {
        auto it = estimates_.find(obj);
        return it != estimates_.end() && !it->second.owner.expired() ? it->second : Estimate{};
    };
    using Labels = std::vector<PromText::Label>;
    // Each family of a service or dest series walks `each`, which calls back with the labels
    // of one service or dest, its totals and its rate estimate.
    auto traffic = [&](const std::string& pre, const std::string& what, auto&& each) {
        auto with = [](Labels l, std::string_view k, std::string_view v) {
            l.emplace_back(k, v);
            return l;
        };
        p.family(pre + "_connections_total", "counter", "Connections scheduled to this " + what + ".");
        each([&](const Labels& l, const Totals& t, const Estimate&) { p.sample(l, t.conns); });
        p.family(pre + "_packets_total", "counter",
                 "Packets forwarded for this " + what + ", by direction (in: client to server).");
        each([&](const Labels& l, const Totals& t, const Estimate&) {
            p.sample(with(l, "direction", "in"), t.inpkts);
            p.sample(with(l, "direction", "out"), t.outpkts);
        });
        p.family(pre + "_bytes_total", "counter",
                 "Bytes (IP) forwarded for this " + what + ", by direction.");
        each([&](const Labels& l, const Totals& t, const Estimate&) {
            p.sample(with(l, "direction", "in"), t.inbytes);
            p.sample(with(l, "direction", "out"), t.outbytes);
        });
        p.family(pre + "_rate", "gauge",
                 "Estimated rates of this " + what +
                     " as ipvsadm --rate shows them, per second (kind: cps, inpps, outpps, "
                     "inbps, outbps).");
        each([&](const Labels& l, const Totals&, const Estimate& e) {
            const std::pair<const char*, double> rates[] = {
                {"cps", e.cps}, {"inpps", e.inpps}, {"outpps", e.outpps},
                {"inbps", e.inbps}, {"outbps", e.outbps}};
            for (const auto& [kind, v] : rates) p.sample(with(l, "kind", kind), v);
        });
    };
    traffic("xvs_service", "virtual service", [&](auto&& f) {
        for (const Row& r : rows) f(Labels{{"service", r.label}}, service_totals(*r.svc), estimate(r.svc));
    });
    traffic("xvs_dest", "real server", [&](auto&& f) {
        for (const Row& r : rows)
            for (const auto& d : r.svc->dests) {
                const std::string dl = dest_label(*d);
                f(Labels{{"service", r.label}, {"dest", dl}}, dest_totals(*d), estimate(d.get()));
            }
    });
    auto per_dest = [&](std::string_view name, std::string_view help, auto&& value) {
        p.family(name, "gauge", help);
        for (const Row& r : rows)
            for (const auto& d : r.svc->dests) {
                const std::string dl = dest_label(*d);
                p.sample({{"service", r.label}, {"dest", dl}}, uint64_t{value(*r.svc, *d)});
            }
    };
    per_dest("xvs_dest_weight", "The real server's weight as the scheduler uses it (0: quiesced).",
             [](const lb::Service&, const lb::Dest& d) { return static_cast<uint64_t>(std::max(0, d.weight.load())); });
    per_dest("xvs_dest_active_connections", "Established connections (ipvsadm ActiveConn).",
             [](const lb::Service&, const lb::Dest& d) { return d.sum_active(); });
    per_dest("xvs_dest_inactive_connections", "Other connections (ipvsadm InActConn).",
             [](const lb::Service&, const lb::Dest& d) { return d.sum_inactive(); });
    per_dest("xvs_dest_persistent_templates", "Persistence templates pointing at the real server.",
             [](const lb::Service&, const lb::Dest& d) { return d.sum_persist(); });
    per_dest("xvs_dest_inhibited",
             "1 while a failed health check holds the real server at weight 0 "
             "(inhibit_on_failure); a failed server without it is removed from the service.",
             [&](const lb::Service& s, const lb::Dest& d) {
                 return uint64_t{inhibited_ && inhibited_(s.key, d.addr, d.port)};
             });

    // Local addresses (FULLNAT/SNAT source pools): conns using each and free ports per worker.
    std::vector<const lb::LocalAddr*> laddrs;
    std::unordered_set<const lb::LocalAddr*> seen;
    for (const Row& r : rows)
        for (const auto& l : r.svc->laddrs)
            if (seen.insert(l.get()).second) laddrs.push_back(l.get());
    p.family("xvs_laddr_connections", "gauge", "Connections holding a port of the local address.");
    for (const lb::LocalAddr* l : laddrs) p.sample({{"laddr", net::to_string(l->addr)}}, l->sum_refs());
    p.family("xvs_laddr_free_ports", "gauge",
             "Ports of the local address free for new connections, per worker (worker i owns "
             "ports with port % workers == i).");
    for (const lb::LocalAddr* l : laddrs) {
        const std::string a = net::to_string(l->addr);
        for (size_t i = 0; i < workers_.size(); ++i)
            if (const auto& pool = l->workers[workers_[i]->id()].pool)
                p.sample({{"laddr", a}, {"worker", worker_ids[i]}}, uint64_t{pool->available()});
    }

    // Ports (the PMD's own counters).
    p.family("xvs_port_up", "gauge", "1 when the port's link is up.");
    for (const auto& port : ports_)
        p.sample({{"port", port.name}}, uint64_t{port.has_stats && port::port_link_up(port.port_id)});
    std::vector<port::PortStats> st;
    for (const auto& port : ports_)
        st.push_back(port.has_stats ? port::port_stats(port.port_id) : port::PortStats{});
    auto port_counter = [&](std::string_view name, std::string_view help, auto&& rx, auto&& tx) {
        p.family(name, "counter", help);
        for (size_t i = 0; i < ports_.size(); ++i) {
            p.sample({{"port", ports_[i].name}, {"direction", "rx"}}, rx(st[i]));
            p.sample({{"port", ports_[i].name}, {"direction", "tx"}}, tx(st[i]));
        }
    };
    port_counter("xvs_port_packets_total", "Packets received and sent by the port (PMD counters).",
                 [](const port::PortStats& s) { return s.ipackets; },
                 [](const port::PortStats& s) { return s.opackets; });
    port_counter("xvs_port_bytes_total", "Bytes received and sent by the port (PMD counters).",
                 [](const port::PortStats& s) { return s.ibytes; },
                 [](const port::PortStats& s) { return s.obytes; });
    port_counter("xvs_port_errors_total", "Receive and transmit errors the PMD counted.",
                 [](const port::PortStats& s) { return s.ierrors; },
                 [](const port::PortStats& s) { return s.oerrors; });
    p.family("xvs_port_rx_missed_total", "counter",
             "Packets the NIC or kernel dropped because the receive queue was full (imissed).");
    for (size_t i = 0; i < ports_.size(); ++i) p.sample({{"port", ports_[i].name}}, st[i].imissed);
    p.family("xvs_port_rx_nombuf_total", "counter",
             "Receive failures for want of an mbuf (rx_nombuf).");
    for (size_t i = 0; i < ports_.size(); ++i) p.sample({{"port", ports_[i].name}}, st[i].rx_nombuf);
    p.family("xvs_port_tx_refused_total", "counter",
             "net_af_xdp: frames the kernel refused from the port's AF_XDP sockets as invalid "
             "descriptors and sent nowhere (XDP_STATISTICS tx_invalid_descs); counted in "
             "xvs_port_packets_total too.");
    for (size_t i = 0; i < ports_.size(); ++i) p.sample({{"port", ports_[i].name}}, st[i].tx_refused);
    std::string out = p.take();
    if (metrics_extra_) out += metrics_extra_();
    if (sync_metrics_) out += sync_metrics_();
    return out;
}

}  // namespace xvs::ctl
