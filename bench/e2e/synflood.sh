#!/usr/bin/env bash
# bench/e2e/synflood.sh: legitimate HTTP service under a spoofed SYN flood, on the topology of
# bench/e2e/run.sh (tests/e2e/lib.sh), through SYN-cookie front ends one after the other:
#   (a) netfilter SYNPROXY (nft `synproxy` on the VIP, conntrack) in front of a DNAT path
#   (b) xvsd FULLNAT with `syn_proxy` on the virtual server. A build whose parser ignores
#       `syn_proxy` (warning "not yet supported") gives the unprotected xvsd row instead;
#       XE_SKIP_XVSD=1 skips it.
# For each: wrk (-t1 -c8, Connection: close, 2 s timeout) alone for 3 s, then again while
# `hping3 -S --flood --rand-source` hits VIP:80 from the client namespace for FLOOD_SECONDS
# (5..10, default 8; at most FLOOD_COUNT packets, default 5,000,000). Reported per row:
#   flood pps offered (cl0 tx), legitimate requests ok / errors, ok %, conn/s under flood and
#   idle, RS-side SYNs in the flood-only last ~1.5 s / from spoofed sources (nft counters on
#   the RS; the second is only meaningful without SNAT), xvsd RSS before/after.
#   bench/e2e/synflood.sh [BUILD_DIR=build]   env: FLOOD_SECONDS, FLOOD_COUNT,
#                                             XE_PMD (af_xdp|af_packet, default af_xdp)
# Spoofed sources are random IPv4 addresses, but every frame stays inside this run's namespaces:
# replies to them are routed back to the client namespace, whose kernel (no forwarding) drops
# them. Everything is bounded in packets and seconds; the lib.sh trap removes the namespaces.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/scripts/lib/deps.sh"
deps_install test bench || exit 1
XE=xs$$$(printf '%04x' $((RANDOM % 65536)))
source "$root/tests/e2e/lib.sh"
XE_TEST=synflood
e2e_init "${1:-build}"
need_tools hping3 nft curl wrk

flood_secs=${FLOOD_SECONDS:-8}
((flood_secs >= 5 && flood_secs <= 10)) || fail "FLOOD_SECONDS must be 5..10"
flood_count=${FLOOD_COUNT:-5000000}

topo_up 2
start_rs_http 1
start_rs_http 2
# The RS count every SYN to their HTTP port (legitimate or not) at the input hook.
for i in 1 2; do
    in_ns "$(ns_rs "$i")" nft -f - <<'EOF'
table ip synwatch {
    counter syns { }
    counter foreign { }
    chain input {
        type filter hook input priority -300; policy accept;
        tcp dport 8080 tcp flags & (syn | ack) == syn counter name "syns"
        tcp dport 8080 tcp flags & (syn | ack) == syn ip saddr != { 10.10.1.2, 10.10.2.0/24 } counter name "foreign"
    }
}
EOF
done
rs_syns() { # rs_syns syns|foreign : SYNs seen by the RS (from spoofed sources) since the reset
    local i sum=0 n
    for i in 1 2; do
        n=$(in_ns "$(ns_rs "$i")" nft list counter ip synwatch "$1" | awk '/packets/ { print $2 }')
        sum=$((sum + ${n:-0}))
    done
    echo "$sum"
}
rs_syns_reset() {
    local i
    for i in 1 2; do in_ns "$(ns_rs "$i")" nft reset counters table ip synwatch >/dev/null; done
}
cl_tx() { in_ns "$NS_CL" cat /sys/class/net/cl0/statistics/tx_packets; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo "?"; }

# run_wrk SECS OUT : legitimate clients, wrk -t1 -c8 short connections (2 s timeout); prints
# "requests errors conn_per_s" (errors = socket errors of every kind + non-2xx).
run_wrk() {
    local secs=$1 out=$2
    in_ns "$NS_CL" timeout $((secs + 10)) wrk -t1 -c8 -d"${secs}s" --timeout 2s \
        -H "Connection: close" "http://$VIP/" >"$out" 2>&1
    awk '/ requests in / { r = $1 }
         /^Requests\/sec:/ { c = $2 }
         /Socket errors:/ { gsub(",", ""); e += $4 + $6 + $8 + $10 }
         /Non-2xx/ { e += $NF }
         END { printf "%d %d %.0f\n", r, e, c }' "$out"
}

