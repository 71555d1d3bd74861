// Every keyword of xvs.conf and what xvs does with it, in one table: the parser dispatches
// refusals and warnings from it, `xvsd -t` gives the same verdict as start because both run the
// parser, and README's configuration section is written from it. A keyword is
//   Applied  - parsed and acted on end to end (its grammar lives in config_parser.cpp);
//   Refused  - a feature xvs does not have yet: "file:line: 'K' is not supported yet (NOTE):
//              remove it", so nothing is accepted without effect;
//   Ignored  - a keepalived setting with no meaning for a userspace director (mail alerts,
//              keepalived's own processes): warned about once, at its first use, and dropped.
// A keyword without a row is unknown (an error) even if the grammar has code for it, so a new
// keyword needs its row here. When a feature lands, its rows move from Refused to Applied
// together with the parser code.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace xvs::ctl::keywords {

using namespace std::string_view_literals;

enum class KeywordClass : uint8_t { Applied, Refused, Ignored };

struct Keyword {
    std::string_view block;  // "top", "global_defs", "virtual_server", ...
    std::string_view name;   // a trailing '*' matches every keyword with that prefix
    KeywordClass cls;
    std::string_view note;  // Refused: why (goes in the message); Ignored: why it is meaningless
};

namespace detail {
inline constexpr auto A = KeywordClass::Applied;
inline constexpr auto R = KeywordClass::Refused;
inline constexpr auto I = KeywordClass::Ignored;
inline constexpr std::string_view kSorry = "sorry servers are not implemented";
inline constexpr std::string_view kMail = "xvs sends no mail alerts";
}  // namespace detail

