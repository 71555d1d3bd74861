#!/usr/bin/env bash
# bench/e2e: the same namespace topology and traffic through three directors, one after the
# other in one run, printed side by side:
#   xvsd (FULLNAT)  |  kernel nftables DNAT+SNAT  |  HAProxy mode tcp
# TCP: connections/s with `wrk -t1 -c32 -d5s -H "Connection: close"` from the client.
# UDP: a bounded flood (UDP_COUNT datagrams, 64 flows, 5 s max) to VIP:53; delivered
#      packets/s = packets counted on the RS interfaces / send time (HAProxy: no UDP).
# Bulk: iperf3 -t BULK_SECONDS to VIP:5201 (one RS, 10.10.2.2:5201), one flow and -P 8,
#      client -> RS ("up") and RS -> client (-R, "down"); Gbit/s received and TCP
#      retransmits of the sender, median of BULK_RUNS runs per cell. Every veth of the
#      topology, the director's lb-wan/lb-lan included, has tx checksum, TSO, GSO and GRO
#      off (tests/e2e/lib.sh no_offloads) for every row alike, so frames stay <= 1514 bytes
#      and the kernel peers get no GRO/GSO batching xvs cannot have (HAProxy: no bulk row).
#   bench/e2e/run.sh [BUILD_DIR=build]   env: BENCH_SECONDS (5), UDP_COUNT (1000000),
#                                        XE_PMDS ("af_xdp af_packet": one xvsd row each),
#                                        BENCH_WORKERS ("1 2": an xvsd row per count; more
#                                        than 1 only on af_packet, qpairs=N: AF_XDP on veth
#                                        has one queue),
#                                        BENCH_ROWS ("cps udp bulk": which measurements;
#                                        e.g. BENCH_ROWS=bulk BENCH_WORKERS=1 to iterate on
#                                        bulk), BULK_SECONDS (5), BULK_RUNS (3),
#                                        BULK_CASES ("1up 1down 8up 8down"),
#                                        XE_AF_XDP_ARGS / XE_AF_PACKET_ARGS (extra devargs,
#                                        tests/e2e/lib.sh config_head),
#                                        BENCH_BASE_XVSD (another xvsd binary: a "base_"
#                                        row before each row of the build's, to compare
#                                        two versions in one run),
#                                        BENCH_PERF_DIR (a directory: `perf record -a -g -e
#                                        cpu-clock` of the first single-flow up run per row),
#                                        BENCH_RPS ("0": which receive-steering settings the
#                                        conn/s and UDP rows are measured under, e.g. "0 1"
#                                        for an A/B; 1 = RPS, 2 = RPS and the director's ends
#                                        too, see rps_set below), BENCH_RPS_BULK ("1": the
#                                        same for the bulk rows, the runs of several settings
#                                        interleaved),
#                                        BENCH_RPS_CPUS ("0": the CPUs RPS steers to),
#                                        BENCH_XDP_PROBE ("0"; 1: bulk rows through
#                                        xdp_fnat_probe.bpf.c, an in-kernel XDP FULLNAT of
#                                        VIP:5201 after the nftables row: the ceiling of an
#                                        XDP fast path here, not xvs),
#                                        BENCH_XDP_OFFLOAD (N: one more xvsd row on af_xdp,
#                                        "xvsd FULLNAT af_xdp offload", with
#                                        `netif_defs { xdp_offload N }`: established conns
#                                        handed to xvs's XDP program after N packets; the
#                                        peer ends get an XDP_PASS program, as redirects
#                                        into a veth need)
#   XE_PMDS entries may carry their own devargs after a "+" (bench only): e.g.
#   XE_PMDS="af_packet af_packet+framecnt=8192,qdisc_bypass=1" gives two af_packet rows, the
#   second with those devargs in place of XE_AF_PACKET_ARGS (af_xdp: added to XE_AF_XDP_ARGS).
# Ratios within one run are the figure; the generator, the director and veth share the cores.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/scripts/lib/deps.sh"
deps_install test bench || exit 1
XE=xb$$$(printf '%04x' $((RANDOM % 65536)))
source "$root/tests/e2e/lib.sh"
XE_TEST=bench
e2e_init "${1:-build}"
source "$here/bulk_lib.sh" # after e2e_init: uses XE_TMP
need_tools wrk haproxy nft gcc iperf3

