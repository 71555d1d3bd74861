#!/usr/bin/env bash
# Two workers (issue 12): net_af_packet ports with qpairs=2, `workers 2`, the kernel's fanout
# spreading flows over both queues. FULLNAT return traffic that lands on the worker not owning
# its conn is redirected to the owner. Checks: 1000 curls split 1:2 by wrr with both workers'
# conns_created non-zero and redirects counted; 16 long-lived connections all listed by
# `xvsadm -L -c` (they are on both workers) and intact through live changes and a SIGHUP;
# 20 MB download and upload intact; 1000 UDP exchanges; a SYN-proxy VIP and a TOA VIP (TOA
# checked at the RS); `-a/-d/-e` and a SIGHUP reload under traffic with 0 failed requests;
# a `cpus` change on SIGHUP is left for the next restart. af_packet only: AF_XDP on veth has
# one queue.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools sha256sum tcpdump

if [[ ${XE_PMD:-af_xdp} != af_packet ]]; then
    log "skipped on ${XE_PMD:-af_xdp}: several workers need a multi-queue PMD (net_af_packet qpairs=N here)"
    exit 0
fi
cpus=$("$XE_PY" -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0)))))')
ncpu=$(tr ',' '\n' <<<"$cpus" | wc -l)
((ncpu >= 2)) || {
    log "skipped: workers 2 needs 2 CPUs, this process may use $cpus"
    exit 0
}

topo_up 3
for i in 1 2 3; do
    start_rs_http "$i"
    start_rs_udp "$i"
    start_rs_echo "$i"
