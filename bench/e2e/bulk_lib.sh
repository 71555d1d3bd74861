# bench/e2e/bulk_lib.sh: the bulk TCP rows (iperf3) and receive steering shared by run.sh
# (FULLNAT) and modes.sh (NAT, DR), sourced after tests/e2e/lib.sh. The caller sets `want`
# (which measurements it takes), `label_of` and LOAD[row] for print_bulk, and `here`.
bulk_secs=${BULK_SECONDS:-5}
bulk_runs=${BULK_RUNS:-3}
# rps_set 0|1 : RPS (receive packet steering) on the veth ends that receive from the director
# or stand for the other machines: the client's cl0 (and cl-lan, DR's return leg, with
# sw-cl), the switch's sw-lb and sw-rsN, the RS's rs0 (never the director's lb-wan/lb-lan). A frame sent into a veth is received by its peer
# in the sender's context (veth_xmit -> netif_rx): without RPS the bridge, the RS's TCP
# receive and whatever that sends in turn run inside the director's own transmit, on its CPU.
# With RPS those netif_rx calls queue the frame to a backlog on BENCH_RPS_CPUS (default CPU 0,
# the one xvsd leaves to its control thread; its worker runs on CPU 1) and the rest of that
# chain runs there, as it would on the other machines. The same for every row (nftables too:
# its forwarding stays where it was, in the softirq that received the frame on lb-wan/lb-lan).
# rps_set 2 : the same, and the director's own lb-wan/lb-lan steered to the other CPUs (those
# not in BENCH_RPS_CPUS: CPU 1, the worker's), so that the director is one CPU for every row:
# nftables forwards there; net_af_packet's tpacket_rcv runs there beside the worker;
# net_af_xdp is not affected (its veth XDP NAPI runs before RPS, on the CPU that sent).
rps_mask=$(awk -v l="${BENCH_RPS_CPUS:-0}" 'BEGIN { n = split(l, c, ","); m = 0
    for (i = 1; i <= n; i++) { split(c[i], r, "-"); hi = (r[2] == "") ? r[1] : r[2]
        for (j = r[1]; j <= hi; j++) m += 2 ^ j }
    printf "%x", m }')