secs=${BENCH_SECONDS:-5}
udp_count=${UDP_COUNT:-1000000}
rows=${BENCH_ROWS:-cps udp bulk}
want() { [[ " $rows " == *" $1 "* ]]; }
gcc -O2 -o "$XE_TMP/udp_flood" "$here/udp_flood.c" || fail "building udp_flood"
[[ -z ${BENCH_PERF_DIR:-} ]] || { mkdir -p "$BENCH_PERF_DIR" && need_tools perf; }

topo_up 2
# The director's own veth ends too (topo_up leaves them as created): the same for every row.
no_offloads "$NS_LB" lb-wan
no_offloads "$NS_LB" lb-lan
start_rs_http 1
start_rs_http 2
# iperf3 on RS 1 only: -P 8 opens its data connections after a control connection, and all of
# them must reach the one server (a scheduler spreading them over two RS would break the test).
bg_ns "$(ns_rs 1)" "$XE_TMP/iperf3.out" iperf3 -s -p 5201
for i in 1 2; do # UDP sink on the RS: count at the interface, drop before the socket layer
    in_ns "$(ns_rs "$i")" nft -f - <<'EOF'
table ip sink {
    chain input_drop {
        type filter hook input priority 0; policy accept;
        udp dport 5353 drop
    }
}
EOF
done
rps_list=${BENCH_RPS:-0}

rs_rx() { # sum of rx_packets on the RS interfaces
    local i sum=0
    for i in 1 2; do sum=$((sum + $(in_ns "$(ns_rs "$i")" cat /sys/class/net/rs0/statistics/rx_packets))); done
    echo "$sum"
}