// clang-format off
inline constexpr std::array kKeywords = {
    // ---- top level
    Keyword{"top", "global_defs", detail::A, ""},
    Keyword{"top", "netif_defs", detail::A, ""},
    Keyword{"top", "worker_defs", detail::A, ""},
    Keyword{"top", "frag_defs", detail::A, "restart to change"},
    Keyword{"top", "ip_defs", detail::A, ""},
    Keyword{"top", "ipvs_defs", detail::A, ""},
    Keyword{"top", "local_address_group", detail::A, ""},
    Keyword{"top", "virtual_server_group", detail::A, ""},
    Keyword{"top", "deny_address_group", detail::A, ""},
    Keyword{"top", "virtual_server", detail::A,
            "VIP PORT, group NAME, fwmark N (marks from fwmark_defs), or match NAME (SNAT)"},
    Keyword{"top", "fwmark_defs", detail::A,
            "xvs: mark N { VIP[/LEN] [PORT|PORT-PORT] [tcp|udp] ... }, the marks fwmark services serve"},
    Keyword{"fwmark_defs", "mark", detail::A, ""},
    Keyword{"top", "bgp_defs", detail::A, "xvs: announce the VIPs over BGP through BIRD 2"},
    Keyword{"top", "ospf_defs", detail::A, "xvs: announce the VIPs into OSPF through BIRD 2"},
    // ---- bgp_defs, ospf_defs (ctl/bgp/): the first four are shared, set once
    Keyword{"bgp_defs", "bird_socket", detail::A, "BIRD's control socket"},
    Keyword{"bgp_defs", "bird_config", detail::A, "the file xvsd writes and bird.conf includes"},
    Keyword{"bgp_defs", "router_id", detail::A, ""},
    Keyword{"bgp_defs", "liveness_interface", detail::A, "restart to change"},
    Keyword{"bgp_defs", "local_as", detail::A, ""},
    Keyword{"bgp_defs", "neighbor", detail::A,
            "ADDR remote_as N [port N] [hold_time S] [bfd] [password X] [multihop N]"},
    Keyword{"bgp_defs", "next_hop", detail::A, ""},
    Keyword{"bgp_defs", "source_address", detail::A, ""},
    Keyword{"bgp_defs", "community", detail::A, "ASN:VALUE, repeatable"},
    Keyword{"bgp_defs", "med", detail::A, ""},
    Keyword{"ospf_defs", "bird_socket", detail::A, ""},
    Keyword{"ospf_defs", "bird_config", detail::A, ""},
    Keyword{"ospf_defs", "router_id", detail::A, ""},
    Keyword{"ospf_defs", "liveness_interface", detail::A, "restart to change"},
    Keyword{"ospf_defs", "area", detail::A, ""},
    Keyword{"ospf_defs", "interface", detail::A, "NAME [cost N] [hello S] [dead S]"},
    Keyword{"ospf_defs", "metric", detail::A, "external type 2 metric of the VIPs"},
    Keyword{"top", "vrrp_*", detail::R, "xvs does not implement VRRP"},
    Keyword{"top", "sync_defs", detail::A, "xvs: session sync between directors; restart to change"},
    // ---- global_defs
    Keyword{"global_defs", "log_level", detail::A, ""},
    Keyword{"global_defs", "log_facility", detail::A, "syslog: daemon, local0..local7"},
    Keyword{"global_defs", "control_socket", detail::A, ""},
    Keyword{"global_defs", "control_socket_group", detail::A, "socket 0660 with that group"},
    Keyword{"global_defs", "lvs_timeouts", detail::A, ""},
    Keyword{"global_defs", "metrics_listen", detail::A, "Prometheus text at /metrics"},
    Keyword{"global_defs", "status_allow", detail::A,
            "clients allowed the status page (/ and /status.json on metrics_listen)"},
    Keyword{"global_defs", "lvs_sync_daemon", detail::R,
            "xvs syncs sessions itself: use a sync_defs block"},
    Keyword{"global_defs", "router_id", detail::I, "it names the host in mail alerts; xvs sends none"},
    Keyword{"global_defs", "notification_email", detail::I, detail::kMail},
    Keyword{"global_defs", "notification_email_from", detail::I, detail::kMail},
    Keyword{"global_defs", "smtp_server", detail::I, detail::kMail},
    Keyword{"global_defs", "smtp_connect_timeout", detail::I, detail::kMail},
    Keyword{"global_defs", "smtp_helo_name", detail::I, detail::kMail},
    Keyword{"global_defs", "enable_script_security", detail::I,
            "xvsd does not check who owns its scripts"},
    Keyword{"global_defs", "script_user", detail::I, "scripts run as xvsd's user"},
    Keyword{"global_defs", "lvs_id", detail::I, "it names keepalived's sync daemon"},
    Keyword{"global_defs", "lvs_flush", detail::I, "xvsd always starts with an empty table"},
    Keyword{"global_defs", "lvs_flush_onstop", detail::I, "the table goes when xvsd stops"},
    Keyword{"global_defs", "max_auto_priority", detail::I, "it tunes keepalived's processes"},
    Keyword{"global_defs", "dynamic_interfaces", detail::I, "xvs ports are fixed in netif_defs"},
    Keyword{"global_defs", "vrrp_*", detail::I, "it tunes keepalived's VRRP, which xvs does not run"},
    Keyword{"global_defs", "checker_*", detail::I, "it tunes keepalived's checker process"},
    Keyword{"global_defs", "bfd_*", detail::I, "it tunes keepalived's BFD process"},
    // ---- netif_defs, port
    Keyword{"netif_defs", "eal_args", detail::A, ""},
    Keyword{"netif_defs", "port", detail::A, ""},
    Keyword{"netif_defs", "mbufs_per_port", detail::A, "restart to change"},
    Keyword{"netif_defs", "flow_steering", detail::A, "restart to change"},
    Keyword{"netif_defs", "xdp_offload", detail::A, "xvs: packets before the XDP fast path; restart to change"},
    Keyword{"port", "dev", detail::A, ""},
    Keyword{"port", "mtu", detail::A, ""},
    Keyword{"port", "exception", detail::A, "restart to change"},
    // ---- sync_defs (session sync, ctl/sync/)
    Keyword{"sync_defs", "syncid", detail::A, "0..255, as IPVS's --syncid"},
    Keyword{"sync_defs", "source", detail::A, "the director's kernel address the sync socket uses"},
    Keyword{"sync_defs", "mcast_group", detail::A, "default 224.0.0.81"},
    Keyword{"sync_defs", "port", detail::A, "default 8848"},
    Keyword{"sync_defs", "peer", detail::A, "unicast peer (repeatable); none: multicast"},
    Keyword{"sync_defs", "role", detail::A, "master|backup|both"},
    Keyword{"sync_defs", "peer_timeout", detail::A, "seconds of silence before a peer is failed"},
    Keyword{"sync_defs", "heartbeat", detail::A, "seconds between heartbeats"},
    Keyword{"sync_defs", "resync", detail::A, "on|off: ask a peer for its conns when first heard"},
    Keyword{"sync_defs", "max_message", detail::A, "bytes per sync datagram"},
    Keyword{"sync_defs", "ring_size", detail::A, "conn events per worker between two drains"},
    Keyword{"sync_defs", "claim_dev", detail::A, "port a failed peer's local addresses are claimed on"},
    // ---- worker_defs
    Keyword{"worker_defs", "workers", detail::A, "up to the CPUs xvsd may use; restart to change"},
    Keyword{"worker_defs", "cpus", detail::A, "xvs: worker i on the i-th CPU listed; restart to change"},
    Keyword{"worker_defs", "poll_mode", detail::A, ""},
    // ---- frag_defs
    Keyword{"frag_defs", "max_datagrams", detail::A, "0 turns reassembly off"},
    Keyword{"frag_defs", "max_fragments", detail::A, ""},
    Keyword{"frag_defs", "max_datagram_size", detail::A, ""},
    Keyword{"frag_defs", "timeout_ms", detail::A, ""},
    // ---- ip_defs
    Keyword{"ip_defs", "address", detail::A, ""},
    Keyword{"ip_defs", "route", detail::A, ""},
    Keyword{"ip_defs", "tunnel_source", detail::A, ""},
    // ---- ipvs_defs and its blocks
    Keyword{"ipvs_defs", "timeouts", detail::A, ""},
    Keyword{"ipvs_defs", "uoa_max_trail", detail::A, ""},
    Keyword{"ipvs_defs", "conn_table_size", detail::A, "restart to change"},
    Keyword{"ipvs_defs", "synproxy", detail::A, ""},
    Keyword{"ipvs_defs", "expire_nodest_conn", detail::A, ""},
    Keyword{"ipvs_defs", "expire_quiescent_template", detail::A, ""},
    Keyword{"ipvs_defs", "reschedule_refused", detail::A, ""},
    Keyword{"timeouts", "tcp", detail::A, "ESTABLISHED, as ipvsadm --set"},
    Keyword{"timeouts", "tcpfin", detail::A, "FIN_WAIT, as ipvsadm --set"},
    Keyword{"timeouts", "udp", detail::A, ""},
    Keyword{"timeouts", "icmp", detail::A, "SNAT ICMP echo conns"},
    Keyword{"timeouts", "none", detail::A, ""},
    Keyword{"timeouts", "established", detail::A, ""},
    Keyword{"timeouts", "syn_sent", detail::A, ""},
    Keyword{"timeouts", "syn_recv", detail::A, ""},
    Keyword{"timeouts", "fin_wait", detail::A, ""},
    Keyword{"timeouts", "time_wait", detail::A, ""},
    Keyword{"timeouts", "close", detail::A, ""},
    Keyword{"timeouts", "close_wait", detail::A, ""},
    Keyword{"timeouts", "last_ack", detail::A, ""},
    Keyword{"timeouts", "listen", detail::A, ""},
    Keyword{"timeouts", "synack", detail::A, ""},
    Keyword{"synproxy", "synack_options", detail::A, ""},
    Keyword{"synproxy", "mss", detail::A, ""},
    Keyword{"synproxy", "ttl", detail::A, ""},
    Keyword{"synproxy", "sack", detail::A, ""},
    Keyword{"synproxy", "timestamp", detail::A, ""},
    Keyword{"synproxy", "wscale", detail::A, ""},
    Keyword{"synproxy", "defer_rs_syn", detail::A, ""},
    Keyword{"synproxy", "defer", detail::A, "short for defer_rs_syn"},
    Keyword{"synproxy", "rs_syn_max_retry", detail::A, ""},
    Keyword{"synproxy", "syn_retry", detail::A, "short for rs_syn_max_retry"},
    Keyword{"synproxy", "max_ack_saved", detail::A, ""},
    Keyword{"synproxy", "ack_storm_thresh", detail::A, ""},
    // ---- virtual_server_group entries
    Keyword{"virtual_server_group", "fwmark", detail::R,
            "a group of marks: write one `virtual_server fwmark N` per mark, or put the "
            "addresses into one mark of fwmark_defs"},
    // ---- virtual_server
    Keyword{"virtual_server", "protocol", detail::A,
            "TCP or UDP (match services also ICMP); SCTP is refused"},
    Keyword{"virtual_server", "ip_family", detail::A,
            "inet|inet6: the family of a `virtual_server fwmark N` (else its first real "
            "server's, else IPv4), as keepalived; on a VIP it must be the VIP's"},
    Keyword{"virtual_server", "lb_algo", detail::A,
            "rr wrr lc wlc lblc lblcr dh sh sed nq fo ovf mh twos conhash"},
    Keyword{"virtual_server", "lvs_sched", detail::A, "as lb_algo"},
    Keyword{"virtual_server", "lb_kind", detail::A, "FNAT NAT DR TUN [type ipip|gue] [port N] SNAT"},
    Keyword{"virtual_server", "lvs_method", detail::A, "as lb_kind"},
    Keyword{"virtual_server", "nat_tunnel", detail::A,
            "ipip|gue [port N] with lb_kind NAT: NAT over a tunnel both ways (xvs, issue 20)"},
    Keyword{"virtual_server", "laddr_group_name", detail::A, ""},
    Keyword{"virtual_server", "syn_proxy", detail::A, "TCP only"},
    Keyword{"virtual_server", "toa", detail::A, "TCP only"},
    Keyword{"virtual_server", "proxy_protocol", detail::A, ""},
    Keyword{"virtual_server", "uoa", detail::A, "UDP only"},
    Keyword{"virtual_server", "blacklist", detail::A, ""},
    Keyword{"virtual_server", "whitelist", detail::A, ""},
    Keyword{"virtual_server", "daddr_group_name", detail::A, ""},
    Keyword{"virtual_server", "conn_rate_limit", detail::A, ""},
    Keyword{"virtual_server", "real_server", detail::A, "match services: the WAN address, port 0"},
    Keyword{"virtual_server", "src-range", detail::A, "match services only: A.B.C.D[-A.B.C.D][:P[-Q]]"},
    Keyword{"virtual_server", "dst-range", detail::A, "match services only, as src-range"},
    Keyword{"virtual_server", "oif", detail::A, "match services only: the WAN port (required)"},
    Keyword{"virtual_server", "iif", detail::A, "match services only: the inside port"},
    Keyword{"virtual_server", "persistence_timeout", detail::A, "seconds, no value = 360"},
    Keyword{"virtual_server", "persistence_granularity", detail::A,
            "IPv4 netmask, or an IPv6 prefix length"},
    Keyword{"virtual_server", "persistence_engine", detail::A,
            "sip: UDP persistent services, templates by SIP Call-ID"},
    Keyword{"virtual_server", "ops", detail::A, "UDP, DR/TUN real servers: one-packet scheduling"},
    Keyword{"virtual_server", "sh-port", detail::A, "lb_algo sh: hash the client port too"},
    Keyword{"virtual_server", "sh-fallback", detail::A, "lb_algo sh: rehash past an unusable dest"},
    Keyword{"virtual_server", "mh-port", detail::A, "lb_algo mh: hash the client port too"},
    Keyword{"virtual_server", "mh-fallback", detail::A, "lb_algo mh: rehash past an unusable dest"},
    Keyword{"virtual_server", "flag-1", detail::A, "ipvsadm's name of sh-fallback / mh-fallback"},
    Keyword{"virtual_server", "flag-2", detail::A, "ipvsadm's name of sh-port / mh-port"},
    Keyword{"virtual_server", "flag-3", detail::A, "no scheduler takes it: refused"},
    Keyword{"virtual_server", "hash_target", detail::A,
            "DPVS: lb_algo conhash hashes sip (client address) or qid (UDP: QUIC connection ID)"},
    Keyword{"virtual_server", "quic_cid_len", detail::A,
            "xvs: hash_target qid: the servers' connection-ID length (1..20) for short headers"},
    Keyword{"virtual_server", "mh_table_size", detail::A,
            "xvs: lb_algo mh lookup table size, a prime (default 65537)"},
    Keyword{"virtual_server", "sorry_server", detail::A, "added when the quorum is lost"},
    Keyword{"virtual_server", "sorry_server_inhibit", detail::A, "sorry server kept at weight 0"},
    Keyword{"virtual_server", "sorry_server_lvs_method", detail::R,
            "the sorry server is forwarded with the virtual server's lb_kind"},
    Keyword{"virtual_server", "delay_loop", detail::A, "default of its checkers"},
    Keyword{"virtual_server", "quorum", detail::A, ""},
    Keyword{"virtual_server", "quorum_up", detail::A, ""},
    Keyword{"virtual_server", "quorum_down", detail::A, ""},
    Keyword{"virtual_server", "hysteresis", detail::A, ""},
    Keyword{"virtual_server", "alpha", detail::A, ""},
    Keyword{"virtual_server", "omega", detail::A, ""},
    Keyword{"virtual_server", "ha_suspend", detail::R,
            "xvs runs no VRRP, so checks have no backup state to be suspended in"},
    Keyword{"virtual_server", "virtualhost", detail::A, "default of its HTTP checks"},
    Keyword{"virtual_server", "retry", detail::A, "default of its checkers"},
    Keyword{"virtual_server", "delay_before_retry", detail::A, "default of its checkers"},
    Keyword{"virtual_server", "connect_timeout", detail::A, "default of its checkers"},
    Keyword{"virtual_server", "warmup", detail::A, "default of its checkers"},
    Keyword{"virtual_server", "passive_check", detail::A,
            "xvs: default of its real servers that have a checker"},
    Keyword{"virtual_server", "smtp_alert", detail::I, detail::kMail},
    Keyword{"virtual_server", "feedback", detail::A,
            "xvs: { port N key|keyfile ... }: weights from xvs-agent load reports"},
    // ---- feedback (xvs; ctl/health/feedback.h has the formula)
    Keyword{"feedback", "port", detail::A, "UDP port of the director's kernel addresses (required)"},
    Keyword{"feedback", "listen", detail::A, "address to receive on, default all"},
    Keyword{"feedback", "key", detail::A, "shared secret, 16+ characters (or keyfile)"},
    Keyword{"feedback", "keyfile", detail::A, "file holding the shared secret"},
    Keyword{"feedback", "interval", detail::A, "seconds between reports, default 1"},
    Keyword{"feedback", "smoothing", detail::A, "0..0.999, share of the old load kept, default 0.5"},
    Keyword{"feedback", "floor", detail::A, "lowest dynamic weight, default 1"},
    Keyword{"feedback", "ceiling", detail::A, "highest dynamic weight, default the configured one"},
    Keyword{"feedback", "metric", detail::A, "cpu runq loadavg mem conns custom (the largest), default cpu"},
    Keyword{"feedback", "conns_max", detail::A, "metric conns: connections at full load"},
    Keyword{"feedback", "silence", detail::A, "seconds without reports = silent, default 3 intervals"},
    Keyword{"feedback", "on_silence", detail::A, "keep | configured (default) | zero"},
    Keyword{"feedback", "max_skew", detail::A, "seconds a report's clock may be off, default 30"},
    // ---- real_server
    Keyword{"real_server", "weight", detail::A, "0 = quiescent"},
    Keyword{"real_server", "upper_threshold", detail::A, ""},
    Keyword{"real_server", "uthreshold", detail::A, "as upper_threshold"},
    Keyword{"real_server", "lower_threshold", detail::A, ""},
    Keyword{"real_server", "lthreshold", detail::A, "as lower_threshold"},
    Keyword{"real_server", "inhibit_on_failure", detail::A, "down: weight 0 instead of removal"},
    Keyword{"real_server", "notify_up", detail::A, ""},
    Keyword{"real_server", "notify_down", detail::A, ""},
    Keyword{"real_server", "delay_loop", detail::A, "default of its checkers"},
    Keyword{"real_server", "retry", detail::A, "default of its checkers"},
    Keyword{"real_server", "delay_before_retry", detail::A, "default of its checkers"},
    Keyword{"real_server", "connect_timeout", detail::A, "default of its checkers"},
    Keyword{"real_server", "warmup", detail::A, "default of its checkers"},
    Keyword{"real_server", "virtualhost", detail::A, "default of its HTTP checks"},
    Keyword{"real_server", "HTTP_GET", detail::A, ""},
    Keyword{"real_server", "SSL_GET", detail::A, "no certificate verification, as keepalived"},
    Keyword{"real_server", "TCP_CHECK", detail::A, ""},
    Keyword{"real_server", "UDP_CHECK", detail::A, ""},
    Keyword{"real_server", "MISC_CHECK", detail::A, ""},
    Keyword{"real_server", "DNS_CHECK", detail::A, ""},
    Keyword{"real_server", "SMTP_CHECK", detail::A, ""},
    Keyword{"real_server", "PING_CHECK", detail::A, "ICMP echo"},
    Keyword{"real_server", "BFD_CHECK", detail::R,
            "xvs runs no BFD: use TCP_CHECK, UDP_CHECK or PING_CHECK"},
    Keyword{"real_server", "FILE_CHECK", detail::R,
            "file checks are not implemented: use a MISC_CHECK that tests the file"},
    Keyword{"real_server", "passive_check", detail::A,
            "xvs: failing connections mark it down; needs a checker to come back"},
    Keyword{"real_server", "smtp_alert", detail::I, detail::kMail},
    // ---- passive_check (xvs)
    Keyword{"passive_check", "failures", detail::A, "failed connections in the window, default 5"},
    Keyword{"passive_check", "window", detail::A, "seconds, default 2"},
    // ---- checker blocks: "checker" holds what every checker takes, the type's block the rest
    Keyword{"checker", "connect_ip", detail::A, "default: the real server's address"},
    Keyword{"checker", "connect_port", detail::A, "default: the real server's port"},
    Keyword{"checker", "bindto", detail::A, "source address of the checks"},
    Keyword{"checker", "connect_timeout", detail::A, "seconds, default 5"},
    Keyword{"checker", "retry", detail::A, "default 1"},
    Keyword{"checker", "nb_get_retry", detail::A, "old name of retry"},
    Keyword{"checker", "delay_before_retry", detail::A, "seconds, default 1 (HTTP 3)"},
    Keyword{"checker", "delay_loop", detail::A, "seconds, default the virtual server's (60)"},
    Keyword{"checker", "warmup", detail::A, "seconds: random delay of the first check"},
    Keyword{"checker", "bind_port", detail::R, "checks leave from an ephemeral port"},
    Keyword{"checker", "bind_if", detail::R, "give bindto an address of that interface"},
    Keyword{"checker", "fwmark", detail::R, "checks are not marked: xvs runs no netfilter"},
    Keyword{"checker", "log_all_failures", detail::I,
            "xvs logs every state change and `xvsctl check show` has the last result"},
    Keyword{"HTTP_GET", "url", detail::A, ""},
    Keyword{"HTTP_GET", "virtualhost", detail::A, "the Host header"},
    Keyword{"HTTP_GET", "http_protocol", detail::A, "1.0 (default), 1.0C or 1.1"},
    Keyword{"HTTP_GET", "enable_sni", detail::A, "SSL_GET: SNI from the virtualhost"},
    Keyword{"HTTP_GET", "fast_recovery", detail::R, "not implemented"},
    Keyword{"url", "path", detail::A, ""},
    Keyword{"url", "digest", detail::A, "MD5 of the body, 32 hex digits"},
    Keyword{"url", "status_code", detail::A, "codes and ranges, default 200-299"},
    Keyword{"url", "virtualhost", detail::A, ""},
    Keyword{"url", "regex*", detail::R, "body regular expressions are not implemented: use digest"},
    Keyword{"UDP_CHECK", "payload", detail::A, "hex bytes"},
    Keyword{"UDP_CHECK", "require_reply", detail::A, "[hex prefix of the reply]"},
    Keyword{"UDP_CHECK", "min_reply_length", detail::A, ""},
    Keyword{"UDP_CHECK", "max_reply_length", detail::A, ""},
    Keyword{"DNS_CHECK", "type", detail::A, "A NS CNAME SOA PTR MX TXT AAAA"},
    Keyword{"DNS_CHECK", "name", detail::A, "default ."},
    Keyword{"SMTP_CHECK", "helo_name", detail::A, "default: the host name"},
    Keyword{"SMTP_CHECK", "host", detail::R,
            "the multi-host form is not supported: write one SMTP_CHECK per host with connect_ip"},
    Keyword{"MISC_CHECK", "misc_path", detail::A, "the command line, no shell"},
    Keyword{"MISC_CHECK", "misc_timeout", detail::A, "seconds, default delay_loop"},
    Keyword{"MISC_CHECK", "misc_dynamic", detail::A, "exit 2..255: weight exit - 2"},
    Keyword{"MISC_CHECK", "user", detail::R, "scripts run as xvsd's user"},
};
// clang-format on