lb_mask=$(awk -v m=$((16#$rps_mask)) -v n="$(nproc)" 'BEGIN { printf "%x", (2 ^ n - 1) - m }')
rps_set() {
    local mask=0 i
    (($1)) && mask=$rps_mask
    for i in lb-wan lb-lan; do
        in_ns "$NS_LB" sh -c "echo $( (($1 == 2)) && echo "$lb_mask" || echo 0) > /sys/class/net/$i/queues/rx-0/rps_cpus" ||
            fail "rps $i"
    done
    in_ns "$NS_CL" sh -c "echo $mask > /sys/class/net/cl0/queues/rx-0/rps_cpus" || fail "rps cl0"
    in_ns "$NS_SW" sh -c "echo $mask > /sys/class/net/sw-lb/queues/rx-0/rps_cpus" || fail "rps sw-lb"
    if ip -n "$NS_CL" link show cl-lan >/dev/null 2>&1; then # direct_return_up's client leg
        in_ns "$NS_CL" sh -c "echo $mask > /sys/class/net/cl-lan/queues/rx-0/rps_cpus" || fail "rps cl-lan"
        in_ns "$NS_SW" sh -c "echo $mask > /sys/class/net/sw-cl/queues/rx-0/rps_cpus" || fail "rps sw-cl"
    fi
    for ((i = 1; i <= XE_RS_COUNT; i++)); do
        in_ns "$NS_SW" sh -c "echo $mask > /sys/class/net/sw-rs$i/queues/rx-0/rps_cpus" || fail "rps sw-rs$i"
        in_ns "$(ns_rs "$i")" sh -c "echo $mask > /sys/class/net/rs0/queues/rx-0/rps_cpus" || fail "rps rs$i"
    done
}
# Bulk rows default to RPS: without it the receivers' TCP work lands in xvsd's transmit and
# the bulk figures measure that (README "Receive steering"); the conn/s and UDP rows default
# to none: under RPS their generator shares CPU 0 with the servers and becomes the bound.
bulk_rps_list=${BENCH_RPS_BULK:-1}
rps_sfx() { (($1 == 1)) && echo _rps; (($1 == 2)) && echo _rps2; } # a row's name under that RPS setting

# run_bulk NAME : fills BULK[NAME,CASE] = "Gbit/s retransmits" (medians of bulk_runs) for the
# cases 1up 1down 8up 8down (flows, direction seen from the client).
declare -A BULK
bulk_cases=${BULK_CASES:-1up 1down 8up 8down}
iperf_json() { # the received Gbit/s and the sender's retransmits of an iperf3 -J report
    "$XE_PY" -c 'import json, sys
try:
    e = json.load(sys.stdin)["end"]
    print("%.2f %d" % (e["sum_received"]["bits_per_second"] / 1e9, e["sum_sent"].get("retransmits", 0)))
except Exception:
    print("0 -1")'
}
cpu_ticks() { awk '/^cpu[0-9]/ { print $1, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }
idle_text() { # idle_text BEFORE AFTER (cpu_ticks outputs): "cpu0 12% cpu1 3%" idle over the interval
    printf '%s\n%s\n' "$1" "$2" | awk '!($1 in t) { t[$1] = $2; i[$1] = $3; next }
        { d = $2 - t[$1]; printf "%s%s %d%%", sep, $1, (d > 0 ? 100 * ($3 - i[$1]) / d : 0); sep = " " }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "?" }'; }
# Each run is taken under every BENCH_RPS setting in turn (A B A B A B), so that the machine's
# other load falls alike on both; NAME$(rps_sfx S) gets the medians of setting S.
run_bulk() {
    local name=$1 c flows dir r out gb re rps row
    local -A gbs res
    want bulk || return 0
    # warm-up: neighbours resolved, the server listening
    in_ns "$NS_CL" timeout 15 iperf3 -c "$VIP" -p 5201 -t 1 >/dev/null 2>&1 ||
        log "$name: bulk warm-up failed"
    for c in $bulk_cases; do
        flows=${c%%[a-z]*}
        dir=${c#"$flows"}
        gbs=() res=()
        for ((r = 1; r <= bulk_runs; r++)); do
            for rps in $bulk_rps_list; do
                row=$name$(rps_sfx "$rps")
                rps_set "$rps"
                local perf_pid=""
                if [[ -n ${BENCH_PERF_DIR:-} && $c == 1up && $r == 1 ]]; then
                    perf record -a -g -e cpu-clock -o "$BENCH_PERF_DIR/$row.data" -- sleep "$bulk_secs" \
                        >/dev/null 2>&1 &
                    perf_pid=$!
                fi
                local t0 t1
                t0=$(cpu_ticks)
                out=$(in_ns "$NS_CL" timeout $((bulk_secs + 20)) iperf3 -c "$VIP" -p 5201 -t "$bulk_secs" \
                    -P "$flows" $([[ $dir == down ]] && echo -R) -J 2>&1 | iperf_json)
                t1=$(cpu_ticks)
                [[ -n $perf_pid ]] && wait "$perf_pid"
                read -r gb re <<<"$out"
                gbs[$row]+="$gb"$'\n'
                res[$row]+="$re"$'\n'
                log "$row bulk $c run $r: $gb Gbit/s, $re retransmits, load $(cut -d' ' -f1 /proc/loadavg), idle $(idle_text "$t0" "$t1")"
                sleep 1
            done
        done
        for rps in $bulk_rps_list; do
            row=$name$(rps_sfx "$rps")
            BULK[$row,$c]="$(median <<<"${gbs[$row]%$'\n'}") $(median <<<"${res[$row]%$'\n'}")"
        done
    done
}

# The peer ends of the director's veths (cl0, sw-lb) with an XDP_PASS program: a veth takes
# XDP redirects (the XDP probe's, xvs's fast path) only with NAPI on its peer.
pass_o=$XE_TMP/xdp_pass.o
bpf_cc=(clang -O2 -g -target bpf -Wall -Werror -I"/usr/include/$(gcc -print-multiarch)")
peer_pass() { # on|off
    local l ns dev
    if [[ $1 == on && ! -f $pass_o ]]; then
        "${bpf_cc[@]}" -DPROBE_PASS_ONLY -c "$here/xdp_fnat_probe.bpf.c" -o "$pass_o" ||
            fail "building the XDP pass program"
    fi
    for l in "$NS_CL cl0" "$NS_SW sw-lb"; do
        read -r ns dev <<<"$l"
        if [[ $1 == on ]]; then
            ip -n "$ns" link set dev "$dev" xdpdrv obj "$pass_o" sec xdp || fail "XDP_PASS on $dev"
        else
            ip -n "$ns" link set dev "$dev" xdp off
        fi
    done
}

# print_bulk NFT_ROW ROW... : the bulk table of the ROWs, each cell's ratio to NFT_ROW's (under
# the same RPS setting: NFT_ROW_rps, NFT_ROW_rps2).
print_bulk() {
    local base=$1 n nft c gb re ngb x
    shift
    echo "bulk TCP: iperf3 -t $bulk_secs, median of $bulk_runs; Gbit/s (sender retransmits); x = / ${LABEL[$base]:-$base} under the same RPS setting; load = 1-min load average at the row's end"
    printf '%-30s' "path"
    for c in $bulk_cases; do printf ' %20s' "$c"; done
    printf ' %6s\n' "load"
    for n in "$@"; do
        nft=$base
        [[ $n == *_rps ]] && nft=${base}_rps
        [[ $n == *_rps2 ]] && nft=${base}_rps2
        printf '%-30s' "$(label_of "$n")"
        for c in $bulk_cases; do
            read -r gb re <<<"${BULK[$n,$c]:-? ?}"
            read -r ngb _ <<<"${BULK[$nft,$c]:-? ?}"
            x=$(awk -v a="$gb" -v b="$ngb" 'BEGIN { if (b + 0 > 0) printf "%.2fx", a / b; else print "" }')
            printf ' %20s' "$gb ($re) $x"
        done
        printf ' %6s\n' "${LOAD[$n]:-?}"
    done
}
