// xvsd's lifetime: config -> EAL -> ports -> Director -> workers on lcores -> control socket.
// The control thread (main) serves the socket, handles SIGHUP (reload) and SIGTERM/SIGINT
// (stop), estimates rates every 2 s and reclaims old snapshots. It never touches a packet,
// and never blocks on a control client (ControlServer polls them with a 200 ms tick).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "ctl/bgp/announce.h"
#include "ctl/config.h"
#include "ctl/control_server.h"
#include "ctl/controller.h"
#include "ctl/exception_path.h"
#include "ctl/flow_steering.h"
#include "ctl/health/manager.h"
#include "ctl/sync/sync_daemon.h"
#include "ctl/status_page.h"
#include "ctl/systemd_notify.h"
#include "lb/director.h"
#include "lb/worker.h"

namespace xvs::ctl {

class Daemon {
public:
    explicit Daemon(std::string config_path);
    ~Daemon();

    // Reads the config, starts EAL, ports, workers and the control socket.
    Result<void> start();
    // Serves until SIGTERM/SIGINT. Returns the process exit code. `ready` is called once the
    // signal handlers are in place, where systemd hears READY=1 (xvsd -d's parent exits then).
    int run(const std::function<void()>& ready = {});

private:
    Result<void> reload();
    Result<void> open_socket();
    void stop_workers();
    // The VIP announcer (bgp_defs/ospf_defs): created, reconfigured or withdrawn-and-dropped
    // as the configuration says; then its decisions from the live model.
    Result<void> routing_configure(const RoutingDefs& conf);
    void routing_update(bool workers_alive);

    std::string config_path_;
    Config config_;
    std::unique_ptr<lb::Director> director_;
    std::vector<std::unique_ptr<lb::Worker>> workers_;
    std::vector<PortInfoForCtl> ports_;
    ExceptionPorts exception_;  // TAPs and XDP address maps (ctl/exception_path.h)
    FlowSteering steering_;     // rte_flow rules by local port (several workers)
    std::unique_ptr<Controller> controller_;
    std::unique_ptr<health::Manager> health_;  // checkers; applies their verdicts to director_
    std::unique_ptr<bgp::Announcer> announcer_;  // null without bgp_defs/ospf_defs
    std::unique_ptr<SyncDaemon> sync_;  // sync_defs (ctl/sync/); null when off
    std::atomic<bool> stop_workers_{false};
    uint64_t commit_wait_timeouts_ = 0;  // last count logged
    std::vector<unsigned> worker_lcores_;
    std::vector<std::thread> worker_threads_;  // when the EAL has no spare lcore
    std::unique_ptr<ControlServer> control_;  // serves controller_: declared after it
    std::unique_ptr<ControlServer> metrics_;  // metrics_listen (HTTP), also controller_'s
    StatusAccess status_access_;  // status_allow, for the status page on metrics_
    SystemdNotify notify_;  // Type=notify: READY/RELOADING/STOPPING, the watchdog
    std::string status() const;  // the STATUS= line: services, workers
};

}  // namespace xvs::ctl
