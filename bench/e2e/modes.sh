#!/usr/bin/env bash
# bench/e2e/modes.sh: xvsd's NAT and DR modes next to the kernel doing the same job, on the
# e2e namespace topology, one after the other in one run:
#   NAT:  xvsd NAT (per PMD)  |  nftables DNAT only (the RS route back through the director,
#                                 conntrack undoes the DNAT on the replies)
#   DR:   xvsd DR (per PMD)   |  nftables netdev `fwd ip to` (the frame goes to the RS's MAC,
#                                 IP untouched; jhash of the client's address and port picks
#                                 the RS, so a flow stays on one RS)
# DR replies go RS -> client directly over the client's second leg (direct_return_up); the RS
# hold the VIP on lo with the ARP sysctls. The same VIP, ports and RS serve every row.
# TCP: connections/s with `wrk -t1 -c32 -d BENCH_SECONDS -H "Connection: close"` to VIP:80.
# UDP: a bounded flood (UDP_COUNT datagrams, 64 flows) to VIP:5353; delivered packets/s =
#      frames counted on the RS interfaces / send time (the RS drop them before the socket).
# Bulk: iperf3 to VIP:5201 (RS 1 only), one flow and -P 8, up (client -> RS) and down (-R),
#      Gbit/s and the sender's retransmits, median of BULK_RUNS, under RPS (bulk_lib.sh, as
#      run.sh's bulk rows; offloads off on every veth). DR: only "up"'s data passes the
#      director ("down" sends it only the ACKs).
#   bench/e2e/modes.sh [BUILD_DIR=build]   env: BENCH_SECONDS (5), UDP_COUNT (1000000),
#                                          XE_PMDS ("af_xdp af_packet"), BENCH_MODES ("nat dr"),
#                                          BENCH_ROWS ("cps udp bulk"), BULK_SECONDS (5),
#                                          BULK_RUNS (3), BULK_CASES, BENCH_RPS_BULK ("1"),
#                                          BENCH_XDP_OFFLOAD (N: one more xvsd row per mode on
#                                          af_xdp with `xdp_offload N`, XDP_PASS on the peer
#                                          ends), as in run.sh
# FULLNAT against nftables DNAT+SNAT is bench/e2e/run.sh. Ratios within one run are the
# figure; the generator, the director and veth share the cores.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/scripts/lib/deps.sh"
deps_install test bench || exit 1
XE=xm$$$(printf '%04x' $((RANDOM % 65536)))
source "$root/tests/e2e/lib.sh"
XE_TEST=bench-modes
e2e_init "${1:-build}"
source "$here/bulk_lib.sh" # after e2e_init: uses XE_TMP
need_tools wrk nft gcc iperf3
bench_rows=${BENCH_ROWS:-cps udp bulk}
want() { [[ " $bench_rows " == *" $1 "* ]]; }

secs=${BENCH_SECONDS:-5}
udp_count=${UDP_COUNT:-1000000}
udp_port=5353
gcc -O2 -o "$XE_TMP/udp_flood" "$here/udp_flood.c" || fail "building udp_flood"

topo_up 2
direct_return_up
# The director's own veth ends too (topo_up leaves them as created): the same for every row.
no_offloads "$NS_LB" lb-wan
no_offloads "$NS_LB" lb-lan
for i in 1 2; do
    rs_vip_by_hand "$i"
    # UDP sink: count at the interface, drop before the socket layer
    in_ns "$(ns_rs "$i")" nft -f - <<EOF
table ip sink {
    chain input_drop {
        type filter hook input priority 0; policy accept;
        udp dport $udp_port drop
    }
}
EOF
done
# nginx on port 80 of the RS address (NAT) and of the VIP on lo (DR).
XE_RS_LISTEN="$(rs_ip 1):80 $VIP:80" start_rs_http 1
XE_RS_LISTEN="$(rs_ip 2):80 $VIP:80" start_rs_http 2
# iperf3 on RS 1 only (all addresses: its own for NAT, the VIP on lo for DR); -P 8's data
# connections must reach the server that took the control connection.
bg_ns "$(ns_rs 1)" "$XE_TMP/iperf3.out" iperf3 -s -p 5201

