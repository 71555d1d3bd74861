// The health manager; see manager.h.
#include "ctl/health/manager.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "ctl/config_apply.h"

namespace xvs::ctl::health {

namespace {

std::string ep_text(const net::InetAddr& a, uint16_t port) {
    return net::to_string(net::InetEndpoint{a, port});
}

// Where a checker's attempts go: connect_ip / connect_port, else the real server's.
ProbeTarget target_of(const CheckerConf& c, const RealServer& rs) {
    ProbeTarget t;
    t.dst.addr = c.connect_ip.value_or(rs.addr);
    t.dst.port = c.connect_port ? c.connect_port : rs.port;
    if (!c.connect_port && rs.port == 0)
        t.dst.port = c.type == CheckType::Smtp ? 25 : c.type == CheckType::Dns ? 53 : 0;
    t.bindto = c.bindto;
    return t;
}

}  // namespace

Result<std::unique_ptr<Manager>> Manager::create(lb::Director& director, Loop::Clock clock,
                                                 uint32_t seed) {
    auto loop = Loop::create(std::move(clock));
    if (!loop) return make_error(loop.error());
    return std::unique_ptr<Manager>(new Manager(director, std::move(*loop), seed));
}

Manager::Manager(lb::Director& director, std::unique_ptr<Loop> loop, uint32_t seed)
    : director_(director),
      loop_(std::move(loop)),
      udp_(*loop_),
      icmp_(*loop_),
      ssl_(SSL_CTX_new(TLS_client_method())),
      env_{*loop_, udp_, icmp_, ssl_},
      rng_(seed ? seed : static_cast<uint32_t>(std::time(nullptr))) {
    if (ssl_) SSL_CTX_set_verify(ssl_, SSL_VERIFY_NONE, nullptr);
    feedback_ = std::make_unique<FeedbackHub>(
        *loop_, [this](const FeedbackHub::Spec& spec, const net::InetAddr& src,
                       const net::FeedbackReport& r) { return feedback_report(spec, src, r); });
}

Manager::~Manager() {
    loop_->timer_cancel(passive_timer_);
    loop_->timer_cancel(feedback_timer_);
    feedback_.reset();
    vs_.clear();
    notifiers_.clear();
    if (ssl_) SSL_CTX_free(ssl_);
}

std::string Manager::owner_of(const VirtualServer& vs) {
    if (!vs.group.empty()) return "group " + vs.group + " " + std::string(to_string(vs.proto));
    // A mark's services (one per family, vip 0.0.0.0 or ::) are one owner each.
    if (vs.fwmark) return "FWM " + std::to_string(vs.fwmark) + (vs.vip.is_v4() ? "" : " IPv6");
    return std::string(to_string(vs.proto)) + " " + ep_text(vs.vip, vs.port);
}

uint32_t Manager::RsRecord::base_weight() const {
    for (const auto& c : checkers)
        if (c->dyn_weight) return *c->dyn_weight;
    return preview_weight.value_or(conf.weight);
}

size_t Manager::checker_count() const {
    size_t n = 0;
    for (const auto& [o, vs] : vs_)
        for (const auto& rs : vs->rs) n += rs->checkers.size();
    return n;
}

void Manager::configure(const Config& cfg) {
    auto old = std::move(vs_);
    vs_.clear();
    for (const VirtualServer& v : cfg.virtual_servers) {
        const std::string owner = owner_of(v);
        auto& rec = vs_[owner];
        const lb::ServiceKey key = vs_key(v);
        if (rec) {  // another VIP of the same group: same real servers and checkers
            rec->keys.push_back(key);
            continue;
        }
        rec = std::make_unique<VsRecord>();
        rec->owner = owner;
        rec->conf = v;
        rec->keys.push_back(key);
        VsRecord* prev = nullptr;
        if (auto it = old.find(owner); it != old.end()) prev = it->second.get();
        for (const RealServer& r : v.real_servers) {
            auto rs = std::make_unique<RsRecord>();
            rs->conf = r;
            rs->vs = rec.get();
            RsRecord* prev_rs = nullptr;
            if (prev)
                for (auto& p : prev->rs)
                    if (p->conf.addr == r.addr && p->conf.port == r.port) prev_rs = p.get();
            const auto& fb = v.health.feedback;
            if (fb && prev_rs && prev->conf.health.feedback &&
                prev->conf.health.feedback->same(*fb)) {
                rs->fb = prev_rs->fb;  // a reload keeps the smoothed load and weight
                rs->fb_weight = prev_rs->fb_weight;
            }
            for (const CheckerConf& cc : r.health.checkers) {
                std::unique_ptr<Checker> kept;
                if (prev_rs) {
                    auto it =
                        std::find_if(prev_rs->checkers.begin(), prev_rs->checkers.end(),
                                     [&](const auto& c) { return c && c->conf.same_check(cc); });
                    if (it != prev_rs->checkers.end()) kept = std::move(*it);
                }
                if (kept) {
                    kept->rs = rs.get();
                    rs->checkers.push_back(std::move(kept));
                    continue;
                }
                auto c = std::make_unique<Checker>(*loop_);
                c->conf = cc;
                c->target = target_of(cc, r);
                c->state.up = !v.health.alpha;
                c->rs = rs.get();
                Checker& ref = *c;
                rs->checkers.push_back(std::move(c));
                const Ms warmup = cc.warmup_ms ? Ms(rng_() % (cc.warmup_ms + 1)) : 0;
                schedule(ref, warmup);
            }
            rs->alive = std::all_of(rs->checkers.begin(), rs->checkers.end(),
                                    [](const auto& c) { return c->state.up; });
            rec->rs.push_back(std::move(rs));
        }
        if (prev) {
            rec->quorum_up = prev->quorum_up;
            quorum_update(*rec, /*notify=*/true);
        } else {
            // Initially by the plain threshold, without hysteresis.
            uint64_t live = 0;
            for (const auto& rs : rec->rs)
                if (rs->alive) live += rs->weight();
            rec->quorum_up =
                live >= rec->conf.health.quorum && !(live == 0 && rec->conf.health.quorum > 0);
        }
    }
    // Services gone (omega: their live real servers and quorum are notified down).
    for (auto& [owner, rec] : old) {
        if (vs_.count(owner) || !rec->conf.health.omega) continue;
        for (const auto& rs : rec->rs)
            if (rs->alive && !rs->checkers.empty()) notify(rs->conf.health.notify_down, "omega");
        if (rec->quorum_up) notify(rec->conf.health.quorum_down, "omega");
    }
    old.clear();  // stops the checkers not taken over
    passive_arm();
    // Feedback listeners: one per (listen, port, key) that some service names.
    std::vector<FeedbackHub::Spec> specs;
    for (const auto& [owner, rec] : vs_)
        if (const auto& fb = rec->conf.health.feedback)
            specs.push_back({fb->listen, fb->port, fb->secret, fb->max_skew_ms});
    for (const auto& e : feedback_->configure(specs)) say(e);
    loop_->timer_cancel(feedback_timer_);
    if (!specs.empty()) feedback_timer_ = loop_->timer_in(250, [this] { feedback_tick(); });
}

// configure()'s decisions, on copies: checker states are looked up, not moved.
Config Manager::effective_for(const Config& next) const {
    std::map<std::string, std::unique_ptr<VsRecord>> preview;
    for (const VirtualServer& v : next.virtual_servers) {
        auto& rec = preview[owner_of(v)];
        if (rec) continue;  // another VIP of the same group
        rec = std::make_unique<VsRecord>();
        rec->owner = owner_of(v);
        rec->conf = v;
        const VsRecord* prev = nullptr;
        if (auto it = vs_.find(rec->owner); it != vs_.end()) prev = it->second.get();
        uint64_t live = 0;
        for (const RealServer& r : v.real_servers) {
            auto rs = std::make_unique<RsRecord>();
            rs->conf = r;
            rs->vs = rec.get();
            const RsRecord* prev_rs = nullptr;
            if (prev)
                for (const auto& p : prev->rs)
                    if (p->conf.addr == r.addr && p->conf.port == r.port) prev_rs = p.get();
            if (const auto& fb = v.health.feedback; fb && prev_rs && prev->conf.health.feedback &&
                                                     prev->conf.health.feedback->same(*fb))
                rs->fb_weight = prev_rs->fb_weight;  // as configure(): a learned weight stays
            std::vector<const Checker*> taken;  // configure() moves each kept checker once
            bool alive = true;
            for (const CheckerConf& cc : r.health.checkers) {
                const Checker* kept = nullptr;
                if (prev_rs)
                    for (const auto& c : prev_rs->checkers)
                        if (c && c->conf.same_check(cc) &&
                            std::find(taken.begin(), taken.end(), c.get()) == taken.end()) {
                            kept = c.get();
                            break;
                        }
                if (kept) {
                    taken.push_back(kept);
                    if (!rs->preview_weight && kept->dyn_weight)
                        rs->preview_weight = kept->dyn_weight;
                }
                alive = alive && (kept ? kept->state.up : !v.health.alpha);
            }
            rs->alive = alive;
            if (alive) live += rs->weight();
            rec->rs.push_back(std::move(rs));
        }
        const VsHealth& h = v.health;
        rec->quorum_up = prev ? quorum_next(prev->quorum_up, live, h.quorum, h.hysteresis)
                              : live >= h.quorum && !(live == 0 && h.quorum > 0);
    }
    Config out = next;
    for (VirtualServer& v : out.virtual_servers)
        if (auto it = preview.find(owner_of(v)); it != preview.end())
            v.real_servers = wanted_dests(*it->second);
    return out;
}

void Manager::passive_arm() {
    const bool any = std::any_of(vs_.begin(), vs_.end(), [](const auto& kv) {
        return std::any_of(kv.second->rs.begin(), kv.second->rs.end(),
                           [](const auto& rs) { return rs->conf.health.passive.has_value(); });
    });
    if (!any) {
        loop_->timer_cancel(passive_timer_);
        return;
    }
    if (passive_timer_) return;
    passive_timer_ = loop_->timer_in(kPassivePollMs, [this] {
        passive_timer_ = {};
        passive_poll();
        passive_arm();
    });
}

void Manager::passive_poll() {
    const Ms now = loop_->now();
    for (auto& [owner, vs] : vs_) {
        std::vector<std::shared_ptr<lb::Service>> svcs;
        for (const lb::ServiceKey& key : vs->keys)
            if (auto svc = director_.service_find(key)) svcs.push_back(std::move(svc));
        for (auto& rs : vs->rs) {
            const auto& conf = rs->conf.health.passive;
            if (!conf || rs->checkers.empty()) continue;
            // Down, or the sorry server in its place: no new conns to judge it by.
            if (!rs->alive) {
                rs->passive.reset();
                rs->passive_dests.clear();
                continue;
            }
            // Its dest in each service of the record (a group: one per VIP), summed.
            std::vector<const lb::Dest*> dests;
            uint32_t ok = 0, fail = 0;
            for (const auto& svc : svcs)
                for (const auto& d : svc->dests)
                    if (d->addr == rs->conf.addr && d->port == rs->conf.port) {
                        dests.push_back(d.get());
                        for (const auto& w : d->stats) {
                            ok += w.conn_ok;
                            fail += w.conn_fail;
                        }
                    }
            if (dests != rs->passive_dests) {
                rs->passive.reset();
                rs->passive_dests = dests;
            }
            if (dests.empty() || !rs->passive.observe(now, ok, fail, *conf)) continue;
            const std::string why =
                "passive: " + std::to_string(rs->passive.failures()) + " failed connections in " +
                std::to_string(conf->window_ms / 1000.0).substr(0, 4) + " s, " +
                std::to_string(rs->passive.successes()) + " succeeded meanwhile";
            std::string line = "real server " + ep_text(rs->conf.addr, rs->conf.port);
            line += " (" + owner + ") ";
            line += why;
            say(line);
            // Down as if its checks had failed: the next active success brings it back.
            for (auto& c : rs->checkers) {
                c->state.up = false;
                c->state.failures = 0;
                c->last_text = why;
                c->last_time = static_cast<int64_t>(std::time(nullptr));
            }
            rs->passive.reset();
            rs->passive_dests.clear();
            rs_update(*rs, /*notify=*/true);
        }
    }
}

bool Manager::feedback_report(const FeedbackHub::Spec& spec, const net::InetAddr& src,
                              const net::FeedbackReport& r) {
    bool taken = false;
    for (auto& [owner, vs] : vs_) {
        const auto& fb = vs->conf.health.feedback;
        if (!fb || fb->port != spec.port || fb->listen != spec.listen || fb->secret != spec.secret)
            continue;
        for (auto& rs : vs->rs) {
            if (!(rs->conf.addr == src)) continue;
            taken = true;
            feedback_observe(rs->fb, *fb, r, loop_->now());
            feedback_apply(*rs);
        }
    }
    return taken;
}

void Manager::feedback_apply(RsRecord& rs) {
    const FeedbackConf& fb = *rs.vs->conf.health.feedback;
    const uint32_t base = rs.base_weight();
    const auto next = feedback_weight(rs.fb, fb, base, loop_->now());
    if (!feedback_weight_changes(rs.fb_weight, next, fb.ceiling ? fb.ceiling : base)) return;
    say("feedback: real server " + ep_text(rs.conf.addr, rs.conf.port) + " of " + rs.vs->owner +
        ": weight " + (next ? std::to_string(*next) : std::to_string(base) + " (configured)") +
        (feedback_silent(rs.fb, fb, loop_->now()) ? ", reports stopped" : ""));
    rs.fb_weight = next;
    rs_update(rs, /*notify=*/true);
}

void Manager::feedback_tick() {
    for (auto& [owner, vs] : vs_) {
        if (!vs->conf.health.feedback) continue;
        for (auto& rs : vs->rs) feedback_apply(*rs);
    }
    feedback_timer_ = loop_->timer_in(250, [this] { feedback_tick(); });
}

nlohmann::json Manager::feedback_show() const {
    nlohmann::json servers = nlohmann::json::array();
    const Ms now = loop_->now();
    for (const auto& [owner, vs] : vs_) {
        const auto& fb = vs->conf.health.feedback;
        if (!fb) continue;
        for (const auto& rs : vs->rs) {
            nlohmann::json j;
            j["service"] = owner;
            j["dest"] = ep_text(rs->conf.addr, rs->conf.port);
            j["port"] = fb->port;
            j["configured"] = rs->base_weight();
            j["weight"] = rs->weight();
            j["dynamic"] = rs->fb_weight.has_value();
            j["reports"] = rs->fb.reports;
            const bool silent = feedback_silent(rs->fb, *fb, now);
            j["state"] = !rs->fb.load ? "waiting" : silent ? "silent" : "reporting";
            if (rs->fb.load) {
                const auto& r = rs->fb.last;
                j["load"] = std::round(*rs->fb.load * 1000) / 1000;
                j["age_ms"] = now - rs->fb.last_ms;
                j["cpu"] = r.cpu_permille / 10.0;
                j["mem"] = r.mem_permille / 10.0;
                j["loadavg"] = r.loadavg_x100 / 100.0;
                j["running"] = r.running;
                j["ncpu"] = r.ncpu;
                j["established"] = r.established;
                if (r.has_custom) j["custom"] = r.custom_permille / 10.0;
            }
            servers.push_back(std::move(j));
        }
    }
    return nlohmann::json{{"listeners", feedback_->show()}, {"servers", std::move(servers)}};
}

std::vector<RealServer> Manager::wanted_dests(const VsRecord& vs) const {
    std::vector<RealServer> out;
    const auto& sorry = vs.conf.health.sorry;
    const bool sorry_on = sorry && !vs.quorum_up;
    for (const auto& rs : vs.rs) {
        RealServer r = rs->conf;
        const bool inhibit = rs->conf.health.inhibit_on_failure;
        // With the quorum lost the sorry server stands in for every real server.
        if (rs->alive && !sorry_on) {
            r.weight = rs->weight();
        } else if (inhibit) {
            r.weight = 0;
        } else {
            continue;
        }
        out.push_back(std::move(r));
    }
    if (sorry && (sorry_on || vs.conf.health.sorry_inhibit)) {
        RealServer s;
        s.addr = sorry->addr;
        s.port = sorry->port;
        s.weight = sorry_on ? 1 : 0;
        s.loc = SourceLoc{sorry->file, sorry->line};
        out.push_back(std::move(s));
    }
    return out;
}

Config Manager::effective(const Config& cfg) const {
    Config out = cfg;
    for (VirtualServer& v : out.virtual_servers) {
        auto it = vs_.find(owner_of(v));
        if (it != vs_.end()) v.real_servers = wanted_dests(*it->second);
    }
    return out;
}

void Manager::schedule(Checker& c, Ms delay) {
    loop_->timer_cancel(c.timer);
    c.timer = loop_->timer_in(delay, [this, &c] {
        c.timer = {};
        attempt(c);
    });
}

void Manager::attempt(Checker& c) {
    if (!c.probe) c.probe = probe_create(c.conf, c.target, env_);
    c.running = true;
    ++attempts_;
    c.probe->start([this, &c](ProbeResult r) { on_result(c, std::move(r)); });
}

void Manager::on_result(Checker& c, ProbeResult r) {
    c.running = false;
    c.last_text = r.text;
    c.last_time = static_cast<int64_t>(std::time(nullptr));
    const bool was_up = c.state.up;
    const CheckStep step = check_step(c.state, c.conf, r.ok);
    bool weight_changed = false;
    if (c.conf.misc_dynamic && r.ok) {
        // exit 0 restores the configured weight; 2..255 set code - 2.
        weight_changed = c.dyn_weight != r.weight;
        c.dyn_weight = r.weight;
    }
    schedule(c, step.next_in);
    if (step.changed || weight_changed) {
        RsRecord& rs = *c.rs;
        if (step.changed)
            say(std::string(to_string(c.conf.type)) + " of real server " +
                ep_text(rs.conf.addr, rs.conf.port) + " (" + rs.vs->owner + ") " +
                (was_up ? "down: " : "up: ") + r.text);
        rs_update(rs, /*notify=*/true);
    }
}

void Manager::rs_update(RsRecord& rs, bool notify_scripts) {
    const bool alive = std::all_of(rs.checkers.begin(), rs.checkers.end(),
                                   [](const auto& c) { return c->state.up; });
    VsRecord& vs = *rs.vs;
    if (alive != rs.alive) {
        rs.alive = alive;
        say("real server " + ep_text(rs.conf.addr, rs.conf.port) + " of " + vs.owner +
            (alive                               ? " up"
             : rs.conf.health.inhibit_on_failure ? " down (inhibited: weight 0)"
                                                 : " down (removed)"));
        if (notify_scripts)
            notify(alive ? rs.conf.health.notify_up : rs.conf.health.notify_down,
                   alive ? "notify_up" : "notify_down");
    }
    quorum_update(vs, notify_scripts);
    sync(vs);
}

bool Manager::quorum_update(VsRecord& vs, bool notify_scripts) {
    uint64_t live = 0;
    for (const auto& rs : vs.rs)
        if (rs->alive) live += rs->weight();
    const VsHealth& h = vs.conf.health;
    const bool up = quorum_next(vs.quorum_up, live, h.quorum, h.hysteresis);
    if (up == vs.quorum_up) return false;
    vs.quorum_up = up;
    say(vs.owner + (up ? ": quorum gained" : ": quorum lost") + " (live weight " +
        std::to_string(live) + ", quorum " + std::to_string(h.quorum) + ", hysteresis " +
        std::to_string(h.hysteresis) + ")" +
        (h.sorry ? (up ? ", sorry server out" : ", sorry server in") : ""));
    if (notify_scripts) notify(up ? h.quorum_up : h.quorum_down, up ? "quorum_up" : "quorum_down");
    return true;
}

// The service's dests as wanted_dests says, for each service of the record: only dests the
// configuration names (real servers, sorry server) are touched; one commit for all.
void Manager::sync(VsRecord& vs) {
    const std::vector<RealServer> want = wanted_dests(vs);
    bool changed = false;
    auto configured = [&](const net::InetAddr& a, uint16_t port) {
        if (vs.conf.health.sorry && vs.conf.health.sorry->addr == a &&
            vs.conf.health.sorry->port == port)
            return true;
        return std::any_of(vs.rs.begin(), vs.rs.end(), [&](const auto& rs) {
            return rs->conf.addr == a && rs->conf.port == port;
        });
    };
    for (const lb::ServiceKey& key : vs.keys) {
        auto svc = director_.service_find(key);
        if (!svc) continue;
        std::vector<std::pair<net::InetAddr, uint16_t>> drop;
        for (const auto& d : svc->dests) {
            const bool wanted = std::any_of(want.begin(), want.end(), [&](const RealServer& r) {
                return r.addr == d->addr && r.port == d->port;
            });
            if (!wanted && configured(d->addr, d->port)) drop.emplace_back(d->addr, d->port);
        }
        for (const auto& [a, p] : drop) {
            if (director_.dest_del(key, a, p)) changed = true;
        }
        for (const RealServer& r : want) {
            const lb::DestSpec ds = dest_spec(vs.conf, r);
            auto it = std::find_if(svc->dests.begin(), svc->dests.end(), [&](const auto& d) {
                return d->addr == r.addr && d->port == r.port;
            });
            Result<void> res;
            if (it == svc->dests.end()) {
                res = director_.dest_add(key, ds);
                changed = changed || res.ok();
            } else if ((*it)->weight != ds.weight) {
                res = director_.dest_edit(key, ds);
                changed = changed || res.ok();
            }
            if (!res)
                say(vs.owner + ": real server " + ep_text(r.addr, r.port) + ": " + res.error());
        }
    }
    if (!changed) return;
    director_.commit();
    if (on_change) on_change();
}

void Manager::notify(const std::vector<std::string>& argv, const std::string& why) {
    if (argv.empty()) return;
    std::erase_if(notifiers_, [](const auto& s) { return !s->running(); });
    constexpr Ms kNotifyTimeoutMs = 30'000;
    notifiers_.push_back(std::make_unique<Script>(*loop_, argv, kNotifyTimeoutMs,
                                                  [this, why, cmd = argv[0]](ScriptExit e) {
                                                      if (!e.spawned || e.timed_out || e.code != 0)
                                                          say(why + " " + cmd + ": " + e.text);
                                                  }));
}

void Manager::shutdown(Ms wait_ms) {
    for (auto& [owner, rec] : vs_) {
        for (auto& rs : rec->rs) rs->checkers.clear();  // checks stop
        if (!rec->conf.health.omega) continue;
        for (const auto& rs : rec->rs)
            if (rs->alive && !rs->conf.health.checkers.empty())
                notify(rs->conf.health.notify_down, "omega notify_down");
        if (rec->quorum_up) notify(rec->conf.health.quorum_down, "omega quorum_down");
    }
    const Ms until = loop_->now() + wait_ms;
    while (loop_->now() < until && std::any_of(notifiers_.begin(), notifiers_.end(),
                                               [](const auto& s) { return s->running(); }))
        loop_->run_once(50);
}

std::optional<bool> Manager::rs_alive(const std::string& owner, const net::InetEndpoint& ep) const {
    auto it = vs_.find(owner);
    if (it == vs_.end()) return std::nullopt;
    for (const auto& rs : it->second->rs)
        if (rs->conf.addr == ep.addr && rs->conf.port == ep.port) return rs->alive;
    return std::nullopt;
}

bool Manager::inhibited(const lb::ServiceKey& key, const net::InetAddr& addr, uint16_t port) const {
    for (const auto& [owner, vs] : vs_) {
        if (std::find(vs->keys.begin(), vs->keys.end(), key) == vs->keys.end()) continue;
        for (const auto& rs : vs->rs)
            if (rs->conf.addr == addr && rs->conf.port == port)
                return !rs->alive && rs->conf.health.inhibit_on_failure;
    }
    return false;
}

std::optional<bool> Manager::quorum_up(const std::string& owner) const {
    auto it = vs_.find(owner);
    if (it == vs_.end()) return std::nullopt;
    return it->second->quorum_up;
}

std::optional<bool> Manager::quorum_of(const lb::ServiceKey& key) const {
    for (const auto& [owner, vs] : vs_)
        if (std::find(vs->keys.begin(), vs->keys.end(), key) != vs->keys.end()) return vs->quorum_up;
    return std::nullopt;
}

nlohmann::json Manager::show() const {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [owner, vs] : vs_) {
        for (const auto& rs : vs->rs) {
            for (const auto& c : rs->checkers) {
                nlohmann::json j;
                j["service"] = owner;
                j["dest"] = ep_text(rs->conf.addr, rs->conf.port);
                j["type"] = to_string(c->conf.type);
                j["target"] = net::to_string(c->target.dst);
                j["state"] = c->state.up ? "up" : "down";
                j["dest_state"] = rs->alive                            ? "up"
                                  : rs->conf.health.inhibit_on_failure ? "inhibited"
                                                                       : "down";
                j["weight"] =
                    rs->alive && (!vs->conf.health.sorry || vs->quorum_up) ? rs->weight() : 0;
                j["failures"] = c->state.failures;
                j["last"] = c->last_text;
                j["time"] = c->last_time;
                j["quorum"] = vs->quorum_up ? "up" : "down";
                list.push_back(std::move(j));
            }
        }
    }
    return list;
}

std::vector<DestHealth> Manager::dest_health() const {
    std::vector<DestHealth> out;
    for (const auto& [owner, vs] : vs_) {
        for (const auto& rs : vs->rs) {
            DestHealth h;
            h.addr = rs->conf.addr;
            h.port = rs->conf.port;
            h.state = rs->alive                            ? "up"
                      : rs->conf.health.inhibit_on_failure ? "inhibited"
                                                           : "down";
            h.checked = !rs->checkers.empty();
            h.weight = rs->weight();
            for (const auto& c : rs->checkers) {
                if (!h.last.empty()) h.last += "; ";
                h.last += std::string(to_string(c->conf.type)) + ": " + c->last_text;
                h.last_time = std::max(h.last_time, c->last_time);
            }
            for (const lb::ServiceKey& key : vs->keys) {
                h.key = key;
                out.push_back(h);
            }
        }
    }
    return out;
}

}  // namespace xvs::ctl::health