done
export XE_WORKERS=2
conf=$XE_TMP/xvs.conf
write_conf() { # write_conf RS1_WEIGHT [EXTRA_CPUS]
    {
        XE_CPUS=${2:-} config_head
        vs_block TCP "$VIP" 80 "1:8080:$1 2:8080:2" wrr
        vs_block UDP "$VIP" 53 "1:5353:1 2:5353:1" rr
        vs_block TCP "$VIP" 7000 "1:7000:1 2:7000:1" rr
        vs_block TCP "$VIP" 81 "1:8080:1 2:8080:1" rr | sed 's/^    lb_kind FNAT$/&\n    syn_proxy/'
        vs_block TCP "$VIP" 82 "1:8080:1" rr | sed 's/^    lb_kind FNAT$/&\n    toa on/'
    } >"$conf"
}
write_conf 1
start_xvsd "$conf"
placement=$(grep -E 'worker [0-9] on CPU|control thread on|share CPU' "$XVSD_LOG")
echo "$placement" >&2
assert_contains "$placement" "worker 0 on CPU" "worker 0 placement logged"
assert_contains "$placement" "worker 1 on CPU" "worker 1 placement logged"
if ((ncpu == 2)); then # the default placement: CPU 0 (the first) control, both workers on the other
    first=${cpus%%,*} second=${cpus##*,}
    assert_eq "$first" "$(taskset -pc "$XVSD_PID" | awk -F': ' '{ print $2 }')" "the control thread's CPUs"
    pinned=$(for t in /proc/"$XVSD_PID"/task/*; do taskset -pc "${t##*/}"; done | grep -c ": $second\$")
    assert_ge "$pinned" 2 "threads pinned to CPU $second (the two workers)"
fi

stats_w() { xvsctl_ns stats --workers -a; }
# per_worker NAME TEXT : "w0 w1" of a counter in `stats --workers` output
per_worker() { awk -v k="$1" '$1 == k { print $3, $4; exit }' <<<"$2"; }
total_of() { awk -v k="$1" '$1 == k { print $2; exit }' <<<"$2"; }

# ---- 1000 short connections, wrr 1:2
out=$XE_TMP/requests
http_loop 1000 "$out" "http://$VIP/" 200
rs1=$(count_lines rs1 "$out")
rs2=$(count_lines rs2 "$out")
errors=$(grep -c '^ERR' "$out")
log "1000 curls: rs1=$rs1 rs2=$rs2 errors=$errors"
s=$(stats_w)
echo "$s" | grep -E 'conns_created|redirect|rx_packets|arp_|neigh|drop_' >&2
assert_eq 0 "$errors" "failed requests (1000 curls)"
assert_eq 1000 "$((rs1 + rs2))" "answers from rs1+rs2"
assert_float_between "$(awk -v a="$rs2" -v b="$rs1" 'BEGIN { printf "%.3f", a / (b ? b : 1) }')" 1.7 2.3 "rs2/rs1 (wrr 1:2)"
# Each worker resolves what it sends to (one neighbour table shared by the workers).
assert_eq 0 "$(total_of drop_neigh_unresolved "$s")" "frames dropped waiting for ARP (drop_neigh_unresolved)"
read -r c0 c1 <<<"$(per_worker conns_created "$s")"
assert_ge "${c0:-0}" 100 "conns created by worker 0"
assert_ge "${c1:-0}" 100 "conns created by worker 1"
assert_ge "$(total_of conns_created "$s")" 1000 "conns created (both workers)"
assert_ge "$(total_of redirect_out "$s")" 1 "frames redirected to the owning worker (redirect_out)"
assert_ge "$(total_of redirect_in "$s")" 1 "frames received from another worker (redirect_in)"
assert_eq 0 "$(total_of drop_redirect_full "$s")" "drop_redirect_full"
# The summed form agrees with the columns.
sum=$(xvsctl_ns stats | awk '$1 == "conns_created" { print $2 }')
assert_ge "$sum" $((c0 + c1)) "xvsctl stats sums the workers"

# ---- bulk both ways
want=$(sha256sum <"$XE_TMP/big.bin" | cut -d' ' -f1)
for k in 1 2; do
    in_ns "$NS_CL" curl -s --max-time 30 -H "Connection: close" -o "$XE_TMP/dl" "http://$VIP/big.bin"
    assert_eq "$want" "$(sha256sum <"$XE_TMP/dl" | cut -d' ' -f1)" "sha256 of 20 MB download $k"
done
check_uploads ""

# ---- UDP: 1000 exchanges over 20 client ports
for k in 1 2 3; do # warm-up: both RS resolved
    warm=$(in_ns "$NS_CL" timeout 10 "$XE_PY" "$XE_LIB_DIR/udp_client.py" "$VIP" 53 4 2 5)
    grep -q '^rs1 ' <<<"$warm" && grep -q '^rs2 ' <<<"$warm" && break
done
res=$(in_ns "$NS_CL" timeout 60 "$XE_PY" "$XE_LIB_DIR/udp_client.py" "$VIP" 53 1000 20 30)
echo "$res" >&2
assert_eq 1000 "$(awk '$1 == "sent" { print $2 }' <<<"$res")" "UDP datagrams sent"
assert_ge "$(awk '$1 == "sent" { print $4 }' <<<"$res")" 995 "UDP datagrams answered (99.5%)"

# ---- SYN proxy (VIP:81): 200 connections, all answered; cookies counted
out81=$XE_TMP/requests81
http_loop 200 "$out81" "http://$VIP:81/" 60
assert_eq 0 "$(grep -c '^ERR' "$out81")" "failed requests through the SYN proxy"
assert_eq 200 "$(grep -c -E '^rs[12]$' "$out81")" "SYN-proxy answers"
s=$(stats_w)
assert_ge "$(total_of synproxy_syn_cookie_sent "$s")" 200 "cookie SYN-ACKs sent"
assert_ge "$(total_of synproxy_handover "$s")" 200 "RS handshakes handed over"

# ---- TOA (VIP:82 -> rs1): the option at the RS, checked on a capture by toa_check.py
check_toa_at_rs1 82 "TOA"

# ---- 16 long-lived connections: on both workers, all listed by -L -c; they must survive the
# live changes and the SIGHUP below (each checks its echo every 0.5 s for 30 s).
for k in $(seq 16); do
    bg_ns "$NS_CL" "$XE_TMP/long$k.out" "$XE_PY" "$XE_LIB_DIR/tcp_longconn.py" "$VIP" 7000 30
done
long_listed() { xvsadm_ns -L -n -c | grep -c "ESTABLISHED.*$VIP:7000"; }
wait_until 10 test "$(long_listed)" -ge 16
assert_eq 16 "$(long_listed)" "long-lived connections listed by xvsadm -L -n -c (every worker's)"
assert_eq 16 "$(xvsctl_ns conn show vip "$VIP:7000" state ESTABLISHED | grep -c ESTABLISHED)" "xvsctl conn show lists them too"

# ---- live changes and a SIGHUP under traffic: 600 requests, 0 failed
live=$XE_TMP/live
http_loop 600 "$live" "http://$VIP/" 150 &
loop=$!
XE_PIDS+=("$loop")
wait_progress() { # N : until N requests completed (or the loop ended)
    local deadline=$((SECONDS + 60))
    while (($(wc -l <"$live") < $1)); do
        kill -0 "$loop" 2>/dev/null || return 0
        ((SECONDS < deadline)) || fail "request loop stuck at $(wc -l <"$live") requests"
        sleep 0.05
    done
}
svc=(-t "$VIP:80")
wait_progress 80
xvsadm_ns -a "${svc[@]}" -r 10.10.2.4:8080 --fullnat -w 2 || fail "xvsadm -a rs3"
mark_add=$(wc -l <"$live")
wait_progress $((mark_add + 80))
xvsadm_ns -e "${svc[@]}" -r 10.10.2.2:8080 --fullnat -w 0 || fail "xvsadm -e rs1 -w 0"
mark_quiesce=$(wc -l <"$live")
wait_progress $((mark_quiesce + 80))
xvsadm_ns -d "${svc[@]}" -r 10.10.2.3:8080 || fail "xvsadm -d rs2"
mark_del=$(wc -l <"$live")
wait_progress $((mark_del + 80))
# SIGHUP back to the file (rs1 weight 3, rs2 back, rs3 gone) with a cpus change, which
# must wait for a restart.
mark_pre_hup=$(wc -l <"$live")  # the -d phase ends here: the reload brings rs2 back
write_conf 3 "$(cut -d, -f2 <<<"$cpus"),$(cut -d, -f1 <<<"$cpus")"
kill -HUP "$XVSD_PID"
wait_until 10 grep -q "reload: done" "$XVSD_LOG" || fail "SIGHUP reload not done: $(tail -5 "$XVSD_LOG")"
mark_hup=$(wc -l <"$live")
wait "$loop"
total=$(wc -l <"$live")
phase() { sed -n "$1,$2p" "$live" | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }'; }
p2=$(phase $((mark_add + 2)) "$mark_quiesce")
p3=$(phase $((mark_quiesce + 2)) "$mark_del")
p4=$(phase $((mark_del + 2)) "$mark_pre_hup")
p5=$(phase $((mark_hup + 2)) "$total")
log "after -a: $p2; after -e rs1 -w 0: $p3; after -d rs2: $p4; after SIGHUP: $p5"
stats_w | grep -E '^ +(conns_created|redirect_|drop_|neigh_)' | awk '$2 != 0' >&2
assert_eq 600 "$total" "requests made under live changes"
# The request in flight at -d rs2 and the one at the reload (which removes rs3) may time out.
assert_eq "" "$(unexpected_failures "$live" "$((mark_del + 1))-$((mark_del + 1))" "$((mark_pre_hup + 1))-$((mark_hup + 1))")" \
    "failed requests under -a/-e/-d and SIGHUP, but for the one in flight at a removal (marks: -a $mark_add, -e $mark_quiesce, -d $mark_del, HUP $mark_pre_hup..$mark_hup; all: $(grep -n '^ERR' "$live" | tr '\n' ' '))"
assert_contains "$p2" "rs3=" "rs3 answers after -a"
assert_not_contains "$p3" "rs1=" "rs1 gets no new connections at weight 0 (on either worker)"
assert_not_contains "$p4" "rs2=" "rs2 gone after -d (on either worker)"
assert_not_contains "$p5" "rs3=" "rs3 gone after the SIGHUP"
assert_contains "$p5" "rs1=" "rs1 back after the SIGHUP"
assert_contains "$(cat "$XVSD_LOG")" "reload: cpus changed: takes effect at the next restart" "cpus change left for a restart"

# ---- the long-lived connections went through all of it
for k in $(seq 16); do
    wait_until 40 grep -q '^done' "$XE_TMP/long$k.out" || fail "long-lived connection $k did not finish"
    last=$(tail -n 1 "$XE_TMP/long$k.out")
    [[ $last == *" err=0" ]] || fail "long-lived connection $k: $last"
done
pass "16 long-lived connections echoed every line through the changes and the SIGHUP"

s=$(stats_w)
echo "$s" | grep -E '^ +(conns_created|redirect_|drop_)' >&2
# The 20 MB transfers push tens of thousands of frames through the rings. Both workers share
# one CPU here (and CI runs another lane beside), so an owner descheduled for a few ms may let
# its ring (2048 frames) fill; the sender then yields the CPU to it once (redirect_yield)
# before dropping. A drop is counted and TCP recovers from it (the sha256s above). Bounded at
# 1% of the frames handed over (CI once saw 467 of 23583 with 1024-frame rings and no yield);
# the packet tests check the ring-full and yield paths exactly.
out_total=$(total_of redirect_out "$s")
assert_le "$(total_of drop_redirect_full "$s")" $((out_total / 100)) "drop_redirect_full at the end (of $out_total handed over)"
# A few may be late segments of conns already gone; lost redirects would be hundreds.
assert_le "$(total_of drop_lip_no_conn "$s")" 10 "return frames without their conn (drop_lip_no_conn)"
stop_xvsd TERM
assert_eq 0 "$XVSD_STATUS" "xvsd exit status"
