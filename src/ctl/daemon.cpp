// xvsd daemon implementation. Signals only set flags; all work happens on the control loop.
#include "ctl/daemon.h"

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_thread.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/clock.h"
#include "ctl/config_apply.h"
#include "ctl/config_check.h"
#include "ctl/config_parser.h"
#include "ctl/log.h"
#include "ctl/metrics.h"
#include "ctl/worker_placement.h"
#include "ctl/worker_watch.h"
#include "net/syncookie.h"
#include "port/eal.h"
#include "port/ethdev.h"
#include "stack/fragment.h"

namespace xvs::ctl {

namespace {

std::string where_sync(const SyncDefs& s) {
    return s.loc.file + ":" + std::to_string(s.loc.line) + ": sync_defs: ";
}

// What a reload compares of sync_defs (every field but where it was written).
bool same_sync(const SyncDefs& a, const SyncDefs& b) {
    return a.enabled == b.enabled && a.syncid == b.syncid && a.source == b.source &&
           a.mcast_group == b.mcast_group && a.port == b.port && a.peers == b.peers &&
           a.role == b.role && a.peer_timeout_ms == b.peer_timeout_ms &&
           a.heartbeat_ms == b.heartbeat_ms && a.resync == b.resync &&
           a.max_message == b.max_message && a.ring_size == b.ring_size &&
           a.claim_dev == b.claim_dev;
}

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_reload = 0;

void on_signal(int sig) {
    if (sig == SIGHUP)
        g_reload = 1;
    else
        g_stop = 1;
}

struct LaunchArg {
    lb::Worker* worker;
    const std::atomic<bool>* stop;
    lb::PollMode mode;
    unsigned cpu;
};

rte_cpuset_t cpuset_of(const std::vector<unsigned>& cpus) {
    rte_cpuset_t set;
    CPU_ZERO(&set);
    for (unsigned c : cpus) CPU_SET(c, &set);
    return set;
}

int worker_main(void* arg) {
    auto* a = static_cast<LaunchArg*>(arg);
    // Pinned before registering: rte_thread_register takes the thread's affinity (and its
    // NUMA socket) from what it is then. On an EAL lcore this replaces the lcore's own CPU.
    rte_cpuset_t set = cpuset_of({a->cpu});
    if (rte_thread_set_affinity(&set) != 0)
        log_warning("worker " + std::to_string(a->worker->id()) + ": cannot pin to CPU " +
                    std::to_string(a->cpu) + ", it runs where the scheduler puts it");
    // "xvs-worker-N" in top -H, ps -L and /proc/PID/task/*/comm (at most 15 characters).
    pthread_setname_np(pthread_self(), ("xvs-worker-" + std::to_string(a->worker->id())).c_str());
    // A worker on a plain thread must still be an EAL thread (an lcore id, mempool caches):
    // AF_XDP stalled for good after a few thousand frames when driven from a non-EAL thread.
    if (rte_lcore_id() == LCORE_ID_ANY && rte_thread_register() != 0) {
        log_error("cannot register the worker thread with the EAL");
        delete a;
        return -1;
    }
    a->worker->run(*a->stop, a->mode);
    delete a;
    return 0;
}

// "12.3 MiB": the startup memory figures of the configured sizes.
std::string mib_text(size_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
    return buf;
}

// The rate-limit kind of a health line: its real server ("real server 10.0.0.2:80 of ...",
// "TCP_CHECK of real server 10.0.0.2:80 (...)"), else its virtual server (quorum lines), so
// one flapping real server is held back without hiding the others' transitions.
std::string health_log_kind(std::string_view line) {
    constexpr std::string_view kRs = "real server ";
    if (size_t at = line.find(kRs); at != std::string_view::npos) {
        const std::string_view rest = line.substr(at + kRs.size());
        return "health " + std::string(rest.substr(0, rest.find(' ')));
    }
    return "health " + std::string(line.substr(0, line.find(':')));
}

}  // namespace

Daemon::Daemon(std::string config_path) : config_path_(std::move(config_path)) {}

Daemon::~Daemon() {
    stop_workers();
    sync_.reset();
    control_.reset();
    announcer_.reset();
    health_.reset();
    controller_.reset();
    workers_.clear();
    director_.reset();
    steering_.stop();
    for (const auto& p : ports_) port::port_close(p.port_id);
    for (uint16_t id : exception_.tap_ids()) port::port_close(id);
    port::eal_stop();
}

Result<void> Daemon::start() {
    // The very verdict of `xvsd -t`: nothing below refuses the configuration for what it says.
    auto parsed = config_load(config_path_);
    if (parsed.config) log_config_facility(parsed.config->global.log_facility);
    log_info("xvsd starting: " + config_path_ + ", logging to " + log_sinks_text());
    for (const auto& w : parsed.warnings) log_warning(w);
    if (!parsed.config) {
        std::string all;
        for (const auto& e : parsed.errors) all += (all.empty() ? "" : "\n") + e;
        return make_error(all);
    }
    config_ = std::move(*parsed.config);
    log_set_level(config_.global.log_level);

    // The CPUs as they were before the EAL pinned this thread to its main lcore.
    auto placement = worker_placement(config_.worker, cpus_available());
    if (!placement) return make_error(placement.error());
    for (const auto& w : placement->warnings) log_warning(w);

    auto args = port::split_args(config_.netif.eal_args);
    log_info("starting EAL: " + config_.netif.eal_args);
    if (auto r = port::eal_start(args); !r) return r;
    log_syslog_reopen();
    // The control thread (and every thread it starts: health checks, workers before they pin
    // themselves) keeps off the workers' CPUs.
    rte_cpuset_t control = cpuset_of(placement->control_cpus);
    if (rte_thread_set_affinity(&control) != 0)
        log_warning("cannot move the control thread to CPUs " +
                    cpu_list_text(placement->control_cpus));
    log_info("control thread on CPU" + std::string(placement->control_cpus.size() == 1 ? " " : "s ") +
             cpu_list_text(placement->control_cpus));

    const unsigned nworkers = config_.worker.workers;

    director_ = std::make_unique<lb::Director>(nworkers);
    rte_mempool* first_pool = nullptr;
    for (const auto& pd : config_.netif.ports) {
        port::PortParams params;
        params.queues = nworkers;
        params.mtu = static_cast<uint16_t>(pd.mtu);
        // One mbuf pool per port: AF_XDP builds its UMEM from the RX pool, and frames sent
        // out of another port must go back to the pool they came from (a shared pool starved
        // the LAN port's fill ring after a few thousand frames). RX and TX rings of each
        // queue, plus bursts, per-lcore caches and the neighbour queue.
        const uint32_t nmbufs = config_.netif.mbufs_per_port
                                    ? config_.netif.mbufs_per_port
                                    : mbufs_per_port_default(nworkers);
        const std::string where =
            pd.loc.file + ":" + std::to_string(pd.loc.line) + ": port " + pd.name + ": ";
        auto rx_frame = port::port_rx_frame(pd.dev);
        if (!rx_frame) return make_error(where + rx_frame.error());
        auto pool = pd.is_af_xdp()
                        ? port::umem_pool_create("xvs_mbufs_" + pd.name, nmbufs, 256)
                        : port::mbuf_pool_create("xvs_mbufs_" + pd.name, nmbufs, 256, rx_frame->data_room);
        if (!pool) return make_error(pool.error());
        log_info("port " + pd.name + ": mbufs per port " + std::to_string(nmbufs) + " = " +
                 mib_text(port::mempool_memory_bytes(*pool)));
        if (!first_pool) first_pool = *pool;
        exception_.set_offload(config_.netif.xdp_offload);
        auto devargs = exception_.devargs(pd);
        if (!devargs) return make_error(where + devargs.error());
        auto info = port::port_open_vdev(*devargs, params, *pool);
        if (!info) return make_error(where + info.error());
        if (auto why = port::port_defrag_warning(pd.dev)) log_warning("port " + pd.name + ": " + *why);
        auto exc = exception_.open(pd, *info, params, *pool);
        if (!exc) return make_error(where + exc.error());
        if (auto r = director_->port_add({pd.name, info->id, info->mac, static_cast<uint16_t>(pd.mtu),
                                          *exc, rx_frame->max_frame});
            !r)
            return r;
        ports_.push_back(PortInfoForCtl{pd.name, pd.dev, info->id, static_cast<uint16_t>(pd.mtu), info->mac, true, *pool});
        char mac[18];
        std::snprintf(mac, sizeof mac, "%02x:%02x:%02x:%02x:%02x:%02x", info->mac.b[0], info->mac.b[1],
                      info->mac.b[2], info->mac.b[3], info->mac.b[4], info->mac.b[5]);
        log_info("port " + pd.name + " (" + pd.dev + ") up, DPDK port " + std::to_string(info->id) + ", " + mac);
    }
    auto health = health::Manager::create(*director_);
    if (!health) return make_error(health.error());
    health_ = std::move(*health);
    health_->log = [](const std::string& line) {
        log_limited(health_log_kind(line), LogLevel::Info, "health: " + line);
    };
    auto applied = config_apply(*director_, health_->effective_for(config_));
    if (!applied) return make_error(applied.error());
    health_->configure(config_);
    for (const auto& c : applied->changes) log_debug(c);
    exception_.sync(*director_);  // before the first frame: the XDP maps know xvs's addresses
    if (auto r = steering_.start(config_, ports_); !r) return r;
    steering_.sync(*director_);
    if (size_t n = health_->checker_count()) log_info("health: " + std::to_string(n) + " checkers");
    log_info("configuration applied: " + std::to_string(director_->services().size()) +
             " virtual services, " + std::to_string(director_->matches().size()) +
             " SNAT match services");

    const FragDefs& fd = config_.frag;
    for (unsigned w = 0; w < nworkers; ++w) {
        lb::WorkerConfig wc;
        wc.id = w;
        wc.pool = first_pool;
        wc.max_conns = config_.ipvs.conn_table_size;
        wc.xdp_offload = config_.netif.xdp_offload;
        wc.xdp_flows = exception_.flows_by_port_id();
        wc.frag.limits = {fd.max_datagrams, fd.max_fragments, fd.timeout_ms};
        wc.frag.max_datagram_size = fd.max_datagram_size;
        if (fd.max_datagrams) {  // IP reassembly: a pool of large mbufs per worker
            auto reasm = port::mbuf_pool_create(
                "xvs_reasm_" + std::to_string(w), stack::reasm_pool_size(wc.frag.limits), 0,
                static_cast<uint16_t>(stack::reasm_data_room(fd.max_datagram_size)));
            if (!reasm) return make_error("frag_defs: " + reasm.error());
            wc.reasm_pool = *reasm;
            log_info("worker " + std::to_string(w) + ": IP reassembly of " +
                     std::to_string(fd.max_datagrams) + " datagrams up to " +
                     std::to_string(fd.max_datagram_size) +
                     " bytes = " + mib_text(port::mempool_memory_bytes(*reasm)));
        }
        auto worker = lb::Worker::create(*director_, wc);
        if (!worker) return make_error(worker.error());
        log_info("worker " + std::to_string(w) + ": conn table " + std::to_string(wc.max_conns) +
                 " entries = " +
                 mib_text((*worker)->conns().memory_bytes() + (*worker)->synproxy_memory_bytes()));
        workers_.push_back(std::move(*worker));
    }
    std::vector<lb::Worker*> raw;
    for (auto& w : workers_) raw.push_back(w.get());
    controller_ = std::make_unique<Controller>(*director_, raw, ports_, [this] { return reload(); });
    controller_->set_check_show([this] { return health_->show(); });
    controller_->set_inhibited(
        [this](const lb::ServiceKey& key, const net::InetAddr& addr, uint16_t port) {
            return health_->inhibited(key, addr, port);
        });
    controller_->set_feedback_show([this] { return health_->feedback_show(); });
    controller_->set_dest_health([this] { return health_->dest_health(); });
    health_->on_change = [this] { controller_->flush_removed_dests(); };
    controller_->set_announce_show(
        [this] { return announcer_ ? announcer_->show() : nlohmann::json(nullptr); });
    controller_->set_metrics_extra(
        [this] { return announcer_ ? announcer_->metrics() : std::string(); });
    if (auto r = routing_configure(config_.routing); !r) return r;
    if (config_.sync.enabled) {
        auto sync = SyncDaemon::create(config_.sync, *director_, raw);
        if (!sync) return make_error(where_sync(config_.sync) + sync.error());
        sync_ = std::move(*sync);
        controller_->set_sync(
            [this](const nlohmann::json& req) {
                const std::string action = req.value("action", "show");
                nlohmann::json r{{"ok", true}};
                if (action == "show") {
                    r["sync"] = sync_->show(monotonic_ms());
                    return r;
                }
                const std::string why = "xvsctl sync " + action;
                auto done = action == "takeover" ? sync_->takeover(why)
                            : action == "release" ? sync_->release(why)
                                                  : Result<std::string>(make_error(
                                                        "sync: unknown action '" + action +
                                                        "' (show|takeover|release)"));
                if (!done) return nlohmann::json{{"ok", false}, {"error", done.error()}};
                r["text"] = *done;
                return r;
            },
            [this] { return sync_->metrics(monotonic_ms()); });
    }

    // Workers on spare EAL lcores; without one (e.g. "-l 0" on a small machine) a plain thread.
    const lb::PollMode mode = config_.worker.poll_mode;
    unsigned lcore = rte_get_next_lcore(-1, 1, 0);
    for (auto& w : workers_) {
        const unsigned cpu = placement->worker_cpu[w->id()];
        uint32_t peers = 0;  // the other workers on this CPU
        for (unsigned i = 0; i < workers_.size(); ++i)
            if (i != w->id() && placement->worker_cpu[i] == cpu) peers |= 1u << i;
        w->set_cpu_peers(peers);
        auto* arg = new LaunchArg{w.get(), &stop_workers_, mode, cpu};
        const std::string on_cpu = "worker " + std::to_string(w->id()) + " on CPU " + std::to_string(cpu);
        if (lcore < RTE_MAX_LCORE && rte_eal_remote_launch(worker_main, arg, lcore) == 0) {
            log_info(on_cpu + " (EAL lcore " + std::to_string(lcore) + ")");
            worker_lcores_.push_back(lcore);
            lcore = rte_get_next_lcore(lcore, 1, 0);
        } else {
            log_info(on_cpu + " (a registered thread: no spare EAL lcore)");
            worker_threads_.emplace_back([arg] { worker_main(arg); });
        }
    }
    // From here a change returns once every worker uses it (Director::commit).
    director_->commit_waits_set(true);
    return open_socket();
}

Result<void> Daemon::open_socket() {
    const GlobalDefs& g = config_.global;
    auto handler = [this](std::string_view line) {
        auto r = controller_->serve_line(line);
        return ControlServer::Reply{std::move(r.text), std::move(r.problem), std::move(r.change)};
    };
    std::optional<gid_t> group;
    if (g.control_socket_gid) group = static_cast<gid_t>(*g.control_socket_gid);
    auto server = ControlServer::open(g.control_socket, group, handler);
    if (!server) return make_error(server.error());
    control_ = std::move(*server);
    log_info("control socket " + g.control_socket +
             (group ? " (mode 0660, group " + g.control_socket_group + ")" : " (mode 0600)"));
    if (!g.metrics_listen) return {};
    status_access_.set_allow(g.status_allow);
    auto metrics = ControlServer::open_http(
        *g.metrics_listen,
        [this](std::string_view head, const net::InetEndpoint& peer) {
            return status_http_reply(
                head, peer, status_access_, [this] { return controller_->metrics(); },
                [this] { return controller_->status_json(); });
        },
        ControlServer::Limits{.max_request_bytes = 8192, .max_clients = 16});
    if (!metrics) return make_error(metrics.error());
    metrics_ = std::move(*metrics);
    log_info("metrics on http://" + net::to_string(*g.metrics_listen) + "/metrics");
    log_info("status page on http://" + net::to_string(*g.metrics_listen) + "/ for " +
             status_allow_text(g.status_allow));
    return {};
}

Result<void> Daemon::reload() {
    auto parsed = config_load(config_path_);
    if (!parsed.config) {
        std::string all;
        for (const auto& e : parsed.errors) all += (all.empty() ? "" : "\n") + e;
        return make_error(all);
    }
    const Config& next = *parsed.config;
    for (const auto& w : parsed.warnings) log_warning(w);
    // What only a restart can change is named, never dropped without a word.
    std::vector<std::string> restart;
    if (next.netif.eal_args != config_.netif.eal_args) restart.push_back("eal_args");
    if (next.netif.ports.size() != config_.netif.ports.size())
        restart.push_back("the set of ports");
    for (const auto& pd : next.netif.ports) {
        const PortDef* cur = config_.find_port(pd.name);
        if (cur && !(*cur == pd)) restart.push_back("port " + pd.name);
    }
    if (next.worker.workers != config_.worker.workers) restart.push_back("workers");
    if (next.worker.cpus != config_.worker.cpus) restart.push_back("cpus");
    if (next.worker.poll_mode != config_.worker.poll_mode) restart.push_back("poll_mode");
    if (!(next.frag == config_.frag)) restart.push_back("frag_defs");
    if (next.global.control_socket != config_.global.control_socket)
        restart.push_back("control_socket");
    if (next.global.control_socket_gid != config_.global.control_socket_gid)
        restart.push_back("control_socket_group");
    if (next.global.metrics_listen != config_.global.metrics_listen)
        restart.push_back("metrics_listen");
    if (next.ipvs.conn_table_size != config_.ipvs.conn_table_size)
        restart.push_back("conn_table_size");
    if (next.netif.mbufs_per_port != config_.netif.mbufs_per_port)
        restart.push_back("mbufs_per_port");
    if (next.netif.flow_steering != config_.netif.flow_steering)
        restart.push_back("flow_steering");
    if (next.netif.xdp_offload != config_.netif.xdp_offload) restart.push_back("xdp_offload");
    if (!same_sync(next.sync, config_.sync)) restart.push_back("sync_defs");
    for (const auto& what : restart)
        log_warning("reload: " + what +
                    " changed: takes effect at the next restart (running with the old one)");
    for (const auto& pd : next.netif.ports) {
        bool known = std::any_of(ports_.begin(), ports_.end(), [&](const auto& p) { return p.name == pd.name; });
        if (!known) return make_error(pd.loc.file + ":" + std::to_string(pd.loc.line) + ": port " + pd.name + " is new: ports need a restart");
    }
    // Unchanged checkers keep their state; the dests are applied as they say. The checkers
    // take the new configuration only once the dataplane did: a failed apply leaves both on
    // the old one.
    auto applied = config_apply(*director_, health_->effective_for(next));
    if (!applied) return make_error(applied.error());
    health_->configure(next);
    if (auto r = routing_configure(next.routing); !r) log_error("reload: " + r.error());
    if (next.global.status_allow != config_.global.status_allow) {
        status_access_.set_allow(next.global.status_allow);
        log_info("reload: status page for " + status_allow_text(next.global.status_allow));
    }
    if (next.global.log_level != config_.global.log_level) {
        log_set_level(next.global.log_level);
        log_info("reload: log_level " + std::string(to_string(next.global.log_level)));
    }
    if (next.global.log_facility != config_.global.log_facility) {
        log_config_facility(next.global.log_facility);
        log_info("reload: logging to " + log_sinks_text());
    }
    for (const auto& c : applied->changes) log_info("reload: " + c);
    log_info("reload: done, " + std::to_string(applied->changes.size()) + " changes");
    // The running configuration keeps what needs a restart, so the next reload compares
    // against what actually runs.
    Config running = next;
    running.netif = config_.netif;
    running.worker = config_.worker;
    running.sync = config_.sync;
    running.global.control_socket = config_.global.control_socket;
    running.global.control_socket_group = config_.global.control_socket_group;
    running.global.control_socket_gid = config_.global.control_socket_gid;
    running.global.metrics_listen = config_.global.metrics_listen;
    config_ = std::move(running);
    return {};
}

Result<void> Daemon::routing_configure(const RoutingDefs& conf) {
    if (!conf.enabled()) {
        if (announcer_) {
            log_info("routing: bgp_defs and ospf_defs gone, withdrawing every VIP");
            announcer_->shutdown();
            announcer_.reset();
        }
        return {};
    }
    if (announcer_) {
        if (std::string w = announcer_->configure(conf); !w.empty()) log_warning("reload: " + w);
        return {};
    }
    auto a = std::make_unique<bgp::Announcer>(conf);
    a->log_info = [](const std::string& line) { log_info("routing: " + line); };
    a->log_warning = [](const std::string& line) { log_warning("routing: " + line); };
    if (auto r = a->open_liveness(); !r) return make_error("routing: " + r.error());
    log_info("routing: VIPs announced through BIRD on " + conf.bird_socket + " (file " +
             conf.bird_config + ", liveness interface " + conf.liveness_interface + ")");
    announcer_ = std::move(a);
    return {};
}

void Daemon::routing_update(bool workers_alive) {
    if (!announcer_) return;
    std::vector<bgp::ServiceStanding> standings;
    for (const auto& svc : director_->services()) {
        if (svc->match || svc->key.fwmark != 0) continue;  // no one address to announce
        bgp::ServiceStanding s{svc->key.vip, 0, health_->quorum_of(svc->key)};
        for (const auto& dest : svc->dests)
            if (dest->weight.load(std::memory_order_relaxed) > 0) ++s.live_dests;
        standings.push_back(s);
    }
    announcer_->update(bgp::announce_decide(standings, workers_alive),
                       std::chrono::steady_clock::now());
}

void Daemon::stop_workers() {
    if (director_) director_->commit_waits_set(false);
    if (stop_workers_.exchange(true)) return;
    for (unsigned lc : worker_lcores_) rte_eal_wait_lcore(lc);
    for (auto& t : worker_threads_) t.join();
    worker_lcores_.clear();
    worker_threads_.clear();
}

std::string Daemon::status() const {
    return "running: " + std::to_string(director_->services().size()) + " virtual services, " +
           std::to_string(workers_.size()) + " workers";
}

int Daemon::run(const std::function<void()>& ready) {
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
    log_info("xvsd running");
    notify_.ready(status());
    if (ready) ready();
    WorkerWatch watch(WorkerWatch::stall_limit_for(notify_.watchdog()));
    if (notify_.watchdog().count())
        log_info("systemd watchdog: fed every " +
                 std::to_string(notify_.watchdog().count() / 2000) +
                 " ms by the control thread while every worker runs (a worker without a loop "
                 "iteration for " + std::to_string(watch.stall_limit().count()) +
                 " ms is stuck)");
    std::vector<uint64_t> beats;
    auto next_estimate = std::chrono::steady_clock::now();
    while (!g_stop) {
        if (g_reload) {
            g_reload = 0;
            log_info("SIGHUP: reloading " + config_path_);
            notify_.reloading();
            if (auto r = reload(); !r) log_error("reload failed, keeping the running configuration:\n" + r.error());
            controller_->flush_removed_dests();
            notify_.ready(status());
        }
        auto now = std::chrono::steady_clock::now();
        beats.clear();
        for (const auto& w : workers_) {
            const lb::Worker::PollCounts polls = w->poll_counts();
            beats.push_back(polls.busy + polls.idle);
        }
        for (const WorkerWatch::Event& e : watch.check(beats, now)) {
            const std::string silent = std::to_string(e.silent.count()) + " ms";
            if (e.stuck)
                log_error("worker " + std::to_string(e.worker) + ": stuck, no loop iteration for " +
                          silent +
                          (notify_.watchdog().count()
                               ? "; the systemd watchdog is no longer fed (systemd restarts xvsd)"
                               : ""));
            else
                log_warning("worker " + std::to_string(e.worker) + ": running again after " +
                            silent + " without a loop iteration");
        }
        if (watch.all_alive()) notify_.watchdog_tick(now);
        routing_update(watch.all_alive());
        log_tick();
        if (now >= next_estimate) {
            controller_->estimate_rates(now);
            controller_->capture_expire(now);
            if (controller_->cookie_tick(net::cookie_count(monotonic_ms())))
                log_info("SYN-cookie keys rotated");
            director_->reclaim();
            next_estimate = now + std::chrono::seconds(2);
        }
        exception_.sync(*director_);  // XDP address maps follow every address change
        steering_.sync(*director_);   // and so do the flow-steering rules
        ControlServer* const servers[] = {control_.get(), metrics_.get()};
        ControlServer::poll_servers(servers, std::chrono::milliseconds(200), health_->fd());
        health_->run_once(0);
        if (sync_) sync_->tick(monotonic_ms());
        if (uint64_t n = director_->commit_wait_timeouts(); n != commit_wait_timeouts_) {
            log_limited("commit wait", LogLevel::Warning,
                        "a worker took more than " +
                        std::to_string(lb::Director::kCommitWaitLimit.count()) +
                        " ms to take up a configuration change (" + std::to_string(n) +
                        " times so far): is it stalled or starved of CPU?");
            commit_wait_timeouts_ = n;
        }
    }
    log_info("stopping");
    notify_.stopping();
    if (announcer_) announcer_->shutdown();  // the VIPs withdrawn before anything stops
    health_->shutdown();  // omega notifiers
    stop_workers();
    return 0;
}

}  // namespace xvs::ctl