# return_via ADDR : the RS reach the clients' subnet through ADDR (10.10.2.1, the director:
# NAT; 10.10.2.50, the client's own leg: DR).
return_via() {
    local i
    for ((i = 1; i <= XE_RS_COUNT; i++)); do
        ip -n "$(ns_rs "$i")" route replace 10.10.1.0/24 via "$1" dev rs0
        ip -n "$(ns_rs "$i")" neigh flush dev rs0
    done
}
rs_rx() { # sum of rx_packets on the RS interfaces
    local i sum=0
    for i in 1 2; do sum=$((sum + $(in_ns "$(ns_rs "$i")" cat /sys/class/net/rs0/statistics/rx_packets))); done
    echo "$sum"
}

declare -A CPS ERRS PPS
# measure ROW : conn/s, UDP delivered/s and the bulk rows through whatever holds the VIP now
declare -A LOAD LABEL
ROWS_BULK=()
label_of() { echo "${LABEL[$1]:-$1}"; }
measure() {
    local row=$1 out before after sent secs_used rps
    if want bulk; then
        run_bulk "$row"
        for rps in $bulk_rps_list; do
            LOAD[$row$(rps_sfx "$rps")]=$(cut -d' ' -f1 /proc/loadavg)
            LABEL[$row$(rps_sfx "$rps")]="$(label_of "$row")$(rps_sfx "$rps" | tr _ ' ')"
            ROWS_BULK+=("$row$(rps_sfx "$rps")")
        done
        rps_set 0
    fi
    { want cps || want udp; } || return 0
    http_get "http://$VIP/" >/dev/null || log "$row: warm-up request failed"
    out=$(in_ns "$NS_CL" timeout $((secs + 15)) wrk -t1 -c32 -d"${secs}s" -H "Connection: close" "http://$VIP/" 2>&1)
    sed 's/^/    /' <<<"$out" >&2
    CPS[$row]=$(awk '/^Requests\/sec:/ { printf "%d", $2 }' <<<"$out")
    ERRS[$row]=$(awk '/Socket errors:/ { gsub(",", ""); e += $4 + $6 + $8 + $10 }
                      /Non-2xx/ { e += $NF } END { print e + 0 }' <<<"$out")
    before=$(rs_rx)
    out=$(in_ns "$NS_CL" timeout $((secs + 10)) "$XE_TMP/udp_flood" "$VIP" "$udp_port" "$udp_count" 64 18 "$secs")
    sleep 0.5
    after=$(rs_rx)
    read -r _ sent _ secs_used <<<"$out"
    PPS[$row]=$(awk -v n=$((after - before)) -v s="$secs_used" 'BEGIN { printf "%d", n / s }')
    log "$row: ${CPS[$row]} conn/s, UDP sent $sent in $secs_used s, RS received $((after - before))"
}

rows=()
conf=$XE_TMP/xvs.conf
for mode in ${BENCH_MODES:-nat dr}; do
    if [[ $mode == nat ]]; then kind=NAT via=10.10.2.1; else kind=DR via=10.10.2.50; fi
    return_via "$via"
    for pmd in ${XE_PMDS:-af_xdp af_packet} ${BENCH_XDP_OFFLOAD:+offload}; do
        offload=""
        [[ $pmd == offload ]] && pmd=af_xdp offload=$BENCH_XDP_OFFLOAD
        XE_PMD=$pmd
        row=xvsd_${mode}_$pmd${offload:+_offload}
        LABEL[$row]="xvsd $kind $pmd${offload:+ offload}"
        {
            XE_NETIF_EXTRA=${offload:+    xdp_offload $offload} config_head
            vs_block TCP "$VIP" 80 "1:80:1 2:80:1" rr "$kind"
            vs_block UDP "$VIP" "$udp_port" "1:$udp_port:1 2:$udp_port:1" rr "$kind"
            vs_block TCP "$VIP" 5201 "1:5201:1" rr "$kind"
        } >"$conf"
        [[ -n $offload ]] && peer_pass on
        start_xvsd "$conf"
        measure "$row"
        [[ -n $offload ]] && log "xdp offload: $(xvsctl_ns stats -a | grep -E 'xdp_|lb_forwarded' | tr -s ' \n' ' ')"
        log "$row: xvsd's drops: $(xvsctl_ns stats -a | awk '$1 ~ /^drop_/ && $2 != 0 { printf "%s %s, ", $1, $2 }')"
        stop_xvsd TERM
        [[ -n $offload ]] && peer_pass off
        rows+=("$row")
        # The kernel's turn: af_packet's netdev drop table and any XDP program go (run.sh too).
        lb_kernel_drop_off
        for dev in lb-wan lb-lan; do ip -n "$NS_LB" link set dev "$dev" xdp off 2>/dev/null; done
        ip -n "$NS_CL" neigh flush dev cl0
    done
    lb_kernel_on
    if [[ $mode == nat ]]; then
        in_ns "$NS_LB" nft -f - <<EOF
table ip peerlb {
    chain pre {
        type nat hook prerouting priority dstnat;
        ip daddr $VIP tcp dport 80 dnat to numgen inc mod 2 map { 0 : 10.10.2.2, 1 : 10.10.2.3 }
        ip daddr $VIP tcp dport 5201 dnat to 10.10.2.2
        ip daddr $VIP udp dport $udp_port dnat to numgen inc mod 2 map { 0 : 10.10.2.2, 1 : 10.10.2.3 }
    }
}
EOF
    else
        in_ns "$NS_LB" nft -f - <<EOF
table netdev peerlb {
    chain in {
        type filter hook ingress device "lb-wan" priority 0;
        ip daddr $VIP tcp dport 80 fwd ip to jhash ip saddr . tcp sport mod 2 map { 0 : 10.10.2.2, 1 : 10.10.2.3 } device "lb-lan"
        ip daddr $VIP tcp dport 5201 fwd ip to 10.10.2.2 device "lb-lan"
        ip daddr $VIP udp dport $udp_port fwd ip to jhash ip saddr . udp sport mod 2 map { 0 : 10.10.2.2, 1 : 10.10.2.3 } device "lb-lan"
    }
}
EOF
    fi
    log "nftables $kind"
    [[ $mode == nat ]] && LABEL[nft_$mode]="nftables DNAT" || LABEL[nft_$mode]="nftables netdev fwd (DR)"
    measure "nft_$mode"
    rows+=("nft_$mode")
    in_ns "$NS_LB" nft flush ruleset
    lb_kernel_off
done

echo
echo "bench/e2e/modes: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); wrk -t1 -c32 -d${secs}s Connection: close; UDP $udp_count x 18 B, 64 flows, <= ${secs}s"
if want cps || want udp; then
    printf '%-30s %12s %10s %16s\n' "path" "conn/s" "errors" "UDP delivered/s"
    for r in "${rows[@]}"; do
        printf '%-30s %12s %10s %16s\n' "$(label_of "$r")" "${CPS[$r]:-?}" "${ERRS[$r]:-?}" "${PPS[$r]:-?}"
    done
    for mode in ${BENCH_MODES:-nat dr}; do
        for r in "${rows[@]}"; do
            [[ $r == xvsd_${mode}_* ]] || continue
            n=nft_$mode
            [[ -n ${CPS[$n]:-} && ${CPS[$n]} != 0 && -n ${PPS[$n]:-} && ${PPS[$n]} != 0 ]] || continue
            echo "$(label_of "$r") / $(label_of "$n"): conn/s $(awk -v a="${CPS[$r]:-0}" -v b="${CPS[$n]}" 'BEGIN { printf "%.2f", a / b }')x, UDP $(awk -v a="${PPS[$r]:-0}" -v b="${PPS[$n]}" 'BEGIN { printf "%.2f", a / b }')x"
        done
    done
fi
if want bulk; then
    for mode in ${BENCH_MODES:-nat dr}; do
        mode_rows=()
        for r in "${ROWS_BULK[@]}"; do [[ $r == *_${mode}_* || $r == *_${mode} ]] && mode_rows+=("$r"); done
        print_bulk "nft_$mode" "${mode_rows[@]}"
    done
    [[ $bulk_rps_list == 0 ]] || echo "rps: RPS on cl0, cl-lan, sw-lb, sw-cl, sw-rsN, rs0 to CPUs ${BENCH_RPS_CPUS:-0} (mask $rps_mask)"
fi
true