# run_wrk NAME / run_udp NAME : fill CPS[NAME] ERRS[NAME] / PPS[NAME] SENTPPS[NAME]
declare -A CPS ERRS PPS SENTPPS
run_wrk() {
    local name=$1 out
    want cps || return 0
    # warm-up: neighbours resolved, servers awake
    http_get "http://$VIP/" >/dev/null || log "$name: warm-up request failed"
    out=$(in_ns "$NS_CL" timeout $((secs + 15)) wrk -t1 -c32 -d"${secs}s" -H "Connection: close" "http://$VIP/" 2>&1)
    echo "$out" | sed 's/^/    /' >&2
    CPS[$name]=$(awk '/^Requests\/sec:/ { printf "%d", $2 }' <<<"$out")
    ERRS[$name]=$(awk '/Socket errors:/ { gsub(",", ""); e += $4 + $6 + $8 + $10 }
                       /Non-2xx/ { e += $NF } END { print e + 0 }' <<<"$out")
}
run_udp() {
    local name=$1 before after out sent secs_used
    want udp || return 0
    before=$(rs_rx)
    out=$(in_ns "$NS_CL" timeout $((secs + 10)) "$XE_TMP/udp_flood" "$VIP" 53 "$udp_count" 64 18 "$secs")
    sleep 0.5
    after=$(rs_rx)
    sent=$(awk '{ print $2 }' <<<"$out")
    secs_used=$(awk '{ print $4 }' <<<"$out")
    PPS[$name]=$(awk -v n=$((after - before)) -v s="$secs_used" 'BEGIN { printf "%d", n / s }')
    SENTPPS[$name]=$(awk -v n="$sent" -v s="$secs_used" 'BEGIN { printf "%d", n / s }')
    log "$name UDP: sent $sent in $secs_used s, RS received $((after - before))"
}

# measure NAME [KINDS="cps udp bulk"] : the requested rows of one director among KINDS, the
# conn/s and UDP rows under every BENCH_RPS setting, the bulk rows under every BENCH_RPS_BULK
# one; records the 1-minute load average at the end (LOAD[row]) and the rows' names
# (ROWS_CU: conn/s and UDP, ROWS_BULK).
declare -A LOAD
ROWS_CU=() ROWS_BULK=()
measure() {
    local name=$1 kinds=" ${2:-cps udp bulk} " rps row
    if [[ $kinds == *" cps "* || $kinds == *" udp "* ]] && { want cps || want udp; }; then
        for rps in $rps_list; do
            row=$name$(rps_sfx "$rps")
            rps_set "$rps"
            [[ $kinds != *" cps "* ]] || run_wrk "$row"
            [[ $kinds != *" udp "* ]] || run_udp "$row"
            LOAD[$row]=$(cut -d' ' -f1 /proc/loadavg)
            ROWS_CU+=("$row")
        done
    fi
    if [[ $kinds == *" bulk "* ]] && want bulk; then
        run_bulk "$name"
        for rps in $bulk_rps_list; do
            row=$name$(rps_sfx "$rps")
            LOAD[$row]=$(cut -d' ' -f1 /proc/loadavg)
            ROWS_BULK+=("$row")
        done
    fi
    rps_set 0
}

# (a) xvsd, once per PMD (XE_PMDS, default both), and with BENCH_XDP_OFFLOAD once more on
# af_xdp with the XDP fast path
conf=$XE_TMP/xvs.conf
declare -A LABEL=([nft]="nftables DNAT+SNAT" [haproxy]="HAProxy mode tcp")
declare -A ROW_ARGS # a variant row's devargs, printed under the tables
lip_base=100
variant=0
af_packet_args=${XE_AF_PACKET_ARGS:-} af_xdp_args=${XE_AF_XDP_ARGS:-}
for spec in ${XE_PMDS:-af_xdp af_packet} ${BENCH_XDP_OFFLOAD:+offload}; do
pmd=${spec%%+*}
tag=$pmd
offload=""
if [[ $spec == offload ]]; then
    pmd=af_xdp tag=af_xdp_offload offload=$BENCH_XDP_OFFLOAD
fi
if [[ $spec == *+* ]]; then
    variant=$((variant + 1))
    tag=$pmd.$variant
fi
for nw in ${BENCH_WORKERS:-1 2}; do
for bin in ${BENCH_BASE_XVSD:+base} build; do
    if ((nw > 1)) && [[ $pmd != af_packet ]]; then
        log "(a) xvsd on $pmd with $nw workers skipped: one queue on veth"
        continue
    fi
    XE_PMD=$pmd
    XE_WORKERS=$nw
    XE_AF_PACKET_ARGS=$af_packet_args XE_AF_XDP_ARGS=$af_xdp_args
    row="xvsd_${tag}_w$nw"
    LABEL[$row]="xvsd FULLNAT $tag ${nw}w"
    XE_NETIF_EXTRA=${offload:+    xdp_offload $offload}
    if [[ $spec == *+* ]]; then
        if [[ $pmd == af_packet ]]; then XE_AF_PACKET_ARGS=${spec#*+}
        else XE_AF_XDP_ARGS=${af_xdp_args:+$af_xdp_args,}${spec#*+}; fi
        ROW_ARGS[$tag]=${spec#*+}
    fi
    XVSD_BIN=""
    if [[ $bin == base ]]; then
        row="xvsd_base_${tag}_w$nw"
        LABEL[$row]="xvsd base $tag ${nw}w"
        XVSD_BIN=$BENCH_BASE_XVSD
    fi
    LABEL[${row}_rps]="${LABEL[$row]} rps"
    LABEL[${row}_rps2]="${LABEL[$row]} rps2"
    # Fresh local addresses per run: the RS still hold the previous run's connections in
    # TIME_WAIT, and a new xvsd may pick the same (address, port) pairs again.
    XE_LIPS="10.10.2.$lip_base-10.10.2.$((lip_base + 3))"
    lip_base=$((lip_base + 10))
    { config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr; vs_block UDP "$VIP" 53 "1:5353:1 2:5353:1" rr
      vs_block TCP "$VIP" 5201 "1:5201:1" rr; } >"$conf"
    [[ -n $offload ]] && peer_pass on
    start_xvsd "$conf"
    log "(a) xvsd on $pmd, $nw worker(s): $(grep -E 'worker [0-9]+ on CPU|control thread on' "$XVSD_LOG" | sed 's/.*\] //' | tr '\n' ';')"
    measure "$row"
    xvsadm_ns -L -n --stats >&2
    ((nw > 1)) && xvsctl_ns stats --workers | grep -E 'conns_created|redirect|rx_packets' >&2
    [[ -n $offload ]] && log "xdp offload: $(xvsctl_ns stats -a | grep -E 'xdp_|lb_forwarded' | tr -s ' \n' ' ')"
    stop_xvsd TERM
    [[ -n $offload ]] && peer_pass off
    # net_af_xdp detaches its XDP program on close; make sure before the kernel takes over
    for dev in lb-wan lb-lan; do ip -n "$NS_LB" link set dev "$dev" xdp off 2>/dev/null; done
    in_ns "$NS_LB" nft delete table netdev xe_drop 2>/dev/null
done
done
done
XVSD_BIN=""
XE_NETIF_EXTRA=""
XE_WORKERS=1
XE_AF_PACKET_ARGS=$af_packet_args XE_AF_XDP_ARGS=$af_xdp_args

# (b) nftables DNAT + SNAT (test-topology.md's peer)
lb_kernel_on
in_ns "$NS_LB" nft -f - <<'EOF'
table ip peerlb {
    chain pre {
        type nat hook prerouting priority dstnat;
        ip daddr 10.10.1.100 tcp dport 80 dnat to numgen inc mod 2 map { 0 : 10.10.2.2, 1 : 10.10.2.3 } : 8080
        ip daddr 10.10.1.100 udp dport 53 dnat to numgen inc mod 2 map { 0 : 10.10.2.2, 1 : 10.10.2.3 } : 5353
        ip daddr 10.10.1.100 tcp dport 5201 dnat to 10.10.2.2:5201
    }
    chain post {
        type nat hook postrouting priority srcnat;
        oifname "lb-lan" snat to 10.10.2.1
    }
}
EOF
log "(b) nftables"
LABEL[nft_rps]="${LABEL[nft]} rps"
LABEL[nft_rps2]="${LABEL[nft]} rps2"
measure nft
in_ns "$NS_LB" nft delete table ip peerlb

# (b2) BENCH_XDP_PROBE=1: the bulk rows through xdp_fnat_probe.bpf.c, an XDP program that
# FULLNATs VIP:5201 in the kernel (lookup, rewrite, redirect): the ceiling of an in-kernel fast
# path for established flows on these veths, not xvs. The director's kernel keeps its
# addresses (ARP); the peer ends get an XDP_PASS program, as a redirect into a veth needs.
if [[ ${BENCH_XDP_PROBE:-0} == 1 ]] && want bulk; then
    probe_o=$XE_TMP/xdp_fnat_probe.o
    mac_hex() { in_ns "$1" cat "/sys/class/net/$2/address" | tr -d :; }
    ip_hex() { printf '0x%02x%02x%02x%02x' ${1//./ }; }
    [[ -f $pass_o ]] || "${bpf_cc[@]}" -DPROBE_PASS_ONLY -c "$here/xdp_fnat_probe.bpf.c" -o "$pass_o" ||
        fail "building the XDP pass program"
    "${bpf_cc[@]}" -DPROBE_VIP="$(ip_hex "$VIP")" -DPROBE_PORT=5201 \
        -DPROBE_CLIENT="$(ip_hex "$CLIENT_IP")" -DPROBE_LIP="$(ip_hex 10.10.2.1)" \
        -DPROBE_RS="$(ip_hex "$(rs_ip 1)")" \
        -DPROBE_WAN_MAC="0x$(mac_hex "$NS_LB" lb-wan)ULL" -DPROBE_LAN_MAC="0x$(mac_hex "$NS_LB" lb-lan)ULL" \
        -DPROBE_CLIENT_MAC="0x$(mac_hex "$NS_CL" cl0)ULL" -DPROBE_RS_MAC="0x$(mac_hex "$(ns_rs 1)" rs0)ULL" \
        -DPROBE_WAN_IFINDEX="$(in_ns "$NS_LB" cat /sys/class/net/lb-wan/ifindex)" \
        -DPROBE_LAN_IFINDEX="$(in_ns "$NS_LB" cat /sys/class/net/lb-lan/ifindex)" \
        -c "$here/xdp_fnat_probe.bpf.c" -o "$probe_o" || fail "building the XDP probe"
    probe_links=("$NS_LB lb-wan $probe_o" "$NS_LB lb-lan $probe_o" "$NS_CL cl0 $pass_o" "$NS_SW sw-lb $pass_o")
    for l in "${probe_links[@]}"; do
        read -r ns dev obj <<<"$l"
        ip -n "$ns" link set dev "$dev" xdpdrv obj "$obj" sec xdp || fail "attaching $obj to $dev"
    done
    log "(b2) XDP FULLNAT probe"
    LABEL[xdp_probe]="XDP FULLNAT probe (not xvs)"
    LABEL[xdp_probe_rps]="${LABEL[xdp_probe]} rps"
    LABEL[xdp_probe_rps2]="${LABEL[xdp_probe]} rps2"
    measure xdp_probe bulk
    # The proof the probe did the forwarding: the veth's XDP redirect counters (the kernel
    # would have answered VIP:5201 itself with a RST, the VIP being its address here).
    for dev in lb-wan lb-lan; do
        log "xdp probe $dev: $(in_ns "$NS_LB" ethtool -S "$dev" | awk '/xdp_packets|xdp_redirect|xdp_drops|xdp_xmit/ { printf "%s%s %s", sep, $1, $2; sep = ", " }')"
    done
    for l in "${probe_links[@]}"; do
        read -r ns dev obj <<<"$l"
        ip -n "$ns" link set dev "$dev" xdp off
    done
fi

# (c) HAProxy mode tcp (connections/s only)
if want cps; then
cat >"$XE_TMP/haproxy.cfg" <<EOF
global
    maxconn 8000
defaults
    mode tcp
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend vip
    bind $VIP:80
    default_backend rs
backend rs
    balance roundrobin
    server rs1 10.10.2.2:8080
    server rs2 10.10.2.3:8080
EOF
bg_ns "$NS_LB" "$XE_TMP/haproxy.out" haproxy -db -f "$XE_TMP/haproxy.cfg"
wait_until 10 http_get "http://$VIP/" || fail "haproxy not answering: $(cat "$XE_TMP/haproxy.out")"
log "(c) haproxy"
LABEL[haproxy_rps]="${LABEL[haproxy]} rps"
LABEL[haproxy_rps2]="${LABEL[haproxy]} rps2"
measure haproxy cps
for n in haproxy haproxy_rps haproxy_rps2; do PPS[$n]="n/a" SENTPPS[$n]="n/a"; done
kill "$BG_PID"
fi
lb_kernel_off

echo
echo "bench/e2e: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); wrk -t1 -c32 -d${secs}s Connection: close; UDP $udp_count x 18 B, 64 flows, <= ${secs}s"
label_of() { echo "${LABEL[$1]:-$1}"; }
if want cps || want udp; then
printf '%-30s %12s %10s %16s %14s %6s\n' "path" "conn/s" "errors" "UDP delivered/s" "UDP sent/s" "load"
for n in "${ROWS_CU[@]}"; do
    want cps || [[ $n != haproxy* ]] || continue
    printf '%-30s %12s %10s %16s %14s %6s\n' "$(label_of "$n")" "${CPS[$n]:-?}" "${ERRS[$n]:-?}" "${PPS[$n]:-?}" "${SENTPPS[$n]:-?}" "${LOAD[$n]:-?}"
done
fi
want bulk && print_bulk nft "${ROWS_BULK[@]}"
for tag in "${!ROW_ARGS[@]}"; do echo "$tag: devargs ${ROW_ARGS[$tag]}"; done
[[ "$rps_list $bulk_rps_list" == "0 0" ]] || echo "rps: RPS on cl0, sw-lb, sw-rsN, rs0 to CPUs ${BENCH_RPS_CPUS:-0} (mask $rps_mask)"
[[ " $rps_list $bulk_rps_list " != *" 2 "* ]] || echo "rps2: as rps, and lb-wan, lb-lan to mask $lb_mask"
for pmd in ${XE_PMDS:-af_xdp af_packet}; do
    one=${CPS[xvsd_${pmd}_w1]:-} two=${CPS[xvsd_${pmd}_w2]:-}
    [[ -n $one && -n $two && $one != 0 ]] &&
        echo "xvsd $pmd conn/s, 2 workers / 1 worker: $(awk -v a="$two" -v b="$one" 'BEGIN { printf "%.2f", a / b }')"
done
true