# run_flood NAME : legitimate load alone (3 s), then under the flood; fills the row arrays.
declare -A FLOOD_PPS LEGIT_OK LEGIT_ERR LEGIT_CPS IDLE_CPS RS_TAIL_SYNS RS_FOREIGN
run_flood() {
    local name=$1 tx0 tx1 t0 t1 req err cps syns
    http_get "http://$VIP/" >/dev/null || log "$name: warm-up request failed"
    read -r _ _ IDLE_CPS[$name] < <(run_wrk 3 "$XE_TMP/wrk-idle.$name")
    rs_syns_reset
    tx0=$(cl_tx)
    t0=$(date +%s.%N)
    # hping3 stops after FLOOD_COUNT packets or FLOOD_SECONDS (SIGINT: it prints statistics).
    in_ns "$NS_CL" timeout -s INT "$flood_secs" \
        hping3 -q -S --flood --rand-source -p 80 -c "$flood_count" "$VIP" >"$XE_TMP/hping.$name" 2>&1 &
    local flood_pid=$!
    XE_PIDS+=("$flood_pid")
    sleep 0.5 # the flood is under way before the first legitimate connection
    # wrk ends about 1.5 s before the flood: the RS counters are then reset, and any SYN an RS
    # sees in that flood-only tail came from the flood (FULLNAT hides the client addresses, so
    # this is the exact measure for xvsd; the whole-run difference below is noisier).
    read -r req err cps < <(run_wrk $((flood_secs - 2)) "$XE_TMP/wrk-flood.$name")
    sleep 0.3
    syns=$(rs_syns syns)
    RS_FOREIGN[$name]=$(rs_syns foreign)
    rs_syns_reset
    wait "$flood_pid" 2>/dev/null
    t1=$(date +%s.%N)
    tx1=$(cl_tx)
    sleep 0.3 # late SYNs reach the RS counters
    RS_TAIL_SYNS[$name]=$(rs_syns syns)
    RS_FOREIGN[$name]=$((RS_FOREIGN[$name] + $(rs_syns foreign)))
    # cl0's transmissions over the flood's lifetime; the legitimate share is a few per request.
    FLOOD_PPS[$name]=$(awk -v n=$((tx1 - tx0)) -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", n / (b - a) }')
    LEGIT_OK[$name]=$req
    LEGIT_ERR[$name]=$err
    LEGIT_CPS[$name]=$cps
    # While wrk ran, each legitimate connection brought one SYN to an RS; the difference to
    # the RS SYN count is flood SYNs plus connections wrk left in flight (up to its 8). Without
    # SNAT (the nft row) RS_FOREIGN counts SYNs from spoofed sources directly, over the run.
    log "$name: cl0 sent $((tx1 - tx0)) packets; legit $req ok, $err errors, $cps conn/s (idle ${IDLE_CPS[$name]})"
    log "$name: RS SYNs while wrk ran $syns (legit $((req + err)), difference $((syns - req - err)), <= 8 in flight); flood-only tail ${RS_TAIL_SYNS[$name]}; spoofed sources ${RS_FOREIGN[$name]}"
    sed 's/^/    hping3: /' "$XE_TMP/hping.$name" >&2
    sed 's/^/    wrk: /' "$XE_TMP/wrk-flood.$name" >&2
}

declare -A RSS_BEFORE RSS_AFTER
rows=()

# (a) netfilter SYNPROXY + DNAT. The VIP is a local address of the lb kernel: SYNs skip
# conntrack (notrack) and reach the input hook, where `synproxy` answers with a cookie; the
# client's ACK is INVALID for conntrack (tcp_loose=0), synproxy checks it and sends the SYN
# toward the VIP from the output path, where the nat output chain DNATs it to an RS. Later
# client packets match that conntrack entry and are DNATed and forwarded. No SNAT: the RS see
# the client addresses and route back through the lb.
lb_kernel_on
ip -n "$NS_LB" route add default via "$CLIENT_IP" # SYN-ACKs to spoofed sources die in cl
in_ns "$NS_LB" sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0 net.ipv4.tcp_syncookies=1 \
    net.ipv4.tcp_timestamps=1
in_ns "$NS_LB" nft -f - <<EOF || fail "nft synproxy ruleset"
table ip synflood {
    chain raw_pre {
        type filter hook prerouting priority raw; policy accept;
        ip daddr $VIP tcp dport 80 tcp flags & (fin | syn | rst | ack) == syn notrack
    }
    chain in {
        type filter hook input priority filter; policy accept;
        ip daddr $VIP tcp dport 80 ct state invalid,untracked counter synproxy mss 1460 wscale 7 timestamp sack-perm
        ip daddr $VIP tcp dport 80 ct state invalid drop
    }
    chain nat_out {
        type nat hook output priority -100;
        ip daddr $VIP tcp dport 80 dnat to numgen inc mod 2 map { 0 : $(rs_ip 1), 1 : $(rs_ip 2) } : 8080
    }
}
EOF
wait_until 5 http_get "http://$VIP/" || fail "nothing answers through SYNPROXY+DNAT"
log "(a) netfilter SYNPROXY + DNAT"
run_flood nft
# The synproxy rule must have done the work (its counter of cookie-answered SYNs).
sp_syns=$(in_ns "$NS_LB" nft list table ip synflood | awk '/synproxy/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }')
log "nft: synproxy rule matched ${sp_syns:-?} packets"
RSS_BEFORE[nft]="-"
RSS_AFTER[nft]="-"
rows+=(nft)
in_ns "$NS_LB" nft delete table ip synflood
ip -n "$NS_LB" route del default
lb_kernel_off
in_ns "$NS_LB" conntrack -F >/dev/null 2>&1

# (b) xvsd FULLNAT with syn_proxy
conf=$XE_TMP/xvs.conf
{
    config_head | sed "s|^    address 10.10.2.1/24 dev lan0$|&\n    route default via $CLIENT_IP dev wan0|"
    vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr | sed 's|^}$|    syn_proxy\n}|'
} >"$conf"
if [[ -n ${XE_SKIP_XVSD:-} ]]; then
    log "(b) xvsd skipped (XE_SKIP_XVSD)"
elif ! in_ns "$NS_LB" "$BUILD/xvsd" -t -f "$conf" >"$XE_TMP/xvsd-t.log" 2>&1; then
    log "(b) xvsd skipped: this build does not accept syn_proxy: $(head -n 3 "$XE_TMP/xvsd-t.log")"
else
    # A build without the SYN proxy accepts the keyword with a warning and ignores it: the row
    # is then the unprotected baseline (flood SYNs go through to the RS).
    row=xvsd
    grep -qi "syn.proxy.*not yet supported" "$XE_TMP/xvsd-t.log" && row=xvsd_plain
    start_xvsd "$conf"
    wait_until 5 http_get "http://$VIP/" || fail "nothing answers through xvsd"
    RSS_BEFORE[$row]=$(rss_kb "$XVSD_PID")
    log "(b) $row on ${XE_PMD:-af_xdp}"
    run_flood "$row"
    RSS_AFTER[$row]=$(rss_kb "$XVSD_PID")
    XVS_SOCKET=$XE_SOCK "$BUILD/xvsctl" stats 2>&1 | grep -Ei 'syn|cookie|drop' | sed 's/^/    /' >&2
    xvsadm_ns -L -n --stats >&2
    stop_xvsd TERM
    rows+=("$row")
fi

echo
echo "bench/e2e/synflood: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); hping3 -S --flood --rand-source <= ${flood_secs}s / $flood_count pkts; legit: wrk -t1 -c8 Connection: close, 2 s timeout"
printf '%-34s %10s %9s %9s %8s %11s %11s %16s %18s\n' "front end" "flood pps" "legit ok" "legit err" "ok %" "c/s flood" "c/s idle" "RS SYN tail/src" "xvsd RSS kB"
for n in "${rows[@]}"; do
    case $n in
        nft) label="netfilter SYNPROXY + DNAT" ;;
        xvsd) label="xvsd FULLNAT syn_proxy" ;;
        xvsd_plain) label="xvsd FULLNAT (no SYN proxy)" ;;
    esac
    pct=$(awk -v o="${LEGIT_OK[$n]}" -v e="${LEGIT_ERR[$n]}" 'BEGIN { if (o + e) printf "%.1f", 100 * o / (o + e); else print "-" }')
    printf '%-34s %10s %9s %9s %8s %11s %11s %16s %18s\n' "$label" "${FLOOD_PPS[$n]}" "${LEGIT_OK[$n]}" "${LEGIT_ERR[$n]}" \
        "$pct" "${LEGIT_CPS[$n]}" "${IDLE_CPS[$n]}" "${RS_TAIL_SYNS[$n]}/${RS_FOREIGN[$n]}" "${RSS_BEFORE[$n]}->${RSS_AFTER[$n]}"
done