// Every scheduler of the registry (lb/sched/registry.cpp), IPVS's and DPVS's conhash.
inline constexpr std::array kSupportedScheds = {"rr"sv,    "wrr"sv, "lc"sv, "wlc"sv,  "lblc"sv,
                                                "lblcr"sv, "dh"sv,  "sh"sv, "sed"sv,  "nq"sv,
                                                "fo"sv,    "ovf"sv, "mh"sv, "twos"sv, "conhash"sv};
// IPVS (and DPVS) scheduler names that are recognised but not implemented yet: none left.
inline constexpr std::array<std::string_view, 0> kKnownScheds{};

constexpr bool keyword_matches(const Keyword& k, std::string_view block, std::string_view name) {
    if (k.block != block) return false;
    if (k.name.ends_with('*')) return name.starts_with(k.name.substr(0, k.name.size() - 1));
    return k.name == name;
}

// The row for `name` in `block`, or nullptr for a keyword xvs does not know (an error).
constexpr const Keyword* keyword_find(std::string_view block, std::string_view name) {
    for (const Keyword& k : kKeywords)
        if (keyword_matches(k, block, name)) return &k;
    return nullptr;
}

template <size_t N>
bool contains(const std::array<std::string_view, N>& list, std::string_view name) {
    return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace xvs::ctl::keywords
