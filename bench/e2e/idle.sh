#!/usr/bin/env bash
# bench/e2e/idle.sh: what `worker_defs { poll_mode adaptive }` costs and gives up, per PMD,
# on the e2e namespace topology:
#   idle:  xvsd's CPU time (all its threads, /proc/PID/stat utime + stime) over IDLE_SECONDS
#          with no traffic, as a percentage of one core, adaptive next to busy;
#   load:  wrk -t1 -c32 -d BENCH_SECONDS "Connection: close" connections/s, adaptive next to busy.
#   bench/e2e/idle.sh [BUILD_DIR=build]   env: IDLE_SECONDS (10), BENCH_SECONDS (5),
#                                         XE_PMDS ("af_xdp af_packet")
# The figures of record are the ratios within one run: the client, xvsd and the servers share
# the machine's cores.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/scripts/lib/deps.sh"
deps_install test bench || exit 1
XE=xi$$$(printf '%04x' $((RANDOM % 65536)))
source "$root/tests/e2e/lib.sh"
XE_TEST=bench-idle
e2e_init "${1:-build}"
need_tools wrk

idle_secs=${IDLE_SECONDS:-10}
secs=${BENCH_SECONDS:-5}
ticks=$(getconf CLK_TCK)

topo_up 2
start_rs_http 1
start_rs_http 2

cpu_ticks() { # utime + stime of PID, all threads
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}

declare -A IDLE CPS
conf=$XE_TMP/xvs.conf
lip_base=100
rows=()
for pmd in ${XE_PMDS:-af_xdp af_packet}; do
    for mode in adaptive busy; do
        XE_PMD=$pmd
        XE_POLL=$mode
        XE_LIPS="10.10.2.$lip_base-10.10.2.$((lip_base + 3))"
        lip_base=$((lip_base + 10))
        { config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr; } >"$conf"
        start_xvsd "$conf"
        row="${pmd}_$mode"
        http_get "http://$VIP/" >/dev/null || log "$row: warm-up request failed"
        sleep 2 # past the adaptive loop's spin phase and any start-up work
        t0=$(date +%s.%N)
        c0=$(cpu_ticks "$XVSD_PID")
        declare -A T0=()
        for t in /proc/"$XVSD_PID"/task/*; do T0[$t]=$(cpu_ticks "$XVSD_PID/task/${t##*/}"); done
        sleep "$idle_secs"
        c1=$(cpu_ticks "$XVSD_PID")
        for t in "${!T0[@]}"; do
            log "$row: thread $(cat "$t/comm"): $(($(cpu_ticks "$XVSD_PID/task/${t##*/}") - T0[$t])) ticks of $ticks/s while idle"
        done
        t1=$(date +%s.%N)
        IDLE[$row]=$(awk -v c=$((c1 - c0)) -v hz="$ticks" -v a="$t0" -v b="$t1" \
            'BEGIN { printf "%.1f", 100 * c / hz / (b - a) }')
        log "$row: idle CPU ${IDLE[$row]}% of a core over $idle_secs s"
        out=$(in_ns "$NS_CL" timeout $((secs + 15)) wrk -t1 -c32 -d"${secs}s" -H "Connection: close" "http://$VIP/" 2>&1)
        echo "$out" | sed 's/^/    /' >&2
        CPS[$row]=$(awk '/^Requests\/sec:/ { printf "%d", $2 }' <<<"$out")
        stop_xvsd TERM
        rows+=("$row")
    done
done
XE_POLL=

echo
echo "bench/e2e/idle: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); idle ${idle_secs}s; wrk -t1 -c32 -d${secs}s Connection: close"
printf '%-24s %16s %10s\n' "xvsd" "idle CPU/core" "conn/s"
for r in "${rows[@]}"; do
    printf '%-24s %15s%% %10s\n' "${r%_*} poll_mode ${r##*_}" "${IDLE[$r]}" "${CPS[$r]:-?}"
done
for pmd in ${XE_PMDS:-af_xdp af_packet}; do
    a=${CPS[${pmd}_adaptive]:-} b=${CPS[${pmd}_busy]:-}
    [[ -n $a && -n $b && $b != 0 ]] &&
        echo "$pmd: adaptive conn/s / busy conn/s = $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
done
true
